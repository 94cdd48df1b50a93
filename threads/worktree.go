package threads

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// workspaceManager returns the worktree manager, or an error for a server
// built without one.
func (m *Manager) workspaceManager(field string) (*workspace.Manager, error) {
	if m.cfg.Workspace == nil {
		return nil, coreerr.Param(field, "managed worktrees are not available in this server")
	}
	return m.cfg.Workspace, nil
}

// prepareWorkspace resolves the workspace of a thread/start in cwd: nil for
// a local thread (invalidParams when it sets fields of mode worktree, see
// checkLocalWorkspace); the managed worktree cwd is in (joined, whatever the
// mode); else, for mode worktree, a new worktree made by
// workspace.Manager.Create at req.BaseRef with req.CarryLocalChanges, under
// worktrees.root. An environment is looked up (and the project's trust read)
// before anything is created, so an unknown name leaves nothing behind.
func (m *Manager) prepareWorkspace(ctx context.Context, cwd, mode string, req WorkspaceOptions) (*worktreeStart, error) {
	ws := m.cfg.Workspace
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
	st, warnings := m.settings.worktrees(ctx)
	if st.Root != "" {
		project, err := ws.Project(ctx, cwd)
		if err != nil {
			return nil, err
		}
		if w := rootInProject(filepath.Join(m.cfg.Dirs.AgentDir, session.SettingsFile), st.Root, project, ws.DefaultRoot()); w != nil {
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
		if m.cfg.Trust != nil {
			if out.trusted, err = m.cfg.Trust.Trusted(ctx, cwd); err != nil {
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
		return coreerr.Param("cwd", "the repository of %s has no commit yet, so there is nothing to base a worktree on: commit first, or pass workspace.baseRef", cwd)
	case errors.Is(err, workspace.ErrBareRepository):
		return coreerr.Param("cwd", "%s is in a bare repository, which has no working tree to start a worktree from: start from one of its worktrees", cwd)
	}
	return err
}

// headerOf is the session header's record of worktree w.
func headerOf(w workspace.Worktree) *session.Workspace {
	return &session.Workspace{Mode: session.WorkspaceWorktree, Path: w.Path, ProjectCwd: w.ProjectCwd, BaseRef: w.BaseRef}
}

// rollbackWorktree undoes the worktree a failed start created: deleted
// (snapshot first, as always) and then forgotten with its snapshot ref, so
// the start leaves nothing behind. A joined worktree is left alone.
func (m *Manager) rollbackWorktree(ctx context.Context, wt *worktreeStart) {
	if wt == nil || !wt.created {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	ws := m.cfg.Workspace
	claim := m.claimWorktrees()
	defer claim.release()
	if _, err := ws.Delete(ctx, wt.header.Path, workspace.DeleteOptions{InUse: claim.inUse, BeforeRemove: m.cleanupBeforeRemove(nil, nil)}); err != nil {
		m.log.Warn("removing the worktree of a failed thread/start", "path", wt.header.Path, "err", err)
		return
	}
	if _, err := ws.Forget(ctx, wt.header.Path); err != nil {
		m.log.Warn("forgetting the worktree of a failed thread/start", "path", wt.header.Path, "err", err)
	}
}

// setupWorktree runs the setup script of the start's environment in the
// new worktree (workspace.RunScript, KNIGHTCODE_WORKTREE_PATH set),
// streaming its output to sub as thread/workspace/progress {threadId,
// phase: "setup", output}, and returns the start's warnings about it: a
// project that is not trusted runs no script (warning source "trust"); a
// script that fails does not stop the start (warning source "server" with
// its exit code and the end of its output).
func (m *Manager) setupWorktree(ctx context.Context, sub Subscriber, threadID string, wt *worktreeStart) []protocol.Warning {
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
				m.log.Debug("workspace progress not delivered", "thread", threadID, "err", err)
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
	m.log.Info("environment setup failed", "thread", threadID, "environment", wt.env.Name, "err", err)
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

// pruneAfterCreate prunes the project's managed worktrees past
// worktrees.keep after a creation (workspace.Manager.Prune: the least
// recently used are snapshotted and removed; those a loaded thread runs in,
// locked ones and ones holding a nested repository stay). The threads of a
// pruned worktree show workspace.deleted until thread/worktree/restore.
// It returns a warning per pruned worktree whose snapshot left ignored
// files out (workspace.Deleted.NotKept), for the start's result. Failures
// are logged: they never fail the start.
func (m *Manager) pruneAfterCreate(ctx context.Context, wt *worktreeStart) []protocol.Warning {
	if !wt.created {
		return nil
	}
	claim := m.claimWorktrees()
	defer claim.release()
	res, err := m.cfg.Workspace.Prune(ctx, workspace.PruneOptions{Keep: wt.keep, Project: wt.header.ProjectCwd, InUse: claim.inUse, BeforeRemove: m.cleanupBeforeRemove(nil, nil)})
	if err != nil {
		m.log.Warn("pruning worktrees", "project", wt.header.ProjectCwd, "err", err)
		return nil
	}
	var warnings []protocol.Warning
	for _, d := range res.Pruned {
		m.log.Info("pruned worktree", "path", d.Path, "snapshot", d.Snapshot)
		if msg := d.NotKept(); msg != "" {
			warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Path: d.Path,
				Message: "past worktrees.keep, " + msg})
		}
	}
	for _, s := range res.Skipped {
		m.log.Info("worktree not pruned", "path", s.Path, "reason", s.Reason, "message", s.Message)
	}
	return warnings
}

// worktreeInUse reports whether a loaded thread runs in the worktree at
// path.
func (m *Manager) worktreeInUse(path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.worktreeInUseLocked(path)
}

// worktreeInUseLocked is worktreeInUse with m.mu held.
func (m *Manager) worktreeInUseLocked(path string) bool {
	w := workspace.Worktree{Path: path}
	for _, t := range m.threads {
		if (t.ws != nil && t.ws.Path == path) || w.Contains(t.cwd) {
			return true
		}
	}
	return false
}

// worktreeClaim is one deletion's hold on the managed worktrees it removes
// (worktree/delete, an archive's deletion, pruning, a failed start's
// rollback). Its inUse is the deletion's workspace.DeleteOptions.InUse or
// PruneOptions.InUse, which workspace calls before taking the repository
// lock and again under it: in one critical section of m.mu it reports
// whether a loaded thread runs in the worktree and, when none does, claims
// the path, so no thread registers inside it (register refuses with
// worktreeDeleted) until release. A thread either loaded first, and the
// deletion is refused, or loads after the deletion ended.
type worktreeClaim struct {
	m     *Manager
	paths []string // one entry per claim taken (guarded by m.mu)
}

// claimWorktrees returns an empty claim; call release when the deletion
// returned.
func (m *Manager) claimWorktrees() *worktreeClaim { return &worktreeClaim{m: m} }

// inUse reports whether a loaded thread runs in the worktree at path and,
// when none does, claims path.
func (c *worktreeClaim) inUse(path string) bool {
	m := c.m
	m.mu.Lock()
	if m.worktreeInUseLocked(path) {
		m.mu.Unlock()
		return true
	}
	m.deleting[path]++
	c.paths = append(c.paths, path)
	hook := m.onWorktreeClaim
	m.mu.Unlock()
	if hook != nil {
		hook(path)
	}
	return false
}

// release drops every claim c took.
func (c *worktreeClaim) release() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range c.paths {
		if m.deleting[p]--; m.deleting[p] <= 0 {
			delete(m.deleting, p)
		}
	}
	c.paths = nil
}

// deletingLocked returns the claimed worktree path (see worktreeClaim) a
// thread with cwd and workspace record ws would run in, "" when none (call
// with m.mu held).
func (m *Manager) deletingLocked(cwd string, ws *session.Workspace) string {
	for p := range m.deleting {
		if (ws != nil && ws.Path == p) || (workspace.Worktree{Path: p}).Contains(cwd) {
			return p
		}
	}
	return ""
}

// worktreeBeingDeleted refuses a thread load inside a worktree a deletion
// holds: gitConflict worktreeDeleted.
func worktreeBeingDeleted(path string) error {
	return &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{path},
		Output: fmt.Sprintf("the managed worktree %s is being deleted; no thread loads in it (once deleted, thread/worktree/restore brings it back)", path)}
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
	if err != nil || t.ws == nil {
		return ""
	}
	if m.cfg.Workspace != nil {
		w, ok, err := m.cfg.Workspace.Registry().Get(t.ws.Path)
		if err != nil {
			m.log.Warn("reading the worktree registry", "path", t.ws.Path, "err", err)
		} else if ok && w.Base != "" {
			return w.Base
		}
	}
	return t.ws.BaseRef
}

// wireWorkspace is a thread's workspace on the wire: {mode: "local"}
// without a header record, else {mode: "worktree", path, projectCwd,
// baseRef?, deleted?}, deleted when the registry has the worktree deleted
// (or no longer has it at all).
func (m *Manager) wireWorkspace(ws *session.Workspace) protocol.Workspace {
	if ws == nil {
		return protocol.Workspace{Mode: protocol.WorkspaceLocal}
	}
	out := protocol.Workspace{Mode: protocol.WorkspaceWorktree, Path: ws.Path, ProjectCwd: ws.ProjectCwd, BaseRef: ws.BaseRef}
	if m.cfg.Workspace != nil {
		if w, ok, err := m.cfg.Workspace.Registry().Get(ws.Path); err == nil && (!ok || w.Deleted) {
			out.Deleted = true
		} else if err != nil {
			m.log.Warn("reading the worktree registry", "err", err)
		}
	}
	return out
}

// worktreeGone refuses work in a worktree thread whose managed worktree is
// gone: deleted in the registry (archived, pruned or worktree/delete'd, a
// deletion that did not finish included, or no longer registered at all)
// or its directory missing or replaced by a file. It answers *workspace.ConflictError
// worktreeDeleted (thread/worktree/restore brings a deleted one back), nil
// for a local thread or a worktree that is there. A turn must not run
// there: a write tool would recreate the path as a plain folder.
func (m *Manager) worktreeGone(t *thread) error {
	if t.ws == nil {
		return nil
	}
	path := t.ws.Path
	gone := func(why string) error {
		return &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{path},
			Output: fmt.Sprintf("the managed worktree %s of thread %s %s; thread/worktree/restore rebuilds it from its snapshot, or fork the chat into a new worktree", path, t.id, why)}
	}
	if m.cfg.Workspace != nil {
		w, ok, err := m.cfg.Workspace.Registry().Get(path)
		switch {
		case err != nil:
			m.log.Warn("reading the worktree registry", "path", path, "err", err)
		case !ok:
			return gone("is no longer registered")
		case w.Deleted:
			return gone("is deleted")
		}
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return gone("is missing (its directory was removed)")
	case err == nil && !fi.IsDir():
		return &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{path},
			Output: fmt.Sprintf("the managed worktree %s of thread %s is not a directory any more (something else is at its path, left as it is); move it away, then thread/worktree/restore rebuilds the worktree, or fork the chat into a new worktree", path, t.id)}
	}
	return nil
}

