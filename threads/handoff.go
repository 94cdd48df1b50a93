package threads

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// This file is the thread side of thread/handoff (issue 9; spec, Method
// reference thread/handoff): admission and fencing, the handoff package's
// Plan and Run, the session's workspace entry, and the reload of the
// thread where it now runs.

// handoffer returns the handoff runner of this server: its journals are
// in the operation log <agentDir>/oplog, its patches in
// <agentDir>/handoff.
func (m *Manager) handoffer() *handoff.Handoff {
	return handoff.New(m.cfg.Git, m.cfg.Workspace, m.cfg.Dirs.AgentDir)
}

// handoffStart is what Handoff reads of the thread on its goroutine.
type handoffStart struct {
	cwd, title, branch string
	ws, home           *session.Workspace
	gate               *gate
	changes            *handoff.Changes
}

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

// Handoff hands the thread id off (thread/handoff): the thread (loaded for it when needed)
// and its uncommitted changes move between its managed worktree and the
// main checkout (handoff.Handoff.Run), then the thread runs there: its cwd
// and workspace change, a workspace entry appended to its session (the
// header stays as it is) records it before the source is cleaned,
// subscribers receive thread/replaced with the same id, and queued inputs
// start there once the handoff ends. Both checkouts are fenced while it
// runs: no turn starts in either. Other threads loaded in either checkout
// stay loaded: an idle one simply sees the new state (its next turn
// captures the checkout as it then is), and one with a turn running or
// inputs queued refuses the handoff (issue 22's decision). A worktree the
// handoff makes is made as thread/start makes one: the environment's setup
// runs there, then the project's worktrees past worktrees.keep are pruned;
// an environment given for a thread going back to its own worktree is not
// used (a warning says so). The warnings name the moved paths that no turn
// of the thread changed (handoff.Options.Changes). With p.DryRun every
// check runs (handoff.Handoff.Plan) and nothing is written: a thread that
// is not loaded is read from its session file.
//
// Errors, in this order: invalidParams for a thread with no message yet
// ("threadId"), one already on that side ("to"), an unknown environment
// ("environment"); ErrTurnInProgress when the thread runs a turn (a
// *BusyError naming it) or a background shell of the thread still runs;
// the worktree's worktreeDeleted; then, when the destination is not clean,
// its localChanges (handoff.Handoff.CheckDestination) before a *BusyError
// naming another thread of either checkout with a turn running or inputs
// queued, or ErrTurnInProgress naming a long operation running there
// (git/commit...: RunOperation); then the handoff package's *ConflictError (localChanges,
// operationInProgress, branchExists, worktreeDeleted, submodules) and
// *RecoveryError (recoveryRequired); ErrThreadNotFound.
func (m *Manager) Handoff(ctx context.Context, sub Subscriber, id string, p HandoffOptions) (HandedOff, error) {
	var res HandedOff
	if _, err := m.workspaceManager("to"); err != nil {
		return res, err
	}
	var warnings []protocol.Warning
	if !p.DryRun {
		warnings = m.recoverHandoffs(ctx, id)
	}
	var (
		t         *thread
		st        handoffStart
		saved     *protocol.Thread // a dry run's thread that is not loaded
		srcFenced bool
		// srcRefusal and dstRefusal are why a fence of the source or the
		// destination was not taken (a dry run's: would not be).
		srcRefusal, dstRefusal error
		err                    error
	)
	if p.DryRun {
		m.mu.Lock()
		t = m.threads[id]
		m.mu.Unlock()
		if t == nil {
			// Read from its session file: loading it would write the
			// worktree registry (dryRun writes nothing).
			if st, saved, err = m.savedHandoffStart(ctx, id, p.To); err != nil {
				return res, err
			}
		}
	}
	if saved == nil {
		if t, _, err = m.load(ctx, id); err != nil {
			return res, err
		}
		err = t.call(ctx, func() error {
			if t.unloading {
				return m.goneErr(t.id)
			}
			if err := handoffSide(t.id, t.nextItem, t.ws, p.To); err != nil {
				return err
			}
			if t.turn != nil {
				return t.busyError()
			}
			// A background shell still runs in the source checkout: it would
			// go on writing there after the move (QA: a shell wrote late.txt
			// into the worktree the handoff had left clean).
			if t.backgroundRunning() {
				return fmt.Errorf("%w: a background shell of thread %s is running in %s; stop it (thread/backgroundShells/stop) or let it end first", ErrTurnInProgress, t.id, t.cwd)
			}
			// Another thread's turn or a long operation there keeps the
			// fence from being taken: refused below, once the destination
			// was checked.
			if p.DryRun {
				srcRefusal = t.gate.check()
			} else if srcRefusal = t.gate.fence(); srcRefusal == nil {
				srcFenced = true
				m.gates.hold(t.gate)
			}
			st = handoffStart{cwd: t.cwd, title: t.sess.Transcript().ListTitle(), branch: t.handoffBranch,
				ws: t.ws, home: t.home, gate: t.gate, changes: turnChanges(t.sess.Transcript())}
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	release := func(g *gate) {
		m.unfence(g)
		m.gates.release(g)
	}
	if !p.DryRun {
		// Queued inputs start where the thread now runs once both
		// fences are gone (this runs after the releases below).
		defer t.post(t.startNextQueued)
		if srcFenced {
			defer release(st.gate)
		}
	}
	// The thread's worktree (the source to local, the destination back)
	// must be there: its folder removed outside knightcode is
	// worktreeDeleted, as the spec lists (QA: invalidParams "cwd", or
	// notGitRepo).
	wt, dest := st.home, "" // to a worktree: its home, if it has one, is the destination
	if p.To == handoff.ToLocal {
		wt, dest = st.ws, st.ws.ProjectCwd
	} else if wt != nil {
		dest = wt.Path
	}
	if wt != nil {
		if fi, err := os.Stat(wt.Path); err != nil || !fi.IsDir() {
			// thread/resume re-creates the worktree a thread runs in;
			// the home a thread handed to local goes back to, only
			// thread/worktree/restore (QA).
			how := "thread/worktree/restore rebuilds it"
			if p.To == handoff.ToLocal {
				how = "thread/resume re-creates it at its last commit, or thread/worktree/restore"
			}
			return res, &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{wt.Path},
				Output: fmt.Sprintf("the worktree %s of thread %s is missing (its folder was removed outside knightcode); %s", wt.Path, id, how)}
		}
	}
	// The destination's fence: its threads start no turn meanwhile.
	var dg *gate
	if dest != "" {
		if _, err := os.Stat(dest); err == nil {
			dg = m.gates.acquire(m.gates.key(ctx, dest))
			if p.DryRun {
				dstRefusal = dg.check()
			} else if dstRefusal = dg.fence(); dstRefusal == nil {
				defer release(dg)
			}
			if p.DryRun || dstRefusal != nil {
				defer m.gates.release(dg)
			}
		} else {
			dest = ""
		}
	}
	srcGate := st.gate
	if srcGate == nil { // a dry run's thread that is not loaded
		srcGate = m.gates.lookup(m.gates.key(ctx, st.cwd))
		if srcGate != nil {
			srcRefusal = srcGate.check()
		}
	}
	// A thread of either checkout with a turn running or inputs queued is
	// named; else a long operation (git/commit...) or a turn that held a
	// fence and ended meanwhile refuses, as the fences said.
	busy := m.busyIn(ctx, t, srcGate, dg)
	if busy == nil {
		busy = cmp.Or(srcRefusal, dstRefusal)
	}
	if busy != nil {
		// What the person can act on first: their own changes where the
		// thread goes.
		if dest != "" {
			if err := m.handoffer().CheckDestination(ctx, dest); err != nil {
				return res, err
			}
		}
		return res, busy
	}
	wts, settingsWarnings := m.settings.worktrees(ctx)
	warnings = append(warnings, settingsWarnings...)
	o := handoff.Options{
		To: p.To, Cwd: st.cwd, ThreadID: id, Title: st.title,
		PreviousBranch: st.branch, BranchPrefix: m.settings.branchPrefix(ctx, st.cwd), WorktreesRoot: wts.Root,
		Changes: st.changes,
	}
	o.Branch = p.Branch
	var env *workspace.Environment
	trusted := false
	if p.To == handoff.ToWorktree {
		if st.home != nil {
			o.Worktree = st.home.Path
			if p.Environment != "" {
				warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Path: st.home.Path,
					Message: fmt.Sprintf("environment %q was not used: the thread goes back to its worktree %s, which is not new (an environment's setup runs in a worktree a handoff makes)", p.Environment, st.home.Path)})
			}
		} else if p.Environment != "" {
			if env, trusted, err = m.handoffEnvironment(ctx, st.cwd, p.Environment); err != nil {
				return res, err
			}
			o.Environment = env.Name
		}
	}
	h := m.handoffer()
	if p.DryRun {
		plan, err := h.Plan(ctx, o)
		if err != nil {
			return res, err
		}
		if plan.Branch != nil {
			res.Branch = plan.Branch.Name
		}
		for _, w := range plan.Warnings() {
			warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Message: w})
		}
		res.Warnings = nonNilWarnings(warnings)
		if saved != nil {
			res.Thread = *saved
			return res, nil
		}
		err = t.call(ctx, func() error {
			t.checkIdle()
			res.Thread = t.wire()
			return nil
		})
		return res, err
	}
	o.Record = func(ctx context.Context, l *handoff.Landed) error {
		m.recordLandedHead(l)
		return m.recordPlacement(ctx, t.id, placementOf(l, st))
	}
	out, err := h.Run(ctx, o)
	if err != nil {
		return res, err
	}
	for _, w := range out.Warnings {
		warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Message: w})
	}
	if out.Branch != nil {
		res.Branch = out.Branch.Name
	}
	if out.Worktree != nil {
		// A worktree made as thread/start makes one: its environment's
		// setup runs there, then the project's worktrees past
		// worktrees.keep are pruned (the thread now runs in this one).
		made := &worktreeStart{created: true, cwd: out.Cwd, header: headerOf(*out.Worktree), env: env, trusted: trusted, keep: wts.Keep}
		if env != nil {
			warnings = append(warnings, m.setupWorktree(ctx, sub, t.id, made)...)
		}
		warnings = append(warnings, m.pruneAfterCreate(ctx, made)...)
	}
	err = t.call(ctx, func() error {
		if t.status.Type == protocol.ThreadStatusNotLoaded {
			t.setStatus(statusIdle)
		}
		t.checkIdle() // a thread loaded for the handoff unloads when idle
		res.Thread = t.wire()
		return nil
	})
	res.Warnings = nonNilWarnings(warnings)
	return res, err
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

