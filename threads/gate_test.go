package threads

import (
	"context"
	"errors"
	"path/filepath"
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
	err := e.m.WithCheckout(ctx, first, func(string) error {
		from := e.bcast.mark()
		if _, err := e.m.Unsubscribe(ctx, sub.ID(), first); err != nil {
			return err
		}
		e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(first, protocol.ThreadStatusNotLoaded))
		second = e.start(t, sub, filepath.Join(repo, "sub"), "quick")
		if _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "refused"}, TurnOptions{}); !errors.Is(err, ErrTurnInProgress) {
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
	if _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "now"}, TurnOptions{}); err != nil {
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