// noticeMissingWorktree runs workspace.Manager.NoticeMissing for a thread
// opening in the worktree ws (shared/cases C27): a directory removed behind
// our back has its git registration removed (that entry only) and its
// registry entry marked deleted with a snapshot of its HEAD. With recreate
// (thread/resume) the worktree is then re-created clean at that commit
// (workspace.Manager.Restore), and the returned warning (source "server")
// says so; else, or when the restore fails, the thread reports
// workspace.deleted. Failures are logged and warned: the thread opens
// anyway. A folder missing while git has the worktree locked is left as it
// is (workspace.MissingLockedError), and its warning, the only one without
// recreate, says how to bring it back.
func (m *Manager) noticeMissingWorktree(ctx context.Context, ws *session.Workspace, recreate bool) []protocol.Warning {
	if ws == nil || m.cfg.Workspace == nil {
		return nil
	}
	d, err := m.cfg.Workspace.NoticeMissing(ctx, ws.Path)
	if le, ok := errors.AsType[*workspace.MissingLockedError](err); ok {
		return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path, Message: le.Error()}}
	}
	switch {
	case err != nil:
		m.log.Warn("checking a thread's worktree", "path", ws.Path, "err", err)
		return nil
	case d == nil:
		return nil
	}
	m.log.Info("a thread's worktree directory was removed outside knightcode; marked deleted", "path", ws.Path, "snapshot", d.Snapshot, "recoveryRef", d.RecoveryRef)
	if !recreate || d.Snapshot == "" {
		return nil
	}
	r, err := m.cfg.Workspace.Restore(ctx, ws.Path)
	if err != nil {
		m.log.Warn("re-creating a thread's removed worktree", "path", ws.Path, "err", err)
		return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path,
			Message: fmt.Sprintf("the worktree folder %s was removed outside knightcode and could not be re-created (%v); thread/worktree/restore tries again", ws.Path, err)}}
	}
	return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path,
		Message: fmt.Sprintf("the worktree folder %s was removed outside knightcode; it was re-created, clean and detached, at its last commit %s (uncommitted changes it held were gone with the folder)", ws.Path, r.Snapshot.Head[:min(12, len(r.Snapshot.Head))])}}
}