// placementOf is the workspace entry of a handoff that landed l.
func placementOf(l *handoff.Landed, st handoffStart) session.WorkspaceEntry {
	e := session.WorkspaceEntry{Cwd: l.Cwd, Home: st.home, Branch: st.branch}
	switch {
	case l.Branch != nil:
		e.Branch = l.Branch.Name
	case l.Worktree != nil:
		e.Workspace = headerOf(*l.Worktree)
		e.Home = e.Workspace
	default:
		e.Workspace = st.home
	}
	return e
}

// recordPlacement appends the workspace entry e to thread id's session
// (fsynced) and, when the thread is loaded, moves it there: its cwd,
// workspace and checkout gate change, and its subscribers receive
// thread/replaced. A thread that is not loaded (a handoff finished by
// recovery) gets the entry through its session file, read when it loads.
func (m *Manager) recordPlacement(ctx context.Context, id string, e session.WorkspaceEntry) error {
	entry := session.Entry{Type: session.TypeWorkspace, Cwd: e.Cwd, Workspace: e.Workspace, Home: e.Home, Branch: e.Branch}
	m.mu.Lock()
	t := m.threads[id]
	m.mu.Unlock()
	if t == nil {
		path, err := m.catalog.sessionFile(id)
		if err != nil {
			return err
		}
		sess, err := session.Open(path)
		if err != nil {
			return err
		}
		_, err = sess.Append(entry)
		return errors.Join(err, sess.Close())
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
		m.useWorktree(t)
		t.notify(protocol.ThreadReplaced.With(protocol.ThreadReplacedParams{ThreadID: t.id, Thread: t.wire()}))
		t.sidebarChanged() // its cwd moved
		return nil
	})
}

