package threads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// forkSuffix ends a fork's title (spec: "A fork is named after its source
// with (fork) appended").
const forkSuffix = " (fork)"

// forkSource is what a fork copies: the source thread's transcript as it
// stands, its session file, where it runs, and its running turn (a loaded
// source's; never copied).
type forkSource struct {
	tr        *session.Transcript
	path      string
	cwd       string
	ws        *session.Workspace
	runningID string
}

// ForkOptions are the options of [Manager.Fork]: TurnID is the last turn
// the fork copies ("" for the whole branch).
type ForkOptions struct {
	TurnID string
}

// Fork forks the thread id (thread/fork): a new thread whose session file
// holds the source's current branch up to and including the end of turn
// o.TurnID
// (the whole branch when absent, a running turn left out), entry ids and
// times kept, then a session_info entry naming it after the source's title
// (as thread/list shows it) with " (fork)". Its header's parentSession is
// the source's session file, so forkedFromId is the source's header id, as
// listings resolve it. The trees the copied turns name are pinned again
// under the fork's refs (refs/knightcode/turns/<forkId>/...), so deleting
// the source keeps them reachable for the fork.
//
// A worktree thread's fork runs in a new managed worktree (spec:
// "Workspaces, diffs and git"): at the source worktree's HEAD carrying its
// uncommitted changes (workspace.Manager.Create with CarryLocalChanges:
// staged stay staged, untracked files come along); when the source's
// worktree is deleted, at its snapshot (its HEAD, index and working files
// as they were), else, deleted without one, at its base commit. The fork
// runs in the same subdirectory of its worktree as the source did. A local
// thread's fork runs in the source's cwd. The new thread is loaded,
// subscribed by sub and idle; the result carries the startup warnings as
// thread/start's does.
//
// Errors: invalidParams "threadId" (empty, or a thread with no saved
// history yet) and "turnId" (not a turn of the source's branch);
// ErrThreadNotFound; ErrTurnInProgress when turnId is the running turn;
// workspace errors of the new worktree (as thread/start's); shuttingDown.
// A fork that fails leaves no session file and no worktree behind.
func (m *Manager) Fork(ctx context.Context, sub Subscriber, id string, o ForkOptions) (Opened, error) {
	if id == "" {
		return Opened{}, coreerr.Param("threadId", "must not be empty")
	}
	src, err := forkSource{}, threadNotFound(id)
	if t := m.loaded(id); t != nil {
		src, err = t.forkSource(ctx) // ErrThreadNotFound: it unloaded meanwhile
	}
	if errors.Is(err, ErrThreadNotFound) {
		src, err = savedForkSource(m.catalog, id)
	}
	if err != nil {
		return Opened{}, err
	}
	if o.TurnID != "" && o.TurnID == src.runningID {
		return Opened{}, fmt.Errorf("%w: turn %s is still running; fork it once it ends", ErrTurnInProgress, o.TurnID)
	}
	entries, err := src.tr.ForkPrefix(o.TurnID, src.runningID)
	if errors.Is(err, session.ErrUnknownTurn) {
		return Opened{}, coreerr.Param("turnId", "%v", err)
	}
	if err != nil {
		return Opened{}, err
	}
	title := strings.TrimSpace(src.tr.ListTitle() + forkSuffix)

	wt, err := m.place.forkWorktree(ctx, src.cwd, src.ws)
	if err != nil {
		return Opened{}, err
	}
	cwd := src.cwd
	opts := session.CreateOptions{Cwd: cwd, ParentSession: src.path}
	if wt != nil {
		cwd = wt.cwd
		opts.Cwd, opts.Workspace = cwd, wt.header
	}
	sess, err := session.Fork(m.cfg.Dirs.ForCwd(cwd), opts, entries, title)
	if err != nil {
		m.place.rollback(ctx, wt)
		return Opened{}, err
	}
	file := sess.File()
	tr := sess.Transcript()
	m.place.pinFork(ctx, cwd, sess.ID(), entries)
	st := restoreSettings(tr.Branch(), m.cfg.DefaultApprovalMode)
	t, err := m.register(ctx, sess, cwd, st, nil, func(t *thread) {
		t.updatedAt = tr.UpdatedAt()
		t.nextItem = tr.ItemCount()
		t.usage = branchUsage(tr.Branch())
		t.forkedFrom = src.tr.Header.ID
		t.asks.terminal.Store(isTerminal(sub))
		t.asks.apps.Store(drawsApps(sub))
	})
	if err != nil {
		os.Remove(file)
		m.place.rollback(ctx, wt)
		return Opened{}, err
	}
	warnings := t.warnings()
	if wt != nil {
		warnings = append(warnings, wt.warnings...)
		warnings = append(warnings, m.place.prune(ctx, wt)...)
	}
	var res Opened
	err = t.call(ctx, func() error {
		warnings = append(warnings, t.takeUnheard()...)
		t.subscribe(sub)
		t.setStatus(statusIdle)
		res = Opened{Thread: t.wire(), Warnings: warnings, UI: t.uiSnapshot()}
		t.checkIdle()
		return nil
	})
	return res, err
}

