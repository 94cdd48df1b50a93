package threads

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// This file is the thread side of thread/handoff (issue 9; spec, Method
// reference thread/handoff): admission and fencing of both checkouts, and
// where the thread runs afterwards (its session's workspace entry, its
// cwd, workspace and gate). The steps in between (settings, environment,
// the handoff package's Plan and Run, the new worktree's setup) are
// placement's (handoff_run.go).

// HandoffOptions are the options of [Manager.Handoff] (thread/handoff): To
// is where the thread and its changes go; Branch is the branch the main
// checkout switches to on a handoff to it ("" for the default: the
// previous handoff's, else a new one named after the thread); Environment
// is the environment whose setup runs in a worktree the handoff makes (""
// for none); DryRun runs every check and writes nothing.
type HandoffOptions struct {
	To          handoff.Direction
	Branch      string
	Environment string
	DryRun      bool
}

// handoffStart is what a handoff reads of its thread before anything
// moves: where it runs (cwd, ws, home, the branch of its last handoff),
// its title, its turns' changes, and its checkout's gate (nil for a dry
// run's thread that is not loaded).
type handoffStart struct {
	cwd, title, branch string
	ws, home           *session.Workspace
	gate               *gate
	changes            *handoff.Changes
}

// Handoff hands the thread id off (thread/handoff): the thread (loaded for
// it when needed) and its uncommitted changes move between its managed
// worktree and the main checkout (placement.handoff), then the thread runs
// there: its cwd and workspace change, a workspace entry appended to its
// session (the header stays as it is) records it before the source is
// cleaned (recordPlacement), subscribers receive thread/replaced with the
// same id, and queued inputs start there once the handoff ends. Both
// checkouts are fenced while it runs: no turn starts in either. Other
// threads loaded in either checkout stay loaded: an idle one simply sees
// the new state (its next turn captures the checkout as it then is), and
// one with a turn running or inputs queued refuses the handoff (issue 22's
// decision). A worktree the handoff makes is made as thread/start makes
// one: the environment's setup runs there, then the project's worktrees
// past worktrees.keep are pruned; an environment given for a thread going
// back to its own worktree is not used (a warning says so). The warnings
// name the moved paths that no turn of the thread changed
// (handoff.Options.Changes). With o.DryRun every check runs
// (handoff.Handoff.Plan) and nothing is written: a thread that is not
// loaded is read from its session file.
//
// Errors, in this order: *coreerr.ParamError for a thread with no message
// yet ("threadId"), one already on that side ("to"); ErrTurnInProgress
// when the thread runs a turn (a *BusyError naming it) or a background
// shell of the thread still runs; the worktree's worktreeDeleted; then,
// when the destination is not clean, its localChanges
// (handoff.Handoff.CheckDestination) before a *BusyError naming another
// thread of either checkout with a turn running or inputs queued, or
// ErrTurnInProgress naming a long operation running there (git/commit...:
// RunOperation); then *coreerr.ParamError "environment" for an unknown
// environment; then the handoff package's *ConflictError (localChanges,
// operationInProgress, branchExists, worktreeDeleted, submodules) and
// *RecoveryError (recoveryRequired); ErrThreadNotFound.
func (m *Manager) Handoff(ctx context.Context, sub Subscriber, id string, o HandoffOptions) (HandedOff, error) {
	if _, err := m.place.workspaces("to"); err != nil {
		return HandedOff{}, err
	}
	var warnings []protocol.Warning
	if !o.DryRun {
		warnings = m.place.recoverHandoffs(ctx, id, m.recordLanding)
	}
	// The source's fence (a dry run's is checked; a thread it finds not
	// loaded is read from its session file, as loading would write the
	// worktree registry), then the destination's. srcRefusal and
	// dstRefusal are why a fence was not (would not be) taken.
	var (
		st                     handoffStart
		saved                  *protocol.Thread
		srcRefusal, dstRefusal error
		err                    error
	)
	t := m.loaded(id)
	if t == nil && o.DryRun {
		if st, saved, err = m.place.savedHandoffStart(id, o.To); err == nil {
			if st.gate = m.gates.lookup(m.gates.key(ctx, st.cwd)); st.gate != nil {
				srcRefusal = st.gate.check()
			}
		}
	} else if t, _, err = m.load(ctx, id, nil); err == nil {
		st, srcRefusal, err = t.handoffStart(ctx, o)
	}
	if err != nil {
		return HandedOff{}, err
	}
	if !o.DryRun {
		defer t.post(t.startNextQueued) // where it now runs, after the releases below
		if srcRefusal == nil {
			defer func() { m.unfence(st.gate, handoffHolder(id)); m.gates.release(st.gate) }()
		}
	}
	dest, err := m.place.handoffDestination(id, st, o.To)
	if err != nil {
		return HandedOff{}, err
	}
	var dg *gate
	if dest != "" {
		dg = m.gates.acquire(m.gates.key(ctx, dest))
		defer m.gates.release(dg)
		if o.DryRun {
			dstRefusal = dg.check()
		} else if dstRefusal = dg.fence(handoffHolder(id)); dstRefusal == nil {
			defer m.unfence(dg, handoffHolder(id))
		}
	}
	// A thread of either checkout with a turn running or inputs queued is
	// named, else what the fences said (a long operation, a turn that
	// ended meanwhile).
	if busy := cmp.Or(m.busyIn(ctx, t, st.gate, dg), srcRefusal, dstRefusal); busy != nil {
		return HandedOff{}, m.place.busyRefusal(ctx, dest, busy)
	}
	res, err := m.place.handoff(ctx, sub, id, st, o, m.recordPlacement)
	if err != nil {
		return HandedOff{}, err
	}
	if !o.DryRun {
		m.noticeHandoff(t, o.To, res.Branch, st.gate, dg)
	}
	res.Warnings = nonNilWarnings(append(warnings, res.Warnings...))
	if saved != nil {
		res.Thread = *saved
		return res, nil
	}
	res.Thread, err = t.handedOff(ctx, o.DryRun)
	return res, err
}

