package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// DeleteOptions are the caller's knowledge a deletion needs.
type DeleteOptions struct {
	// InUse reports whether a thread is loaded in the worktree at path
	// (or is otherwise active there); such a worktree is never deleted.
	// nil means none is.
	InUse func(path string) bool
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
	// its upstream (-1: could not be counted); RecoveryRef is the ref
	// written for them under refs/knightcode/trash/ (shared/cases C22).
	UnmergedCommits int    `json:"unmergedCommits,omitempty"`
	RecoveryRef     string `json:"recoveryRef,omitempty"`
	// DirectoryMissing: the directory was already gone; the snapshot holds
	// HEAD only.
	DirectoryMissing bool `json:"directoryMissing,omitempty"`
	// IgnoredNotKept: ignored files were not saved in the snapshot.
	IgnoredNotKept bool `json:"ignoredNotKept"`
}

// Delete snapshots the managed worktree at path, then removes it, and marks
// it deleted in the registry (spec, worktree/delete and thread/archive).
//
// Nothing is modified when it refuses, and every check runs before the first
// write (shared/cases C25): [*ParamError] (field "path") for a path that is
// not a managed worktree in the registry and the managed layout (the
// user's own worktrees and the main checkout are never touched);
// [*ConflictError] worktreeDeleted when already deleted; worktreeInUse when
// opts.InUse says a thread is loaded there or `git worktree list
// --porcelain` reports it locked (Output gives the lock reason); submodules
// when it holds a nested repository (an initialized submodule or any
// repository inside it, ignored directories included; Paths lists them);
// worktreeMissing when its directory exists but git has it no longer
// registered.
//
// Then, under the repository lock: a recovery ref for a branch with commits
// in neither the base nor its upstream (C22), the snapshot ref (which holds
// every untracked file, C24), and only then `git worktree remove --force`
// of that path. A registration whose directory is gone (prunable) is
// snapshotted at its HEAD and removed with `git worktree remove <path>`
// alone (C27). A removal that fails returns [*RemoveError] with the
// snapshot and what is left; there is no rm -rf fallback.
func (m *Manager) Delete(ctx context.Context, path string, opts DeleteOptions) (*Deleted, error) {
	w, err := m.managed(path)
	if err != nil {
		return nil, err
	}
	if opts.InUse != nil && opts.InUse(w.Path) {
		return nil, conflict(ReasonWorktreeInUse, []string{w.Path}, "a thread is loaded in %s", w.Path)
	}
	return m.deleteOne(ctx, w)
}

// deleteLocked is Delete after the registry and in-use checks, with the
// repository lock held.
func (m *Manager) deleteLocked(ctx context.Context, w Worktree) (*Deleted, error) {
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
	if e.Branch != "" {
		d.UnmergedCommits = m.unmergedCommits(ctx, w, e.Branch)
		if d.UnmergedCommits != 0 {
			if d.RecoveryRef, err = m.writeRecoveryRef(ctx, w, e.Branch); err != nil {
				return nil, err
			}
		}
	}
	snap, err := m.snapshotLocked(ctx, w, e)
	if err != nil {
		return nil, err
	}
	d.Snapshot, d.DirectoryMissing = snap.Ref, snap.DirectoryMissing

	args := []string{"worktree", "remove", "--force", w.Path}
	if e.Prunable {
		args = []string{"worktree", "remove", w.Path}
	}
	_, rmErr := m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: args, Write: true})
	record := func(w *Worktree) error {
		at := m.now()
		w.Deleted, w.DeletedAt, w.Snapshot = true, &at, snap.Ref
		w.Head, w.Branch = snap.Head, e.Branch
		if d.RecoveryRef != "" {
			w.RecoveryRef = d.RecoveryRef
		}
		return nil
	}
	if rmErr != nil {
		re := &RemoveError{Path: w.Path, Snapshot: snap.Ref, Err: rmErr, Remaining: topEntries(w.Path)}
		if after, err := m.listWorktrees(ctx, w.CommonDir); err != nil || findEntry(after, w.Path) != nil {
			re.Registered = true
		} else if _, err := m.reg.Update(w.Path, record); err != nil {
			return nil, errors.Join(re, err)
		}
		return nil, re
	}
	if _, err := m.reg.Update(w.Path, record); err != nil {
		return nil, err
	}
	os.Remove(filepath.Dir(w.Path)) // the bucket, when empty
	return d, nil
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
	args := []string{"rev-list", "--count", branch, "--not"}
	if w.Base != "" {
		args = append(args, w.Base)
	}
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"for-each-ref", "--format=%(upstream)", branch}})
	if err == nil {
		if up := strings.TrimSpace(string(out)); up != "" {
			if ok, _, _ := m.refExists(ctx, w.CommonDir, up); ok {
				args = append(args, up)
			}
		}
	}
	out, err = m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: args})
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
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
	if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: w.CommonDir, Args: []string{"update-ref", "-m", "knightcode", name, tip, ""}, Write: true}); err == nil {
		return name, nil
	}
	return m.createRef(ctx, w.CommonDir, func(t time.Time) string { return name + "-" + t.Format(snapshotTimeFormat) }, m.now().UTC(), tip)
}
