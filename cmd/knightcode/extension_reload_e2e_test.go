package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// factoryLine is the log line of a widget component factory (spec
// "Dialogs and extension UI": one line per method per thread load).
const factoryLine = "ctx.ui.setWidget with a component factory draws only in the terminal"

// TestE2EJavaScriptExtensionUIReload drives testdata/extensions/ui.ts
// through the binary with -e: session_start's status and widgets (a view
// and lines) are in thread/start's ui; the two factory widgets write one
// log line; a ui/event on the view's toggle is answered after the handler
// set the widget again (the ui/widget arrives before {}); /reload answers
// handled, removes each widget and sends one empty ui/state before the
// new load's session_start sets them again, which writes its own log line.
func TestE2EJavaScriptExtensionUIReload(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home := testEnv(t)
	cmd := exec.Command(binary, "app-server", "-e", jsFixture(t, "ui.ts"))
	cmd.Env = env
	s, stderr := serveDiff(t, cmd, home)
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess})
	thread := started.Thread.ID
	ui := started.UI
	if len(ui.Statuses) != 1 || ui.Statuses[0] != (protocol.UIStatus{Key: "ui", Text: "started startup"}) {
		t.Errorf("statuses %+v", ui.Statuses)
	}
	var keys []string
	for _, w := range ui.Widgets {
		keys = append(keys, w.Key+"/"+w.Placement)
	}
	if !slices.Equal(keys, []string{"checks/aboveEditor", "plain/belowEditor"}) || ui.Widgets[0].View == nil ||
		!slices.Equal(ui.Widgets[1].Lines, []string{"line one", "  indented"}) {
		t.Fatalf("widgets %+v", ui.Widgets)
	}
	if n := logLines(stderr, factoryLine, 1); n != 1 {
		t.Errorf("%d factory log lines after the load, want 1", n)
	}
	for _, w := range started.Warnings {
		if w.Source == protocol.WarningSourceExtension {
			t.Errorf("load warning %+v", w)
		}
	}

	// The toggle: the handler waits 30 ms, then sets checks again (the
	// wire order, before the answer, is TestJavaScriptViewEventOrder's).
	from := s.mark()
	mustCall(t, s, protocol.UIEvent, protocol.UIEventParams{ThreadID: thread, WidgetKey: "checks", ID: "verbose", Value: json.RawMessage("true")})
	reset := decode[protocol.UIWidgetParams](t, s.waitNote(t, &from, protocol.UIWidgetNotification.Name, nil))
	if reset.Key != "checks" || !strings.Contains(string(reset.View), `"value":true`) {
		t.Fatalf("the re-set checks widget %+v", reset)
	}

	from = s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/reload", RequestID: "r-1"}); res.Status != protocol.TurnStartHandled || res.ThreadID != thread {
		t.Fatalf("turn/start /reload %+v", res)
	}
	last := from
	s.waitNote(t, &last, protocol.UIWidgetNotification.Name, func(raw json.RawMessage) bool {
		p := decode[protocol.UIWidgetParams](t, raw)
		return p.Key == "plain" && p.Placement != ""
	})
	var seq []string
	for _, n := range ofThread(s.since(from)[:last-from], thread) {
		switch n.Method {
		case protocol.UIState.Name:
			p := decode[protocol.UIStateParams](t, n.Params)
			text := ""
			for _, st := range p.Statuses {
				text += st.Key + "=" + st.Text
			}
			seq = append(seq, "state:"+text)
		case protocol.UIWidgetNotification.Name:
			p := decode[protocol.UIWidgetParams](t, n.Params)
			if p.Placement == "" {
				seq = append(seq, "remove:"+p.Key)
			} else {
				seq = append(seq, "set:"+p.Key)
			}
		}
	}
	want := []string{"remove:checks", "remove:plain", "state:", "state:ui=started reload", "set:checks", "set:plain"}
	if !slices.Equal(seq, want) {
		t.Errorf("ui notifications of /reload %q, want %q", seq, want)
	}
	if n := logLines(stderr, factoryLine, 2); n != 2 {
		t.Errorf("%d factory log lines after /reload, want 2 (one per load)", n)
	}
	resumed := mustCall(t, s, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	if len(resumed.UI.Widgets) != 2 || len(resumed.UI.Statuses) != 1 || resumed.UI.Statuses[0].Text != "started reload" {
		t.Errorf("ui after /reload %+v", resumed.UI)
	}
}

