package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// callCLI runs `knightcode call args...` with env and returns its stdout,
// stderr and exit code.
func callCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"call"}, args...)...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("knightcode call %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// callOK runs a call of method args[0] that must succeed, checks its one
// line of result against the schema and decodes it into result.
func callOK(t *testing.T, env []string, result any, args ...string) {
	t.Helper()
	stdout, stderr, code := callCLI(t, env, args...)
	if code != 0 || stderr != "" {
		t.Fatalf("knightcode call %v: exit %d, stderr %q", args, code, stderr)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "\n") {
		t.Fatalf("knightcode call %v: stdout is not one line: %q", args, stdout)
	}
	checkWire(t, []byte(stdout), "", args[0], "result")
	if err := json.Unmarshal([]byte(stdout), result); err != nil {
		t.Fatalf("knightcode call %v: %v in %q", args, err, stdout)
	}
}

// callFails runs a call that must fail with exit code code and an error
// of wire code wantCode, printed as one line of JSON on stderr, and
// returns the error.
func callFails(t *testing.T, env []string, code int, wantCode string, args ...string) protocol.InvalidParamsData {
	t.Helper()
	stdout, stderr, got := callCLI(t, env, args...)
	var e struct {
		Code    string
		Message string
		Data    protocol.InvalidParamsData
	}
	if err := json.Unmarshal([]byte(stderr), &e); err != nil || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("knightcode call %v: stderr is not one line of JSON (%v): %q", args, err, stderr)
	}
	if got != code || e.Code != wantCode || e.Message == "" || stdout != "" {
		t.Errorf("knightcode call %v: exit %d, error %+v, stdout %q; want exit %d, code %s", args, got, e, stdout, code, wantCode)
	}
	return e.Data
}

// A script hands a worktree thread's changes to the main checkout with two
// calls: thread/list finds the thread, thread/handoff moves it. Each call
// is a server of its own that loads the thread only for the request and
// releases it; a thread another process holds is refused
// threadLockedElsewhere; errors are JSON on stderr with exit code 2 for
// invalidParams and 1 otherwise.
func TestE2ECallScriptedHandoff(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{"say": script(map[string]any{"text": "done"})})

	// A worktree thread with a turn and changes, made by an app.
	s := startWith(t, env, home)
	thread, wt := s.modelWorktreeThread(t, repo, "say", "fix the login bug")
	writeFile(t, wt, "fixed.txt", "fixed\n")

	// While the app holds the thread, a script cannot take it.
	stdout, stderr, code := callCLI(t, env, "thread/handoff", mustJSON(map[string]any{"threadId": thread, "to": "local"}))
	if e := decodeCallError(t, stderr); code != 1 || e.Code != protocol.CodeThreadLockedElsewhere || stdout != "" {
		t.Fatalf("handoff of a thread the app holds: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	if exists(repo, "fixed.txt") {
		t.Fatalf("the refused handoff moved fixed.txt")
	}
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}

	var list protocol.ThreadListResult
	callOK(t, env, &list, "thread/list", mustJSON(map[string]any{"cwd": repo}))
	if len(list.Threads) != 1 || list.Threads[0].ID != thread || list.Threads[0].WorkspaceMode != "worktree" {
		t.Fatalf("thread/list = %+v", list)
	}

	// A refusal naming a parameter: exit 2, data.field.
	if d := callFails(t, env, 2, protocol.CodeInvalidParams, "thread/handoff", mustJSON(map[string]any{"threadId": thread, "to": "sideways"})); d.Field != "to" {
		t.Errorf("bad direction: data %+v, want field to", d)
	}
	// A dirty destination: the handoff is refused (exit 1) and nothing moves.
	writeFile(t, repo, "mine.txt", "the user's\n")
	stdout, stderr, code = callCLI(t, env, "thread/handoff", mustJSON(map[string]any{"threadId": thread, "to": "local"}))
	if e := decodeCallError(t, stderr); code != 1 || e.Code != protocol.CodeGitConflict || e.Message != "Stash or commit your local changes to hand off." || stdout != "" {
		t.Fatalf("handoff to a dirty checkout: exit %d, stderr %q", code, stderr)
	}
	if err := os.Remove(filepath.Join(repo, "mine.txt")); err != nil {
		t.Fatal(err)
	}

	var moved protocol.ThreadHandoffResult
	callOK(t, env, &moved, "thread/handoff", mustJSON(map[string]any{"threadId": thread, "to": "local"}))
	if moved.Thread.ID != thread || moved.Thread.Workspace.Mode != "local" || moved.Branch != "knightcode/fix-the-login-bug" {
		t.Errorf("handoff result %+v", moved)
	}
	if got := readFile(t, repo, "fixed.txt"); got != "fixed\n" {
		t.Errorf("fixed.txt in the main checkout = %q", got)
	}
	if got := strings.TrimSpace(fixtureGit(t, repo, "branch", "--show-current")); got != moved.Branch {
		t.Errorf("main checkout on %q, want %q", got, moved.Branch)
	}
	// The call released the thread: the app resumes it in its new place.
	s = startWith(t, env, home)
	resumed := mustCall(t, s, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	if resumed.Thread.Workspace.Mode != "local" || resumed.Thread.Cwd != repo {
		t.Errorf("resumed after the scripted handoff: %+v", resumed.Thread)
	}

	// Other errors: exit 1 with the wire code; a command line that cannot
	// run: exit 2 with the usage on stderr.
	callFails(t, env, 1, protocol.CodeThreadNotFound, "thread/read", `{"threadId":"no-such-thread"}`)
	for _, args := range [][]string{{"no/such"}, {"thread/list", "[1]"}, {"--follow", "thread/list"}, {}} {
		stdout, stderr, code := callCLI(t, env, args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "knightcode call: ") || !strings.Contains(stderr, "knightcode call --help") {
			t.Errorf("call %q: exit %d, stderr %q, stdout %q", args, code, stderr, stdout)
		}
	}
}

