package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/protocol/schemagen"
	"github.com/knightcode/knightcode/threads/session"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (refresh: go test ./cmd/knightcode -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(got, string(want)); diff != "" {
		t.Errorf("%s differs (-got +want):\n%s\nrefresh: go test ./cmd/knightcode -run %s -update", path, diff, t.Name())
	}
}

// TestParseArgs checks what each command line asks for, without running
// anything.
func TestParseArgs(t *testing.T) {
	t.Parallel()
	serve := func(o options) invocation { return invocation{action: actionServe, opts: o} }
	help := invocation{action: actionHelp, help: usage}
	appHelp := invocation{action: actionHelp, help: appServerUsage}
	ver := invocation{action: actionVersion}
	tests := []struct {
		name    string
		args    []string
		want    invocation
		wantErr string // the usage error, "" for none
	}{
		{"app-server", []string{"app-server"}, serve(options{}), ""},
		{"all flags", []string{"app-server", "-e", "a.ts", "--extension", "/abs/b.ts", "--session-dir", "s", "-e=c"},
			serve(options{SessionDir: "s", Extensions: []string{"a.ts", "/abs/b.ts", "c"}}), ""},
		{"single dash session dir", []string{"app-server", "-session-dir=/x"}, serve(options{SessionDir: "/x"}), ""},
		{"help", []string{"app-server", "--help"}, appHelp, ""},
		{"h", []string{"app-server", "-h"}, appHelp, ""},
		{"help after flags", []string{"app-server", "-e", "x", "-h"}, appHelp, ""},
		{"top help", []string{"--help"}, help, ""},
		{"top h", []string{"-h"}, help, ""},
		{"help command", []string{"help"}, help, ""},
		{"version", []string{"--version"}, ver, ""},
		{"single dash version", []string{"-version"}, ver, ""},
		{"app-server version", []string{"app-server", "--version"}, ver, ""},
		{"app-server version after flags", []string{"app-server", "-e", "x", "--version"}, ver, ""},
		{"generate-schema", []string{"app-server", "generate-schema"}, invocation{action: actionSchema}, ""},
		{"generate-ts", []string{"app-server", "generate-ts"}, invocation{action: actionTypeScript}, ""},
		{"generate-ts help", []string{"app-server", "generate-ts", "--help"}, appHelp, ""},
		{"generate-schema argument", []string{"app-server", "generate-schema", "out.json"}, invocation{},
			`knightcode app-server generate-schema: unexpected argument "out.json"`},
		{"generator after flags", []string{"app-server", "-e", "x", "generate-ts"}, invocation{},
			`knightcode app-server: unexpected argument "generate-ts"`},
		{"no command", nil, invocation{}, `knightcode: no command given`},
		{"unknown command", []string{"serve"}, invocation{}, `knightcode: unknown command "serve"`},
		{"unknown top flag", []string{"--port"}, invocation{}, `knightcode: unknown flag "--port"`},
		{"unknown flag", []string{"app-server", "--port", "1"}, invocation{}, `knightcode app-server: flag provided but not defined: -port`},
		{"missing value", []string{"app-server", "-e"}, invocation{}, `knightcode app-server: flag needs an argument: -e`},
		{"extra argument", []string{"app-server", "extra"}, invocation{}, `knightcode app-server: unexpected argument "extra"`},
		{"empty extension path", []string{"app-server", "-e", "a.ts", "--extension", ""}, invocation{},
			`knightcode app-server: -e/--extension "": an empty path names no extension (use "." for the working directory)`},
		{"call", []string{"call", "thread/list"}, invocation{action: actionCall, call: callOptions{Method: "thread/list"}}, ""},
		{"call with params and flags", []string{"call", "--session-dir", "s", "--follow", "turn/start", ` {"threadId":"t","text":"x"} `},
			invocation{action: actionCall, call: callOptions{Method: "turn/start", Params: json.RawMessage(`{"threadId":"t","text":"x"}`), Follow: true, SessionDir: "s"}}, ""},
		{"call help", []string{"call", "-h"}, invocation{action: actionHelp, help: callUsage}, ""},
		{"call without method", []string{"call"}, invocation{}, `knightcode call: no method given`},
		{"call of an unknown method", []string{"call", "thread/nope"}, invocation{}, `knightcode call: "thread/nope" is not a request a client sends`},
		{"call of a notification", []string{"call", "initialized"}, invocation{}, `knightcode call: "initialized" is not a request a client sends`},
		{"call of initialize", []string{"call", "initialize"}, invocation{}, `knightcode call: call sends initialize itself`},
		{"call with params not an object", []string{"call", "thread/list", `["x"]`}, invocation{}, `knightcode call: params must be a JSON object`},
		{"call with invalid params", []string{"call", "thread/list", `{"cwd":`}, invocation{}, `knightcode call: params must be a JSON object`},
		{"call with an extra argument", []string{"call", "thread/list", `{}`, "x"}, invocation{}, `knightcode call: unexpected argument "x"`},
		{"follow of another method", []string{"call", "--follow", "thread/list"}, invocation{}, `knightcode call: --follow follows the turn a turn/start starts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				var ue *usageError
				if !errors.As(err, &ue) || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want usage error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(invocation{})); diff != "" {
				t.Errorf("invocation (-got +want):\n%s", diff)
			}
		})
	}
}

// TestRunWithoutServing runs the command lines that print and exit: help on
// stderr (golden files; stdout is for protocol messages), the version on stdout, usage errors naming the
// program on stderr with exit code 2.
func TestRunWithoutServing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // golden file name, or "" for empty
		wantStderr string // golden file name, or "" for empty
	}{
		{"help", []string{"--help"}, 0, "", "help.txt"},
		{"app-server help", []string{"app-server", "-h"}, 0, "", "app-server-help.txt"},
		{"call help", []string{"call", "--help"}, 0, "", "call-help.txt"},
		{"no command", nil, 2, "", "no-command.txt"},
		{"unknown command", []string{"serve"}, 2, "", "unknown-command.txt"},
		{"unknown flag", []string{"app-server", "--port", "1"}, 2, "", "unknown-flag.txt"},
		{"missing value", []string{"app-server", "-e"}, 2, "", "missing-value.txt"},
		{"extra argument", []string{"app-server", "extra"}, 2, "", "extra-argument.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			for _, out := range []struct {
				buf    *bytes.Buffer
				golden string
			}{{&stdout, tt.wantStdout}, {&stderr, tt.wantStderr}} {
				if out.golden == "" {
					if out.buf.Len() != 0 {
						t.Errorf("unexpected output: %q", out.buf.String())
					}
					continue
				}
				golden(t, out.golden, out.buf.String())
			}
		})
	}
	for _, args := range [][]string{{"--version"}, {"app-server", "--version"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Errorf("%v: exit code %d, stderr %q", args, code, stderr.String())
		}
		if got, want := stdout.String(), "knightcode "+serverVersion()+"\n"; got != want {
			t.Errorf("%v: stdout %q, want %q", args, got, want)
		}
	}
}

// TestGenerateCommands checks that generate-schema and generate-ts print
// exactly the committed files (which schemagen's TestGenerated keeps fresh).
func TestGenerateCommands(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ cmd, file string }{
		{"generate-schema", schemagen.SchemaFile},
		{"generate-ts", schemagen.TypeScriptFile},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"app-server", tt.cmd}, strings.NewReader(""), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit code %d, stderr %q", tt.cmd, code, stderr.String())
		}
		want, err := os.ReadFile(filepath.Join("..", "..", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stdout.Bytes(), want) {
			t.Errorf("%s does not print %s (-got +want):\n%s\nrefresh: make schema", tt.cmd, tt.file, cmp.Diff(stdout.String(), string(want)))
		}
	}
}

func TestVersionFrom(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name     string
		override string
		info     *debug.BuildInfo
		want     string
	}{
		{"no build info", "", nil, "0.0.0-dev"},
		{"ldflags override", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "v1.2.3"},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0"},
		{"pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201135000-0123456789ab+dirty"}},
			"v0.0.0-20261201135000-0123456789ab+dirty"},
		{"devel without vcs", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0.0.0-dev"},
		{"devel with vcs", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")},
			"0.0.0-dev+0123456789ab"},
		{"devel with modified vcs", "", &debug.BuildInfo{Settings: vcs("0123456789abcdef0123", "true")}, "0.0.0-dev+0123456789ab.dirty"},
	}
	for _, tt := range tests {
		if got := versionFrom(tt.override, tt.info, tt.info != nil); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestResolveSettings(t *testing.T) {
	wd := mustGetwd(t)
	// The environment is session.ResolveDirs' business, not the flags'.
	t.Setenv(session.EnvSessionDir, "/env")
	tests := []struct {
		name string
		opts options
		want settings
	}{
		{"nothing", options{}, settings{}},
		{"flag", options{SessionDir: "/flag"}, settings{SessionDir: "/flag"}},
		{"relative paths resolve against the working directory", options{SessionDir: "rel", Extensions: []string{"ext/a.ts", "/abs/b.ts"}},
			settings{SessionDir: filepath.Join(wd, "rel"), Extensions: []string{filepath.Join(wd, "ext/a.ts"), "/abs/b.ts"}}},
	}
	for _, tt := range tests {
		got, err := resolveSettings(tt.opts)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
}

// TestSessionDirPrecedence runs the wiring with --session-dir and
// $KNIGHTCODE_CODING_AGENT_SESSION_DIR: the flag wins, the environment comes
// next (read once, by session.ResolveDirs, and reported as such), else the
// per-project layout.
func TestSessionDirPrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(session.EnvAgentDir, filepath.Join(home, "agent"))
	wd := mustGetwd(t)
	tests := []struct {
		name       string
		flag, env  string
		wantDir    string
		wantSource string
	}{
		{"flag wins over env", "flag", "/env", filepath.Join(wd, "flag"), session.SourceFlag},
		{"env", "", "/env", "/env", session.SourceEnv},
		{"relative env", "", "rel", filepath.Join(wd, "rel"), session.SourceEnv},
		{"neither", "", "", "", session.SourceProject},
	}
	for _, tt := range tests {
		t.Setenv(session.EnvSessionDir, tt.env)
		var logs bytes.Buffer
		if _, err := newAppServer(options{SessionDir: tt.flag}, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want := fmt.Sprintf("sessionDir=%s sessionDirSource=%s ", tt.wantDir, tt.wantSource)
		if tt.wantDir == "" {
			want = fmt.Sprintf(`sessionDir="" sessionDirSource=%s `, tt.wantSource)
		}
		if !strings.Contains(logs.String(), want) {
			t.Errorf("%s: logs lack %q:\n%s", tt.name, want, logs.String())
		}
	}
}

// TestWiringHandlesEveryMethod fails when a method of the table has no
// handler in the wired server.
func TestWiringHandlesEveryMethod(t *testing.T) {
	if missing := wiredServer(t).MissingHandlers(); len(missing) > 0 {
		t.Errorf("methods without a handler in the wired server: %v", missing)
	}
}

// TestEveryRequestRejectsBadParams sends params of the wrong JSON kind to
// every client request of the table on the wired server and expects
// invalidParams: a method cannot be added without its params being checked.
func TestEveryRequestRejectsBadParams(t *testing.T) {
	c := wiredClient(t)
	ctx := context.Background()
	for _, m := range protocol.Methods() {
		if m.Direction != protocol.ClientRequestDir {
			continue
		}
		for _, bad := range []string{`[]`, `"x"`, `7`} {
			err := c.Request(ctx, m.Name, json.RawMessage(bad), nil)
			if !jsonrpc.IsCode(err, protocol.CodeInvalidParams) {
				t.Errorf("%s with params %s: %v, want invalidParams", m.Name, bad, err)
			}
		}
	}
}

// TestEveryRequestRejectsMisspelledMembers sends every client request of
// the table, on the wired server, each of its members misspelled in turn
// (hunkId as hunk_id, path as Path) and a member no params type has, and
// expects invalidParams naming the misspelled member: every handler decodes
// through the one strict path (issue 8, "Wire strictness").
func TestEveryRequestRejectsMisspelledMembers(t *testing.T) {
	c := wiredClient(t)
	ctx := context.Background()
	for _, m := range protocol.Methods() {
		if m.Direction != protocol.ClientRequestDir {
			continue
		}
		members := jsonMembers(m.Params)
		wrong := map[string]json.RawMessage{"noSuchMember": json.RawMessage(`0`)}
		for name, zero := range members {
			wrong[misspell(name)] = zero
		}
		for bad, value := range wrong {
			if _, ok := members[bad]; ok {
				t.Fatalf("%s: misspelling %q is a member", m.Name, bad)
			}
			params := map[string]json.RawMessage{bad: value}
			err := c.Request(ctx, m.Name, params, nil)
			e, ok := errors.AsType[*jsonrpc.Error](err)
			if !ok || e.Code != protocol.CodeInvalidParams {
				t.Errorf("%s %s: %v, want invalidParams", m.Name, mustJSON(params), err)
				continue
			}
			var data protocol.InvalidParamsData
			if raw, ok := e.Data.(json.RawMessage); !ok || json.Unmarshal(raw, &data) != nil || data.Field != bad {
				t.Errorf("%s %s: error %q data %v, want field %q", m.Name, mustJSON(params), e.Message, e.Data, bad)
			}
		}
	}
}

// TestRunAppServerInProcess runs the command's entry point over buffers:
// stdout holds only protocol lines, logs go to stderr.
func TestRunAppServerInProcess(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	in := strings.NewReader(`{"id":1,"method":"initialize","params":{}}` + "\n" + `{"method":"initialized"}` + "\n" + `{"id":2,"method":"no/such"}` + "\n")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"app-server", "--session-dir", "s"}, in, &out, &errOut)
	if code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":1,"result":{"serverInfo":{"name":"knightcode","version":"`+serverVersion()+`"}`) ||
		lines[1] != `{"id":2,"error":{"code":"methodNotFound","message":"unknown method no/such"}}` {
		t.Errorf("stdout:\n%s", out.String())
	}
	for _, want := range []string{`level=INFO msg="app-server started"`, `msg="shutdown complete"`, fmt.Sprintf("sessionDir=%s", filepath.Join(mustGetwd(t), "s"))} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// TestBoundLogValue checks that a logged string or error over
// maxLogValueBytes is cut at a character boundary and says its length, and
// that shorter values and other kinds pass unchanged.
func TestBoundLogValue(t *testing.T) {
	long := strings.Repeat("é", maxLogValueBytes) // 2 bytes each
	tests := []struct {
		in   slog.Attr
		want string
	}{
		{slog.String("k", "short"), "short"},
		{slog.Int("k", 7), "7"},
		{slog.String("k", long), long[:maxLogValueBytes] + fmt.Sprintf("... (%d bytes)", len(long))},
		{slog.Any("k", errors.New("x"+long)), ("x" + long)[:maxLogValueBytes-1] + fmt.Sprintf("... (%d bytes)", len(long)+1)},
	}
	for _, tt := range tests {
		got := boundLogValue(nil, tt.in)
		if got.Value.String() != tt.want {
			t.Errorf("boundLogValue(%.40s...) = %.80s..., want %.80s...", tt.in.Value.String(), got.Value.String(), tt.want)
		}
		if !utf8.ValidString(got.Value.String()) {
			t.Errorf("cut inside a character")
		}
	}
}

// TestEmptyIDsRefused sends "" where an absent member would mean "all" or
// "the latest": each is invalidParams naming the member before any handler
// runs (an empty string never means everything; QA found thread/fork
// {turnId: ""} forking the whole thread).
func TestEmptyIDsRefused(t *testing.T) {
	c := wiredClient(t)
	ctx := context.Background()
	for _, tt := range []struct{ method, params, field string }{
		{protocol.ThreadFork.Name, `{"threadId":"t","turnId":""}`, "turnId"},
		{protocol.ThreadDiffRevert.Name, `{"threadId":"t","hunkId":""}`, "hunkId"},
	} {
		err := c.Request(ctx, tt.method, json.RawMessage(tt.params), nil)
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != protocol.CodeInvalidParams {
			t.Errorf("%s %s: %v, want invalidParams", tt.method, tt.params, err)
			continue
		}
		raw, _ := json.Marshal(e.Data)
		var d protocol.InvalidParamsData
		if json.Unmarshal(raw, &d) != nil || d.Field != tt.field {
			t.Errorf("%s %s: data %s, want field %s", tt.method, tt.params, raw, tt.field)
		}
	}
}
