package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	// Cleared: what a restore or a deletion that did not finish left at
	// the path (git's registration there, a half-built or half-removed
	// directory) was removed first.
	Cleared bool `json:"cleared,omitempty"`
	// Leftovers is the ref (refs/knightcode/trash/<bucket>/<time>) of a
	// snapshot-shaped commit holding the files found at the path that
	// differed from Snapshot, saved before they were removed; "" when
	// none did.
	Leftovers string `json:"leftovers,omitempty"`
	// RecoveryRef is the ref under refs/knightcode/trash/ keeping the
	// HEAD of a registration found at the path, when it was not the
	// snapshot's and no branch or tag contains it.
	RecoveryRef string `json:"recoveryRef,omitempty"`
	// IgnoredNotKept: some ignored files were not in the snapshot and are
	// not back (Ignored.NotKept lists them when known).
	IgnoredNotKept bool `json:"ignoredNotKept"`
	// Ignored is what the snapshot kept of the ignored files, written
	// back; nil when it kept none.
	Ignored *IgnoredFiles `json:"ignored,omitempty"`
}

// Restore rebuilds the deleted managed worktree at path from its snapshot
// (spec, thread/worktree/restore): at its old path, detached at the old
// HEAD, `read-tree --reset -u` of the snapshot's worktree tree and
// `read-tree -m` of its index tree, intent-to-add entries marked again, so
// `git status`, `git diff` and `git diff --cached` are as they were; mode
// bits, symlinks, deletions and staged-vs-unstaged differences included.
// Then the ignored files the snapshot kept (its third parent) are written
// back. No hook, filter or user code runs (as in
// [Manager.Create]). A submodule comes back as `git worktree add` leaves
// one it does not initialize: its gitlink, and an empty folder (a
// worktree holding an initialized one is never deleted, so its snapshot
// held no submodule contents). A stale registration at the path (`prunable` in `git
// worktree list --porcelain`, not locked) is removed first with `git
// worktree remove <path>`, that entry only (C27). A restore that fails
// leaves the worktree deleted as it was, its snapshot kept.
//
// A restore is idempotent after a crash: when git has a registration at
// exactly the managed path (a restore that died, or a deletion that died
// before `git worktree remove` finished), or the deletion did not finish
// ([StateRemoving]) and its directory still holds files, what is there is
// removed first ([Restored.Cleared]; the registration of that path only,
// then the directory). Nothing is lost: files there that differ from the
// snapshot are saved first under a new ref ([Restored.Leftovers]), and a
// HEAD that is not the snapshot's gets a recovery ref.
//
// Errors: [*ParamError] (field "path") for a path the registry does not
// list; [ErrNotDeleted]; [*ConflictError] worktreeMissing (deleted without
// a snapshot, or its ref is gone), worktreeInUse
// (the user locked a registration at the path), localChanges (the
// directory exists, is not empty and is not a leftover of knightcode's own,
// or could not be cleared; Paths lists its entries).
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
	repo, err := m.repoAt(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	res := &Restored{Snapshot: *snap, IgnoredNotKept: snap.IgnoredNotKept, Ignored: snap.Ignored}
	list, err := m.listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	e := findEntry(list, w.Path)
	switch {
	case e != nil && e.Locked && e.LockReason != gitInitializing:
		return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "a locked worktree is registered at %s: %s", w.Path, lockReason(e))
	case e != nil && (e == &list[0] || e.Bare):
		return nil, paramErr("path", "%s is the repository's main worktree", w.Path)
	case e != nil && e.Prunable && len(topEntries(w.Path)) == 0:
		if err := repo.WorktreeRemove(ctx, w.Path, 0); err != nil {
			return nil, err
		}
		res.StaleRegistration = true
	case e != nil || (w.State == StateRemoving && len(topEntries(w.Path)) > 0):
		// A restore or a deletion that did not finish: its leftovers go,
		// once saved.
		if res.Leftovers, err = m.saveLeftovers(ctx, w, snap); err != nil {
			return nil, err
		}
		if e != nil && e.Head != "" && e.Head != snap.Head {
			if res.RecoveryRef, err = m.keepCommit(ctx, w.CommonDir, w.Bucket(), e.Head); err != nil {
				return nil, err
			}
		}
		if err := m.clearPath(ctx, w.CommonDir, w.Path); err != nil {
			return nil, err
		}
		res.Cleared = true
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
	cfg, err := m.checkoutConfig(ctx, repo)
	if err != nil {
		return nil, err
	}
	added := false
	fail := func(err error) (*Restored, error) {
		cctx, cancel := withoutCancel(ctx)
		defer cancel()
		if added {
			if rerr := repo.WorktreeRemove(cctx, w.Path, 1); rerr != nil {
				os.RemoveAll(w.Path)
				_ = repo.WorktreeRemove(cctx, w.Path, 1)
			}
		}
		if madeBucket {
			os.Remove(bucketDir)
		}
		return nil, err
	}
	if err := repo.WorktreeAdd(ctx, w.Path, snap.Head); err != nil {
		return fail(err)
	}
	added = true
	if err := m.runStep("added"); err != nil {
		return fail(err)
	}
	if err := m.populate(ctx, w.Path, cfg, snap.WorktreeTree, snap.IndexTree, snap.IntentToAdd); err != nil {
		return fail(err)
	}
	if snap.Ignored != nil && snap.Ignored.Commit != "" {
		if err := m.restoreIgnored(ctx, w.Path, snap.Ignored.Commit, snap.Ignored.Modes); err != nil {
			return fail(err)
		}
	}
	if err := m.runStep("populated"); err != nil {
		return fail(err)
	}
	restored, err := m.reg.Update(w.Path, func(x *Worktree) error {
		x.Deleted, x.DeletedAt, x.Snapshot, x.State = false, nil, "", ""
		x.Head, x.Branch, x.LastUsedAt = snap.Head, "", m.now()
		return nil
	})
	if err != nil {
		return fail(err)
	}
	res.Worktree = restored
	// The worktree holds the state again (its HEAD keeps the commits
	// reachable): the ref is no longer needed.
	_ = repo.DeleteRef(ctx, snap.Ref, snap.Commit)
	return res, nil
}

