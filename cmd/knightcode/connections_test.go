package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// TestTwoConnectionsShareOneServer drives one wired server through two
// connections (spec: "Subscriptions and replacement"): the connection that
// starts a thread is subscribed and gets its turn notifications; the other
// gets only the sidebar updates every initialized connection gets
// (thread/turn/completed, thread/status/changed) until it resumes the
// thread, after which both get them; after thread/unsubscribe it gets the
// sidebar updates only again; a connection that closes leaves the other
// working.
func TestTwoConnectionsShareOneServer(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KNIGHTCODE_CODING_AGENT_DIR", filepath.Join(home, "agent"))
	writeScripts(t, home, map[string]string{"chat": `{"responses": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}`})
	srv := wiredServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*rpctest.DefaultTimeout)
	defer cancel()
	// Shutdown unloads every thread (their goroutines end) once both
	// connections are closed.
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	}()
	connect := func() (*client.Client, *recorder) {
		c := client.NewInProcess(srv)
		n := newRecorder()
		c.OnNotification(n.add)
		if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
			t.Fatal(err)
		}
		return c, n
	}
	a, an := connect()
	defer a.Close()
	b, bn := connect()

	repo := diffRepo(t)
	started, err := client.Call(ctx, a, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"})
	if err != nil {
		t.Fatal(err)
	}
	thread := started.Thread.ID
	if _, err := client.Call(ctx, a, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
		ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "chat"}}); err != nil {
		t.Fatal(err)
	}
	turn := func(n int) {
		t.Helper()
		if _, err := client.Call(ctx, a, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"}); err != nil {
			t.Fatal(err)
		}
		an.waitCount(t, protocol.TurnCompletedNotification.Name, thread, n)
		an.waitCount(t, protocol.ThreadTurnCompleted.Name, thread, n)
		bn.waitCount(t, protocol.ThreadTurnCompleted.Name, thread, n)
	}

	// Turn 1: b is not subscribed.
	turn(1)
	if got := bn.count(protocol.TurnCompletedNotification.Name, thread); got != 0 {
		t.Errorf("an unsubscribed connection got %d turn/completed", got)
	}
	if got := bn.count(protocol.ThreadStatusChanged.Name, thread); got == 0 {
		t.Errorf("an unsubscribed connection got no thread/status/changed")
	}

	// Turn 2: b resumed the thread, so it gets the turn too.
	if _, err := client.Call(ctx, b, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread}); err != nil {
		t.Fatal(err)
	}
	turn(2)
	bn.waitCount(t, protocol.TurnCompletedNotification.Name, thread, 1)
	if got := bn.count(protocol.ItemCompleted.Name, thread); got == 0 {
		t.Errorf("a subscribed connection got no item/completed")
	}

	// Turn 3: b unsubscribed; it gets the sidebar update only.
	if _, err := client.Call(ctx, b, protocol.ThreadUnsubscribe, protocol.ThreadUnsubscribeParams{ThreadID: thread}); err != nil {
		t.Fatal(err)
	}
	turn(3)
	if got := bn.count(protocol.TurnCompletedNotification.Name, thread); got != 1 {
		t.Errorf("after thread/unsubscribe: %d turn/completed, want still 1", got)
	}

	// b goes away; a still reads the thread.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	read, err := client.Call(ctx, a, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(read.Turns); got != 3 || slices.ContainsFunc(read.Turns, func(tr protocol.Turn) bool { return tr.Status != protocol.TurnCompleted }) {
		t.Errorf("thread/read after the other connection closed: %+v", read.Turns)
	}
}

// sidebarOf returns a predicate matching thread/sidebar params of thread
// that satisfy ok (decoded).
func sidebarOf(t *testing.T, thread string, ok func(protocol.ThreadSidebarParams) bool) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p protocol.ThreadSidebarParams
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Errorf("thread/sidebar params %s: %v", raw, err)
			return false
		}
		return p.ThreadID == thread && ok(p)
	}
}

