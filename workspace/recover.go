package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// What a process killed in the middle of a creation, a deletion or a
// restore leaves behind, and how it is finished. The registry always knows
// first: a creation is recorded (StateCreating) before `git worktree add`, a
// deletion (Deleted, Snapshot, StateRemoving) right after its snapshot ref
// is written and before anything is removed. Git registrations and files are
// only ever removed at a managed path the registry lists, one entry at a
// time (`git worktree remove <path>`, never a repository-wide prune, C27),
// and only once their content is in a snapshot, or was never handed out.

// creationLockDir holds the creation locks, in the agent directory.
const creationLockDir = "worktrees.creating"

// gitInitializing is the lock reason `git worktree add` writes while it
// sets a worktree up (git-worktree(1), "initializing"); a registration
// still locked so under the repository lock belongs to an add that died.
const gitInitializing = "initializing"

// creationLock is the flock a running [Manager.Create] holds on
// <agentDir>/worktrees.creating/<hash of the path>.lock from before the
// registry records the worktree until it is complete or rolled back. A
// process that dies drops it, which is how [Manager.Reconcile] tells a
// creation that died from one still running, in this process or another.
type creationLock struct {
	fl   *flock.Flock
	path string
}

func (m *Manager) creationLockPath(worktree string) string {
	sum := sha256.Sum256([]byte(worktree))
	return filepath.Join(m.agentDir, creationLockDir, hex.EncodeToString(sum[:12])+".lock")
}

// lockCreation takes the creation lock of the worktree path.
func (m *Manager) lockCreation(path string) (*creationLock, error) {
	c, ok, err := m.tryLockCreation(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf("another creation of %s is running", path)
	}
	return c, nil
}

// tryLockCreation takes the creation lock of path if it is free; ok is
// false while a creation holds it.
func (m *Manager) tryLockCreation(path string) (c *creationLock, ok bool, err error) {
	lp := m.creationLockPath(path)
	if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
		return nil, false, errorf("creation lock: %v", err)
	}
	fl := flock.New(lp)
	if ok, err = fl.TryLock(); err != nil {
		return nil, false, errorf("creation lock: %v", err)
	}
	if !ok {
		return nil, false, nil
	}
	return &creationLock{fl: fl, path: lp}, true, nil
}

// release removes the lock file and drops the lock.
func (c *creationLock) release() {
	os.Remove(c.path)
	_ = c.fl.Unlock()
}

// Reconcile removes what creations that did not finish left behind: every
// registry entry in state [StateCreating] whose creation lock no process
// holds (the process that made it died) loses git's registration of its
// path (`git worktree remove --force <path>`, that entry only, also when
// git still has it locked "initializing"), its directory (only at a path in
// the managed layout <root>/<4 hex>/<name>; nothing in it was ever handed
// out) and then the entry. A creation still running, in this process or
// another, is left alone. Call it when the server starts; [Manager.List]
// calls it too.
//
// It returns the paths cleaned up; an error joins those of the entries that
// could not be (they stay, for the next call).
func (m *Manager) Reconcile(ctx context.Context) ([]string, error) {
	all, err := m.reg.List()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, w := range all {
		if w.State != StateCreating {
			continue
		}
		ok, err := m.reconcileCreating(ctx, w.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("workspace: cleaning up the unfinished creation of %s: %w", w.Path, err))
		} else if ok {
			removed = append(removed, w.Path)
		}
	}
	return removed, errors.Join(errs...)
}

// reconcileCreating cleans up the creation of path if it died; ok reports
// it did.
func (m *Manager) reconcileCreating(ctx context.Context, path string) (ok bool, err error) {
	c, free, err := m.tryLockCreation(path)
	if err != nil || !free {
		return false, err
	}
	defer c.release()
	w, found, err := m.reg.Get(path)
	if err != nil || !found || w.State != StateCreating {
		return false, err
	}
	if !inManagedLayout(w.Path) {
		return false, errorf("%s is not in the managed layout; left as it is", w.Path)
	}
	if st, err := os.Stat(w.CommonDir); err == nil && st.IsDir() {
		lk, err := lock(ctx, w.CommonDir)
		if err != nil {
			return false, err
		}
		err = m.clearPath(ctx, w.CommonDir, w.Path)
		lk.Unlock()
		if err != nil {
			return false, err
		}
	} else if err := os.RemoveAll(w.Path); err != nil {
		return false, errorf("removing %s: %v", w.Path, err)
	}
	os.Remove(filepath.Dir(w.Path)) // the bucket, when empty
	return true, m.reg.Remove(w.Path)
}

