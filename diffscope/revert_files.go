package diffscope

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/gitstate"
)

// This file reverts whole files and whole turns: entries restored from a
// tree through git, under a gitstate.WorktreeTxn.

// revertFiles reverts whole files (all of the scope when sel.all) of the
// unstaged, uncommitted and branch scopes.
func (d *Differ) revertFiles(ctx context.Context, st *readState, sel selection) ([]string, error) {
	files := sel.files
	var kept []*fileDiff
	for _, f := range files {
		if f.wire.Submodule || f.wire.OldMode == modeGitlink || f.wire.NewMode == modeGitlink {
			if !sel.all {
				return nil, paramErr("path", "%s is a submodule: knightcode never checks out a submodule from its parent repository (revert inside it)", f.wire.Path)
			}
			continue
		}
		kept = append(kept, f)
	}
	if len(kept) == 0 {
		return []string{}, nil
	}
	changes, err := d.fileChanges(ctx, st, kept)
	if err != nil {
		return nil, err
	}
	want := map[string]entry{}
	for _, c := range changes {
		if c.old.mode == modeGitlink || c.new.mode == modeGitlink {
			continue
		}
		want[c.path] = c.old
	}
	var index map[string]entry
	switch st.scope {
	case ScopeUncommitted, ScopeBranch:
		index = want
	case ScopeUnstaged:
		// An added file the index holds as intent-to-add (write-tree
		// leaves those out of the index tree) goes with its file.
		var added []string
		for p, e := range want {
			if e.absent() {
				added = append(added, p)
			}
		}
		if len(added) > 0 {
			ita, err := d.indexEntries(ctx, st.repo, added)
			if err != nil {
				return nil, err
			}
			if len(ita) > 0 {
				index = map[string]entry{}
				for p := range ita {
					index[p] = entry{mode: modeAbsent}
				}
			}
		}
	}
	return d.restore(ctx, st, want, index)
}

// fileChanges lists the tree entries of the paths of files (from and to
// sides of st, renames as a deletion and an addition).
func (d *Differ) fileChanges(ctx context.Context, st *readState, files []*fileDiff) ([]change, error) {
	paths := filePaths(files)
	var limit []string
	if len(files) <= 64 {
		limit = paths
	}
	changes, err := d.treeChanges(ctx, st.repo, st.from, st.to, limit)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, p := range paths {
		keep[p] = true
	}
	out := changes[:0]
	for _, c := range changes {
		if keep[c.path] {
			out = append(out, c)
		}
	}
	return out, nil
}

// restore makes the working tree hold want (path -> entry; an absent entry
// deletes the path) and then, when index is not nil, writes index into the
// checkout's index in one step; the working tree is put back if either
// step fails. It returns the paths of want and index, sorted.
//
// Before anything is written, a file/folder clash that would delete or
// replace a path of the working tree or an index entry outside want and
// index (untracked files in a folder that must become a file, a new file
// where a folder must come back) refuses the whole restore with
// patchFailed naming those paths (clash.go).
func (d *Differ) restore(ctx context.Context, st *readState, want, index map[string]entry) ([]string, error) {
	clash, err := worktreeClashes(st.repo.Root, want)
	if err != nil {
		return nil, err
	}
	if index != nil {
		ic, err := d.indexClashes(ctx, st.repo, index)
		if err != nil {
			return nil, err
		}
		clash = append(clash, ic...)
	}
	if err := clashError(dedupe(clash)); err != nil {
		return nil, err
	}
	txn, err := gitstate.NewWorktreeTxn(st.repo)
	if err != nil {
		return nil, err
	}
	defer txn.Close()
	paths := sortedKeys(want)
	for _, p := range paths {
		if err := txn.Save(p); err != nil {
			return nil, err
		}
	}
	// Deletions first, so a file can take the place of a folder that
	// held only deleted files.
	checkout := map[string]entry{}
	for _, p := range paths {
		e := want[p]
		if !e.absent() {
			checkout[p] = e
			continue
		}
		if err := removeWorktreeFile(st.repo.Root, p); err != nil {
			return nil, txn.Undo(err)
		}
	}
	if err := d.checkoutEntries(ctx, st.repo, checkout); err != nil {
		return nil, txn.Undo(err)
	}
	if len(index) > 0 {
		if err := d.indexInfo(ctx, st.repo, index); err != nil {
			return nil, txn.Undo(err)
		}
		var present []string
		for _, p := range sortedKeys(index) {
			if e := index[p]; !e.absent() && e.mode != modeGitlink {
				present = append(present, p)
			}
		}
		d.refreshIndex(ctx, st.repo, present)
	}
	all := map[string]bool{}
	for _, p := range paths {
		all[p] = true
	}
	for p := range index {
		all[p] = true
	}
	return sortedKeys(all), nil
}

