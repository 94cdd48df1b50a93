package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// jsFixture is the absolute path of the project's extension fixture
// testdata/extensions/name.
func jsFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "extensions", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestE2EExtensionWarnings: a missing -e path is the warning "extension
// not found: <path>" in thread/start's and thread/fork's results, a
// folder without an entry says why, and an extension that loads gives
// none (EXTENSIBILITY.md §7).
func TestE2EExtensionWarnings(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.ts")
	s := startDiffServer(t, map[string]string{"w": script(map[string]any{"text": "ok"})}, "-e", missing, "--extension", jsFixture(t, "input.ts"), "-e", empty)
	extWarnings := func(ws []protocol.Warning) []protocol.Warning {
		var got []protocol.Warning
		for _, w := range ws {
			if w.Source == protocol.WarningSourceExtension {
				got = append(got, w)
			}
		}
		return got
	}
	want := []protocol.Warning{
		{Message: "extension not found: " + missing, Source: protocol.WarningSourceExtension, Path: missing},
		{Message: "extension " + empty + " cannot be loaded: no extension entry: no package.json knightcode.extensions or pi.extensions, index.ts or index.js",
			Source: protocol.WarningSourceExtension, Path: empty},
	}
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "w"}})
	if diff := cmp.Diff(extWarnings(started.Warnings), want); diff != "" {
		t.Errorf("thread/start extension warnings (-got +want):\n%s", diff)
	}
	s.runTurn(t, started.Thread.ID, "hi") // a thread forks once it has history
	forked := mustCall(t, s, protocol.ThreadFork, protocol.ThreadForkParams{ThreadID: started.Thread.ID})
	if diff := cmp.Diff(extWarnings(forked.Warnings), want); diff != "" {
		t.Errorf("thread/fork extension warnings (-got +want):\n%s", diff)
	}
}

// TestE2EJavaScriptExtensions drives the project's TypeScript fixtures
// through the binary with -e: a throw at load is a warning with the .ts
// line and column; the input transform changes the userMessage; a
// consumed input answers "handled" without a model request; the
// tool_call hook blocks `rm -rf`; the registered tool runs with its
// fileChanges details (and malformed details are ignored); the registered
// command answers "handled" and notifies.
func TestE2EJavaScriptExtensions(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"js": script(
		toolReply(bashCall("c1", "rm -rf build"), call("c2", "stamp", map[string]any{"file": "stamp.txt"}),
			call("c3", "stamp", map[string]any{"file": "bad.txt", "mode": "malformed"})),
		map[string]any{"text": "first done"},
		map[string]any{"text": "second turn"},
	)}, "-e", jsFixture(t, "throws.ts"), "-e", jsFixture(t, "input.ts"), "-e", jsFixture(t, "guard.ts"),
		"-e", jsFixture(t, "tool.ts"), "-e", jsFixture(t, "command.ts"))
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "js"}})
	thread := started.Thread.ID
	throws := jsFixture(t, "throws.ts")
	var loadWarn []protocol.Warning
	for _, w := range started.Warnings {
		if w.Source == protocol.WarningSourceExtension {
			loadWarn = append(loadWarn, w)
		}
	}
	if len(loadWarn) != 1 || loadWarn[0].Path != throws || loadWarn[0].Line != 9 || loadWarn[0].Column != 8 ||
		!strings.Contains(loadWarn[0].Message, "no config for this thread") {
		t.Errorf("load warnings %+v, want throws.ts at 9:8", loadWarn)
	}

	from := s.mark()
	res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "please check", ClientMessageID: "m-1"})
	if res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start %+v", res)
	}
	user, items := turnItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name))
	if len(user) != 1 || user[0].Text != "check" || user[0].ClientMessageID != "m-1" {
		t.Errorf("userMessage items %+v, want the transformed text", user)
	}
	out := func(id string) string { return itemOutput(items[id]) }
	if it := items["c1"]; it.Status != protocol.ToolFailed || out("c1") != "blocked by guard.ts: rm -rf build" {
		t.Errorf("c1 (rm -rf): %s %q", it.Status, out("c1"))
	}
	stamp := filepath.Join(repo, "stamp.txt")
	if it := items["c2"]; it.Status != protocol.ToolCompleted || out("c2") != "stamped stamp.txt (c2)" ||
		len(it.FileChanges) != 1 || it.FileChanges[0].Path != stamp || it.FileChanges[0].Kind != "add" {
		t.Errorf("c2 (stamp): %s %q %+v", it.Status, out("c2"), it.FileChanges)
	}
	if readFile(t, repo, "stamp.txt") != "stamped\n" {
		t.Errorf("stamp.txt = %q", readFile(t, repo, "stamp.txt"))
	}
	if it := items["c3"]; it.Status != protocol.ToolCompleted || len(it.FileChanges) != 0 {
		t.Errorf("c3 (malformed details): %s %+v", it.Status, it.FileChanges)
	}

	// A consumed input and a command: handled, no model request.
	from = s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "skip: not now"}); res.Status != protocol.TurnStartHandled {
		t.Errorf("turn/start of a consumed input: %+v", res)
	}
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/hello world"}); res.Status != protocol.TurnStartHandled {
		t.Errorf("turn/start of /hello: %+v", res)
	}
	raw := s.waitNote(t, &from, protocol.UINotify.Name, func(json.RawMessage) bool { return true })
	if n := decode[protocol.UINotifyParams](t, raw); n.ThreadID != thread || n.Message != "Hello, world!" || n.Level != "info" {
		t.Errorf("ui/notify %+v", n)
	}
	noModelRequest(t, s, from, thread, "second turn")
}

