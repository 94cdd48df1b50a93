package threads

import (
	"context"
	"errors"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/coreerr"
)

// Long operations (issue 22): git/commit, git/push, git/pr/create and
// git/branch/switch run the user's hooks or gh, which may take minutes.
// One runs at a time in a checkout, recorded on its gate: the checkout's
// other writes (a second operation, the fenced actions of WithCheckout, a
// handoff) are refused with ErrTurnInProgress naming it rather than queued
// behind it, its reads go on, and turn/interrupt of the thread that
// started it cancels it.

// Operation describes a long operation for [Manager.RunOperation].
type Operation struct {
	// Name is the method ("git/commit"): what a request refused meanwhile
	// is told runs.
	Name string
	// Fence keeps turns out as [Manager.WithCheckout] does: refused while a
	// turn runs in the checkout, and no turn starts there until it ends
	// (git/branch/switch, which writes the working tree). Without it a
	// turn may run beside the operation (git/commit: issue 10's decision,
	// concurrentChange guards a model-written message).
	Fence bool
}

// operation is a long operation running in a checkout (on its gate).
type operation struct {
	name   string
	thread string // the thread that started it
	cancel context.CancelCauseFunc
}

// errInterrupted is the cause of an operation's context cancelled by
// turn/interrupt of its thread.
var errInterrupted = errors.New("stopped by turn/interrupt")

// refusal is the *BusyError naming op, for a request refused while op
// runs in the checkout key.
func (op *operation) refusal(key string) error {
	return &BusyError{ThreadID: op.thread, Action: op.name, Checkout: key, Interruptible: true}
}

// holder is op as the holder of the fence it takes ([Operation.Fence]).
func (op *operation) holder() holder { return holder{thread: op.thread, action: op.name} }

// begin records op as the checkout's operation unless another operation or
// a fence is held, or (with fence) a turn runs; with fence it takes a fence
// too. The error names the holder ([BusyError]).
func (g *gate) begin(op *operation, fence bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.op != nil {
		return g.op.refusal(g.key)
	}
	if fence && len(g.turns) > 0 {
		return g.busyLocked()
	}
	if len(g.fences) > 0 {
		return g.fencedLocked()
	}
	g.op = op
	if fence {
		g.fences = append(g.fences, op.holder())
	}
	return nil
}

// end clears op (begin's fence is released by the caller).
func (g *gate) end(op *operation) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.op == op {
		g.op = nil
	}
}

// operationOf returns the operation thread id started in the checkout, nil
// when none runs.
func (g *gate) operationOf(id string) *operation {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.op != nil && g.op.thread == id {
		return g.op
	}
	return nil
}

// RunOperation runs fn, a long operation of the loaded thread's checkout
// (see [Operation]), with the thread's cwd, once it is admitted: it is
// refused while another operation or a fence ([Manager.WithCheckout], a
// handoff) holds the checkout, and with op.Fence while a turn runs. While
// fn runs, the checkout's other operations and fenced actions are refused
// with ErrTurnInProgress naming op.Name, and the thread counts as busy (it
// does not unload idle, archive refuses). turn/interrupt of the thread
// cancels fn's context (git and gh stop; what they started is undone as
// for a refusal, by fn); fn's error is then a *coreerr.ConflictError
// interrupted. Admission goes through the thread's goroutine, ordered with
// its turn starts; fn runs on the caller's goroutine and must watch ctx.
//
// Errors: ErrThreadNotFound; ErrTurnInProgress; *workspace.ConflictError
// worktreeDeleted (checkoutGone); interrupted; fn's error; ctx's error
// when ctx ends before admission.
func (m *Manager) RunOperation(ctx context.Context, threadID string, op Operation, fn func(ctx context.Context, cwd string) error) error {
	t, err := m.lookup(threadID)
	if err != nil {
		return err
	}
	if err := t.checkoutGone(); err != nil {
		return err
	}
	octx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rec := &operation{name: op.Name, thread: t.id, cancel: cancel}
	var (
		cwd string
		g   *gate
	)
	err = t.call(ctx, func() error {
		if err := t.gate.begin(rec, op.Fence); err != nil {
			return err
		}
		m.gates.hold(t.gate)
		cwd, g = t.cwd, t.gate
		t.disarmIdle()
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		g.end(rec)
		if op.Fence {
			m.unfence(g, rec.holder())
		}
		m.gates.release(g)
		t.post(t.checkIdle)
	}()
	err = fn(octx, cwd)
	if err != nil && errors.Is(context.Cause(octx), errInterrupted) {
		out := op.Name + " was stopped by turn/interrupt"
		if ce, ok := errors.AsType[*coreerr.ConflictError](err); ok && ce.Output != "" {
			out += ": " + ce.Output
		}
		return errors.Join(coreerr.Conflict(coreerr.ReasonInterrupted, nil, "%s", out), err)
	}
	return err
}

// GitDeadlines returns the deadlines of the git/* methods' child processes
// in cwd (the settings git.hookTimeoutSeconds and git.ghTimeoutSeconds,
// global and, for a trusted project, the project's), the defaults when the
// settings cannot be read (logged).
func (m *Manager) GitDeadlines(ctx context.Context, cwd string) config.GitValues {
	return m.settings.gitDeadlines(ctx, cwd)
}