// handoffHolder is the holder of the fences a handoff of thread id takes.
func handoffHolder(id string) holder {
	return holder{thread: id, action: protocol.ThreadHandoff.Name}
}

// handedOff is the thread after a handoff (a dry run's: as it is), on its
// goroutine: one loaded for the handoff is idle, and unloads when idle.
func (t *thread) handedOff(ctx context.Context, dryRun bool) (protocol.Thread, error) {
	var th protocol.Thread
	err := t.call(ctx, func() error {
		if !dryRun && t.status.Type == protocol.ThreadStatusNotLoaded {
			t.setStatus(statusIdle)
		}
		t.checkIdle()
		th = t.wire()
		return nil
	})
	return th, err
}

// handoffStart admits a handoff of the loaded thread on its goroutine and
// reads what it moves (see Manager.Handoff): refused when it has nothing
// to hand off or is on that side already (handoffSide), runs a turn (a
// *BusyError) or a background shell (which would go on writing in the
// source after the move: QA saw a shell write late.txt into the worktree
// the handoff had left clean). Its checkout's fence is taken and held (a
// dry run only checks it); refusal is why it was not: another thread's
// turn or a long operation there, refused once the destination was
// checked.
func (t *thread) handoffStart(ctx context.Context, o HandoffOptions) (st handoffStart, refusal, err error) {
	err = t.call(ctx, func() error {
		if t.unloading {
			return t.gone()
		}
		if err := handoffSide(t.id, t.nextItem, t.ws, o.To); err != nil {
			return err
		}
		if t.turn != nil {
			return t.busyError()
		}
		if t.backgroundRunning() {
			return fmt.Errorf("%w: a background shell of thread %s is running in %s; stop it (thread/backgroundShells/stop) or let it end first", ErrTurnInProgress, t.id, t.cwd)
		}
		if o.DryRun {
			refusal = t.gate.check()
		} else if refusal = t.gate.fence(handoffHolder(t.id)); refusal == nil {
			t.m.gates.hold(t.gate)
		}
		tr := t.sess.Transcript()
		st = handoffStart{cwd: t.cwd, title: tr.ListTitle(), branch: t.handoffBranch,
			ws: t.ws, home: t.home, gate: t.gate, changes: turnChanges(tr)}
		return nil
	})
	return st, refusal, err
}

