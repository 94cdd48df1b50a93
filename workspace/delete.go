package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// DeleteOptions are the caller's knowledge a deletion needs.
type DeleteOptions struct {
	// InUse reports whether a thread is loaded in the worktree at path
	// (or is otherwise active there); such a worktree is never deleted.
	// nil means none is. It is called twice: before the repository lock
	// is taken (a quick refusal) and again once the lock is held and the
	// registry re-read, right before the first write, so a thread that
	// loaded there while Delete waited for the lock still stops it. A
	// caller that loads threads concurrently makes the check and a claim
	// on path one atomic step (it refuses to load threads inside a path it
	// reported not in use until Delete returns), so none starts in a
	// worktree being removed.
	InUse func(path string) bool
	// BeforeRemove, when set, is called with the worktree's registry entry
	// (state removing, its snapshot recorded) after the snapshot ref is
	// written and before `git worktree remove`, with the repository lock
	// held and the directory still in place: the seam where an
	// environment's cleanup script runs (spec, thread/workspace/progress).
	// It is not called for a worktree whose directory is already gone, nor
	// when a deletion that did not finish is finished. It cannot stop the
	// removal: it reports its own failures.
	BeforeRemove func(ctx context.Context, wt Worktree)
}

// Deleted reports a deletion (worktree/delete's {snapshot?} and more).
type Deleted struct {
	// Path is the worktree's path.
	Path string `json:"path"`
	// Snapshot is the ref holding its state; "" only when neither git nor
	// the disk had the worktree any more.
	Snapshot string `json:"snapshot,omitempty"`
	// Branch is the branch that was checked out in it ("refs/heads/x"),
	// "" when detached. Branches are never deleted.
	Branch string `json:"branch,omitempty"`
	// UnmergedCommits counts the branch's commits in neither the base nor
	// its upstream, or for a detached HEAD its commits in no branch,
	// remote-tracking ref or tag (-1: could not be counted); RecoveryRef
	// is the ref written for them under refs/knightcode/trash/
	// (<branch name>, or <bucket>/<time> for a detached HEAD; shared/cases
	// C22).
	UnmergedCommits int    `json:"unmergedCommits,omitempty"`
	RecoveryRef     string `json:"recoveryRef,omitempty"`
	// DirectoryMissing: the directory was already gone; the snapshot holds
	// HEAD only.
	DirectoryMissing bool `json:"directoryMissing,omitempty"`
	// IgnoredNotKept: some ignored files were not saved in the snapshot
	// (Ignored.NotKept lists them when known).
	IgnoredNotKept bool `json:"ignoredNotKept"`
	// Ignored is what the snapshot kept of the ignored files.
	Ignored *IgnoredFiles `json:"ignored,omitempty"`
	// Leftovers, when finishing a deletion that did not finish, is the
	// ref (refs/knightcode/trash/<bucket>/<time>) of a snapshot-shaped
	// commit holding the files found in the half-removed directory that
	// differed from Snapshot; "" when none did.
	Leftovers string `json:"leftovers,omitempty"`
}

// NotKept is the warning of a deletion whose snapshot left ignored files
// out (they were deleted with the worktree: [IgnoredFiles.NotKept], the
// budget in ignored.go), naming up to five of them; "" when it kept every
// ignored file or had none to keep (a directory already missing).
func (d *Deleted) NotKept() string {
	if d == nil || d.Ignored == nil || len(d.Ignored.NotKept) == 0 {
		return ""
	}
	return fmt.Sprintf("the worktree %s was deleted after its snapshot %s, which has no copy of some of its ignored files (%s): they were deleted with it",
		d.Path, d.Snapshot, d.Ignored.summary())
}

