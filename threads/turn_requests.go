package threads

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/threads/ext"
)

// The turn requests of a loaded thread (spec: "Threads and turns"):
// turn/start, turn/steer, turn/queue/add, turn/queue/remove and
// turn/interrupt. Each goes through the thread's goroutine (thread.call);
// the turn engine itself is turn.go, its items and events turn_events.go.

// TurnOptions are the options of [Manager.StartTurn]: RequestID is the
// client's token, echoed in turn/started.
type TurnOptions struct {
	RequestID string
}

// StartTurn starts a turn of in on the loaded thread id without waiting
// for it (turn/start): sub subscribes to the thread and becomes its most
// recent initiating connection (asked first for approvals and dialogs,
// issue 11); in's review comments are quoted from the thread's checkout.
// When the thread's extensions intercept the input (a registered command,
// input handlers: extensions.go) it waits for them: status is
// protocol.TurnStartHandled when they consumed it (no turn starts),
// protocol.TurnStartCancelled when turn/interrupt or an unload came first
// (nothing starts), else protocol.TurnStartStarted with the input as they
// left it.
//
// Errors: ErrThreadNotFound when the thread is not loaded;
// ErrTurnInProgress when a turn runs or starts (or a checkout fence holds
// the checkout); *workspace.ConflictError worktreeDeleted when the
// thread's managed worktree is deleted or its directory is missing;
// *coreerr.ParamError "comments[i]..." for comments that do not fit the
// diff they name (quoteComments) and "model" when the thread has no usable
// model (pick one with thread/settings/update); *NoKeyError.
func (m *Manager) StartTurn(ctx context.Context, sub Subscriber, id string, in Input, o TurnOptions) (status, threadID string, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return "", "", err
	}
	if sub != nil {
		t.post(func() { t.noteInitiator(sub.ID()) })
	}
	run, err := t.turnInput(ctx, in)
	if err != nil {
		return "", "", err
	}
	if err := t.awaitExtensions(ctx); err != nil {
		return "", "", err
	}
	type answer struct {
		status, threadID string
		err              error
	}
	answered := make(chan answer, 1)
	err = t.call(ctx, func() error {
		t.subscribe(sub)
		t.admitStart(run, o.RequestID, func(_ input, status string, err error) {
			target := t.id
			if t.replacedBy != "" {
				target = t.replacedBy
			}
			answered <- answer{status, target, err}
		})
		return nil
	})
	if err != nil {
		return "", "", err
	}
	var a answer
	select {
	case a = <-answered:
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
	return a.status, a.threadID, a.err
}

// turnInput is in as the thread runs it, its review comments quoted from
// the thread's checkout (quoteComments).
func (t *thread) turnInput(ctx context.Context, in Input) (input, error) {
	run := input{text: in.Text, images: in.Images, clientMessageID: in.ClientMessageID, comments: in.Comments}
	if len(in.Comments) == 0 {
		return run, nil
	}
	if err := t.checkoutGone(); err != nil {
		return input{}, err
	}
	quoted, err := quoteComments(ctx, t.m.cfg.Differ, t.cwd, in.Comments)
	if err != nil {
		return input{}, err
	}
	run.quoted = quoted
	return run, nil
}