// turnChanges is what the turns on tr's branch changed, from their
// turn_end entries: the files they list and their worktree trees before
// and after (handoff.Options.Changes).
func turnChanges(tr *session.Transcript) *handoff.Changes {
	c := &handoff.Changes{}
	for _, e := range tr.Branch() {
		if e.Type != session.TypeTurnEnd {
			continue
		}
		for _, f := range e.Files {
			c.Paths = append(c.Paths, f.Path)
		}
		if e.BeforeTree != "" && e.AfterTree != "" && e.BeforeTree != e.AfterTree {
			c.Trees = append(c.Trees, [2]string{e.BeforeTree, e.AfterTree})
		}
	}
	return c
}

// handoffSide refuses a handoff of thread id (nextItem items, running in
// the managed worktree ws, nil for the main checkout) with nothing to hand
// off or already on the side to: *coreerr.ParamError "threadId" or "to".
func handoffSide(id string, nextItem int, ws *session.Workspace, to handoff.Direction) error {
	if nextItem == 0 {
		return coreerr.Refusal(coreerr.ReasonNoHistory, "thread %s has no message yet: there is nothing to hand off", id)
	}
	switch {
	case to == handoff.ToLocal && ws == nil:
		return coreerr.Param("to", "thread %s already runs in the main checkout", id)
	case to == handoff.ToWorktree && ws != nil:
		return coreerr.Param("to", "thread %s already runs in a worktree", id)
	}
	return nil
}

// busyIn returns a *BusyError naming a loaded thread other than self
// whose checkout is one of gates (nil ones are skipped) and which has a
// turn running or inputs queued, nil when none has (asked on each
// thread's goroutine, in id order; one that unloads meanwhile is idle).
func (m *Manager) busyIn(ctx context.Context, self *thread, gates ...*gate) error {
	for _, o := range m.othersIn(self, gates...) {
		var busy error
		err := o.call(ctx, func() error {
			if be := o.busyError(); be != nil {
				busy = be
			}
			return nil
		})
		switch {
		case errors.Is(err, ErrThreadNotFound):
		case err != nil:
			return err
		case busy != nil:
			return busy
		}
	}
	return nil
}

// busyError (owner goroutine) is the *BusyError of the thread's running
// turn, else of its queued inputs; nil when it has neither.
func (t *thread) busyError() *BusyError {
	switch {
	case t.turn != nil:
		return &BusyError{ThreadID: t.id, TurnID: t.turn.id, Checkout: t.gate.key}
	case len(t.followUp) > 0:
		return &BusyError{ThreadID: t.id, Queued: len(t.followUp), Checkout: t.gate.key}
	}
	return nil
}

// recordPlacement appends the workspace entry e to thread id's session
// (fsynced) and, when the thread is loaded, moves it there: its cwd,
// workspace and checkout gate change, and its subscribers receive
// thread/replaced. A thread that is not loaded (a handoff finished by
// recovery) gets the entry through its session file, read when it loads.
func (m *Manager) recordPlacement(ctx context.Context, id string, e session.WorkspaceEntry) error {
	entry := session.Entry{Type: session.TypeWorkspace, Cwd: e.Cwd, Workspace: e.Workspace, Home: e.Home, Branch: e.Branch}
	t := m.loaded(id)
	if t == nil {
		return m.catalog.appendEntry(id, entry)
	}
	key := m.gates.key(ctx, e.Cwd)
	return t.call(ctx, func() error {
		if _, err := t.sess.Append(entry); err != nil {
			return err
		}
		t.cwd, t.ws, t.home, t.handoffBranch = e.Cwd, e.Workspace, e.Home, e.Branch
		m.mu.Lock()
		old := t.gate
		t.gate = m.gates.acquire(key)
		m.gates.release(old)
		m.mu.Unlock()
		m.place.attach(t.id, t.ws)
		t.notify(protocol.ThreadReplaced.With(protocol.ThreadReplacedParams{ThreadID: t.id, Thread: t.wire()}))
		t.sidebarChanged() // its cwd moved
		return nil
	})
}