// decodeCallError decodes the one line of JSON a failed call prints.
func decodeCallError(t *testing.T, stderr string) protocol.Error {
	t.Helper()
	var e protocol.Error
	if err := json.Unmarshal([]byte(stderr), &e); err != nil || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr is not one line of JSON (%v): %q", err, stderr)
	}
	return e
}

// A scripted turn: `call --follow turn/start` loads the saved thread,
// prints the result, then the thread's notifications and the server's
// requests as JSON lines until the turn ends. Nobody answers an approval,
// so the asking tool call is declined and the turn goes on.
func TestE2ECallFollowTurn(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{"edit": script(
		map[string]any{"toolCalls": []any{call("w1", "write", map[string]any{"path": "new.txt", "content": "new\n"})}},
		map[string]any{"text": "done"},
	)})
	s := startWith(t, env, home)
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "ask",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "edit"}}, &started)
	thread := started.Thread.ID
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, ApprovalMode: "ask"}, nil)
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := callCLI(t, env, "--follow", "turn/start", mustJSON(map[string]any{"threadId": thread, "text": "write new.txt"}))
	if code != 0 || stderr != "" {
		t.Fatalf("call --follow turn/start: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var res protocol.TurnStartResult
	if err := json.Unmarshal([]byte(lines[0]), &res); err != nil || res.Status != protocol.TurnStartStarted || res.ThreadID != thread {
		t.Fatalf("first line %q (%v), want the result", lines[0], err)
	}
	checkWire(t, []byte(lines[0]), "", protocol.TurnStart.Name, "result")
	var methods []string
	var turnID, declined string
	for _, l := range lines[1:] {
		var m struct {
			Method string
			Params json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Method == "" {
			t.Fatalf("line %q is not {method, params}: %v", l, err)
		}
		if threadOf(m.Params) != thread {
			t.Errorf("line of another thread: %s", l)
		}
		checkWire(t, m.Params, "", m.Method, "params")
		methods = append(methods, m.Method)
		switch m.Method {
		case protocol.TurnStarted.Name:
			var p protocol.TurnStartedParams
			_ = json.Unmarshal(m.Params, &p)
			turnID = p.Turn.ID
		case protocol.ItemCompleted.Name:
			var p struct {
				Item struct{ Type, Status, Name string }
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.Item.Type == protocol.ItemToolCall {
				declined = p.Item.Status
			}
		case protocol.TurnCompletedNotification.Name:
			var p protocol.TurnCompletedParams
			_ = json.Unmarshal(m.Params, &p)
			if p.Turn.ID != turnID || p.Turn.Status != protocol.TurnCompleted {
				t.Errorf("turn/completed %+v, want turn %s completed", p.Turn, turnID)
			}
		}
	}
	for _, want := range []string{protocol.TurnStarted.Name, protocol.ItemToolCallRequestApproval.Name, protocol.TurnCompletedNotification.Name} {
		if !strings.Contains(strings.Join(methods, " "), want) {
			t.Errorf("the stream lacks %s: %v", want, methods)
		}
	}
	if declined != protocol.ToolDeclined {
		t.Errorf("the unanswered approval's tool call is %q, want declined", declined)
	}
	if exists(repo, "new.txt") {
		t.Errorf("the declined write ran")
	}
	// The saved history, every item type of the turn, fits the schema too.
	var read protocol.ThreadReadResult
	callOK(t, env, &read, "thread/read", mustJSON(map[string]any{"threadId": thread}))
	if len(read.Turns) != 1 || len(read.Turns[0].Items) < 3 {
		t.Errorf("thread/read: %+v", read.Turns)
	}
}
