package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Restored reports a restore.
type Restored struct {
	// Worktree is the registry entry, live again.
	Worktree Worktree `json:"worktree"`
	// Snapshot is what was restored; its ref is deleted once the worktree
	// and the registry hold the state again.
	Snapshot Snapshot `json:"snapshot"`
	// StaleRegistration: a stale git registration at the path (its
	// directory gone) was removed first, that entry only (C27).
	StaleRegistration bool `json:"staleRegistration,omitempty"`
	// IgnoredNotKept: ignored files were not in the snapshot and are not
	// back.
	IgnoredNotKept bool `json:"ignoredNotKept"`
}

// Restore rebuilds the deleted managed worktree at path from its snapshot
// (spec, thread/worktree/restore): at its old path, detached at the old
// HEAD, `read-tree --reset -u` of the snapshot's worktree tree and
// `read-tree -m` of its index tree, intent-to-add entries marked again, so
// `git status`, `git diff` and `git diff --cached` are as they were; mode
// bits, symlinks, deletions and staged-vs-unstaged differences included.
// Ignored files were not kept. No hook, filter or user code runs (as in
// [Manager.Create]). A stale registration at the path (`prunable` in `git
// worktree list --porcelain`, not locked) is removed first with `git
// worktree remove <path>`, that entry only (C27). A restore that fails
// leaves the worktree deleted as it was, its snapshot kept.
//
// Errors: [*ParamError] (field "path") for a path the registry does not
// list; [ErrNotDeleted]; [*ConflictError] worktreeMissing (deleted without
// a snapshot, or its ref is gone), submodules (the snapshot holds gitlinks:
// submodule contents cannot be restored; Paths lists them), worktreeInUse
// (a live or locked registration holds the path), localChanges (the
// directory exists and is not empty; Paths lists its entries).
func (m *Manager) Restore(ctx context.Context, path string) (*Restored, error) {
	clean, err := cleanDir(path)
	if err != nil {
		return nil, paramErr("path", "%v", err)
	}
	w, ok, err := m.reg.Get(clean)
	if err != nil {
		return nil, err
	}
	if !ok || !inManagedLayout(w.Path) {
		return nil, paramErr("path", "%s is not a managed worktree", path)
	}
	if !w.Deleted {
		return nil, ErrNotDeleted
	}
	if w.Snapshot == "" {
		return nil, conflict(ReasonWorktreeMissing, []string{w.Path},
			"%s was deleted without a snapshot; fork the chat into a new worktree instead", w.Path)
	}
	lk, err := lock(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()

	snap, ok, err := m.ReadSnapshot(ctx, w.CommonDir, w.Snapshot)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, conflict(ReasonWorktreeMissing, []string{w.Path},
			"the snapshot %s of %s no longer exists; fork the chat into a new worktree instead", w.Snapshot, w.Path)
	}
	if links, err := m.gitlinks(ctx, w.CommonDir, snap.WorktreeTree, snap.IndexTree); err != nil {
		return nil, err
	} else if len(links) > 0 {
		return nil, conflict(ReasonSubmodules, links, "the snapshot holds submodules, whose contents cannot be restored")
	}

	res := &Restored{Snapshot: *snap, IgnoredNotKept: true}
	list, err := m.listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	if e := findEntry(list, w.Path); e != nil {
		switch {
		case e.Locked:
			return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "a locked worktree is registered at %s: %s", w.Path, lockReason(e))
		case !e.Prunable:
			return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "git already has a worktree at %s", w.Path)
		}
		if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"worktree", "remove", w.Path}, Write: true}); err != nil {
			return nil, err
		}
		res.StaleRegistration = true
	}
	if ents := topEntries(w.Path); len(ents) > 0 {
		return nil, conflict(ReasonLocalChanges, ents, "%s exists and is not empty", w.Path)
	}
	bucketDir := filepath.Dir(w.Path)
	madeBucket := false
	if _, err := os.Stat(bucketDir); errors.Is(err, os.ErrNotExist) {
		madeBucket = true
	}
	if err := os.MkdirAll(bucketDir, 0o755); err != nil {
		return nil, errorf("restore: %v", err)
	}
	cfg, err := m.checkoutConfig(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	added := false
	fail := func(err error) (*Restored, error) {
		cctx, cancel := withoutCancel(ctx)
		defer cancel()
		if added {
			if _, rerr := m.git.Run(cctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"worktree", "remove", "--force", w.Path}, Write: true}); rerr != nil {
				os.RemoveAll(w.Path)
				_, _ = m.git.Run(cctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"worktree", "remove", "--force", w.Path}, Write: true})
			}
		}
		if madeBucket {
			os.Remove(bucketDir)
		}
		return nil, err
	}
	_, err = m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"worktree", "add", "--no-checkout", "--detach", w.Path, snap.Head}, Write: true})
	if err != nil {
		return fail(err)
	}
	added = true
	if err := m.runStep("added"); err != nil {
		return fail(err)
	}
	if err := m.populate(ctx, w.Path, cfg, snap.WorktreeTree, snap.IndexTree, snap.IntentToAdd); err != nil {
		return fail(err)
	}
	if err := m.runStep("populated"); err != nil {
		return fail(err)
	}
	restored, err := m.reg.Update(w.Path, func(x *Worktree) error {
		x.Deleted, x.DeletedAt, x.Snapshot = false, nil, ""
		x.Head, x.Branch, x.LastUsedAt = snap.Head, "", m.now()
		return nil
	})
	if err != nil {
		return fail(err)
	}
	res.Worktree = restored
	// The worktree holds the state again (its HEAD keeps the commits
	// reachable): the ref is no longer needed.
	_, _ = m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"update-ref", "-d", snap.Ref, snap.Commit}, Write: true})
	return res, nil
}

// gitlinks lists the gitlink (mode 160000) paths of the trees.
func (m *Manager) gitlinks(ctx context.Context, dir string, trees ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, t := range trees {
		b, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: []string{"ls-tree", "-r", "-z", "--full-tree", t}, Timeout: longTimeout})
		if err != nil {
			return nil, err
		}
		for _, rec := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
			meta, p, ok := strings.Cut(rec, "\t")
			if ok && strings.HasPrefix(meta, "160000 ") && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Forget removes a deleted worktree from the registry and deletes its
// snapshot ref (thread/delete: "deleting the thread or snapshot deletes the
// ref"). Errors: [*ParamError] (field "path") for an unknown path;
// [*ConflictError] worktreeInUse for a live worktree (delete it first).
func (m *Manager) Forget(ctx context.Context, path string) error {
	clean, err := cleanDir(path)
	if err != nil {
		return paramErr("path", "%v", err)
	}
	w, ok, err := m.reg.Get(clean)
	if err != nil {
		return err
	}
	if !ok {
		return paramErr("path", "%s is not a managed worktree", path)
	}
	if !w.Deleted {
		return conflict(ReasonWorktreeInUse, []string{w.Path}, "%s is not deleted", w.Path)
	}
	if w.Snapshot != "" {
		lk, err := lock(ctx, w.CommonDir)
		if err != nil {
			return err
		}
		_, err = m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"update-ref", "-d", w.Snapshot}, Write: true})
		lk.Unlock()
		if err != nil {
			return err
		}
	}
	return m.reg.Remove(w.Path)
}