// recordLanding writes the workspace entry of a recovered handoff that
// verified its destination but had not recorded where its thread now runs
// (handoff.RecoverOptions.Record; placement.landed): from where the thread
// runs now, a loaded thread's placement, else its session's (the last
// workspace entry, else the header). Errors: ErrThreadNotFound; the session
// file's.
func (m *Manager) recordLanding(ctx context.Context, l *handoff.Landed) error {
	if l.ThreadID == "" {
		return nil
	}
	cur, err := session.WorkspaceEntry{}, threadNotFound(l.ThreadID)
	if t := m.loaded(l.ThreadID); t != nil {
		cur, err = t.placement(ctx)
	}
	if errors.Is(err, ErrThreadNotFound) { // not loaded, or unloaded meanwhile: its file
		cur, err = m.catalog.placement(l.ThreadID)
	}
	if err != nil {
		return err
	}
	return m.recordPlacement(ctx, l.ThreadID, m.place.landed(l, cur))
}

// placement is where the loaded thread runs now: its cwd, workspace, home
// and handoff branch. Errors: ErrThreadNotFound when it unloaded
// meanwhile.
func (t *thread) placement(ctx context.Context) (session.WorkspaceEntry, error) {
	var e session.WorkspaceEntry
	err := t.call(ctx, func() error {
		e = session.WorkspaceEntry{Cwd: t.cwd, Workspace: t.ws, Home: t.home, Branch: t.handoffBranch}
		return nil
	})
	return e, err
}

// RecoverHandoffs finishes the handoffs a stopped server left, for the
// server's start (handoff.Handoff.RecoverStart): each rolls forward (its
// thread's workspace entry is written then) or back, and its outcome is
// kept until the next load of its thread warns about it
// (placement.recoverHandoffs). A failure is logged: the journals concerned
// stay for the next thread load or handoff in their repository.
func (m *Manager) RecoverHandoffs(ctx context.Context) {
	m.place.recoverStart(ctx, m.recordLanding)
}

func nonNilWarnings(w []protocol.Warning) []protocol.Warning {
	if w == nil {
		return []protocol.Warning{}
	}
	return w
}

// othersIn returns the loaded threads other than self whose checkout is one
// of gates (nil ones are skipped), in id order.
func (m *Manager) othersIn(self *thread, gates ...*gate) []*thread {
	m.mu.Lock()
	var others []*thread
	for _, o := range m.threads {
		if o != self && o.gate != nil && slices.Contains(gates, o.gate) {
			others = append(others, o)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(others, func(a, b *thread) int { return strings.Compare(a.id, b.id) })
	return others
}

// noticeHandoff tells the subscribers of the other threads loaded in the
// handoff's source (src) and destination (dst) checkouts that thread id
// moved its uncommitted changes there (issue 30: they stay loaded and see
// the new state, and would otherwise get no word of it): a warning of
// source "server" with their threadId, naming the thread, the checkout and,
// for the main checkout a handoff to local leaves on a branch, the branch.
func (m *Manager) noticeHandoff(self *thread, to handoff.Direction, branch string, src, dst *gate) {
	for _, o := range m.othersIn(self, src, dst) {
		key := o.gate.key
		msg := fmt.Sprintf("thread %s handed its uncommitted changes off out of this checkout (%s)", self.id, key)
		if o.gate == dst {
			msg = fmt.Sprintf("thread %s handed its uncommitted changes off into this checkout (%s)", self.id, key)
			if to == handoff.ToLocal && branch != "" {
				msg += fmt.Sprintf(", which is now on branch %s", branch)
			}
		}
		w := protocol.Warning{Source: protocol.WarningSourceServer, Path: key, Message: msg}
		o.post(func() {
			o.notify(protocol.WarningNotification.With(protocol.WarningParams{ThreadID: o.id, Warning: w}))
		})
	}
}