// revertTurn undoes (or with reapply, applies again) whole files of a
// lastTurn read, every file of the turn when sel.all: only while each of
// them is, in the working tree, exactly as the turn left it (found it).
// A whole-turn revert of a turn that changed the index also writes the
// index entries it changed, under the same rule (see RevertOptions).
func (d *Differ) revertTurn(ctx context.Context, st *readState, sel selection, opts RevertOptions) ([]string, error) {
	reapply := opts.Reapply
	for _, f := range sel.files {
		if !sel.all && (f.wire.Submodule || f.wire.OldMode == modeGitlink || f.wire.NewMode == modeGitlink) {
			return nil, paramErr("path", "%s is a submodule: knightcode never checks out a submodule from its parent repository", f.wire.Path)
		}
	}
	var changes []change
	var err error
	if sel.all {
		changes, err = d.treeChanges(ctx, st.repo, st.from, st.to, nil)
	} else {
		changes, err = d.fileChanges(ctx, st, sel.files)
	}
	if err != nil {
		return nil, err
	}
	want := map[string]entry{}
	for _, c := range changes {
		if c.old.mode == modeGitlink || c.new.mode == modeGitlink {
			continue
		}
		if reapply {
			want[c.path] = c.new
		} else {
			want[c.path] = c.old
		}
	}
	var index map[string]entry
	fromIndex, toIndex := opts.FromIndexTree, opts.ToIndexTree
	if sel.all && fromIndex != "" && toIndex != "" && fromIndex != toIndex {
		if index, err = d.turnIndexEntries(ctx, st, fromIndex, toIndex, reapply); err != nil {
			return nil, err
		}
	}
	if len(want) == 0 && len(index) == 0 {
		return []string{}, nil
	}
	expectTree, expectIndex := st.to, toIndex // undo: as the turn left them
	if reapply {
		expectTree, expectIndex = st.from, fromIndex // reapply: as the turn found them
	}
	moved, err := d.movedSince(ctx, st, expectTree, sortedKeys(want), expectIndex, sortedKeys(index))
	if err != nil {
		return nil, err
	}
	if len(moved) > 0 {
		return nil, &ConflictError{Reason: ReasonDiffChanged, Paths: moved}
	}
	return d.restore(ctx, st, want, index)
}

// turnIndexEntries returns the index entries a turn changed, as they were
// before it (undo) or after it (reapply): path -> entry, an absent entry
// for a path the index did not hold then. from and to are the turn's index
// trees; they must be trees of the repository ("fromIndexTree",
// "toIndexTree" otherwise).
func (d *Differ) turnIndexEntries(ctx context.Context, st *readState, from, to string, reapply bool) (map[string]entry, error) {
	ri, err := d.discover(ctx, st.repo.Root)
	if err != nil {
		return nil, err
	}
	if err := d.checkTrees(ctx, ri, [][2]string{{"fromIndexTree", from}, {"toIndexTree", to}}); err != nil {
		return nil, err
	}
	changes, err := d.treeChanges(ctx, st.repo, from, to, nil)
	if err != nil {
		return nil, err
	}
	index := map[string]entry{}
	for _, c := range changes {
		if reapply {
			index[c.path] = c.new
		} else {
			index[c.path] = c.old
		}
	}
	return index, nil
}

// removeWorktreeFile deletes root/p (a file or symlink; a missing one, or
// a folder in its place, is left alone) and then its parent folders that became empty, up to root, as git
// does when it removes a file.
func removeWorktreeFile(root, p string) error {
	full := filepath.Join(root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		// The file is already gone and a folder took its place; what is
		// in it is deleted only when named (restore checks that first),
		// and the folder goes once it is empty.
		return nil
	}
	if err := os.Remove(full); err != nil {
		return err
	}
	for dir := filepath.Dir(full); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty
		}
	}
	return nil
}
