package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// goEnv are the go command's cache and flag settings as the developer has
// them, read before gittest.Main moves HOME (and with it the default build
// and module caches and the go env file): the test builds knightcode with
// them, offline.
var goEnv []string

func TestMain(m *testing.M) {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOFLAGS").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		os.Exit(1)
	}
	vals := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOFLAGS"} {
		if i < len(vals) && vals[i] != "" {
			goEnv = append(goEnv, k+"="+vals[i])
		}
	}
	goEnv = append(goEnv, "GOPROXY=off")
	gittest.Main(m)
}

// buildKnightcode builds the knightcode binary into a temporary directory.
func buildKnightcode(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "knightcode")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/knightcode/knightcode/cmd/knightcode")
	cmd.Env = append(os.Environ(), goEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("building knightcode: %v\n%s", err, stderr.String())
	}
	return bin
}

// demoSource makes a small repository holding this repository's
// testdata/demo/notes.md, the file the scripted/demo model edits.
func demoSource(t *testing.T) (repo, notes string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo", "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	repo = gittest.Init(t)
	gittest.Write(t, repo, "testdata/demo/notes.md", string(b))
	gittest.Write(t, repo, "README.md", "# demo source\n")
	gittest.CommitAll(t, repo, "demo source")
	return repo, string(b)
}

// TestDemo runs the demo end to end against the built binary on a small
// repository and checks every step it prints: the streamed turn, the diff
// with two hunks and their ids, the turn's totals, the revert of one hunk and
// the diff with one hunk left. The source repository stays untouched.
func TestDemo(t *testing.T) {
	bin := buildKnightcode(t)
	repo, notes := demoSource(t)
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*rpctest.DefaultTimeout)
	defer cancel()
	code := run(ctx, []string{"-bin", bin, "-repo", repo}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr.String())
	}
	t.Logf("demo output:\n%s", out)

	// Every step, in order.
	steps := []string{
		"Connected to knightcode",
		"Picked the model scripted/demo.",
		"== The turn, as the server streams it ==",
		"The thread is active.",
		"Turn ",
		"  thinking: The user wants the demo notes tidied up.",
		"  agent: Let me read the notes first.",
		`  tool read started: path="testdata/demo/notes.md"`,
		`  tool read completed: "# Notes on knightcode" (+`,
		`  tool edit started: edits=<2 entries> path="testdata/demo/notes.md"`,
		"  tool edit completed: ",
		"(modify testdata/demo/notes.md)",
		"  tool bash completed: ",
		" completed; ",
		" output tokens.",
		"The turn changed 1 file(s): testdata/demo/notes.md +2 -2.",
		"== The uncommitted diff ==",
		"M testdata/demo/notes.md  +2 -2",
		"== Reverting one hunk ==",
		"Reverted; changed paths: testdata/demo/notes.md",
		"== The uncommitted diff again ==",
		"M testdata/demo/notes.md  +1 -1",
		"The hunk left has a new id (",
		"a hunk id hashes the file's header, whose blob ids changed with the revert",
		"One hunk left in testdata/demo/notes.md; the demo worked.",
	}
	rest := out
	for _, s := range steps {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Fatalf("output lacks %q after the previous step", s)
		}
		rest = rest[i+len(s):]
	}
	// Two hunks with ids before the revert, one after.
	hunk := regexp.MustCompile(`(?m)^  hunk [0-9a-f]{64}$`)
	before, after, _ := strings.Cut(out, "== The uncommitted diff again ==")
	turn, before, _ := strings.Cut(before, "== The uncommitted diff ==")
	if n := len(hunk.FindAllString(before, -1)); n != 2 {
		t.Errorf("%d hunk ids in the first diff, want 2", n)
	}
	if n := len(hunk.FindAllString(after, -1)); n != 1 {
		t.Errorf("%d hunk ids in the second diff, want 1", n)
	}
	if !strings.Contains(before, "+Status: reviewed by the scripted demo model.") || !strings.Contains(after, "+Next step: revert one of the two hunks and read the diff again.") ||
		strings.Contains(after, "+Status: reviewed") {
		t.Errorf("the diffs do not show the expected hunks")
	}
	// The story of the turn says each thing once, and nothing is cut short.
	seen := map[string]bool{}
	for _, line := range strings.Split(turn, "\n") {
		if line != "" && seen[line] {
			t.Errorf("line printed twice: %q", line)
		}
		seen[line] = true
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "...") || strings.Contains(line, `{"`) {
			t.Errorf("line with cut text or raw JSON: %q", line)
		}
	}
	// The agent's final message is printed whole.
	if !strings.Contains(turn, "  agent: Done. I updated two lines of testdata/demo/notes.md: ") ||
		!strings.Contains(turn, "git status lists it as modified.\n") {
		t.Errorf("the agent's last message is not printed whole")
	}
	if got := gittest.Read(t, repo, "testdata/demo/notes.md"); got != notes {
		t.Errorf("the demo changed its source repository")
	}
	if got := gittest.Git(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("source repository status: %q", got)
	}
}

