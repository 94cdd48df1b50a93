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
// uncommitted and branch scopes, the matching staged hunks to the index.
func (d *Differ) revertHunk(ctx context.Context, st *readState, f *fileDiff, idx int) ([]string, error) {
	rp, err := splitRaw(f.raw)
	if err != nil {
		return nil, err
	}
	if err := checkFrags(rp, f.wire); err != nil {
		return nil, err
	}
	patch, err := rp.textPatch(idx)
	if err != nil {
		return nil, err
	}
	paths := []string{f.wire.Path}
	var idxPatch []byte
	if st.scope == ScopeUncommitted || st.scope == ScopeBranch {
		// The index's own hunks (target tree -> index) within the hunk's
		// lines, at their exact places: never the working tree's patch,
		// which git apply would also accept at an offset elsewhere.
		if idxPatch, err = d.indexSidePatch(ctx, st, f.wire.Path, rp.frags[idx]); err != nil {
			return nil, err
		}
	}
	if idxPatch == nil {
		// One git apply: it checks the whole patch before writing.
		if err := d.applyWorktree(ctx, st, patch, paths, true); err != nil {
			return nil, err
		}
		return paths, nil
	}
	if err := d.applyPatch(ctx, st.repo, patch, paths, gitcli.ApplyOptions{Reverse: true, Check: true}); err != nil {
		return nil, err
	}
	if err := d.applyPatch(ctx, st.repo, idxPatch, paths, gitcli.ApplyOptions{Reverse: true, Cached: true, Check: true}); err != nil {
		return nil, err
	}
	// Both steps write through the journal: a failure of the second rolls
	// the first back.
	if err := d.applyWorktree(ctx, st, patch, paths, true); err != nil {
		return nil, err
	}
	if err := d.applyIndex(ctx, st, idxPatch, paths, gitcli.ApplyOptions{Reverse: true, Cached: true}); err != nil {
		return nil, err
	}
	return paths, nil
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

// indexSidePatch returns the patch, from the target tree (HEAD or the
// merge-base) to the index, of the index's hunks of path that change lines
// within h's range (see touches), or nil when the index has none there or
// path is not a text modification in the index (then the index is left
// alone).
func (d *Differ) indexSidePatch(ctx context.Context, st *readState, path string, h rawFrag) ([]byte, error) {
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
	return rp.textPatch(sel...)
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
