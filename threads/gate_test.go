package threads

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestFenceOutlivesItsThread unloads the thread holding a checkout fence (a
// revert in progress) and loads another thread in the same checkout while
// the fence is held: it shares the fenced gate, so its turn is refused
// until the fence ends; then it starts, and the gate goes with its last
// user.
func TestFenceOutlivesItsThread(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "sub/x.txt", "x\n")
	gittest.CommitAll(t, repo, "base")
	e := newEnv(t, map[string]string{"quick": scriptJSON(map[string]any{"text": "one"}, map[string]any{"text": "two"})}, time.Millisecond)
	ctx := context.Background()
	sub := newRecorder()
	first := e.start(t, sub, repo, "quick")
	key := e.m.gates.key(ctx, repo)
	var second string
	err := e.m.WithCheckout(ctx, first, "test action", func(string) error {
		from := e.bcast.mark()
		if _, err := e.m.Unsubscribe(ctx, sub.ID(), first); err != nil {
			return err
		}
		e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(first, protocol.ThreadStatusNotLoaded))
		second = e.start(t, sub, filepath.Join(repo, "sub"), "quick")
		if _, _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "refused"}, TurnOptions{}); !errors.Is(err, ErrTurnInProgress) {
			t.Errorf("StartTurn while the unloaded thread's fence is held: %v, want ErrTurnInProgress", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.m.mu.Lock()
	g := e.m.gates.lookup(key)
	refs := 0
	if g != nil {
		refs = g.refs
	}
	e.m.mu.Unlock()
	if refs != 1 {
		t.Errorf("gate of %s after the fence: %d users, want 1 (the second thread)", key, refs)
	}
	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "now"}, TurnOptions{}); err != nil {
		t.Fatalf("StartTurn after the fence: %v", err)
	}
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(second))
	bfrom := e.bcast.mark()
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), second); err != nil {
		t.Fatal(err)
	}
	e.bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(second, protocol.ThreadStatusNotLoaded))
	e.m.mu.Lock()
	left := len(e.m.gates.byKey)
	e.m.mu.Unlock()
	if left != 0 {
		t.Errorf("%d gates left after every thread unloaded", left)
	}
}

// TestCheckoutRefusalsNameTheHolder: a request refused because another
// thread's work holds the checkout names that thread and its turn or its
// action, in the message and in the *BusyError the wire's data is made of
// (issue 22 QA L8: "a turn is running in the checkout", "a revert, handoff
// or other checkout action is running" named nobody).
func TestCheckoutRefusalsNameTheHolder(t *testing.T) {
	c := newSharedCheckout(t)
	e, sub, repo, flag, first, second := c.e, c.sub, c.repo, c.flag, c.first, c.second
	ctx := context.Background()
	wantHolder := func(what string, err error, want BusyError) {
		t.Helper()
		be, ok := errors.AsType[*BusyError](err)
		if !ok || !errors.Is(err, ErrTurnInProgress) {
			t.Errorf("%s: %v (%T), want a BusyError", what, err, err)
			return
		}
		if want.TurnID == "*" {
			want.TurnID = be.TurnID
			if be.TurnID == "" {
				t.Errorf("%s: no turn named: %+v", what, be)
			}
		}
		if *be != want {
			t.Errorf("%s: %+v, want %+v", what, *be, want)
		}
		for _, w := range []string{first, want.Action, want.TurnID} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", what, err.Error(), w)
			}
		}
	}
	noop := func(context.Context, string) error { return nil }

	// A turn of the first thread holds the checkout.
	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, first, Input{Text: "wait"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	sub.wait(t, &from, protocol.ItemStarted.Name, isTool(first))
	err := e.m.WithCheckout(ctx, second, "thread/diff/revert", func(string) error { return nil })
	wantHolder("a fence during a turn", err, BusyError{ThreadID: first, TurnID: "*", Checkout: repo})
	err = e.m.RunOperation(ctx, second, Operation{Name: "git/branch/switch", Fence: true}, noop)
	wantHolder("a fencing operation during a turn", err, BusyError{ThreadID: first, TurnID: "*", Checkout: repo})
	touch(t, flag)
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(first))

	// A fence of the first thread (a revert) holds it.
	err = e.m.WithCheckout(ctx, first, "thread/diff/revert", func(string) error {
		_, _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "refused"}, TurnOptions{})
		wantHolder("a turn during a revert", err, BusyError{ThreadID: first, Action: "thread/diff/revert", Checkout: repo})
		err = e.m.RunOperation(ctx, second, Operation{Name: "git/commit"}, noop)
		wantHolder("an operation during a revert", err, BusyError{ThreadID: first, Action: "thread/diff/revert", Checkout: repo})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A long operation of the first thread holds it.
	running, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- e.m.RunOperation(ctx, first, Operation{Name: "git/commit"}, func(context.Context, string) error {
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	err = e.m.WithCheckout(ctx, second, "git/stage", func(string) error { return nil })
	wantHolder("a fence during git/commit", err, BusyError{ThreadID: first, Action: "git/commit", Interruptible: true, Checkout: repo})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