// TestJavaScriptViewEventOrder: over the wire of a server wired in
// process with ui.ts as its -e path, the ui/widget a JavaScript
// onViewEvent handler set (after an await) is written before the ui/event
// answer {} (EXTENSIBILITY.md §6 "ui/event answer timing").
func TestJavaScriptViewEventOrder(t *testing.T) {
	inProcessHome(t)
	repo := threadsRepo(t)
	a := dialLogged(t, optionsServer(t, options{Extensions: []string{jsFixture(t, "ui.ts")}}), "")
	started, err := callOn(t, a.c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess})
	if err != nil {
		t.Fatal(err)
	}
	from := a.mark()
	if _, err := callOn(t, a.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: started.Thread.ID, WidgetKey: "checks", ID: "verbose", Value: json.RawMessage("true")}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, l := range a.since(from) {
		m := parseLine(t, l)
		switch {
		case m.Method == protocol.UIWidgetNotification.Name:
			order = append(order, "widget")
		case m.Method == "" && m.Result != nil:
			order = append(order, "answer")
		}
	}
	if !slices.Equal(order, []string{"widget", "answer"}) {
		t.Errorf("wire order %q, want the widget before the answer", order)
	}
}

// TestE2EJavaScriptExtensionNewSession: /fresh (testdata/extensions/
// session.ts) calls ctx.newSession: turn/start answers handled with the
// new thread's id and the requestId; the subscriber gets thread/replaced
// with the same requestId; the new thread's context (withSession)
// notifies that a call on the old, captured context threw "stale
// extension context".
func TestE2EJavaScriptExtensionNewSession(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, nil, "-e", jsFixture(t, "session.ts"))
	old := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess}).Thread.ID
	from := s.mark()
	res, rep := replacedBy(t, s, old, "/fresh", "req-9")
	if rep.Thread.Cwd != repo {
		t.Errorf("thread/replaced %+v", rep)
	}
	at := from
	n := decode[protocol.UINotifyParams](t, s.waitNote(t, &at, protocol.UINotify.Name, nil))
	if n.ThreadID != res.ThreadID || n.Message != "old context: stale extension context" {
		t.Errorf("ui/notify %+v", n)
	}
	// The new thread is the subscriber's: its commands are there.
	cmds := mustCall(t, s, protocol.CommandList, protocol.CommandListParams{ThreadID: res.ThreadID})
	if !slices.ContainsFunc(cmds.Commands, func(c protocol.CommandInfo) bool { return c.Name == "fresh" }) {
		t.Errorf("command/list of the new thread %+v", cmds.Commands)
	}
}

// TestE2EReloadLoadsTrustedProject (EXTENSIBILITY.md §7 "Trust"): a thread
// loaded in an undecided project lacks its .knightcode/extensions
// command; trusting the project does not rebuild the thread; /reload
// loads it.
func TestE2EReloadLoadsTrustedProject(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	dir := filepath.Join(repo, ".knightcode", "extensions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := `export default function (pi: any) { pi.registerCommand("proj", { description: "project", handler: async () => {} }); }` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "proj.ts"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startDiffServer(t, nil)
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess}).Thread.ID
	has := func() bool {
		cmds := mustCall(t, s, protocol.CommandList, protocol.CommandListParams{ThreadID: thread})
		return slices.ContainsFunc(cmds.Commands, func(c protocol.CommandInfo) bool { return c.Name == "proj" })
	}
	if has() {
		t.Fatal("the undecided project's command is listed")
	}
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	if has() {
		t.Fatal("trusting the project rebuilt the loaded thread")
	}
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/reload"}); res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /reload %+v", res)
	}
	if !has() {
		t.Error("after /reload the trusted project's command is not listed")
	}
}

