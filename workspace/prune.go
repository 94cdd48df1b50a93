package workspace

import (
	"context"
	"errors"
	"sort"
)

// PruneOptions are the parameters of [Manager.Prune].
type PruneOptions struct {
	// Keep is worktrees.keep: the number of live managed worktrees each
	// project keeps. Must not be negative.
	Keep int
	// Project limits pruning to one project ([Manager.Project]); "" means
	// every project in the registry.
	Project string
	// InUse reports worktrees that are active or have a thread loaded;
	// they are never pruned. nil means none is. Like
	// [DeleteOptions.InUse], it is called for a worktree before the
	// repository lock is taken and again once it is held, right before the
	// first write; a caller that loads threads concurrently claims the path
	// when it reports it not in use, until Prune returns.
	InUse func(path string) bool
	// BeforeRemove is [DeleteOptions.BeforeRemove] for every worktree
	// pruned.
	BeforeRemove func(ctx context.Context, wt Worktree)
}

// PruneResult lists what a prune did.
type PruneResult struct {
	// Pruned are the worktrees snapshotted and removed, least recently
	// used first.
	Pruned []Deleted `json:"pruned"`
	// Skipped are the worktrees past Keep that were left in place, with
	// why.
	Skipped []PruneSkip `json:"skipped,omitempty"`
}

// PruneSkip is a worktree a prune left in place. Reason is a conflict
// reason (worktreeInUse for loaded or locked ones, submodules,
// worktreeMissing) or "error" with Message saying what failed.
type PruneSkip struct {
	Path    string `json:"path"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

// Prune keeps the Keep most recently used live managed worktrees of each
// project (by LastUsedAt, then CreatedAt) and deletes the others the way
// [Manager.Delete] does: snapshot first, then remove (spec: "Past
// worktrees.keep worktrees, the least recently used are pruned the same
// way"). Worktrees InUse reports, locked ones and ones holding a nested
// repository are never pruned; they are listed in Skipped and do not make
// room for others. Errors: [*ParamError] (field "keep") for a negative
// Keep; registry failures. A worktree that fails to delete is skipped with
// its error; a removal that failed after its snapshot is reported as
// skipped with reason "error" and the snapshot named in Message.
func (m *Manager) Prune(ctx context.Context, o PruneOptions) (*PruneResult, error) {
	if o.Keep < 0 {
		return nil, paramErr("keep", "must not be negative, got %d", o.Keep)
	}
	all, err := m.reg.List()
	if err != nil {
		return nil, err
	}
	byProject := map[string][]Worktree{}
	var projects []string
	for _, w := range all {
		if w.Deleted || w.State != "" || !inManagedLayout(w.Path) || (o.Project != "" && w.ProjectCwd != o.Project) {
			continue
		}
		if _, ok := byProject[w.ProjectCwd]; !ok {
			projects = append(projects, w.ProjectCwd)
		}
		byProject[w.ProjectCwd] = append(byProject[w.ProjectCwd], w)
	}
	sort.Strings(projects)
	res := &PruneResult{Pruned: []Deleted{}}
	for _, p := range projects {
		live := byProject[p]
		sort.SliceStable(live, func(i, j int) bool {
			a, b := live[i], live[j]
			if !a.LastUsedAt.Equal(b.LastUsedAt) {
				return a.LastUsedAt.After(b.LastUsedAt)
			}
			if !a.CreatedAt.Equal(b.CreatedAt) {
				return a.CreatedAt.After(b.CreatedAt)
			}
			return a.Path < b.Path
		})
		if len(live) <= o.Keep {
			continue
		}
		old := live[o.Keep:]
		for i := len(old) - 1; i >= 0; i-- { // least recently used first
			if err := ctx.Err(); err != nil {
				return res, err
			}
			w := old[i]
			if o.InUse != nil && o.InUse(w.Path) {
				res.Skipped = append(res.Skipped, PruneSkip{Path: w.Path, Reason: ReasonWorktreeInUse, Message: "a thread is loaded in it"})
				continue
			}
			d, err := m.deleteOne(ctx, w, o.InUse, o.BeforeRemove)
			if err != nil {
				skip := PruneSkip{Path: w.Path, Reason: "error", Message: err.Error()}
				var ce *ConflictError
				if errors.As(err, &ce) {
					skip.Reason, skip.Message = ce.Reason, ce.Output
				}
				res.Skipped = append(res.Skipped, skip)
				continue
			}
			res.Pruned = append(res.Pruned, *d)
		}
	}
	return res, nil
}

// deleteOne deletes w under the repository lock after checking again, under
// the lock, that it is not deleted yet and not in use (inUse may be nil).
func (m *Manager) deleteOne(ctx context.Context, w Worktree, inUse func(path string) bool, beforeRemove func(context.Context, Worktree)) (*Deleted, error) {
	lk, err := lock(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	// Re-read under the lock: another process may have deleted it.
	cur, ok, err := m.reg.Get(w.Path)
	if err != nil {
		return nil, err
	}
	if !ok || (cur.Deleted && cur.State != StateRemoving) || cur.State == StateCreating {
		return nil, conflict(ReasonWorktreeDeleted, []string{w.Path}, "already deleted")
	}
	// Check again under the lock: a thread may have loaded there while
	// the lock was awaited.
	if inUse != nil && inUse(cur.Path) {
		return nil, inUseConflict(cur.Path)
	}
	if cur.State == StateRemoving {
		return m.finishRemoval(ctx, cur)
	}
	return m.deleteLocked(ctx, cur, beforeRemove)
}