// Steer hands text to the running turn expectedTurnID of the loaded thread
// id, which takes it before its next model request (turn/steer); the
// connection initiator (0: none) becomes the thread's most recent
// initiating connection.
//
// When the thread's extensions have input handlers, the text goes through
// them first (pi 0.73.1 agent-session.js prompt: the input event comes
// before a streaming prompt is queued as a steer) and Steer answers once
// they are done: a transform steers their text, "handled" consumes it (no
// steer). Steers leave the handlers in the order they were sent. A steer
// still in the handlers belongs to the running turn (EXTENSIBILITY.md §7):
// the turn's interruption, settlement or the thread's unload cancels it,
// and it never enters a later turn.
//
// Errors: ErrThreadNotFound; ErrTurnMismatch when expectedTurnID is not
// the running turn or no turn runs; *coreerr.ParamError "text" when empty,
// or when the turn ended while the handlers held it.
func (m *Manager) Steer(ctx context.Context, initiator uint64, id, text, expectedTurnID string) error {
	t, err := m.lookup(id)
	if err != nil {
		return err
	}
	t.post(func() { t.noteInitiator(initiator) })
	if text == "" {
		return coreerr.Param("text", "must not be empty")
	}
	var held *heldSteer
	err = t.call(ctx, func() error {
		if err := t.checkTurn(expectedTurnID, true); err != nil {
			return err
		}
		if !t.runner().Handles(ext.EventInput) {
			t.steering = append(t.steering, text)
			t.queueUpdated()
			return nil
		}
		held = t.holdSteer(text)
		return nil
	})
	if err != nil || held == nil {
		return err
	}
	select {
	case err := <-held.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heldSteer is a steer in the running turn's input handlers: done gets
// its answer once (nil when steered or consumed).
type heldSteer struct {
	text    string
	cancel  context.CancelFunc
	done    chan error
	ready   bool // the handlers are done with it
	handled bool // they consumed it
}

// holdSteer (owner goroutine) runs the input handlers on text, a steer of
// the running turn, off the thread's goroutine.
func (t *thread) holdSteer(text string) *heldSteer {
	ctx, cancel := context.WithCancel(t.m.base)
	h := &heldSteer{text: text, cancel: cancel, done: make(chan error, 1)}
	t.heldSteers = append(t.heldSteers, h)
	r := t.runner()
	go func() {
		res := r.Input(ctx, ext.InputEvent{Text: text, Source: ext.SourceInteractive})
		t.post(func() { t.steerIntercepted(h, res) })
	}()
	return h
}

// steerIntercepted (owner goroutine) records what the input handlers made
// of the held steer h, unless it was cancelled meanwhile, and steers the
// running turn with the held steers that are done, oldest first, up to
// the first one still held. A transform's images are dropped: a steer is
// text.
func (t *thread) steerIntercepted(h *heldSteer, res ext.InputResult) {
	if !slices.Contains(t.heldSteers, h) {
		return
	}
	h.ready = true
	switch res.Action {
	case ext.InputHandled:
		h.handled = true
	case ext.InputTransform:
		h.text = res.Text
	}
	steered := false
	for len(t.heldSteers) > 0 && t.heldSteers[0].ready {
		f := t.heldSteers[0]
		t.heldSteers = t.heldSteers[1:]
		f.cancel()
		if !f.handled && f.text != "" {
			t.steering = append(t.steering, f.text)
			steered = true
		}
		f.done <- nil
	}
	if steered {
		t.queueUpdated()
	}
}

// cancelSteers (owner goroutine) cancels the steers still in the input
// handlers: each answers invalidParams ("text"); a handler already running
// finishes, unheard.
func (t *thread) cancelSteers() {
	for _, h := range t.heldSteers {
		h.cancel()
		h.done <- coreerr.Param("text", "the turn ended while an extension's input handler held the steer")
	}
	t.heldSteers = nil
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

// QueueAdd queues in on the loaded thread id (turn/queue/add) and returns
// its queue id: it starts a turn at once on an idle thread, else it waits
// in the queue (turn/queue/updated) and starts when the thread is idle,
// oldest first. An input that fails to start is dropped with an error
// notification. The connection initiator (0: none) becomes the thread's
// most recent initiating connection. Errors: ErrThreadNotFound; those of
// the comments' quoting (see StartTurn).
func (m *Manager) QueueAdd(ctx context.Context, initiator uint64, id string, in Input) (queueID string, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return "", err
	}
	t.post(func() { t.noteInitiator(initiator) })
	run, err := t.turnInput(ctx, in)
	if err != nil {
		return "", err
	}
	if err := t.awaitExtensions(ctx); err != nil {
		return "", err
	}
	err = t.call(ctx, func() error {
		if t.unloading {
			return t.gone()
		}
		t.nextQueue++
		q := &queuedInput{input: run, id: fmt.Sprintf("queue-%d", t.nextQueue)}
		queueID = q.id
		if t.turn == nil && t.starting == nil && len(t.followUp) == 0 {
			// It starts at once, through the extensions (admitStart);
			// held by a fence, it waits first in the queue.
			t.admitStart(run, "", func(in input, _ string, err error) {
				switch {
				case errors.Is(err, errFenced):
					q.input = in
					t.followUp = append([]*queuedInput{q}, t.followUp...)
					t.queueUpdated()
				case err != nil:
					t.inputFailed(in, err)
				}
			})
			return nil
		}
		t.followUp = append(t.followUp, q)
		t.queueUpdated()
		return nil
	})
	return queueID, err
}

// QueueRemove removes the queued input queueID of the loaded thread id
// (turn/queue/remove): removed is true when the input will not start.
// Errors: ErrThreadNotFound.
func (m *Manager) QueueRemove(ctx context.Context, id, queueID string) (removed bool, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return false, err
	}
	err = t.call(ctx, func() error {
		i := slices.IndexFunc(t.followUp, func(q *queuedInput) bool { return q.id == queueID })
		if i < 0 {
			return nil
		}
		t.followUp = slices.Delete(t.followUp, i, i+1)
		removed = true
		t.queueUpdated()
		t.checkIdle()
		return nil
	})
	return removed, err
}

// Interrupt interrupts the loaded thread id (turn/interrupt): a start in
// its extensions' hands is cancelled (it answers "cancelled"); the running
// turn (if any) is cancelled and completes interrupted; queued inputs and
// undelivered steering are dropped; a long operation the thread started
// ([Manager.RunOperation]: git/commit's hooks, gh) is stopped. It does not
// wait for the turn, the extensions' handlers or the operation to end.
// Errors: ErrThreadNotFound; ErrTurnMismatch when turnID is given and is
// not the running turn.
func (m *Manager) Interrupt(ctx context.Context, id, turnID string) error {
	t, err := m.lookup(id)
	if err != nil {
		return err
	}
	return t.call(ctx, func() error {
		if err := t.checkTurn(turnID, false); err != nil {
			return err
		}
		t.cancelStart()
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
}
