package diffscope

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

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
	rp, err := splitRaw(f.raw)
	if err != nil {
		return nil, err
	}
	if err := checkFrags(rp, f.wire); err != nil {
		return nil, err
	}
	frags, err := rp.textFragments(idx)
	if err != nil {
		return nil, err
	}
	path := f.wire.Path
	paths := []string{path}
	cur, mode, ok, err := worktreeBlob(ctx, st.repo, path)
	if err != nil {
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
	return &writes{worktree: map[string]entry{path: {mode: mode, oid: work}}, index: index}, nil
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
// the index (then the index is left alone).
func (d *Differ) indexSideRevert(ctx context.Context, st *readState, path string, h rawFrag) (map[string]entry, error) {
	out, err := st.repo.DiffIndexPatch(ctx, st.from, gitcli.DiffIndexOptions{Context: st.context, Cached: true, Paths: []string{path}})
	if err != nil {
		return nil, err
	}
	files := splitFiles(out)
	if len(files) != 1 {
		return nil, nil
	}
	parsed, _, err := gitdiff.Parse(bytes.NewReader(files[0]))
	if err != nil || len(parsed) != 1 {
		return nil, err
	}
	if p := parsed[0]; p.IsNew || p.IsDelete || p.IsBinary || p.IsRename || p.IsCopy ||
		!isRegularMode(modeString(p.OldMode, p.NewMode)) || !isRegularMode(modeString(p.NewMode, p.OldMode)) {
		return nil, nil
	}
	rp, err := splitRaw(files[0])
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
	cur, err := d.indexEntries(ctx, st.repo, []string{path})
	if err != nil {
		return nil, err
	}
	e, ok := cur[path]
	if !ok || e.mode != modeString(parsed[0].NewMode, parsed[0].OldMode) || !hasPrefixID(e.oid, parsed[0].NewOIDPrefix) {
		return nil, &ConflictError{Reason: ReasonDiffChanged, Paths: []string{path}}
	}
	oid, err := exactHunkBlob(ctx, st.repo, path, e.oid, frags, true)
	if err != nil {
		return nil, err
	}
	return map[string]entry{path: {mode: e.mode, oid: oid}}, nil
}

// hasPrefixID reports whether the full object id oid starts with the
// (possibly abbreviated) id prefix git printed on an index line.
func hasPrefixID(oid, prefix string) bool {
	return prefix != "" && len(prefix) <= len(oid) && oid[:len(prefix)] == prefix
}

// modeString is m as git prints it, or other's when m is unset (a patch
// without mode lines keeps one mode on both sides).
func modeString(m, other os.FileMode) string {
	if m == 0 {
		m = other
	}
	if m == 0 {
		return "100644" // no mode at all: a plain text modification
	}
	return fmt.Sprintf("%06o", uint32(m))
}
