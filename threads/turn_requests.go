package threads

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The turn requests of a loaded thread (spec: "Threads and turns"):
// turn/start, turn/steer, turn/queue/add, turn/queue/remove and
// turn/interrupt. Each goes through the thread's goroutine (thread.call);
// the turn engine itself is turn.go, its items and events turn_events.go.

// StartTurn answers turn/start: it validates the input, subscribes sub and
// starts a turn on the thread without waiting for it.
//
// Errors: ErrThreadNotFound when the thread is not loaded; ErrTurnInProgress
// when a turn runs (or a checkout fence holds the checkout);
// *workspace.ConflictError worktreeDeleted when the thread's managed
// worktree is deleted or its directory is missing; invalidParams
// "text", "clientMessageId", "images[i]..." for bad input and "model" when
// the thread has no usable model (pick one with thread/settings/update).
func (m *Manager) StartTurn(ctx context.Context, sub Subscriber, p protocol.TurnStartParams) (protocol.TurnStartResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.TurnStartResult{}, err
	}
	in, err := m.parseTurnInput(ctx, p.ThreadID, p.Text, p.ClientMessageID, p.Images, p.Comments)
	if err != nil {
		return protocol.TurnStartResult{}, err
	}
	err = t.call(ctx, func() error {
		t.subscribe(sub)
		return t.startTurn(in, p.RequestID)
	})
	if err != nil {
		return protocol.TurnStartResult{}, err
	}
	return protocol.TurnStartResult{Status: protocol.TurnStartStarted, ThreadID: t.id, RequestID: p.RequestID}, nil
}

// parseTurnInput validates the input of turn/start or turn/queue/add for
// thread id (parseInput) and quotes its review comments from the thread's
// checkout (reviewComments).
func (m *Manager) parseTurnInput(ctx context.Context, id, text, clientMessageID string, images []protocol.ImageInput, comments []protocol.ReviewComment) (input, error) {
	in, err := parseInput(text, clientMessageID, images, len(comments) > 0)
	if err != nil || len(comments) == 0 {
		return in, err
	}
	cwd, err := m.Checkout(id)
	if err != nil {
		return input{}, err
	}
	in.comments, in.quoted, err = m.reviewComments(ctx, cwd, comments)
	if err != nil {
		return input{}, err
	}
	return in, nil
}

// Steer answers turn/steer: text goes to the running turn expectedTurnID,
// which takes it before its next model request. Errors: ErrThreadNotFound;
// ErrTurnMismatch when expectedTurnID is not the running turn or no turn
// runs; invalidParams "text" when empty.
func (m *Manager) Steer(ctx context.Context, p protocol.TurnSteerParams) (protocol.TurnSteerResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.TurnSteerResult{}, err
	}
	if p.Text == "" {
		return protocol.TurnSteerResult{}, coreerr.Param("text", "must not be empty")
	}
	err = t.call(ctx, func() error {
		if err := t.checkTurn(p.ExpectedTurnID, true); err != nil {
			return err
		}
		t.steering = append(t.steering, p.Text)
		t.queueUpdated()
		return nil
	})
	return protocol.TurnSteerResult{}, err
}

// checkTurn checks that id names the running turn; with required, an empty
// id or no running turn is a mismatch too.
func (t *thread) checkTurn(id string, required bool) error {
	switch {
	case t.turn == nil && (required || id != ""):
		return fmt.Errorf("%w: no turn is running (expected %q)", ErrTurnMismatch, id)
	case t.turn != nil && (id != "" || required) && id != t.turn.id:
		return fmt.Errorf("%w: the running turn is %s, not %q", ErrTurnMismatch, t.turn.id, id)
	}
	return nil
}

// QueueAdd answers turn/queue/add: the input starts a turn at once on an
// idle thread, else it waits in the queue (turn/queue/updated) and starts
// when the thread is idle, oldest first. An input that fails to start is
// dropped with an error notification. Errors: ErrThreadNotFound;
// invalidParams for bad input.
func (m *Manager) QueueAdd(ctx context.Context, p protocol.TurnQueueAddParams) (protocol.TurnQueueAddResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.TurnQueueAddResult{}, err
	}
	in, err := m.parseTurnInput(ctx, p.ThreadID, p.Text, p.ClientMessageID, p.Images, p.Comments)
	if err != nil {
		return protocol.TurnQueueAddResult{}, err
	}
	var res protocol.TurnQueueAddResult
	err = t.call(ctx, func() error {
		if t.unloading {
			return t.m.goneErr(t.id)
		}
		t.nextQueue++
		q := &queuedInput{input: in, id: fmt.Sprintf("queue-%d", t.nextQueue)}
		res.QueueID = q.id
		if t.turn == nil && len(t.followUp) == 0 {
			err := t.startTurn(in, "")
			if !errors.Is(err, errFenced) {
				if err != nil {
					t.inputFailed(in, err)
				}
				return nil
			}
		}
		t.followUp = append(t.followUp, q)
		t.queueUpdated()
		return nil
	})
	return res, err
}

// QueueRemove answers turn/queue/remove: removed is true when the input
// will not start. Errors: ErrThreadNotFound.
func (m *Manager) QueueRemove(ctx context.Context, p protocol.TurnQueueRemoveParams) (protocol.TurnQueueRemoveResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.TurnQueueRemoveResult{}, err
	}
	var res protocol.TurnQueueRemoveResult
	err = t.call(ctx, func() error {
		i := slices.IndexFunc(t.followUp, func(q *queuedInput) bool { return q.id == p.QueueID })
		if i < 0 {
			return nil
		}
		t.followUp = slices.Delete(t.followUp, i, i+1)
		res.Removed = true
		t.queueUpdated()
		t.checkIdle()
		return nil
	})
	return res, err
}

// Interrupt answers turn/interrupt: the running turn (if any) is cancelled
// and completes interrupted; queued inputs and undelivered steering are
// dropped; a long operation the thread started ([Manager.RunOperation]:
// git/commit's hooks, gh) is stopped. It does not wait for the turn or the
// operation to end. Errors: ErrThreadNotFound; ErrTurnMismatch when turnID
// is given and is not the running turn.
func (m *Manager) Interrupt(ctx context.Context, p protocol.TurnInterruptParams) (protocol.TurnInterruptResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.TurnInterruptResult{}, err
	}
	err = t.call(ctx, func() error {
		if err := t.checkTurn(p.TurnID, false); err != nil {
			return err
		}
		t.dropQueues()
		if t.turn != nil {
			t.turn.interrupt()
		}
		if op := t.gate.operationOf(t.id); op != nil {
			t.m.log.Info("long operation stopped by turn/interrupt", "thread", t.id, "operation", op.name)
			op.cancel(errInterrupted)
		}
		t.checkIdle()
		return nil
	})
	return protocol.TurnInterruptResult{}, err
}
