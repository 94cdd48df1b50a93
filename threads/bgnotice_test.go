package threads

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/builtin"
	"github.com/knightcode/knightcode/threads/session"
)

// noticeHeading starts the text of every background shell notice
// (noticeMessage).
const noticeHeading = "Background commands ended:"

// bashResponse is a scripted reply calling bash with command, in the
// background when bg.
func bashResponse(id, command string, bg bool) scripted.Response {
	args, _ := json.Marshal(map[string]any{"command": command, "run_in_background": bg})
	return scripted.Response{ToolCalls: []scripted.ToolCall{{ID: id, Name: "bash", Arguments: args}}}
}

// notices returns the texts of the background shell notices the model
// received in req (custom messages reach it as user messages).
func notices(req agent.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if s := m.Text(); strings.HasPrefix(s, noticeHeading) {
			out = append(out, s)
		}
	}
	return out
}

// shellEnded waits for a thread/backgroundShells/updated of thread whose
// only shell has ended and returns that shell.
func shellEnded(t *testing.T, r *recorder, from *int, thread string) protocol.BackgroundShell {
	t.Helper()
	var p protocol.BackgroundShellsUpdatedParams
	raw := r.wait(t, from, protocol.ThreadBackgroundShellsUpdated.Name, func(raw json.RawMessage) bool {
		var p protocol.BackgroundShellsUpdatedParams
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == thread && len(p.Shells) == 1 && p.Shells[0].Status != protocol.BackgroundShellRunning
	})
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p.Shells[0]
}

// sessionFile returns the session file of the loaded thread id.
func sessionFile(t *testing.T, m *Manager, id string) string {
	t.Helper()
	m.mu.Lock()
	th := m.threads[id]
	m.mu.Unlock()
	if th == nil || th.sess.File() == "" {
		t.Fatalf("thread %s is not loaded or not saved", id)
	}
	return th.sess.File()
}

// pendingIn reads the session file path and returns the ids of the notices
// it still holds for the model.
func pendingIn(t *testing.T, path string) []string {
	t.Helper()
	tr, err := session.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range builtin.PendingNotices(tr.Branch()) {
		ids = append(ids, n.Shell.ID)
	}
	return ids
}