// clearPath removes git's registration of the managed path (that entry
// only: `git worktree remove --force <path>`; `git worktree remove <path>`
// for one whose directory is gone; a second --force for a registration git
// still has locked "initializing") and then the directory. When git cannot
// remove the registration of a directory it no longer validates (its .git
// file already gone), the directory is removed first and the registration
// of the now missing directory after. Call it with the repository lock
// held, only for a path whose content is saved or was never handed out.
// Errors: [*ParamError] for the main worktree; [*ConflictError]
// worktreeInUse when the user locked the registration, localChanges (Paths:
// what is left) when the directory cannot be removed; git failures.
func (m *Manager) clearPath(ctx context.Context, commonDir, path string) error {
	list, err := m.listWorktrees(ctx, commonDir)
	if err != nil {
		return err
	}
	if e := findEntry(list, path); e != nil {
		if e == &list[0] || e.Bare {
			return paramErr("path", "%s is the repository's main worktree", path)
		}
		force := 1
		switch {
		case e.Locked && e.LockReason != gitInitializing:
			return conflict(ReasonWorktreeInUse, []string{path}, "locked: %s", lockReason(e))
		case e.Locked:
			force = 2
		case e.Prunable:
			force = 0
		}
		repo, err := m.repoAt(ctx, commonDir)
		if err != nil {
			return err
		}
		if err := repo.WorktreeRemove(ctx, path, force); err != nil {
			if rmErr := os.RemoveAll(path); rmErr != nil {
				return conflict(ReasonLocalChanges, topEntries(path), "%s could not be cleared (%v) after git failed: %v", path, rmErr, err)
			}
			if err := repo.WorktreeRemove(ctx, path, force); err != nil {
				return err
			}
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return conflict(ReasonLocalChanges, topEntries(path), "%s could not be cleared: %v", path, err)
	}
	return nil
}

// saveLeftovers saves what a deletion or a restore that did not finish
// left in w's directory, before it is removed: the snapshot's worktree
// tree with every file found there that is not ignored laid over it (`git
// add --ignore-removal` into a temporary index, --work-tree the directory;
// files already removed are not counted as deleted), committed in the
// snapshot's shape (parents snap.Head and snap.IndexCommit) under
// refs/knightcode/trash/<bucket>/<time>. It returns "" when the directory
// holds nothing that differs from the snapshot. Call it with the repository
// lock held.
func (m *Manager) saveLeftovers(ctx context.Context, w Worktree, snap *Snapshot) (string, error) {
	ents := topEntries(w.Path)
	if len(ents) == 0 || (len(ents) == 1 && ents[0] == ".git") {
		return "", nil
	}
	tmp, err := os.MkdirTemp("", "knightcode-leftovers-")
	if err != nil {
		return "", errorf("leftovers: %v", err)
	}
	defer os.RemoveAll(tmp)
	repo, err := m.repoAt(ctx, w.CommonDir)
	if err != nil {
		return "", err
	}
	// The half-removed directory as a work tree of the common dir, in a
	// temporary index: git's registration of it may be gone already.
	left := repo.AtWorkTree(w.Path).WithIndex(filepath.Join(tmp, "index")).WithConfig("core.untrackedCache=false")
	if err := left.ReadTree(ctx, snap.WorktreeTree, gitcli.ReadTreeOptions{}); err != nil {
		return "", err
	}
	if err := left.AddAll(ctx); err != nil {
		return "", err
	}
	tree, err := left.WriteTree(ctx)
	if err != nil {
		return "", err
	}
	if tree == snap.WorktreeTree {
		return "", nil
	}
	now := m.now().UTC()
	meta, err := json.Marshal(snapshotMeta{Path: w.Path, Branch: snap.Branch, IntentToAdd: snap.IntentToAdd, Time: now.Format(time.RFC3339Nano)})
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("knightcode leftovers of %s (over snapshot %s)\n\n%s%s\n", w.Path, snap.Ref, metaKey, meta)
	commit, err := m.commitTree(ctx, w.CommonDir, tree, msg, snap.Head, snap.IndexCommit)
	if err != nil {
		return "", err
	}
	return m.createRef(ctx, w.CommonDir, func(t time.Time) string {
		return TrashRefPrefix + w.Bucket() + "/" + t.Format(snapshotTimeFormat)
	}, now, commit)
}

// keepCommit keeps commit reachable once the refs that hold it now
// (a worktree's HEAD, a snapshot ref) go away (shared/cases C22): it
// returns "" when a branch, a remote-tracking ref or a tag contains it
// (`git for-each-ref --contains`), else the first ref under
// refs/knightcode/trash/ that does, else a new
// refs/knightcode/trash/<bucket>/<time> pointing at it.
func (m *Manager) keepCommit(ctx context.Context, dir, bucket, commit string) (string, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return "", err
	}
	contains := func(prefixes ...string) (string, error) {
		lines, err := repo.ForEachRef(ctx, gitcli.ForEachRefOptions{Count: 1, Format: "%(refname)", Contains: commit, Patterns: prefixes})
		if err != nil || len(lines) == 0 {
			return "", err
		}
		return strings.TrimSpace(lines[0]), nil
	}
	if ref, err := contains("refs/heads/", "refs/remotes/", "refs/tags/"); err != nil || ref != "" {
		return "", err
	}
	if ref, err := contains(TrashRefPrefix); err != nil || ref != "" {
		return ref, err
	}
	return m.createRef(ctx, dir, func(t time.Time) string {
		return TrashRefPrefix + bucket + "/" + t.Format(snapshotTimeFormat)
	}, m.now().UTC(), commit)
}

