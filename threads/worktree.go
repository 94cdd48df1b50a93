package threads

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// Worktree threads (spec: "Workspaces, diffs and git"; thread/worktree/
// restore, worktree/list, worktree/delete; ARCHITECTURE.md "Worktrees,
// snapshots, handoff"). The workspace package does the git work over paths;
// this file ties its worktrees to threads: which thread runs where (the
// session header's workspace), which worktrees are in use (a loaded thread
// runs in them), when they were last used, and what a thread's workspace
// looks like on the wire.

// worktreeStart is the worktree part of a thread/start: the thread's cwd in
// the worktree, its header record, and what is left to do once the thread
// exists (the environment's setup script, pruning).
type worktreeStart struct {
	cwd    string
	header *session.Workspace
	// created: the start made this worktree (else it joins one).
	created bool
	// env is the environment whose setup script runs in it (nil: none);
	// trusted is the project's trust decision.
	env     *workspace.Environment
	trusted bool
	keep    int
	// warnings are the start's warnings so far (settings, joining).
	warnings []protocol.Warning
}

// prepare resolves the workspace of a thread/start in cwd: nil for
// a local thread (invalidParams when it sets fields of mode worktree, see
// checkLocalWorkspace); the managed worktree cwd is in (joined, whatever the
// mode); else, for mode worktree, a new worktree made by
// workspace.Manager.Create at req.BaseRef with req.CarryLocalChanges, under
// worktrees.root. An environment is looked up (and the project's trust read)
// before anything is created, so an unknown name leaves nothing behind.
func (p *placement) prepare(ctx context.Context, cwd, mode string, req WorkspaceOptions) (*worktreeStart, error) {
	ws := p.workspace
	if ws == nil {
		if mode == protocol.WorkspaceWorktree {
			return nil, coreerr.Param("workspace.mode", "managed worktrees are not available in this server")
		}
		return nil, checkLocalWorkspace(mode, req)
	}
	if w, ok, err := ws.Lookup(cwd); err != nil {
		return nil, err
	} else if ok {
		out := &worktreeStart{cwd: cwd, header: headerOf(w)}
		if req.BaseRef != "" || req.CarryLocalChanges || req.Environment != "" {
			out.warnings = append(out.warnings, protocol.Warning{Source: protocol.WarningSourceServer,
				Message: fmt.Sprintf("%s is inside the managed worktree %s, so the thread runs in that worktree; baseRef, carryLocalChanges and environment apply only to a new worktree and were not used", cwd, w.Path)})
		}
		return out, nil
	}
	if mode != protocol.WorkspaceWorktree {
		return nil, checkLocalWorkspace(mode, req)
	}
	st, warnings := p.settings.worktrees(ctx)
	if st.Root != "" {
		project, err := ws.Project(ctx, cwd)
		if err != nil {
			return nil, err
		}
		if w := rootInProject(filepath.Join(p.agentDir, session.SettingsFile), st.Root, project, ws.DefaultRoot()); w != nil {
			warnings = append(warnings, *w)
			st.Root = ""
		}
	}
	out := &worktreeStart{created: true, keep: st.Keep, warnings: warnings}
	if req.Environment != "" {
		project, err := ws.Project(ctx, cwd)
		if err != nil {
			return nil, err
		}
		envs, err := workspace.ReadEnvironments(project)
		if err != nil {
			return nil, err
		}
		for i := range envs {
			if envs[i].Name == req.Environment {
				out.env = &envs[i]
			}
		}
		if out.env == nil {
			return nil, coreerr.Param("workspace.environment", "no environment named %q in %s", req.Environment, filepath.Join(project, workspace.EnvironmentsFile))
		}
		if p.trust != nil {
			if out.trusted, err = p.trust.Trusted(ctx, cwd); err != nil {
				return nil, err
			}
		}
	}
	created, err := ws.Create(ctx, workspace.CreateOptions{Cwd: cwd, BaseRef: req.BaseRef, CarryLocalChanges: req.CarryLocalChanges, Root: st.Root, Environment: envName(out.env)})
	if err != nil {
		return nil, createError(err, cwd)
	}
	out.cwd, out.header = created.Cwd, headerOf(created.Worktree)
	if w := dirtySubmoduleWarning(created.Carried); w != nil {
		out.warnings = append(out.warnings, *w)
	}
	return out, nil
}

