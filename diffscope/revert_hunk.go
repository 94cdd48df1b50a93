package diffscope

import (
	"context"
	"fmt"
	"io"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file reverts one hunk: the working tree's patch and, in the
// uncommitted and branch scopes, the index's own hunks within its range.

// revertHunk reverse-applies hunk idx of f to the working tree and, in the
// uncommitted and branch scopes, the matching staged hunks to the index,
// exactly at their own lines (see exact.go). The working file must still be
// the blob the read captured (lastTurn: the hunk applies to the file as it
// is now), else diffChanged; a hunk whose lines are not there is
// patchFailed. It returns the writes; their blobs are in the object
// database, nothing else is written.
func (d *Differ) revertHunk(ctx context.Context, st *readState, f *fileDiff, idx int) (*writes, error) {
	rp, frags, err := hunkFragments(f, idx)
	if err != nil {
		return nil, err
	}
	path := f.wire.Path
	paths := []string{path}
	var cur, mode string
	ok := st.worktree != nil
	if ok {
		cur, mode = st.worktree.oid, st.worktree.mode
	} else if cur, mode, ok, err = worktreeBlob(ctx, st.repo, path); err != nil {
		return nil, err
	}
	if !ok || (st.scope != ScopeLastTurn && cur != f.newOID) {
		return nil, &ConflictError{Reason: ReasonDiffChanged, Paths: paths}
	}
	work, err := exactHunkBlob(ctx, st.repo, path, cur, frags, true)
	if err != nil {
		return nil, err
	}
	var index map[string]entry
	if st.scope == ScopeUncommitted || st.scope == ScopeBranch {
		// The index's own hunks (target tree -> index) within the hunk's
		// lines, at their exact places.
		if index, err = d.indexSideRevert(ctx, st, path, rp.frags[idx]); err != nil {
			return nil, err
		}
	}
	return &writes{worktree: map[string]entry{path: {mode: mode, oid: work}}, index: index, hunk: true}, nil
}

// hunkFragments cuts f's patch into its fragments (checked against the
// hunks the read listed: checkFrags) and returns them with hunk idx's own
// text fragments, for an action on one hunk (revertHunk, stageHunk).
func hunkFragments(f *fileDiff, idx int) (*rawPatch, []*gitdiff.TextFragment, error) {
	rp, err := splitRaw(f.raw)
	if err != nil {
		return nil, nil, err
	}
	if err := checkFrags(rp, f.wire); err != nil {
		return nil, nil, err
	}
	frags, err := rp.textFragments(idx)
	if err != nil {
		return nil, nil, err
	}
	return rp, frags, nil
}

// checkFrags makes sure the fragments cut from raw are the hunks the read
// listed (same count and numbers), so an id picks the bytes it hashed.
func checkFrags(rp *rawPatch, f File) error {
	if len(rp.frags) != len(f.Hunks) {
		return fmt.Errorf("diffscope: %s: %d fragments in the patch, %d hunks in the read", f.Path, len(rp.frags), len(f.Hunks))
	}
	for i, h := range f.Hunks {
		fr := rp.frags[i]
		if fr.oldStart != h.OldStart || fr.oldLines != h.OldLines || fr.newStart != h.NewStart || fr.newLines != h.NewLines {
			return fmt.Errorf("diffscope: %s: fragment %d does not match hunk %q", f.Path, i, h.Header)
		}
	}
	return nil
}

// indexSideRevert returns the index entry of path with the index's own
// hunks (from the target tree, HEAD or the merge-base, to the index) that
// change lines within h's range (see touches) reverse-applied exactly, or
// nil when the index has none there or path is not a text modification in
// the index (then the index is left alone). The index entry comes from the
// index cache and the target tree's from its trees: only when they differ
// does one diff-tree (the target tree against a tree of the index entry
// alone) print the index's hunks.
func (d *Differ) indexSideRevert(ctx context.Context, st *readState, path string, h rawFrag) (map[string]entry, error) {
	cur, err := d.indexEntries(ctx, st.repo, []string{path})
	if err != nil {
		return nil, err
	}
	e, ok := cur[path]
	if !ok {
		return nil, nil // not in the index (deleted there, or unmerged)
	}
	base, err := gitstate.TreePaths(ctx, st.repo, st.from, []string{path})
	if err != nil {
		return nil, err
	}
	b, ok := base[path]
	if !ok || (b.Mode == e.mode && b.OID == e.oid) || !isRegularMode(b.Mode) || !isRegularMode(e.mode) {
		return nil, nil // new in the index, unchanged there, or not text
	}
	ix, err := d.oneEntryTree(ctx, st.repo, path, e)
	if err != nil {
		return nil, err
	}
	var fd *fileDiff
	err = st.repo.DiffTreePatch(ctx, st.from, ix, gitcli.PatchOptions{Context: st.context, Paths: []string{path}}, func(r io.Reader) error {
		return parseTreeDiff(r, 0, func(pe *parsedEntry) error {
			f, err := buildFile(pe, st.context, false)
			if err == nil && f.wire.Path == path {
				fd = &f
			}
			return err
		})
	})
	if err != nil || fd == nil || fd.wire.Status != "modified" || fd.wire.Binary || fd.newOID != e.oid {
		return nil, err
	}
	rp, err := splitRaw(fd.raw)
	if err != nil {
		return nil, err
	}
	var sel []int
	for i, fr := range rp.frags {
		if touches(fr, h) {
			sel = append(sel, i)
		}
	}
	if len(sel) == 0 {
		return nil, nil
	}
	frags, err := rp.textFragments(sel...)
	if err != nil {
		return nil, err
	}
	oid, err := exactHunkBlob(ctx, st.repo, path, e.oid, frags, true)
	if err != nil {
		return nil, err
	}
	return map[string]entry{path: {mode: e.mode, oid: oid}}, nil
}