// forkSource reads the source of a fork on the loaded thread's goroutine:
// its live transcript and running turn. Errors: ErrThreadNotFound when it
// unloaded meanwhile; *coreerr.ParamError "threadId" for a thread with no
// saved history yet.
func (t *thread) forkSource(ctx context.Context) (forkSource, error) {
	var src forkSource
	err := t.call(ctx, func() error {
		src = forkSource{tr: t.sess.Transcript(), path: t.sess.File(), cwd: t.cwd, ws: t.ws}
		if t.turn != nil {
			src.runningID = t.turn.id
		}
		return nil
	})
	if err == nil && src.path == "" {
		return forkSource{}, coreerr.Refusal(coreerr.ReasonNoHistory, "thread %s has no saved history to fork yet", t.id)
	}
	return src, err
}

// savedForkSource reads the source of a fork that is not loaded: its saved
// (or archived) session file, read without loading or locking it.
func savedForkSource(c *catalog, id string) (forkSource, error) {
	tr, _, err := c.readSaved(id)
	if err != nil {
		return forkSource{}, err
	}
	place := tr.Placement() // a handoff's workspace entry wins over the header
	return forkSource{tr: tr, path: tr.Path, cwd: place.Cwd, ws: place.Workspace}, nil
}

// forkWorktree makes the new worktree of the fork of a thread running in
// srcCwd in the managed worktree src (nil, nil for a local thread: src
// nil; see Manager.Fork) under worktrees.root, with the fork's cwd at the
// source's subdirectory in it.
func (p *placement) forkWorktree(ctx context.Context, srcCwd string, src *session.Workspace) (*worktreeStart, error) {
	if src == nil {
		return nil, nil
	}
	ws, err := p.workspaces("threadId")
	if err != nil {
		return nil, err
	}
	p.noticeMissing(ctx, src, false) // a folder removed behind our back is deleted
	st, warnings := p.settings.worktrees(ctx)
	if st.Root != "" {
		if w := rootInProject(filepath.Join(p.agentDir, session.SettingsFile), st.Root, src.ProjectCwd, ws.DefaultRoot()); w != nil {
			warnings = append(warnings, *w)
			st.Root = ""
		}
	}
	rel, err := filepath.Rel(src.Path, srcCwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = "."
	}
	w, ok, err := ws.Registry().Get(src.Path)
	if err != nil {
		return nil, err
	}
	opts := workspace.CreateOptions{Cwd: src.ProjectCwd, Root: st.Root}
	switch {
	case ok && !w.Deleted:
		opts.Cwd, opts.CarryLocalChanges = srcCwd, true
	case ok && w.Snapshot != "":
		opts.Snapshot = w.Snapshot
	case ok:
		opts.BaseRef = w.Base
	default:
		// Not in the registry at all: the base it was made from, as
		// recorded in the header ("" is the project's HEAD).
		opts.BaseRef = src.BaseRef
	}
	created, err := ws.Create(ctx, opts)
	if err != nil {
		return nil, createError(err, opts.Cwd)
	}
	out := &worktreeStart{created: true, keep: st.Keep, warnings: warnings, header: headerOf(created.Worktree),
		cwd: filepath.Join(created.Worktree.Path, rel)}
	if err := os.MkdirAll(out.cwd, 0o755); err != nil {
		p.rollback(ctx, out)
		return nil, err
	}
	if w := dirtySubmoduleWarning(created.Carried); w != nil {
		out.warnings = append(out.warnings, *w)
	}
	return out, nil
}

// pinFork pins the trees the fork's copied turn ends name under the
// fork's own refs, refs/knightcode/turns/<forkId>/<turnId>/... (as a turn
// of the fork would have), so they stay reachable whatever happens to the
// source. Outside git, or when pinning fails, it logs and goes on: the
// trees still have the source's refs.
func (p *placement) pinFork(ctx context.Context, cwd, forkID string, entries []session.Entry) {
	pins := map[string]string{}
	for _, e := range entries {
		if e.Type != session.TypeTurnEnd {
			continue
		}
		base := PinRefPrefix + forkID + "/" + e.TurnID + "/"
		for name, tree := range map[string]string{"before": e.BeforeTree, "after": e.AfterTree, "before-index": e.BeforeIndexTree, "after-index": e.AfterIndexTree} {
			if tree != "" {
				pins[base+name] = tree
			}
		}
	}
	if len(pins) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), captureTimeout)
	defer cancel()
	if err := p.differ.PinAll(ctx, cwd, pins); err != nil && !errors.Is(err, gitcli.ErrNotRepo) {
		p.log.Warn("pinning the trees of a fork's turns failed", "thread", forkID, "err", err)
	}
}