// handoffSide refuses a handoff of thread id (nextItem items, running in
// the managed worktree ws, nil for the main checkout) with nothing to hand
// off or already on the side to: invalidParams "threadId" or "to".
func handoffSide(id string, nextItem int, ws *session.Workspace, to handoff.Direction) error {
	if nextItem == 0 {
		return coreerr.Param("threadId", "thread %s has no message yet: there is nothing to hand off", id)
	}
	switch {
	case to == handoff.ToLocal && ws == nil:
		return coreerr.Param("to", "thread %s already runs in the main checkout", id)
	case to == handoff.ToWorktree && ws != nil:
		return coreerr.Param("to", "thread %s already runs in a worktree", id)
	}
	return nil
}

// savedHandoffStart is what a dry run reads of a thread that is not loaded:
// its saved transcript (read without loading or locking it, like
// thread/read) gives where it runs, its title and its turns' changes. It
// returns the thread as thread/read shows it. Errors: those of
// handoffSide; ErrThreadNotFound.
func (m *Manager) savedHandoffStart(ctx context.Context, id string, to handoff.Direction) (handoffStart, *protocol.Thread, error) {
	tr, s, err := m.catalog.readSavedReadOnly(id)
	if err != nil {
		return handoffStart{}, nil, err
	}
	place := tr.Placement()
	if err := handoffSide(id, tr.ItemCount(), place.Workspace, to); err != nil {
		return handoffStart{}, nil, err
	}
	th := m.catalog.savedThread(tr, s.ForkedFromID, m.wireWorkspace(place.Workspace))
	return handoffStart{cwd: place.Cwd, title: tr.ListTitle(), branch: place.Branch, ws: place.Workspace, home: place.Home,
		changes: turnChanges(tr)}, &th, nil
}