// checkLocalWorkspace refuses, for a thread/start in mode local outside
// any managed worktree (joining one only warns), the workspace fields that apply only to mode worktree (spec: "Workspaces,
// diffs and git"): invalidParams naming workspace.baseRef,
// workspace.carryLocalChanges or workspace.environment, the first set.
func checkLocalWorkspace(mode string, req WorkspaceOptions) error {
	if mode != protocol.WorkspaceLocal {
		return nil
	}
	const only = "applies only to workspace.mode %q, not %q"
	switch {
	case req.BaseRef != "":
		return coreerr.Param("workspace.baseRef", only, protocol.WorkspaceWorktree, mode)
	case req.CarryLocalChanges:
		return coreerr.Param("workspace.carryLocalChanges", only, protocol.WorkspaceWorktree, mode)
	case req.Environment != "":
		return coreerr.Param("workspace.environment", only, protocol.WorkspaceWorktree, mode)
	}
	return nil
}

// rootInProject returns the worktrees.root warning of a root inside the
// project's checkout (worktrees there would land in the user's own files),
// or nil. Both paths are compared with symlinks resolved, the root's
// through its nearest existing ancestor.
func rootInProject(settingsPath, root, project, defaultRoot string) *protocol.Warning {
	if root == "" || project == "" {
		return nil
	}
	p, err := filepath.EvalSymlinks(project)
	if err != nil {
		p = filepath.Clean(project)
	}
	r := resolveExisting(root)
	if rel, err := filepath.Rel(p, r); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return &protocol.Warning{Source: protocol.WarningSourceSettings, Path: settingsPath,
		Message: fmt.Sprintf("worktrees.root %s is inside the project %s, so worktrees would be created in its checkout: the default root %s is used instead", root, project, defaultRoot)}
}

// resolveExisting is path with symlinks resolved in its longest existing
// prefix; the rest is appended as is.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(path); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(path, rest)
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
}

// dirtySubmoduleWarning is the thread/start warning (source "server") of a
// carry that could not bring the contents of submodules, or nil.
func dirtySubmoduleWarning(c *workspace.Carried) *protocol.Warning {
	if c == nil || len(c.DirtySubmodules) == 0 {
		return nil
	}
	return &protocol.Warning{Source: protocol.WarningSourceServer,
		Message: fmt.Sprintf("carryLocalChanges does not carry changes inside submodules: the uncommitted contents of %s were not carried (only the submodule commit recorded in the checkout was)", strings.Join(c.DirtySubmodules, ", "))}
}

// createError words workspace.Manager.Create's refusals for thread/start:
// a bad baseRef names workspace.baseRef; an unborn or bare repository is
// invalidParams "cwd" (the directory cannot hold a worktree thread; the
// spec has no gitConflict reason for it, and nothing is in conflict).
func createError(err error, cwd string) error {
	var pe *workspace.ParamError
	switch {
	case errors.As(err, &pe) && pe.Field == "baseRef":
		return coreerr.Param("workspace.baseRef", "%s", pe.Message)
	case errors.Is(err, workspace.ErrUnbornHead):
		return coreerr.Refusal(coreerr.ReasonUnbornHead, "the repository of %s has no commit yet, so there is nothing to base a worktree on: commit first, or pass workspace.baseRef", cwd)
	case errors.Is(err, workspace.ErrBareRepository):
		return coreerr.Refusal(coreerr.ReasonBareRepository, "%s is in a bare repository, which has no working tree to start a worktree from: start from one of its worktrees", cwd)
	}
	return err
}