// TestSidebarOnSecondConnection drives a thread from connection a and
// keeps its sidebar row live on connection b, which never subscribes
// (spec: "Every initialized connection gets thread/sidebar ... updates";
// the row's shape is ours, protocol.ThreadSidebarParams): b gets the row
// of the new thread, its title from the first user message, active with
// waitingOn approval while a is asked and without it once a answered, the
// completed, failed and interrupted outcomes as lastTurn (the ids of a's
// turn/completed), archived and unarchived rows, and the deletion, and no
// turn/completed of its own. Every row b gets is complete: cwd, updatedAt
// and status are always there.
func TestSidebarOnSecondConnection(t *testing.T) {
	home := inProcessHome(t)
	writeScripts(t, home, map[string]string{"side": script(
		toolReply(bashCall("c1", "touch approved.txt")),
		map[string]any{"text": "done"},
		map[string]any{"error": "the model exploded"},
		map[string]any{"text": "this reply takes its time", "delayMs": 60000},
	)})
	repo := threadsRepo(t)
	srv := wiredServerShutAtCleanup(t)
	release := make(chan struct{})
	a := connect(t, srv, func(ctx context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return protocol.ItemToolCallRequestApprovalResult{}, ctx.Err()
		}
		return protocol.ItemToolCallRequestApprovalResult{Decision: "accept"}, nil
	})
	defer a.c.Close()
	b := connect(t, srv, func(context.Context, protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		t.Error("b was asked for an approval without being subscribed")
		return protocol.ItemToolCallRequestApprovalResult{Decision: "decline"}, nil
	})
	defer b.c.Close()

	from := b.mark()
	started := mustCall(t, a, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "ask", Model: &protocol.ModelRef{Provider: "scripted", ID: "side"}})
	thread := started.Thread.ID
	var rows []protocol.SidebarRow
	row := func(what string, ok func(protocol.SidebarRow) bool) protocol.SidebarRow {
		t.Helper()
		p := decode[protocol.ThreadSidebarParams](t, b.waitNote(t, &from, protocol.ThreadSidebar.Name, sidebarOf(t, thread, func(p protocol.ThreadSidebarParams) bool {
			return p.Row != nil && ok(*p.Row)
		})))
		if r := p.Row; r.Cwd != repo || r.UpdatedAt == "" || r.Status.Type == "" || p.Deleted {
			t.Errorf("%s: incomplete row %s", what, mustJSON(p))
		}
		rows = append(rows, *p.Row)
		return *p.Row
	}
	status := func(typ string, waiting ...string) func(protocol.SidebarRow) bool {
		return func(r protocol.SidebarRow) bool {
			return r.Status.Type == typ && slices.Equal(r.Status.WaitingOn, waiting)
		}
	}
	row("started", status(protocol.ThreadStatusIdle))

	// Turn 1 asks for an approval: b sees the title, the wait and the outcome.
	turn1, aFrom := a.startTurn(t, thread, "first prompt for the sidebar")
	row("titled", func(r protocol.SidebarRow) bool {
		return r.Title == "first prompt for the sidebar" && r.Status.Type == protocol.ThreadStatusActive
	})
	row("waiting", status(protocol.ThreadStatusActive, protocol.WaitingOnApproval))
	close(release)
	row("answered", status(protocol.ThreadStatusActive))
	done1 := row("completed", status(protocol.ThreadStatusIdle))
	a.waitNote(t, &aFrom, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	if l := done1.LastTurn; l == nil || l.ID != turn1 || l.Status != protocol.TurnCompleted || l.CompletedAt == 0 || len(l.Items) != 0 {
		t.Errorf("after turn 1: lastTurn %s, want %s completed without items", mustJSON(l), turn1)
	}

	// Turn 2 fails.
	turn2, _ := a.startTurn(t, thread, "second")
	done2 := row("failed", func(r protocol.SidebarRow) bool { return r.LastTurn != nil && r.LastTurn.ID == turn2 })
	if l := done2.LastTurn; l.Status != protocol.TurnFailed || l.Error == nil || !strings.Contains(l.Error.Message, "the model exploded") ||
		done2.Status.Type != protocol.ThreadStatusIdle || done2.Title != done1.Title {
		t.Errorf("after turn 2: %s", mustJSON(done2))
	}

	// Turn 3 is interrupted.
	turn3, _ := a.startTurn(t, thread, "third")
	row("running", func(r protocol.SidebarRow) bool {
		return r.Status.Type == protocol.ThreadStatusActive && r.LastTurn != nil && r.LastTurn.ID == turn2
	})
	mustCall(t, a, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turn3})
	done3 := row("interrupted", func(r protocol.SidebarRow) bool { return r.LastTurn != nil && r.LastTurn.ID == turn3 })
	if done3.LastTurn.Status != protocol.TurnInterrupted || done3.Status.Type != protocol.ThreadStatusIdle {
		t.Errorf("after turn 3: %s", mustJSON(done3))
	}

	// Archive, unarchive, archive and delete: rows of the saved thread.
	mustCall(t, a, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
	row("unloaded", status(protocol.ThreadStatusNotLoaded))
	archived := row("archived", func(r protocol.SidebarRow) bool { return r.Archived })
	if archived.Status.Type != protocol.ThreadStatusNotLoaded || archived.Title != done1.Title ||
		archived.LastTurn == nil || archived.LastTurn.ID != turn3 || archived.LastTurn.Status != protocol.TurnInterrupted {
		t.Errorf("archived row: %s", mustJSON(archived))
	}
	mustCall(t, a, protocol.ThreadUnarchive, protocol.ThreadUnarchiveParams{ThreadID: thread})
	if r := row("unarchived", func(r protocol.SidebarRow) bool { return !r.Archived }); r.LastTurn == nil || r.LastTurn.ID != turn3 {
		t.Errorf("unarchived row: %s", mustJSON(r))
	}
	mustCall(t, a, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
	row("archived again", func(r protocol.SidebarRow) bool { return r.Archived })
	mustCall(t, a, protocol.ThreadDelete, protocol.ThreadDeleteParams{ThreadID: thread})
	del := decode[protocol.ThreadSidebarParams](t, b.waitNote(t, &from, protocol.ThreadSidebar.Name, sidebarOf(t, thread, func(p protocol.ThreadSidebarParams) bool { return p.Deleted })))
	if del.Row != nil {
		t.Errorf("deleted: %s, want no row", mustJSON(del))
	}

	// b got the other broadcasts too: thread/turn/completed for the
	// completed, failed and interrupted outcomes, the archive notices and
	// the deletion; never the subscribers' turn/completed.
	var outcomes []string
	counts := map[string]int{}
	for _, n := range b.since(0) {
		switch n.Method {
		case protocol.TurnCompletedNotification.Name, protocol.ItemCompleted.Name:
			t.Errorf("b, not subscribed, got %s", n.Method)
		case protocol.ThreadTurnCompleted.Name:
			p := decode[protocol.ThreadTurnCompletedParams](t, n.Params)
			outcomes = append(outcomes, p.Turn.ID+" "+p.Turn.Status)
		}
		if threadOf(n.Params) == thread {
			counts[n.Method]++
		}
	}
	want := []string{turn1 + " " + protocol.TurnCompleted, turn2 + " " + protocol.TurnFailed, turn3 + " " + protocol.TurnInterrupted}
	if !slices.Equal(outcomes, want) {
		t.Errorf("b's thread/turn/completed: %q, want %q", outcomes, want)
	}
	for m, n := range map[string]int{protocol.ThreadArchived.Name: 2, protocol.ThreadUnarchived.Name: 1, protocol.ThreadDeleted.Name: 1} {
		if counts[m] != n {
			t.Errorf("b got %d %s, want %d", counts[m], m, n)
		}
	}
}

// TestE2ESidebarOverStdio: thread/sidebar reaches the binary's stdio
// connection, also once it has unsubscribed from the thread: the row after
// a turn carries the outcome, and archiving the thread it no longer
// subscribes to sends the unloaded and archived rows with that outcome.
func TestE2ESidebarOverStdio(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"chat": script(map[string]any{"text": "hello"})})
	thread := s.startThread(t, repo, "chat")
	from := s.mark()
	turn, _ := s.runTurn(t, thread, "say hello")
	wait := func(what string, ok func(protocol.SidebarRow) bool) protocol.SidebarRow {
		t.Helper()
		p := decode[protocol.ThreadSidebarParams](t, s.waitNote(t, &from, protocol.ThreadSidebar.Name, sidebarOf(t, thread, func(p protocol.ThreadSidebarParams) bool {
			return p.Row != nil && ok(*p.Row)
		})))
		return *p.Row
	}
	if r := wait("after the turn", func(r protocol.SidebarRow) bool { return r.LastTurn != nil }); r.LastTurn.ID != turn.ID ||
		r.LastTurn.Status != protocol.TurnCompleted || r.Status.Type != protocol.ThreadStatusIdle || r.Title != "say hello" || r.Cwd != repo {
		t.Errorf("row after the turn: %s", mustJSON(r))
	}
	mustCall(t, s, protocol.ThreadUnsubscribe, protocol.ThreadUnsubscribeParams{ThreadID: thread})
	mustCall(t, s, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
	wait("unloaded", func(r protocol.SidebarRow) bool {
		return r.Status.Type == protocol.ThreadStatusNotLoaded && !r.Archived
	})
	if r := wait("archived", func(r protocol.SidebarRow) bool { return r.Archived }); r.LastTurn == nil || r.LastTurn.ID != turn.ID || r.Title != "say hello" {
		t.Errorf("archived row: %s", mustJSON(r))
	}
}