// finishRemoval finishes the deletion of w, which a deletion that did not
// finish left in state [StateRemoving] (Deleted, its snapshot written):
// files left in the directory that differ from the snapshot are saved
// ([Deleted.Leftovers]), git's registration of the path and the directory
// are removed ([Manager.clearPath]) and the state is cleared. The first
// snapshot stays the worktree's. Call it with the repository lock held.
// Errors: [*ConflictError] worktreeMissing when the snapshot ref is gone
// (nothing is removed then); [*RemoveError] when the removal fails.
func (m *Manager) finishRemoval(ctx context.Context, w Worktree) (*Deleted, error) {
	snap, ok, err := m.ReadSnapshot(ctx, w.CommonDir, w.Snapshot)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, conflict(ReasonWorktreeMissing, []string{w.Path},
			"the snapshot %q of %s no longer exists, so what is left at its path was not removed", w.Snapshot, w.Path)
	}
	d := &Deleted{Path: w.Path, Snapshot: w.Snapshot, Branch: w.Branch, RecoveryRef: w.RecoveryRef, IgnoredNotKept: true}
	if d.Leftovers, err = m.saveLeftovers(ctx, w, snap); err != nil {
		return nil, err
	}
	if err := m.clearPath(ctx, w.CommonDir, w.Path); err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) && ce.Reason == ReasonWorktreeInUse {
			return nil, err
		}
		re := &RemoveError{Path: w.Path, Snapshot: w.Snapshot, Err: err, Remaining: topEntries(w.Path)}
		if after, lerr := m.listWorktrees(ctx, w.CommonDir); lerr != nil || findEntry(after, w.Path) != nil {
			re.Registered = true
		}
		return nil, re
	}
	if err := m.removed(w.Path); err != nil {
		return nil, err
	}
	return d, nil
}