// headerOf is the session header's record of worktree w.
func headerOf(w workspace.Worktree) *session.Workspace {
	return &session.Workspace{Mode: session.WorkspaceWorktree, Path: w.Path, ProjectCwd: w.ProjectCwd, BaseRef: w.BaseRef}
}

// rollback undoes the worktree a failed start created: deleted
// (snapshot first, as always) and then forgotten with its snapshot ref, so
// the start leaves nothing behind. A joined worktree is left alone.
func (p *placement) rollback(ctx context.Context, wt *worktreeStart) {
	if wt == nil || !wt.created {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	ws := p.workspace
	claim := p.claim()
	defer claim.release()
	if _, err := ws.Delete(ctx, wt.header.Path, workspace.DeleteOptions{InUse: claim.inUse, BeforeRemove: p.cleanupBeforeRemove(nil, nil)}); err != nil {
		p.log.Warn("removing the worktree of a failed thread/start", "path", wt.header.Path, "err", err)
		return
	}
	if _, err := ws.Forget(ctx, wt.header.Path); err != nil {
		p.log.Warn("forgetting the worktree of a failed thread/start", "path", wt.header.Path, "err", err)
	}
}

// setup runs the setup script of the start's environment in the
// new worktree (workspace.RunScript, KNIGHTCODE_WORKTREE_PATH set),
// streaming its output to sub as thread/workspace/progress {threadId,
// phase: "setup", output}, and returns the start's warnings about it: a
// project that is not trusted runs no script (warning source "trust"); a
// script that fails does not stop the start (warning source "server" with
// its exit code and the end of its output).
func (p *placement) setup(ctx context.Context, sub Subscriber, threadID string, wt *worktreeStart) []protocol.Warning {
	if wt.env == nil || strings.TrimSpace(wt.env.Setup.For(runtime.GOOS)) == "" {
		return nil
	}
	if !wt.trusted {
		return []protocol.Warning{{Source: protocol.WarningSourceTrust, Path: wt.header.ProjectCwd,
			Message: fmt.Sprintf("the project %s is not trusted, so the setup script of environment %q did not run; trust it with project/trust/set", wt.header.ProjectCwd, wt.env.Name)}}
	}
	err := workspace.RunScript(ctx, workspace.ScriptRun{
		Environment: *wt.env, Phase: workspace.PhaseSetup, WorktreePath: wt.header.Path, Trusted: true,
		Progress: func(phase, output string) {
			if sub == nil {
				return
			}
			if err := sub.Send(protocol.ThreadWorkspaceProgress.With(protocol.ThreadWorkspaceProgressParams{ThreadID: threadID, Phase: phase, Output: output})); err != nil {
				p.log.Debug("workspace progress not delivered", "thread", threadID, "err", err)
			}
		},
	})
	if err == nil {
		return nil
	}
	var se *workspace.ScriptError
	msg := fmt.Sprintf("the setup script of environment %q could not run: %v", wt.env.Name, err)
	if errors.As(err, &se) {
		msg = fmt.Sprintf("the setup script of environment %q failed with exit code %d; the thread started anyway", wt.env.Name, se.ExitCode)
		if tail := strings.TrimSpace(se.Output); tail != "" {
			msg += ":\n" + truncateTail(tail, 2000)
		}
	}
	p.log.Info("environment setup failed", "thread", threadID, "environment", wt.env.Name, "err", err)
	return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: wt.header.Path, Message: msg}}
}

// truncateTail keeps the last n code points of s.
func truncateTail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n:])
}