// Delete snapshots the managed worktree at path, then removes it, and marks
// it deleted in the registry (spec, worktree/delete and thread/archive).
//
// Nothing is modified when it refuses, and every check runs before the first
// write (shared/cases C25): [*ParamError] (field "path") for a path that is
// not a managed worktree in the registry and the managed layout (the
// user's own worktrees and the main checkout are never touched);
// [*ConflictError] worktreeDeleted when already deleted; worktreeInUse when
// opts.InUse says a thread is loaded there (before or under the repository
// lock, see [DeleteOptions.InUse]) or `git worktree list
// --porcelain` reports it locked (Output gives the lock reason); submodules
// when it holds a nested repository (an initialized submodule or any
// repository inside it, ignored directories included; Paths lists them);
// worktreeMissing when its directory exists but git has it no longer
// registered.
//
// Then, under the repository lock: a recovery ref for a branch with commits
// in neither the base nor its upstream (C22), the snapshot ref (which holds
// every untracked file, C24), the registry's state removing,
// [DeleteOptions.BeforeRemove] (an environment's cleanup script), and only
// then `git worktree remove --force` of that path. A registration whose directory is gone (prunable) is
// snapshotted at its HEAD and removed with `git worktree remove <path>`
// alone (C27). A removal that fails returns [*RemoveError] with the
// snapshot and what is left; there is no rm -rf fallback.
//
// The registry marks the worktree deleted with its snapshot, in state
// [StateRemoving], right after the snapshot ref is written and before
// anything is removed, and clears the state once the removal succeeded. A
// deletion that did not finish (the process was killed, or the removal
// failed) is finished by the next Delete of that path: the first snapshot
// is kept (never replaced by one of a half-removed directory), files left
// in the directory that differ from it are saved first
// ([Deleted.Leftovers]), then git's registration of that path and the
// directory are removed.
func (m *Manager) Delete(ctx context.Context, path string, opts DeleteOptions) (*Deleted, error) {
	w, err := m.registered(path)
	if err != nil {
		return nil, err
	}
	if w.Deleted && w.State != StateRemoving {
		return nil, conflict(ReasonWorktreeDeleted, []string{w.Path}, "the worktree %s is deleted", w.Path)
	}
	if opts.InUse != nil && opts.InUse(w.Path) {
		return nil, inUseConflict(w.Path)
	}
	return m.deleteOne(ctx, w, opts.InUse, opts.BeforeRemove)
}

// inUseConflict is the refusal of a worktree a thread is loaded in.
func inUseConflict(path string) error {
	return conflict(ReasonWorktreeInUse, []string{path}, "a thread is loaded in %s", path)
}