// NoticeMissing handles a live managed worktree whose directory was
// removed behind knightcode's back (shared/cases C27: `rm -rf`, git's
// registration now prunable), for a thread about to open there: when the
// directory is gone and `git worktree list --porcelain` shows its
// registration prunable and not locked, or shows none, the registration of
// that path alone is removed with `git worktree remove <path>` (which works
// on a missing directory; never a repository-wide prune) and the registry
// marks the worktree deleted. With git's registration it had a HEAD: a
// snapshot of that HEAD alone is written first ([Snapshot.DirectoryMissing]:
// uncommitted work is never assumed to exist in a registration whose
// directory is missing), so [Manager.Restore] re-creates the worktree
// clean at that commit (C27: "then re-creates it"). Without a
// registration (git pruned it) the registry's last recorded HEAD
// ([Worktree.Head], recorded at each turn's end) stands in for it, when
// that commit still exists; without either there is no snapshot and a
// restore answers worktreeMissing. Commits of its HEAD
// that no branch, remote-tracking ref or tag contains are kept under
// refs/knightcode/trash/ first ([Deleted.RecoveryRef]).
//
// It returns nil, nil when there is nothing to do: path is not a live
// managed worktree, its directory exists, its repository is gone, or git
// has it not prunable; a [*MissingLockedError] when git has it locked
// (nothing done: a locked registration is kept, as git keeps it).
func (m *Manager) NoticeMissing(ctx context.Context, path string) (*Deleted, error) {
	clean, err := cleanDir(path)
	if err != nil {
		return nil, nil
	}
	w, ok, err := m.reg.Get(clean)
	if err != nil || !ok || w.Deleted || w.State != "" || !inManagedLayout(w.Path) {
		return nil, err
	}
	missing := func() bool {
		_, err := os.Lstat(w.Path)
		return errors.Is(err, os.ErrNotExist)
	}
	if !missing() {
		return nil, nil
	}
	if st, err := os.Stat(w.CommonDir); err != nil || !st.IsDir() {
		return nil, nil
	}
	lk, err := lock(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	if cur, ok, err := m.reg.Get(w.Path); err != nil || !ok || cur.Deleted || cur.State != "" || !missing() {
		return nil, err
	}
	list, err := m.listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	d := &Deleted{Path: w.Path, DirectoryMissing: true, IgnoredNotKept: true}
	e := findEntry(list, w.Path)
	forgotten := false
	if e == nil && w.Head != "" {
		// git has forgotten it (`git worktree prune`, its HEAD and logs
		// gone): its last recorded HEAD stands in.
		if _, err := m.treeOf(ctx, w.CommonDir, w.Head); err == nil {
			e, forgotten = &entry{Path: w.Path, Head: w.Head, Prunable: true}, true
		}
	}
	if e != nil {
		if e == &list[0] || e.Bare {
			return nil, nil
		}
		if e.Locked { // never prunable, whatever its folder
			return nil, &MissingLockedError{Path: w.Path, Reason: e.LockReason}
		}
		if !e.Prunable {
			return nil, nil
		}
		d.Branch = e.Branch
		if d.UnmergedCommits, d.RecoveryRef, err = m.keepHead(ctx, w, e); err != nil {
			return nil, err
		}
		// A snapshot of its HEAD alone (DirectoryMissing: no uncommitted
		// work is assumed), so that a restore re-creates it there.
		snap, err := m.snapshotLocked(ctx, w, e)
		if err != nil {
			return nil, err
		}
		d.Snapshot = snap.Ref
		if !forgotten { // else git has no registration left to remove
			repo, err := m.repoAt(ctx, w.CommonDir)
			if err != nil {
				return nil, err
			}
			if err := repo.WorktreeRemove(ctx, w.Path, 0); err != nil {
				return nil, err
			}
		}
	}
	_, err = m.reg.Update(w.Path, func(x *Worktree) error {
		at := m.now()
		x.Deleted, x.DeletedAt, x.Snapshot = true, &at, d.Snapshot
		if e != nil && !forgotten {
			x.Head, x.Branch = e.Head, e.Branch
		}
		if d.RecoveryRef != "" {
			x.RecoveryRef = d.RecoveryRef
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	os.Remove(filepath.Dir(w.Path)) // the bucket, when empty
	return d, nil
}