// TestDemoFailures checks that the demo exits non-zero, saying why, when it
// cannot run.
func TestDemoFailures(t *testing.T) {
	// Every failure here happens before the server would start, so any
	// existing file stands in for the binary.
	bin := filepath.Join(t.TempDir(), "knightcode")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	noNotes := gittest.Init(t)
	gittest.Write(t, noNotes, "README.md", "no notes here\n")
	gittest.CommitAll(t, noNotes, "no notes")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"unexpected argument", []string{"extra"}, 2, `unexpected argument "extra"`},
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"no binary", []string{"-bin", filepath.Join(t.TempDir(), "missing"), "-repo", noNotes}, 1, "no knightcode binary"},
		{"not a repository", []string{"-bin", bin, "-repo", t.TempDir()}, 1, "cloning"},
		{"no notes file", []string{"-bin", bin, "-repo", noNotes}, 1, "has no testdata/demo/notes.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit code %d, stderr:\n%s\nwant code %d and %q", code, stderr.String(), tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestEvents feeds notifications to the story teller and checks the lines it
// prints: deltas, the user's message and repeated statuses print nothing,
// arguments and output are told in words, an unknown notification prints its
// whole params.
func TestEvents(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := newEvents(&printer{w: &buf})
	for _, n := range []struct{ method, params string }{
		{"thread/status/changed", `{"threadId":"t","status":{"type":"idle"}}`},
		{"thread/status/changed", `{"threadId":"t","status":{"type":"idle"}}`},
		{"item/agentMessage/delta", `{"threadId":"t","turnId":"u","itemId":"i","delta":"Hel"}`},
		{"item/completed", `{"threadId":"t","turnId":"u","item":{"id":"m","type":"userMessage","text":"hi"}}`},
		{"item/completed", `{"threadId":"t","turnId":"u","item":{"id":"i","type":"agentMessage","text":"Hello\nthere."}}`},
		{"item/started", `{"threadId":"t","turnId":"u","item":{"id":"c","type":"toolCall","name":"write","status":"inProgress","arguments":{"path":"a <b>.txt","content":"1\n2\n3","n":7}}}`},
		{"item/completed", `{"threadId":"t","turnId":"u","item":{"id":"c","type":"toolCall","name":"write","status":"completed","output":"wrote\nok\n","fileChanges":[{"path":"a.txt","kind":"add"}]}}`},
		{"thread/tokenUsage/updated", `{"threadId":"t","turnId":"u","usage":{"input":10,"output":2}}`},
		{"turn/completed", `{"threadId":"t","turn":{"id":"u","status":"completed"}}`},
		{"thread/turn/completed", `{"threadId":"t","turn":{"id":"u","status":"completed"}}`},
		{"some/new", `{"a": [1, 2],  "b": "x"}`},
	} {
		e.handle(n.method, json.RawMessage(n.params))
	}
	want := `The thread is idle.
  agent: Hello there.
  tool write started: content=<3 lines of text> n=7 path="a <b>.txt"
  tool write completed: "wrote" (+1 more lines) (add a.txt)
Turn u completed; 10 input and 2 output tokens.
some/new {"a":[1,2],"b":"x"}
`
	if diff := cmp.Diff(buf.String(), want); diff != "" {
		t.Errorf("lines (-got +want):\n%s", diff)
	}
}