// TestE2EJavaScriptExtensionLoop: an input handler that never returns is
// interrupted (here after 300 ms: KNIGHTCODE_EXTENSION_HANDLER_TIMEOUT;
// 5 s by default), a warning reaches the subscriber, and the turn still
// starts and ends.
func TestE2EJavaScriptExtensionLoop(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{"loop": script(map[string]any{"text": "still here"})})
	cmd := exec.Command(binary, "app-server", "-e", jsFixture(t, "loop.ts"))
	cmd.Env = append(env, "KNIGHTCODE_EXTENSION_HANDLER_TIMEOUT=300ms")
	s, _ := serveDiff(t, cmd, home)
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "loop"}}).Thread.ID
	from := s.mark()
	begin := time.Now()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "spin"}); res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start %+v", res)
	}
	notes := s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	if d := time.Since(begin); d > 4*time.Second {
		t.Errorf("the turn took %v", d)
	}
	var warned []protocol.WarningParams
	for _, n := range notes {
		if n.Method == protocol.WarningNotification.Name {
			warned = append(warned, decode[protocol.WarningParams](t, n.Params))
		}
	}
	if len(warned) != 1 || warned[0].Path != jsFixture(t, "loop.ts") ||
		!strings.Contains(warned[0].Message, "its input handler failed: it ran for more than 300ms without returning and was interrupted") {
		t.Errorf("warnings %+v", warned)
	}
	if end := decode[protocol.TurnCompletedParams](t, notes[len(notes)-1].Params); end.Turn.Status != protocol.TurnCompleted {
		t.Errorf("the turn ended %+v", end.Turn)
	}
}

// TestE2EJavaScriptExtensionSystemPrompt: a before_agent_start handler's
// system prompt and message reach the model (an OpenAI-compatible test
// server records the request).
func TestE2EJavaScriptExtensionSystemPrompt(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	chat := newChatServer(t, sse(chunk(`{"role":"assistant","content":"Arr"}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2)))
	s, thread := chatExtensionThread(t, chat, repo, "prompt.ts")
	_, from := s.startTurn(t, thread, "hello there")
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %+v", turn)
	}
	msgs := chatMessages(t, chat.onlyRequest(t))
	if len(msgs) != 3 || msgs[0][0] != "system" || msgs[1] != [2]string{"user", "hello there"} || msgs[2] != [2]string{"user", "Arr, remember the pirate voice."} {
		t.Fatalf("messages %q", msgs)
	}
	if !strings.HasSuffix(msgs[0][1], "\n\nAlways answer like a pirate (prompt: hello there).") {
		t.Errorf("system prompt:\n%s", msgs[0][1])
	}
}

// chatExtensionThread starts the binary with the extension fixture name
// and the model local/m1 served by chat (writeLocalModel), and a
// fullAccess thread on it in repo.
func chatExtensionThread(t *testing.T, chat *chatServer, repo, name string) (*diffServer, string) {
	t.Helper()
	home := t.TempDir()
	writeLocalModel(t, home, chat)
	cmd := exec.Command(binary, "app-server", "-e", jsFixture(t, name))
	cmd.Env = append(serverEnv(home), "KC_E2E_KEY="+e2eEnvKey)
	s, _ := serveDiff(t, cmd, home)
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "local", ID: "m1"}}).Thread.ID
	return s, thread
}

// turnItems are the userMessage items and the toolCall items by id that
// notes completed.
func turnItems(t *testing.T, notes []note) (user []protocol.Item, calls map[string]protocol.Item) {
	t.Helper()
	calls = map[string]protocol.Item{}
	for _, it := range completedItems(t, notes) {
		switch it.Type {
		case protocol.ItemUserMessage:
			user = append(user, it)
		case protocol.ItemToolCall:
			calls[it.ID] = it
		}
	}
	return user, calls
}

// itemOutput is it's output, "" without one.
func itemOutput(it protocol.Item) string {
	if it.Output == nil {
		return ""
	}
	return *it.Output
}

// noModelRequest checks that the starts since from started no turn
// (neither turn/started nor an item) and made no model request: the next
// turn's reply is want, the next scripted one.
func noModelRequest(t *testing.T, s *diffServer, from int, thread, want string) {
	t.Helper()
	for _, n := range s.notesFrom(from, thread) {
		if n.Method == protocol.TurnStarted.Name || n.Method == protocol.ItemStarted.Name {
			t.Errorf("a handled or cancelled start sent %s", n.Method)
		}
	}
	from = s.mark()
	mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go on"})
	var agentText []string
	for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		if it.Type == protocol.ItemAgentMessage {
			agentText = append(agentText, it.Text)
		}
	}
	if strings.Join(agentText, "|") != want {
		t.Errorf("the turn after the handled and cancelled starts answered %q, want the next scripted reply %q", agentText, want)
	}
}

// TestE2EEmptyExtensionPath: `app-server -e ""` (or --extension "") is a
// usage error at startup, exit code 2, instead of loading the working
// directory as an extension folder; stdin is not read.
func TestE2EEmptyExtensionPath(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"-e", "--extension", "--extension="} {
		args := []string{"app-server", "-e", jsFixture(t, "input.ts"), flag}
		if !strings.HasSuffix(flag, "=") {
			args = append(args, "")
		}
		env, _ := testEnv(t)
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		cmd.Dir = t.TempDir()
		cmd.Stdin = strings.NewReader("") // a server that started reads EOF and exits 0
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%s \"\": %v, want exit code 2; stderr %q", flag, err, stderr.String())
		}
		want := `knightcode app-server: -e/--extension "": an empty path names no extension`
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%s \"\": stderr %q, want %q", flag, stderr.String(), want)
		}
	}
}