// deleteLocked is Delete after the registry and in-use checks, with the
// repository lock held.
func (m *Manager) deleteLocked(ctx context.Context, w Worktree, beforeRemove func(context.Context, Worktree)) (*Deleted, error) {
	list, err := m.listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	e := findEntry(list, w.Path)
	_, statErr := os.Lstat(w.Path)
	if e == nil {
		if statErr == nil {
			return nil, conflict(ReasonWorktreeMissing, []string{w.Path},
				"%s exists but git has no worktree registered there; it was left untouched", w.Path)
		}
		// Neither git nor the disk has it: nothing to save or remove.
		if err := m.reg.MarkDeleted(w.Path, "", m.now()); err != nil {
			return nil, err
		}
		return &Deleted{Path: w.Path, DirectoryMissing: true, IgnoredNotKept: true}, nil
	}
	if e == &list[0] || e.Bare {
		return nil, paramErr("path", "%s is the repository's main worktree", w.Path)
	}
	if e.Locked {
		return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "locked: %s", lockReason(e))
	}
	if !e.Prunable {
		if nested := nestedRepos(w.Path); len(nested) > 0 {
			return nil, conflict(ReasonSubmodules, nested,
				"%s holds a nested repository, whose contents a snapshot cannot keep", w.Path)
		}
	}

	d := &Deleted{Path: w.Path, Branch: e.Branch, IgnoredNotKept: true}
	if d.UnmergedCommits, d.RecoveryRef, err = m.keepHead(ctx, w, e); err != nil {
		return nil, err
	}
	snap, err := m.snapshotLocked(ctx, w, e)
	if err != nil {
		return nil, err
	}
	d.Snapshot, d.DirectoryMissing = snap.Ref, snap.DirectoryMissing
	d.IgnoredNotKept, d.Ignored = snap.IgnoredNotKept, snap.Ignored
	// The registry learns of the snapshot before anything is removed
	// (state removing): a process killed from here on leaves an entry
	// that restore, list and a second delete understand.
	marked, err := m.reg.Update(w.Path, func(x *Worktree) error {
		at := m.now()
		x.Deleted, x.DeletedAt, x.Snapshot, x.State = true, &at, snap.Ref, StateRemoving
		x.Head, x.Branch = snap.Head, e.Branch
		if d.RecoveryRef != "" {
			x.RecoveryRef = d.RecoveryRef
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := m.runStep("snapshotted"); err != nil {
		return nil, err
	}
	if beforeRemove != nil && !snap.DirectoryMissing {
		beforeRemove(ctx, marked)
	}

	force := 1
	if e.Prunable {
		force = 0
	}
	repo, err := m.repoAt(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	if rmErr := repo.WorktreeRemove(ctx, w.Path, force); rmErr != nil {
		re := &RemoveError{Path: w.Path, Snapshot: snap.Ref, Err: rmErr, Remaining: topEntries(w.Path)}
		if after, err := m.listWorktrees(ctx, w.CommonDir); err != nil || findEntry(after, w.Path) != nil {
			re.Registered = true
		}
		return nil, re
	}
	if err := m.runStep("removed"); err != nil {
		return nil, err
	}
	if err := m.removed(w.Path); err != nil {
		return nil, err
	}
	return d, nil
}

// removed records that a deletion finished (state removing cleared) and
// removes the worktree's bucket directory when it is empty.
func (m *Manager) removed(path string) error {
	if _, err := m.reg.Update(path, func(x *Worktree) error { x.State = ""; return nil }); err != nil {
		return err
	}
	os.Remove(filepath.Dir(path)) // the bucket, when empty
	return nil
}

// keepHead keeps the commits of the worktree's HEAD reachable before it is
// deleted (shared/cases C22): a branch with commits in neither the base nor
// its upstream gets a recovery ref at its tip ([Manager.writeRecoveryRef]);
// a detached HEAD that no branch, remote-tracking ref or tag contains
// (commits the thread made on it) gets refs/knightcode/trash/<bucket>/<time>
// ([Manager.keepCommit]). It returns the commits counted (-1: unknown) and
// the ref, "" when none was needed.
func (m *Manager) keepHead(ctx context.Context, w Worktree, e *entry) (int, string, error) {
	if e.Branch != "" {
		n := m.unmergedCommits(ctx, w, e.Branch)
		if n == 0 {
			return 0, "", nil
		}
		ref, err := m.writeRecoveryRef(ctx, w, e.Branch)
		return n, ref, err
	}
	if e.Head == "" {
		return 0, "", nil
	}
	ref, err := m.keepCommit(ctx, w.CommonDir, w.Bucket(), e.Head)
	if err != nil || ref == "" {
		return 0, "", err
	}
	n := -1
	if repo, err := m.repoAt(ctx, w.CommonDir); err == nil {
		if c, err := repo.RevListCount(ctx, []string{e.Head}, nil, true); err == nil {
			n = c
		}
	}
	return n, ref, nil
}

func lockReason(e *entry) string {
	if e.LockReason == "" {
		return "no reason given"
	}
	return e.LockReason
}

// nestedRepos lists the repositories inside the worktree at root (any
// directory below it holding a .git file or directory: initialized
// submodules, clones, repositories in ignored folders), relative and
// /-separated, at most 20. Symlinks are not followed.
func nestedRepos(root string) []string {
	var found []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() || p == root {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			rel, _ := filepath.Rel(root, p)
			found = append(found, filepath.ToSlash(rel))
			if len(found) >= 20 {
				return filepath.SkipAll
			}
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(found)
	return found
}

// topEntries lists what is left directly in dir (nil when it is gone).
func topEntries(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// unmergedCommits counts the commits of branch in neither the worktree's
// base nor the branch's upstream (`rev-list --count <branch> --not <base>
// <upstream>`, what `git branch -d` checks, C22); -1 when git cannot say.
func (m *Manager) unmergedCommits(ctx context.Context, w Worktree, branch string) int {
	repo, err := m.repoAt(ctx, w.CommonDir)
	if err != nil {
		return -1
	}
	var not []string
	if w.Base != "" {
		not = append(not, w.Base)
	}
	lines, err := repo.ForEachRef(ctx, gitcli.ForEachRefOptions{Format: "%(upstream)", Patterns: []string{branch}})
	if err == nil && len(lines) > 0 {
		if up := strings.TrimSpace(lines[0]); up != "" {
			if _, ok, _ := repo.VerifyRef(ctx, up); ok {
				not = append(not, up)
			}
		}
	}
	n, err := repo.RevListCount(ctx, []string{branch}, not, false)
	if err != nil {
		return -1
	}
	return n
}

// writeRecoveryRef points refs/knightcode/trash/<branch name> at the
// branch's tip (reused when it already points there), or, when that name
// is taken, refs/knightcode/trash/<branch name>-<time>.
func (m *Manager) writeRecoveryRef(ctx context.Context, w Worktree, branch string) (string, error) {
	ok, tip, err := m.refExists(ctx, w.CommonDir, branch)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", nil
	}
	name := TrashRefPrefix + strings.TrimPrefix(branch, "refs/heads/")
	if exists, at, _ := m.refExists(ctx, w.CommonDir, name); exists && at == tip {
		return name, nil
	}
	if repo, err := m.repoAt(ctx, w.CommonDir); err == nil && repo.CreateRef(ctx, name, tip) == nil {
		return name, nil
	}
	return m.createRef(ctx, w.CommonDir, func(t time.Time) string { return name + "-" + t.Format(snapshotTimeFormat) }, m.now().UTC(), tip)
}
