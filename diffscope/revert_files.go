package diffscope

import (
	"context"
)

// This file reverts whole files and whole turns: entries restored from a
// tree through git, written by the action's gitstate.Journal.

// revertFiles reverts whole files (all of the scope when sel.all) of the
// unstaged, uncommitted and branch scopes: the writes that do it.
func (d *Differ) revertFiles(ctx context.Context, st *readState, sel selection) (*writes, error) {
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
		return &writes{}, nil
	}
	changes, err := d.fileChanges(ctx, st, kept)
	if err != nil {
		return nil, err
	}
	want := map[string]entry{}
	held := map[string]bool{} // what the scope's working side holds
	for _, c := range changes {
		if c.old.mode == modeGitlink || c.new.mode == modeGitlink {
			continue
		}
		want[c.path] = c.old
		held[c.path] = !c.new.absent()
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
			// Only an entry at the path itself: a pathspec naming a
			// folder of the index (a file d where the index holds d/x)
			// also lists the entries under it, which are not the file's.
			for _, p := range added {
				if _, ok := ita[p]; ok {
					if index == nil {
						index = map[string]entry{}
					}
					index[p] = entry{mode: modeAbsent}
				}
			}
		}
	}
	return d.restore(ctx, st, want, index, held)
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

// writes is what an action writes, worked out before anything is written
// so that every refusal (a stale hunk, a moved file, a file/folder clash)
// comes before the action's journal begins: the working tree's entries
// (path -> entry; an absent entry deletes the path) and, when not nil,
// the index's.
type writes struct {
	worktree, index map[string]entry
	// hunk marks the writes of one hunk: their index entry is not
	// refreshed with `add --refresh` (its stat data stays empty, so git
	// compares it with the file by content, once).
	hunk bool
}

// paths returns the paths of w's entries, sorted: the action's result.
func (w *writes) paths() []string {
	all := map[string]bool{}
	for p := range w.worktree {
		all[p] = true
	}
	for p := range w.index {
		all[p] = true
	}
	return sortedKeys(all)
}

// restore returns the writes that make the working tree hold want and,
// when index is not nil, the index hold index; held says which paths of
// want the working tree holds a file at as the diff read it. A
// file/folder clash that would delete or replace a path of the working
// tree or an index entry outside want and index (untracked files in a
// folder that must become a file, a new file where a folder must come
// back), or a file the diff does not know where one is written (an
// ignored file), refuses the whole restore with patchFailed naming those
// paths (clash.go).
func (d *Differ) restore(ctx context.Context, st *readState, want, index map[string]entry, held map[string]bool) (*writes, error) {
	clash, err := worktreeClashes(st.repo.Root, want, held)
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
	return &writes{worktree: want, index: index}, nil
}

// write writes w through the action's journal: the working tree first
// (deletions first, so a file can take the place of a folder that held
// only deleted files), then the index in one step; a failure rolls back
// what was written (Differ.end). It returns w.paths().
func (d *Differ) write(ctx context.Context, st *readState, w *writes) ([]string, error) {
	checkout := map[string]entry{}
	var gone []string
	for _, p := range sortedKeys(w.worktree) {
		if e := w.worktree[p]; e.absent() {
			gone = append(gone, p)
		} else {
			checkout[p] = e
		}
	}
	if err := st.txn.Remove(ctx, gone); err != nil {
		return nil, err
	}
	if err := st.txn.Checkout(ctx, stateEntries(checkout)); err != nil {
		return nil, err
	}
	if len(w.index) > 0 {
		if err := d.writeIndex(ctx, st, w.index, !w.hunk); err != nil {
			return nil, err
		}
	}
	return w.paths(), nil
}

// revertTurn undoes (or with reapply, applies again) whole files of a
// lastTurn read, every file of the turn when sel.all: only while each of
// them is, in the working tree, exactly as the turn left it (found it).
// A whole-turn revert of a turn that changed the index also writes the
// index entries it changed, under the same rule (see RevertOptions).
func (d *Differ) revertTurn(ctx context.Context, st *readState, sel selection, opts RevertOptions) (*writes, error) {
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
	held := map[string]bool{} // what the working tree holds as expected
	for _, c := range changes {
		if c.old.mode == modeGitlink || c.new.mode == modeGitlink {
			continue
		}
		if reapply {
			want[c.path], held[c.path] = c.new, !c.old.absent()
		} else {
			want[c.path], held[c.path] = c.old, !c.new.absent()
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
		return &writes{}, nil
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
	return d.restore(ctx, st, want, index, held)
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
