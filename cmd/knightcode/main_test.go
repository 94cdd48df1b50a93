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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
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

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantOpts   options
		wantCode   int
		wantRun    bool
		wantStderr string // golden file name, or "" for empty
	}{
		{"app-server", []string{"app-server"}, options{}, 0, true, ""},
		{"all flags", []string{"app-server", "-e", "a.ts", "--extension", "/abs/b.ts", "--session-dir", "s", "-e=c"},
			options{SessionDir: "s", Extensions: []string{"a.ts", "/abs/b.ts", "c"}}, 0, true, ""},
		{"single dash session dir", []string{"app-server", "-session-dir=/x"}, options{SessionDir: "/x"}, 0, true, ""},
		{"help", []string{"app-server", "--help"}, options{}, 0, false, "app-server-help.txt"},
		{"h", []string{"app-server", "-h"}, options{}, 0, false, "app-server-help.txt"},
		{"help after flags", []string{"app-server", "-e", "x", "-h"}, options{}, 0, false, "app-server-help.txt"},
		{"top help", []string{"--help"}, options{}, 0, false, "help.txt"},
		{"top h", []string{"-h"}, options{}, 0, false, "help.txt"},
		{"no command", nil, options{}, 2, false, "help.txt"},
		{"unknown command", []string{"serve"}, options{}, 2, false, "unknown-command.txt"},
		{"unknown flag", []string{"app-server", "--port", "1"}, options{}, 2, false, "unknown-flag.txt"},
		{"missing value", []string{"app-server", "-e"}, options{}, 2, false, "missing-value.txt"},
		{"extra argument", []string{"app-server", "extra"}, options{}, 2, false, "extra-argument.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			opts, code, run := parseArgs(tt.args, &stderr)
			if code != tt.wantCode || run != tt.wantRun {
				t.Errorf("code %d run %v, want %d %v", code, run, tt.wantCode, tt.wantRun)
			}
			if run {
				if diff := cmp.Diff(opts, tt.wantOpts); diff != "" {
					t.Errorf("options (-got +want):\n%s", diff)
				}
			}
			if tt.wantStderr == "" {
				if stderr.Len() != 0 {
					t.Errorf("stderr: %q", stderr.String())
				}
				return
			}
			golden(t, tt.wantStderr, stderr.String())
		})
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

// wiredServer builds the server as the binary does.
func wiredServer(t *testing.T) *jsonrpc.Server {
	t.Helper()
	srv, err := newAppServer(options{}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return srv
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
	t.Setenv("HOME", t.TempDir())
	c := client.NewInProcess(wiredServer(t))
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
		t.Fatal(err)
	}
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
	t.Setenv("HOME", t.TempDir())
	c := client.NewInProcess(wiredServer(t))
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
		t.Fatal(err)
	}
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
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":1,"result":{"serverInfo":{"name":"knightcode","version":"`+version+`"}`) ||
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