// replacedBy runs the session-replacing command text on thread old with
// requestID: turn/start answers handled with the new thread's id and the
// requestID, and thread/replaced names both with the requestID.
func replacedBy(t *testing.T, s *diffServer, old, text, requestID string) (protocol.TurnStartResult, protocol.ThreadReplacedParams) {
	t.Helper()
	from := s.mark()
	res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: old, Text: text, RequestID: requestID})
	if res.Status != protocol.TurnStartHandled || res.ThreadID == old || res.ThreadID == "" || res.RequestID != requestID {
		t.Fatalf("turn/start %s %+v", text, res)
	}
	rep := decode[protocol.ThreadReplacedParams](t, s.waitNote(t, &from, protocol.ThreadReplaced.Name, nil))
	if rep.ThreadID != old || rep.Thread.ID != res.ThreadID || rep.RequestID != requestID {
		t.Errorf("thread/replaced %+v", rep)
	}
	return res, rep
}

// sessionEntries reads the session file of thread under the server's
// home: its entries' type, id and message role, in file order.
func sessionEntries(t *testing.T, s *diffServer, thread string) []struct{ Type, ID, Role string } {
	t.Helper()
	var out []struct{ Type, ID, Role string }
	err := filepath.WalkDir(s.home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || out != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		var e struct {
			Type, ID string
			Message  struct{ Role string }
		}
		if json.Unmarshal([]byte(lines[0]), &e) != nil || e.ID != thread {
			return nil
		}
		out = []struct{ Type, ID, Role string }{}
		for _, l := range lines[1:] {
			e.Message.Role = ""
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				return err
			}
			out = append(out, struct{ Type, ID, Role string }{e.Type, e.ID, e.Message.Role})
		}
		return nil
	})
	if err != nil || out == nil {
		t.Fatalf("no session file of %s under %s: %v", thread, s.home, err)
	}
	return out
}

// TestE2EJavaScriptExtensionFork: a command's ctx.fork(entryId) before
// the second turn's user message replaces the thread by its fork holding
// the first turn: thread/replaced with the same requestId, turn/start
// answers the fork's id, withSession runs in the fork; an entry that is
// not a turn boundary rejects with a clear Error.
func TestE2EJavaScriptExtensionFork(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"w": script(map[string]any{"text": "one done"}, map[string]any{"text": "two done"})},
		"-e", jsFixture(t, "fork.ts"))
	old := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "w"}}).Thread.ID
	s.runTurn(t, old, "one")
	s.runTurn(t, old, "two")
	var users, assistants []string
	for _, e := range sessionEntries(t, s, old) {
		switch {
		case e.Type == "message" && e.Role == "user":
			users = append(users, e.ID)
		case e.Type == "message" && e.Role == "assistant":
			assistants = append(assistants, e.ID)
		}
	}
	if len(users) != 2 || len(assistants) != 2 {
		t.Fatalf("session entries: users %v, assistants %v", users, assistants)
	}

	from := s.mark()
	res, rep := replacedBy(t, s, old, "/forkat "+users[1], "req-f")
	if rep.Thread.ForkedFromID != old {
		t.Errorf("thread/replaced %+v, want the fork of %s", rep, old)
	}
	at := from
	n := decode[protocol.UINotifyParams](t, s.waitNote(t, &at, protocol.UINotify.Name, func(r json.RawMessage) bool {
		return strings.Contains(string(r), `"forked"`)
	}))
	if n.ThreadID != res.ThreadID {
		t.Errorf("withSession notified on %s, want the fork %s", n.ThreadID, res.ThreadID)
	}
	read := mustCall(t, s, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: res.ThreadID})
	if len(read.Turns) != 1 {
		t.Errorf("the fork has %d turns, want the first one only", len(read.Turns))
	}

	// An assistant message is no turn boundary to fork before.
	from = s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: res.ThreadID, Text: "/forkat " + assistants[0]}); res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /forkat of an assistant message %+v", res)
	}
	n = decode[protocol.UINotifyParams](t, s.waitNote(t, &from, protocol.UINotify.Name, func(r json.RawMessage) bool {
		return strings.Contains(string(r), "fork failed")
	}))
	if !strings.Contains(n.Message, "not a turn boundary") || !strings.Contains(n.Message, assistants[0]) {
		t.Errorf("refused fork notified %q", n.Message)
	}
}

// logLines counts line in the server's stderr once it holds want of them
// (the log reaches stderr through a pipe, after the answer that caused
// it), or after 5 s.
func logLines(stderr *rpctest.SyncBuffer, line string, want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := strings.Count(stderr.String(), line)
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