// prune prunes the project's managed worktrees past
// worktrees.keep after a creation (workspace.Manager.Prune: the least
// recently used are snapshotted and removed; those a loaded thread runs in,
// locked ones and ones holding a nested repository stay). The threads of a
// pruned worktree show workspace.deleted until thread/worktree/restore.
// It returns a warning per pruned worktree whose snapshot left ignored
// files out (workspace.Deleted.NotKept), for the start's result. Failures
// are logged: they never fail the start.
func (p *placement) prune(ctx context.Context, wt *worktreeStart) []protocol.Warning {
	if !wt.created {
		return nil
	}
	claim := p.claim()
	defer claim.release()
	res, err := p.workspace.Prune(ctx, workspace.PruneOptions{Keep: wt.keep, Project: wt.header.ProjectCwd, InUse: claim.inUse, BeforeRemove: p.cleanupBeforeRemove(nil, nil)})
	if err != nil {
		p.log.Warn("pruning worktrees", "project", wt.header.ProjectCwd, "err", err)
		return nil
	}
	var warnings []protocol.Warning
	for _, d := range res.Pruned {
		p.log.Info("pruned worktree", "path", d.Path, "snapshot", d.Snapshot)
		if msg := d.NotKept(); msg != "" {
			warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Path: d.Path,
				Message: "past worktrees.keep, " + msg})
		}
	}
	for _, s := range res.Skipped {
		p.log.Info("worktree not pruned", "path", s.Path, "reason", s.Reason, "message", s.Message)
	}
	return warnings
}

// BranchBase is what a branch read of the loaded thread threadID compares
// with when the request names nothing (spec, thread/diff/read: "branch
// compares with against, else the worktree's base, the upstream or the
// default branch"; diffscope.ReadOptions.BaseRef): for a worktree thread,
// the commit its worktree was created at (the registry's resolved Base; the
// session header's BaseRef when the registry has no record of it, "" when
// that was the checkout's HEAD); "" for a thread in the user's checkout.
func (m *Manager) BranchBase(threadID string) string {
	t, err := m.lookup(threadID)
	if err != nil {
		return ""
	}
	return m.place.branchBase(t.ws)
}

// RestoreWorktree does thread/worktree/restore's work: it rebuilds the
// thread's deleted worktree (or one whose folder was removed behind our
// back: placement.noticeMissing first) at its old path from its snapshot
// (workspace.Manager.Restore: detached at the old HEAD, working files and
// staged state as they were, ignored files not kept), then loads the thread
// there (without subscribing anyone: it unloads when idle, like any thread
// without a subscriber) and returns it.
//
// Errors: ErrThreadNotFound (no saved thread with that id, or an archived
// one: unarchive it first); invalidParams "threadId" when the thread has no
// worktree or its worktree is not deleted; *ConflictError worktreeMissing
// (deleted without a snapshot, or the registry lost it: fork the chat into
// a new worktree instead), worktreeInUse (git has a worktree there again),
// localChanges (files occupy the path). Uninitialized submodules come back
// as their empty folders.
func (m *Manager) RestoreWorktree(ctx context.Context, threadID string) (protocol.Thread, error) {
	if _, err := m.place.workspaces("threadId"); err != nil {
		return protocol.Thread{}, err
	}
	if threadID == "" {
		return protocol.Thread{}, coreerr.Param("threadId", "must not be empty")
	}
	t := m.loaded(threadID)
	var h session.Header
	if t != nil {
		h = t.sess.Header()
	} else {
		var err error
		if h, err = m.catalog.header(threadID); err != nil {
			return protocol.Thread{}, err
		}
	}
	if err := m.place.restore(ctx, threadID, h.Workspace); err != nil {
		return protocol.Thread{}, err
	}
	t, _, err := m.load(ctx, threadID, nil)
	if err != nil {
		return protocol.Thread{}, err
	}
	var res protocol.Thread
	err = t.call(ctx, func() error {
		if t.unloading {
			return t.gone()
		}
		if t.status.Type == protocol.ThreadStatusNotLoaded {
			t.setStatus(statusIdle)
		}
		t.checkIdle()
		res = t.wire()
		return nil
	})
	return res, err
}

