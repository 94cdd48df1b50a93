package threads

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// appsAsker is an asker whose connection sent mode "desktop" explicitly
// (it draws MCP Apps).
type appsAsker struct{ *asker }

func (appsAsker) DrawsApps() bool { return true }

// TestThreadDrawsApps: a thread's extensions learn at Load whether the
// connection loading it draws MCP Apps: an explicit desktop connection's
// start, resume (a new load) and fork do; a mode-less or terminal
// connection's do not. The approval mode is the thread's current one.
func TestThreadDrawsApps(t *testing.T) {
	e := newPromptEnv(t, 1)
	e.m.cfg.IdleUnload = time.Millisecond // before any thread exists
	var mu sync.Mutex
	var seen []bool
	var api *ext.API
	e.m.cfg.Extensions = []ext.Extension{{Path: "/ext/apps.ts", Load: func(a *ext.API) error {
		mu.Lock()
		defer mu.Unlock()
		seen, api = append(seen, a.Thread().DrawsApps()), a
		return nil
	}}}
	last := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	ctx := context.Background()
	terminal := newAsker(reply(`{}`))
	terminal.mode = protocol.ClientModeTerminal
	for _, tc := range []struct {
		name string
		sub  Subscriber
		want bool
	}{{"explicit desktop", appsAsker{newAsker(reply(`{}`))}, true}, {"no mode", newAsker(reply(`{}`)), false}, {"terminal", terminal, false}} {
		e.startEcho(t, tc.sub, t.TempDir())
		if got := last(); got != tc.want {
			t.Errorf("%s: DrawsApps %v at start", tc.name, got)
		}
	}
	mu.Lock()
	th := api.Thread()
	mu.Unlock()
	if th.ApprovalMode() != protocol.ApprovalFullAccess {
		t.Errorf("approval mode %q", th.ApprovalMode())
	}

	// A resume that loads the thread again, and a fork.
	plain := newAsker(reply(`{}`))
	res := e.startEcho(t, plain, t.TempDir())
	from := plain.mark()
	if _, _, err := e.m.StartTurn(ctx, plain, res.Thread.ID, Input{Text: "go"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	completed(t, plain.recorder, &from, res.Thread.ID)
	if _, err := e.m.Unsubscribe(ctx, plain.ID(), res.Thread.ID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); e.m.loaded(res.Thread.ID) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the thread did not unload")
		}
	}
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	desk := appsAsker{newAsker(reply(`{}`))}
	if _, err := e.m.Resume(ctx, desk, res.Thread.ID, ""); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	loads := slices.Clone(seen[n:])
	mu.Unlock()
	if !slices.Equal(loads, []bool{true}) {
		t.Errorf("loads of the resume saw DrawsApps %v, want [true]", loads)
	}
	if _, err := e.m.Fork(ctx, appsAsker{newAsker(reply(`{}`))}, res.Thread.ID, ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	if !last() {
		t.Error("the fork of an explicit desktop connection does not draw apps")
	}
}