// recordWorktreeHead records head, the commit a worktree thread's
// worktree is at after a turn, in the registry (workspace.Manager.RecordHead:
// what NoticeMissing re-creates the worktree at once git forgot it).
func (m *Manager) recordWorktreeHead(t *thread, head string) {
	if t.ws == nil || m.cfg.Workspace == nil || head == "" {
		return
	}
	if err := m.cfg.Workspace.RecordHead(t.ws.Path, head); err != nil {
		m.log.Debug("recording a thread's worktree HEAD", "thread", t.id, "path", t.ws.Path, "err", err)
	}
}

// useWorktree records that a worktree thread was loaded: its id is attached
// to the worktree in the registry and the worktree's lastUsedAt moves on
// (pruning removes the least recently used first).
func (m *Manager) useWorktree(t *thread) {
	if t.ws == nil || m.cfg.Workspace == nil {
		return
	}
	if err := m.cfg.Workspace.Registry().AttachThread(t.ws.Path, t.id, time.Now()); err != nil {
		m.log.Debug("attaching a thread to its worktree", "thread", t.id, "path", t.ws.Path, "err", err)
	}
}

// touchWorktree moves a worktree thread's worktree's lastUsedAt on (a turn
// starts there).
func (m *Manager) touchWorktree(t *thread) {
	if t.ws == nil || m.cfg.Workspace == nil {
		return
	}
	if err := m.cfg.Workspace.Registry().Touch(t.ws.Path, time.Now()); err != nil {
		m.log.Debug("touching a thread's worktree", "thread", t.id, "path", t.ws.Path, "err", err)
	}
}