// busyIn returns a *BusyError naming a loaded thread other than self
// whose checkout is one of gates (nil ones are skipped) and which has a
// turn running or inputs queued, nil when none has (asked on each
// thread's goroutine, in id order; one that unloads meanwhile is idle).
func (m *Manager) busyIn(ctx context.Context, self *thread, gates ...*gate) error {
	m.mu.Lock()
	var others []*thread
	for _, o := range m.threads {
		if o != self && o.gate != nil && slices.Contains(gates, o.gate) {
			others = append(others, o)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(others, func(a, b *thread) int { return strings.Compare(a.id, b.id) })
	for _, o := range others {
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

// handoffEnvironment looks up the environment named name of cwd's project
// and whether the project is trusted (its scripts run only then). Errors:
// invalidParams "environment" for an unknown name.
func (m *Manager) handoffEnvironment(ctx context.Context, cwd, name string) (*workspace.Environment, bool, error) {
	project, err := m.cfg.Workspace.Project(ctx, cwd)
	if err != nil {
		return nil, false, err
	}
	envs, err := workspace.ReadEnvironments(project)
	if err != nil {
		return nil, false, err
	}
	for i := range envs {
		if envs[i].Name == name {
			trusted := false
			if m.cfg.Trust != nil {
				if trusted, err = m.cfg.Trust.Trusted(ctx, cwd); err != nil {
					return nil, false, err
				}
			}
			return &envs[i], trusted, nil
		}
	}
	return nil, false, coreerr.Param("environment", "no environment named %q in %s", name, filepath.Join(project, workspace.EnvironmentsFile))
}

// RecoverHandoffs finishes the handoffs a stopped server left, for the
// server's start (handoff.Handoff.RecoverStart): each rolls forward (its
// thread's workspace entry is written then) or back, and its outcome is
// kept until the next load of its thread warns about it (recoverHandoffs).
// A failure is logged: the journals concerned stay for the next thread
// load or handoff in their repository.
func (m *Manager) RecoverHandoffs(ctx context.Context) {
	if m.cfg.Workspace == nil || m.cfg.Git == nil {
		return
	}
	if err := m.handoffer().RecoverStart(ctx, handoff.RecoverOptions{Record: m.recordLanding}); err != nil {
		m.log.Warn("recovering interrupted handoffs at start", "err", err)
	}
}

// recoverHandoffs finishes the handoffs a stopped server left (journals
// whose lock is free; handoff.Handoff.Recover): each rolls forward (its
// thread's workspace entry is written then) or back. It returns a warning
// (source "server") for each of those of thread id ("" every thread),
// including those that need the user (recoveryRequired, with the saved
// patch), and for each of thread id the server's start recovered
// (RecoverHandoffs). A failure is a warning too.
func (m *Manager) recoverHandoffs(ctx context.Context, id string) []protocol.Warning {
	if m.cfg.Workspace == nil || m.cfg.Git == nil {
		return nil
	}
	h := m.handoffer()
	kept, kerr := h.TakeRecovered(id)
	recs, err := h.Recover(ctx, handoff.RecoverOptions{Record: m.recordLanding})
	var out []protocol.Warning
	for _, r := range slices.Concat(kept, recs) {
		if id == "" || r.ThreadID == id {
			out = append(out, protocol.Warning{Source: protocol.WarningSourceServer, Message: r.Message()})
		}
	}
	if err = errors.Join(err, kerr); err != nil {
		m.log.Warn("recovering interrupted handoffs", "err", err)
		out = append(out, protocol.Warning{Source: protocol.WarningSourceServer,
			Message: fmt.Sprintf("an interrupted handoff could not be recovered yet: %v", err)})
	}
	return out
}

// recordLanding writes the workspace entry of a recovered handoff that
// verified its destination but had not recorded where its thread now runs
// (handoff.RecoverOptions.Record).
func (m *Manager) recordLanding(ctx context.Context, l *handoff.Landed) error {
	if l.ThreadID == "" {
		return nil
	}
	cur, err := m.placement(ctx, l.ThreadID)
	if err != nil {
		return err
	}
	// What the handoff's own Record would have written (placementOf): the
	// previous handoff's branch and the thread's home worktree carry on.
	e := placementOf(l, handoffStart{branch: cur.Branch, home: cur.Home})
	if l.Worktree == nil && l.Workspace == protocol.WorkspaceWorktree && e.Workspace == nil {
		if w, ok, err := m.cfg.Workspace.Lookup(l.Destination); err == nil && ok {
			e.Workspace = headerOf(w)
			e.Home = e.Workspace
		}
	}
	m.recordLandedHead(l)
	return m.recordPlacement(ctx, l.ThreadID, e)
}

// placement is where thread id runs now: a loaded thread's cwd, workspace,
// home and handoff branch, else its session's (the last workspace entry,
// else the header). Errors: ErrThreadNotFound; the session file's.
func (m *Manager) placement(ctx context.Context, id string) (session.WorkspaceEntry, error) {
	m.mu.Lock()
	t := m.threads[id]
	m.mu.Unlock()
	if t != nil {
		var e session.WorkspaceEntry
		err := t.call(ctx, func() error {
			e = session.WorkspaceEntry{Cwd: t.cwd, Workspace: t.ws, Home: t.home, Branch: t.handoffBranch}
			return nil
		})
		if !errors.Is(err, ErrThreadNotFound) {
			return e, err
		}
		// It unloaded meanwhile: read its file.
	}
	path, err := m.catalog.sessionFile(id)
	if err != nil {
		return session.WorkspaceEntry{}, err
	}
	tr, err := session.Read(path)
	if err != nil {
		return session.WorkspaceEntry{}, err
	}
	return tr.Placement(), nil
}

// recordLandedHead records the commit a to-worktree handoff detached its
// worktree at (workspace.Manager.RecordHead). A to-local handoff leaves
// its worktree at the commit it was at.
func (m *Manager) recordLandedHead(l *handoff.Landed) {
	if l.To != handoff.ToWorktree || m.cfg.Workspace == nil {
		return
	}
	if err := m.cfg.Workspace.RecordHead(l.Destination, l.Head); err != nil {
		m.log.Debug("recording a handoff's worktree HEAD", "path", l.Destination, "err", err)
	}
}

func nonNilWarnings(w []protocol.Warning) []protocol.Warning {
	if w == nil {
		return []protocol.Warning{}
	}
	return w
}