// restore rebuilds the deleted managed worktree ws of thread id (see
// Manager.RestoreWorktree; nil ws: the thread runs in the user's
// checkout).
func (p *placement) restore(ctx context.Context, id string, ws *session.Workspace) error {
	if ws == nil {
		return coreerr.Param("threadId", "thread %s runs in the user's checkout, not in a managed worktree", id)
	}
	path := ws.Path
	// A folder removed behind our back is deleted first (C27), so it
	// restores; one git has locked is not (MissingLockedError says why).
	if warns := p.noticeMissing(ctx, ws, false); len(warns) > 0 {
		return coreerr.Param("threadId", "%s", warns[0].Message)
	}
	r, err := p.workspace.Restore(ctx, path)
	if err != nil {
		var pe *workspace.ParamError
		switch {
		case errors.Is(err, workspace.ErrNotDeleted):
			return coreerr.Refusal(coreerr.ReasonNotDeleted, "the worktree %s of thread %s is not deleted", path, id)
		case errors.As(err, &pe) && pe.Field == "path":
			return &workspace.ConflictError{Reason: workspace.ReasonWorktreeMissing, Paths: []string{path},
				Output: fmt.Sprintf("the worktree registry no longer knows %s, so there is no snapshot to restore; fork the chat into a new worktree instead", path)}
		}
		return err
	}
	if r.Cleared || r.Leftovers != "" || r.RecoveryRef != "" {
		p.log.Info("a half-built or half-removed worktree was cleared before the restore", "path", path, "leftovers", r.Leftovers, "recoveryRef", r.RecoveryRef)
	}
	return nil
}

// DeleteWorktree does worktree/delete's work and returns the snapshot ref it
// left: workspace.Manager.Delete of the managed worktree at path, in use while a loaded thread runs in it (a
// thread stops its background processes before it stops counting as
// loaded, see finishUnload, so none of them runs when the worktree is
// removed; pruning relies on the same rule). Once found not in use, the
// path is claimed until the deletion returns (worktreeClaim): a
// thread/start or thread/resume inside it meanwhile answers gitConflict
// worktreeDeleted.
// Errors: invalidParams "path" for a path that is not a managed worktree
// (the user's own worktrees and the main checkout are never touched);
// *ConflictError worktreeInUse (a loaded thread, or a git lock),
// submodules (a nested repository), worktreeDeleted, worktreeMissing;
// *workspace.RemoveError when the removal failed after the snapshot.
// The cleanup script of the environment the worktree was created with runs
// before the removal (cleanupBeforeRemove), its output streamed to sub (may
// be nil) for every thread attached to the worktree. Ignored files the
// snapshot did not keep (workspace.Deleted.NotKept) are warned to sub, once
// per attached thread (without a threadId when none is).
func (m *Manager) DeleteWorktree(ctx context.Context, sub Subscriber, path string) (snapshot string, err error) {
	return m.place.deleteWorktree(ctx, sub, path)
}

// deleteWorktree is Manager.DeleteWorktree's work.
func (p *placement) deleteWorktree(ctx context.Context, sub Subscriber, path string) (snapshot string, err error) {
	ws, err := p.workspaces("path")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		return "", coreerr.Param("path", "must be an absolute path, got %q", path)
	}
	claim := p.claim()
	defer claim.release()
	d, err := ws.Delete(ctx, path, workspace.DeleteOptions{InUse: claim.inUse, BeforeRemove: p.cleanupBeforeRemove(sub, nil)})
	if err != nil {
		return "", err
	}
	if msg := d.NotKept(); msg != "" {
		// The deleted row keeps its threads (for a restore).
		w, _, _ := ws.Registry().Get(d.Path)
		ids := w.ThreadIDs
		if len(ids) == 0 {
			ids = []string{""}
		}
		for _, id := range ids {
			sendWarning(sub, id, d.Path, msg)
		}
	}
	return d.Snapshot, nil
}

// envName is the name of env, "" for nil.
func envName(env *workspace.Environment) string {
	if env == nil {
		return ""
	}
	return env.Name
}
