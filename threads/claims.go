package threads

import (
	"fmt"

	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// worktreeClaim is one deletion's hold on the managed worktrees it removes
// (worktree/delete, an archive's deletion, pruning, a failed start's
// rollback). Its inUse is the deletion's workspace.DeleteOptions.InUse or
// PruneOptions.InUse, which workspace calls before taking the repository
// lock and again under it: in one critical section of the manager's table
// (Manager.mu) it reports whether a loaded thread runs in the worktree
// and, when none does, claims the path, so no thread registers inside it
// (Manager.register refuses with worktreeDeleted) until release. A thread
// either loaded first, and the deletion is refused, or loads after the
// deletion ended. placement.claim starts one.
type worktreeClaim struct {
	m     *Manager
	paths []string // one entry per claim taken (guarded by m.mu)
}

// inUse reports whether a loaded thread runs in the worktree at path and,
// when none does, claims path.
func (c *worktreeClaim) inUse(path string) bool {
	m := c.m
	m.mu.Lock()
	if loadedIn(m.threads, path) {
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

// loadedIn reports whether one of threads (the manager's table, its mutex
// held) runs in the worktree at path.
func loadedIn(threads map[string]*thread, path string) bool {
	w := workspace.Worktree{Path: path}
	for _, t := range threads {
		if (t.ws != nil && t.ws.Path == path) || w.Contains(t.cwd) {
			return true
		}
	}
	return false
}

// claimedFor returns the path of deleting (the claimed worktree paths, the
// manager's mutex held) a thread with cwd and workspace record ws would
// run in, "" when none.
func claimedFor(deleting map[string]int, cwd string, ws *session.Workspace) string {
	for p := range deleting {
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
