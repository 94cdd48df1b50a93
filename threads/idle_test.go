package threads

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// loaded returns the loaded thread with id (the test fails when none is).
func (e *env) loaded(t *testing.T, id string) *thread {
	t.Helper()
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	th := e.m.threads[id]
	if th == nil {
		t.Fatalf("thread %s is not loaded", id)
	}
	return th
}

// TestCheckIdleKeepsOneTimer calls checkIdle many times on a thread without
// subscribers: it keeps resetting the same timer, and a subscriber disarms
// it.
func TestCheckIdleKeepsOneTimer(t *testing.T) {
	e := newEnv(t, nil, time.Hour)
	ctx := context.Background()
	sub := newRecorder()
	id := e.start(t, sub, t.TempDir(), "")
	th := e.loaded(t, id)
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), id); err != nil {
		t.Fatal(err)
	}
	err := th.call(ctx, func() error {
		first := th.idleTimer
		if first == nil || !th.idleArmed {
			t.Errorf("no idle timer armed after the last unsubscribe: timer %v armed %v", first, th.idleArmed)
			return nil
		}
		for range 1000 {
			th.checkIdle()
		}
		if th.idleTimer != first || !th.idleArmed || th.idleStale != 0 {
			t.Errorf("after 1000 checkIdle calls: same timer %v, armed %v, stale %d; want the same armed timer, none stale",
				th.idleTimer == first, th.idleArmed, th.idleStale)
		}
		th.subscribe(sub)
		if th.idleArmed || th.idleTimer != first {
			t.Errorf("a subscriber left the idle timer armed (%v) or replaced it", th.idleArmed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckIdleUnloadsOnce resets a short idle timer many times while it
// keeps firing: the fires that came too late to stop are ignored, the last
// one unloads the thread, exactly once.
func TestCheckIdleUnloadsOnce(t *testing.T) {
	e := newEnv(t, nil, time.Microsecond)
	ctx := context.Background()
	sub := newRecorder()
	id := e.start(t, sub, t.TempDir(), "")
	th := e.loaded(t, id)
	bfrom := e.bcast.mark()
	err := th.call(ctx, func() error {
		delete(th.subs, sub.ID())
		for range 1000 {
			th.checkIdle()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	from := bfrom
	e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(id, protocol.ThreadStatusNotLoaded))
	<-th.done // every later fire is dropped
	unloads := 0
	e.bcast.mu.Lock()
	for _, n := range e.bcast.notes[bfrom:] {
		if n.method == protocol.ThreadStatusChanged.Name && statusIs(id, protocol.ThreadStatusNotLoaded)(json.RawMessage(n.params)) {
			unloads++
		}
	}
	e.bcast.mu.Unlock()
	if unloads != 1 {
		t.Errorf("the thread unloaded %d times, want 1", unloads)
	}
}