// TestBackgroundNoticeSteeredIntoRunningTurn: a background command that
// ends by itself while a turn runs is steered into that turn (spec,
// thread/backgroundShells: the extensionMessage that tells the model
// commands ended). The command ends while a foreground call of the same
// turn waits; the model's next request in the turn carries the notice,
// after the foreground call's result, and no request before it does. The
// turn shows the extensionMessage live and read back, and nothing is left
// pending for a later turn, in memory or in the session file.
func TestBackgroundNoticeSteeredIntoRunningTurn(t *testing.T) {
	dir := t.TempDir()
	sc := scripted.Script{Responses: []scripted.Response{
		bashResponse("bg", "while [ ! -e g1 ]; do sleep 0.02; done; echo bg-finished; exit 3", true),
		bashResponse("fg", "touch g1; while [ ! -e g2 ]; do sleep 0.02; done; echo fg-done", false),
		{Text: "seen"},
	}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
	ctx := context.Background()
	sub := newRecorder()
	res, err := e.m.Start(ctx, sub, StartOptions{Cwd: dir, ApprovalMode: protocol.ApprovalFullAccess, Model: &ModelRef{Provider: scripted.Name, ID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	thread := res.Thread.ID
	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "run both"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	// The foreground call waits for g2 until the background command has
	// ended and its notice is recorded (the update and the notice are made
	// in the same step on the thread's goroutine).
	shell := shellEnded(t, sub, &from, thread)
	if shell.Status != protocol.BackgroundShellFailed || shell.ExitCode == nil || *shell.ExitCode != 3 {
		t.Fatalf("background shell ended %+v, want failed with exit code 3", shell)
	}
	touch(t, filepath.Join(dir, "g2"))
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn ended %+v", done.Turn)
	}

	reqs := e.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	for i := range 2 {
		if got := notices(reqs[i]); len(got) != 0 {
			t.Errorf("request %d already carried a notice: %q", i, got)
		}
	}
	last := reqs[2].Messages
	got := notices(reqs[2])
	if len(got) != 1 || len(last) == 0 || last[len(last)-1].Text() != got[0] {
		t.Fatalf("request 3 notices %q, last message %+v: want one notice, last", got, last[len(last)-1])
	}
	if prev := last[len(last)-2]; prev.Role != agent.RoleToolResult || prev.ToolCallID != "fg" {
		t.Errorf("the notice follows %s %s, want the foreground call's result", prev.Role, prev.ToolCallID)
	}
	for _, want := range []string{shell.ID, "exit code 3", "bg-finished"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("notice %q lacks %q", got[0], want)
		}
	}

	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Turns) != 1 {
		t.Fatalf("read back %d turns, want 1 (the end started no turn)", len(read.Turns))
	}
	var ext []protocol.Item
	for _, it := range read.Turns[0].Items {
		if it.Type == protocol.ItemExtensionMessage {
			ext = append(ext, it)
		}
	}
	if len(ext) != 1 || ext[0].Extension != protocol.ExtensionBackgroundShell || len(ext[0].BackgroundShells) != 1 ||
		ext[0].BackgroundShells[0].ID != shell.ID || ext[0].BackgroundShells[0].Status != protocol.BackgroundShellFailed {
		t.Errorf("read-back extension items: %+v", ext)
	}
	if ids := pendingIn(t, sessionFile(t, e.m, thread)); len(ids) != 0 {
		t.Errorf("the session file still holds notices %v after the turn told the model", ids)
	}
	e.m.mu.Lock()
	th := e.m.threads[thread]
	e.m.mu.Unlock()
	if err := th.call(ctx, func() error {
		if p := th.bg.Pending(); len(p) != 0 || len(th.extMsgs) != 0 {
			t.Errorf("notices left for a later turn: %+v, %+v", p, th.extMsgs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestBackgroundNoticeSurvivesUnload: a command that ends while no turn
// runs leaves its notice for the next turn; the notice is in the session
// file, so after the thread unloads idle and is resumed the model still
// gets it with the next turn, once: the turn after that carries only the
// delivered copy in its history.
func TestBackgroundNoticeSurvivesUnload(t *testing.T) {
	dir := t.TempDir()
	sc := scripted.Script{Responses: []scripted.Response{
		bashResponse("bg", "while [ ! -e gate ]; do sleep 0.02; done; echo late-output", true),
		{Text: "started"},
		{Text: "told"},
		{Text: "again"},
	}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
	bcast := newRecorder()
	e.m.catalog.notifier = bcast // before any thread runs
	e.m.cfg.IdleUnload = time.Millisecond
	ctx := context.Background()
	sub := newRecorder()
	res, err := e.m.Start(ctx, sub, StartOptions{Cwd: dir, ApprovalMode: protocol.ApprovalFullAccess, Model: &ModelRef{Provider: scripted.Name, ID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	thread := res.Thread.ID
	turn := func(text string) protocol.Turn {
		t.Helper()
		from := sub.mark()
		if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: text}, TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		var p protocol.TurnCompletedParams
		if err := json.Unmarshal(sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &p); err != nil {
			t.Fatal(err)
		}
		return p.Turn
	}
	first := turn("start it")
	from := sub.mark()
	touch(t, filepath.Join(dir, "gate"))
	shell := shellEnded(t, sub, &from, thread)
	file := sessionFile(t, e.m, thread)
	if ids := pendingIn(t, file); len(ids) != 1 || ids[0] != shell.ID {
		t.Fatalf("session file holds notices %v, want [%s]", ids, shell.ID)
	}

	bfrom := bcast.mark()
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), thread); err != nil {
		t.Fatal(err)
	}
	bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))
	if _, err := e.m.Resume(ctx, sub, thread, ""); err != nil {
		t.Fatal(err)
	}
	// Loaded again, its sidebar row has the last outcome read from the file.
	if r := sidebarRowOf(t, bcast, &bfrom, thread, func(r protocol.SidebarRow) bool { return r.Status.Type == protocol.ThreadStatusIdle }); r.LastTurn == nil ||
		r.LastTurn.ID != first.ID || r.LastTurn.Status != protocol.TurnCompleted || r.Title != "start it" {
		t.Errorf("sidebar row after the resume: %+v, want last turn %s", r, first.ID)
	}
	turn("anything new?")
	turn("and now?")

	reqs := e.prov.requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4", len(reqs))
	}
	for i, want := range []int{0, 0, 1, 1} {
		if got := len(notices(reqs[i])); got != want {
			t.Errorf("request %d carried %d notices, want %d", i, got, want)
		}
	}
	n := notices(reqs[2])
	if len(n) == 1 {
		for _, want := range []string{shell.ID, "late-output", "completed"} {
			if !strings.Contains(n[0], want) {
				t.Errorf("notice %q lacks %q", n[0], want)
			}
		}
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Turns) != 3 {
		t.Fatalf("read back %d turns, want 3", len(read.Turns))
	}
	var types []string
	for _, it := range read.Turns[1].Items {
		types = append(types, it.Type)
	}
	if want := []string{protocol.ItemUserMessage, protocol.ItemExtensionMessage, protocol.ItemAgentMessage}; strings.Join(types, ",") != strings.Join(want, ",") {
		t.Errorf("turn after resume: items %v, want %v", types, want)
	}
	if ids := pendingIn(t, file); len(ids) != 0 {
		t.Errorf("notices %v still pending after the model was told", ids)
	}
}
