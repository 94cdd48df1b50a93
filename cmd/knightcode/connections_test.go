package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// connNotes records the notifications one connection received.
type connNotes struct {
	mu    sync.Mutex
	notes []diffNote
}

func (n *connNotes) add(method string, params json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, diffNote{method, params})
}

// count returns how many notifications of method for thread the
// connection received.
func (n *connNotes) count(method, thread string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, x := range n.notes {
		var p struct {
			ThreadID string `json:"threadId"`
		}
		_ = json.Unmarshal(x.params, &p)
		if x.method == method && p.ThreadID == thread {
			k++
		}
	}
	return k
}

// waitCount waits until count(method, thread) reaches want.
func (n *connNotes) waitCount(t *testing.T, method, thread string, want int) {
	t.Helper()
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for n.count(method, thread) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s notifications for %s, want %d", n.count(method, thread), method, thread, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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
	connect := func() (*client.Client, *connNotes) {
		c := client.NewInProcess(srv)
		n := &connNotes{}
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