// RestoreWorktree does thread/worktree/restore's work: it rebuilds the
// thread's deleted worktree (or one whose folder was removed behind our
// back: noticeMissingWorktree first) at its old path from its snapshot
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
	ws, err := m.workspaceManager("threadId")
	if err != nil {
		return protocol.Thread{}, err
	}
	h, err := m.savedHeader(threadID)
	if err != nil {
		return protocol.Thread{}, err
	}
	if h.Workspace == nil {
		return protocol.Thread{}, coreerr.Param("threadId", "thread %s runs in the user's checkout, not in a managed worktree", threadID)
	}
	path := h.Workspace.Path
	// A folder removed behind our back is deleted first (C27), so it
	// restores; one git has locked is not (MissingLockedError says why).
	if warns := m.noticeMissingWorktree(ctx, h.Workspace, false); len(warns) > 0 {
		return protocol.Thread{}, coreerr.Param("threadId", "%s", warns[0].Message)
	}
	r, err := ws.Restore(ctx, path)
	if err != nil {
		var pe *workspace.ParamError
		switch {
		case errors.Is(err, workspace.ErrNotDeleted):
			return protocol.Thread{}, coreerr.Param("threadId", "the worktree %s of thread %s is not deleted", path, threadID)
		case errors.As(err, &pe) && pe.Field == "path":
			return protocol.Thread{}, &workspace.ConflictError{Reason: workspace.ReasonWorktreeMissing, Paths: []string{path},
				Output: fmt.Sprintf("the worktree registry no longer knows %s, so there is no snapshot to restore; fork the chat into a new worktree instead", path)}
		}
		return protocol.Thread{}, err
	}
	if r.Cleared || r.Leftovers != "" || r.RecoveryRef != "" {
		m.log.Info("a half-built or half-removed worktree was cleared before the restore", "path", path, "leftovers", r.Leftovers, "recoveryRef", r.RecoveryRef)
	}
	t, _, err := m.load(ctx, threadID)
	if err != nil {
		return protocol.Thread{}, err
	}
	var res protocol.Thread
	err = t.call(ctx, func() error {
		if t.unloading {
			return m.goneErr(t.id)
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

// savedHeader returns the session header of thread id: a loaded thread's,
// else that of its newest saved transcript (not archived). Errors:
// ErrThreadNotFound.
func (m *Manager) savedHeader(id string) (session.Header, error) {
	if id == "" {
		return session.Header{}, coreerr.Param("threadId", "must not be empty")
	}
	m.mu.Lock()
	t := m.threads[id]
	m.mu.Unlock()
	if t != nil {
		return t.sess.Header(), nil
	}
	s, ok, err := m.catalog.find(id, false)
	if err != nil {
		return session.Header{}, err
	}
	if !ok {
		if _, archived, _ := m.catalog.find(id, true); archived {
			return session.Header{}, fmt.Errorf("%w: %s is archived; unarchive it first", ErrThreadNotFound, id)
		}
		return session.Header{}, threadNotFound(id)
	}
	return session.ReadHeader(s.SessionFile)
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
	ws, err := m.workspaceManager("path")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(path) {
		return "", coreerr.Param("path", "must be an absolute path, got %q", path)
	}
	claim := m.claimWorktrees()
	defer claim.release()
	d, err := ws.Delete(ctx, path, workspace.DeleteOptions{InUse: claim.inUse, BeforeRemove: m.cleanupBeforeRemove(sub, nil)})
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