// Forgotten reports a [Manager.Forget].
type Forgotten struct {
	// Snapshot is the snapshot ref deleted; "" when there was none.
	Snapshot string `json:"snapshot,omitempty"`
	// RecoveryRef is the ref under refs/knightcode/trash/ that keeps the
	// snapshot's HEAD reachable once the snapshot ref is gone, when no
	// branch, remote-tracking ref or tag contains it (commits a thread made
	// on its detached HEAD, shared/cases C22); "" when none was needed.
	RecoveryRef string `json:"recoveryRef,omitempty"`
	// Leftovers is, for a deletion that had not finished, the ref of the
	// files left in its directory that differed from the snapshot (as
	// [Deleted.Leftovers]); "" when none did.
	Leftovers string `json:"leftovers,omitempty"`
}

// Forget removes a deleted worktree from the registry and deletes its
// snapshot ref (thread/delete: "deleting the thread or snapshot deletes the
// ref"). The commits of the snapshot's HEAD stay reachable: when no branch,
// remote-tracking ref or tag contains them, a recovery ref under
// refs/knightcode/trash/ is written first ([Forgotten.RecoveryRef]). A
// deletion that had not finished ([StateRemoving]) is finished first, as
// [Manager.Delete] does. Errors: [*ParamError] (field "path") for an
// unknown path; [*ConflictError] worktreeInUse for a live worktree (delete
// it first), worktreeMissing for an unfinished deletion whose snapshot ref
// is gone (nothing is removed); git and removal failures (the entry stays).
func (m *Manager) Forget(ctx context.Context, path string) (*Forgotten, error) {
	clean, err := cleanDir(path)
	if err != nil {
		return nil, paramErr("path", "%v", err)
	}
	w, ok, err := m.reg.Get(clean)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, paramErr("path", "%s is not a managed worktree", path)
	}
	if !w.Deleted {
		return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "%s is not deleted", w.Path)
	}
	out := &Forgotten{}
	if w.Snapshot != "" || w.State == StateRemoving {
		lk, err := lock(ctx, w.CommonDir)
		if err != nil {
			return nil, err
		}
		defer lk.Unlock()
		if w.State == StateRemoving {
			d, err := m.finishRemoval(ctx, w)
			if err != nil {
				return nil, err
			}
			out.Leftovers = d.Leftovers
		}
		snap, ok, err := m.ReadSnapshot(ctx, w.CommonDir, w.Snapshot)
		if err != nil {
			return nil, err
		}
		if ok {
			if out.RecoveryRef, err = m.keepCommit(ctx, w.CommonDir, w.Bucket(), snap.Head); err != nil {
				return nil, err
			}
			repo, err := m.repoAt(ctx, w.CommonDir)
			if err != nil {
				return nil, err
			}
			if err := repo.DeleteRef(ctx, w.Snapshot, snap.Commit); err != nil {
				return nil, err
			}
			out.Snapshot = w.Snapshot
		}
	}
	return out, m.reg.Remove(w.Path)
}
