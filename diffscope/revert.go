package diffscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// RevertOptions selects what [Differ.Revert] reverts: the scope as for a
// read (ReadOptions: Scope, Against, BaseRef, FromTree/ToTree for lastTurn,
// Context; Budget is not used, and a hunk id with IgnoreWhitespace matches
// nothing), then one hunk, one file or everything in it.
type RevertOptions struct {
	ReadOptions
	// Path is a repository-relative, /-separated path from the read (its
	// path, or the old path of a rename), taken literally. Empty means the
	// whole scope, or the file the HunkID names.
	Path string
	// HunkID is a hunk id, or a file id (File.ID: the whole file), from a
	// read of the same scope at the same context.
	HunkID string
	// Reapply (lastTurn only, no hunk) applies the turn's changes again
	// instead of undoing them.
	Reapply bool
	// FromIndexTree and ToIndexTree are the index trees captured before
	// and after the turn of a lastTurn revert (Capture.IndexTree; both or
	// neither). When they differ, the turn changed the index (the agent ran
	// `git add`, `git rm --cached`, ...), and a revert of the whole turn
	// (no path, no hunk) puts the index entries it changed back too, the
	// way it puts the files back: an undo restores them from FromIndexTree,
	// only while each is in the index exactly as in ToIndexTree; a reapply
	// restores them from ToIndexTree, only while each is as in
	// FromIndexTree. Reads and per-file reverts ignore them: the lastTurn
	// diff is the working tree's (spec, "Workspaces, diffs and git").
	FromIndexTree, ToIndexTree string
}

// actionBudget is the response budget of an action's re-read: none (see
// read), so no file loses its hunks and an id a client got from any read is
// found (shared/cases C40).
const actionBudget = -1

// Revert reverse-applies one hunk, one file or the whole scope to the
// working tree (spec, thread/diff/revert) and returns the repository-relative
// paths it changed, sorted. The scope is read again at opts.Context (default
// 3) and the hunk or file id looked up there.
//
// What each scope changes:
//
//   - unstaged: the working tree only; hunks and files go back to the
//     index. The index is not written, except that an intent-to-add entry
//     of an added file that is deleted is removed with it.
//   - uncommitted: the working tree back to HEAD and, so nothing is left
//     staged, the index too: a file's index entry is set to HEAD's; a
//     hunk is reverse-applied to the working tree, and the index's own
//     staged hunks (HEAD -> index) that change lines within the hunk's
//     range of HEAD are reverse-applied to the index with --cached, a
//     separate step (never --index: shared/cases C37); the first step is
//     undone if the second fails.
//   - branch: as uncommitted, against the merge-base instead of HEAD.
//   - lastTurn: the working tree (the user's staging is never touched:
//     shared/cases C32), and the index only where the turn itself changed
//     it. Without a path the whole turn is undone, only while every file
//     the turn changed is exactly (blob id and mode) as the turn left it;
//     with Reapply it is applied again, only while every such file is as
//     the turn found it; otherwise nothing changes and the answer is a
//     diffChanged conflict naming the files that moved. When the turn
//     changed index entries (opts.FromIndexTree != opts.ToIndexTree), the
//     whole-turn undo (reapply) also writes those entries back as they were
//     before (after) the turn, in one `update-index --index-info`, under
//     the same rule: only while each is in the index as the turn left
//     (found) it, else diffChanged naming the paths whose index entries
//     moved; other entries and their flags are left alone, so the user's
//     own staging since survives. A file of the turn reverts (or
//     reapplies) whole, in the working tree only, under the file rule; a
//     hunk is reverse-applied to the working tree as it is now.
//
// Whole files are restored byte for byte from the target tree through git
// (filters, modes and symlinks included) and files absent there are
// deleted, untracked files included (spec: "Reverting an added file deletes
// it"). Hunks of added, deleted, renamed, binary, symlink, type- or
// mode-changed files and submodules revert whole only. A submodule (gitlink)
// is never reverted: its checkout is a repository of its own that a revert
// from here would overwrite (shared/cases C20); naming one is refused and a
// whole-scope revert leaves it out. Nothing is half-applied: a multi-step
// revert keeps the files it changes and puts them back on failure.
//
// Errors: [*ParamError] for the staged and committed scopes ("scope"), a
// hunk id with context 0 ("context"), reapply outside lastTurn or with a
// hunk ("reapply", "hunkId"), a path not in the diff ("path"), a hunk of a
// file that reverts whole only or a submodule ("hunkId" or "path"), and
// whatever the read refuses; [*ConflictError] diffChanged when the id is
// not in the diff read again or a lastTurn file moved, patchFailed when git
// refuses the patch (Output holds git's stderr), concurrentChange when
// another git process holds the index or a ref (its lock file exists;
// nothing was changed, Output holds git's stderr); errors matching
// [gitcli.ErrNotRepo] outside a repository.
func (d *Differ) Revert(ctx context.Context, checkout string, opts RevertOptions) ([]string, error) {
	scope := opts.Scope
	if scope == "" {
		scope = ScopeUncommitted
	}
	switch scope {
	case ScopeStaged, ScopeCommitted:
		return nil, paramErr("scope", "the %s scope cannot be reverted: only lastTurn, uncommitted, unstaged and branch changes revert to the working tree", scope)
	}
	if opts.Reapply && scope != ScopeLastTurn {
		return nil, paramErr("reapply", "reapply is for the lastTurn scope only")
	}
	st, err := d.actionRead(ctx, checkout, opts.ReadOptions, opts.HunkID)
	if err != nil {
		return nil, err
	}
	sel, err := selectTarget(st, opts.Path, opts.HunkID)
	if err != nil {
		return nil, err
	}
	if opts.Reapply && sel.hunk >= 0 {
		return nil, paramErr("hunkId", "reapply takes the whole turn or a file, not a hunk")
	}
	lock, err := gitcli.LockCommonDir(ctx, st.repo.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	paths, err := d.revertSelected(ctx, st, sel, opts)
	return paths, lockConflict(err, filePaths(sel.files))
}

// revertSelected reverts sel of st under the repository lock (see Revert).
func (d *Differ) revertSelected(ctx context.Context, st *readState, sel selection, opts RevertOptions) ([]string, error) {
	if sel.hunk >= 0 {
		f := sel.files[0]
		if why := wholeOnly(f.wire, false); why != "" {
			return nil, paramErr("hunkId", "%s is %s: its hunks revert as a whole file only (pass its path or file id)", f.wire.Path, why)
		}
		return d.revertHunk(ctx, st, f, sel.hunk)
	}
	if st.scope == ScopeLastTurn {
		return d.revertTurn(ctx, st, sel, opts)
	}
	return d.revertFiles(ctx, st, sel)
}

// actionContext validates an action's context: nil means 3; ids of a
// context-0 read match no action (spec, thread/diff/read), so a hunk id
// with context 0 is refused rather than answered diffChanged.
func actionContext(c *int, hunkID string) (int, error) {
	if c == nil {
		return DefaultContext, nil
	}
	switch {
	case *c < 0:
		return 0, paramErr("context", "context must not be negative")
	case *c == 0 && hunkID != "":
		return 0, paramErr("context", "ids read at context 0 match no action: read the diff with context 1 or more")
	case *c == 0:
		return DefaultContext, nil // no id: the context does not matter
	}
	return *c, nil
}

// actionRead reads the scope again for an action: at the action's context,
// never ignoring whitespace (an id of an ignoreWhitespace read matches
// nothing), with no budget so every file keeps its hunks.
func (d *Differ) actionRead(ctx context.Context, checkout string, ro ReadOptions, hunkID string) (*readState, error) {
	n, err := actionContext(ro.Context, hunkID)
	if err != nil {
		return nil, err
	}
	if ro.IgnoreWhitespace && hunkID != "" {
		return nil, &ConflictError{Reason: ReasonDiffChanged}
	}
	ro.Context = &n
	ro.IgnoreWhitespace = false
	ro.Budget = actionBudget
	return d.read(ctx, checkout, ro)
}

// selection is what an action acts on: one hunk of one file (hunk >= 0),
// or whole files (hunk < 0; every file of the diff when all).
type selection struct {
	files []*fileDiff
	hunk  int
	all   bool
}

// selectTarget finds path and hunkID in a read: the file whose path (or old
// path) is path, and in it (or, without a path, in any file) the hunk or
// file whose id is hunkID. Neither means every file.
func selectTarget(st *readState, path, hunkID string) (selection, error) {
	var in []*fileDiff
	if path != "" {
		for i := range st.files {
			if f := &st.files[i]; f.wire.Path == path || (f.wire.OldPath != "" && f.wire.OldPath == path) {
				in = append(in, f)
			}
		}
		if len(in) == 0 {
			return selection{}, paramErr("path", "%q is not in the %s diff", path, st.scope)
		}
	} else {
		for i := range st.files {
			in = append(in, &st.files[i])
		}
	}
	if hunkID == "" {
		return selection{files: in, hunk: -1, all: path == ""}, nil
	}
	var found []selection
	for _, f := range in {
		if f.wire.ID == hunkID {
			found = append(found, selection{files: []*fileDiff{f}, hunk: -1})
		}
		for i, h := range f.wire.Hunks {
			if h.ID == hunkID {
				found = append(found, selection{files: []*fileDiff{f}, hunk: i})
			}
		}
	}
	switch len(found) {
	case 0:
		ce := &ConflictError{Reason: ReasonDiffChanged}
		if path != "" {
			ce.Paths = []string{path}
		}
		return selection{}, ce
	case 1:
		return found[0], nil
	}
	return selection{}, paramErr("hunkId", "id %s names more than one change: pass the path too", hunkID)
}

// wholeOnly says why f's hunks cannot be acted on one at a time ("" when
// they can): hunks of added, deleted, renamed, binary, symlink, type-changed
// files and submodules, and of mode-changed files unless modeOK (staging a
// hunk keeps the index's mode: shared/cases C16).
func wholeOnly(f File, modeOK bool) string {
	switch {
	case f.Submodule || f.OldMode == modeGitlink || f.NewMode == modeGitlink:
		return "a submodule"
	case f.Binary:
		return "a binary file"
	case f.Status == "added":
		return "an added file"
	case f.Status == "deleted":
		return "a deleted file"
	case f.Status == "renamed" || f.OldPath != "":
		return "a renamed file"
	case f.Status == "typeChanged":
		return "a file whose type changed"
	case !isRegularMode(f.OldMode) || !isRegularMode(f.NewMode):
		return "a symlink"
	case f.OldMode != f.NewMode && !modeOK:
		return "a file whose mode changed"
	}
	return ""
}

// filePaths returns the paths a whole-file action on f touches: its path
// and, for a rename, its old path.
func filePaths(files []*fileDiff) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		for _, p := range []string{f.wire.OldPath, f.wire.Path} {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

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
		if err := d.applyPatch(ctx, st.repo, patch, paths, gitcli.ApplyOptions{Reverse: true}); err != nil {
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
	txn, err := gitstate.NewWorktreeTxn(st.repo)
	if err != nil {
		return nil, err
	}
	defer txn.Close()
	if err := txn.Save(f.wire.Path); err != nil {
		return nil, err
	}
	if err := d.applyPatch(ctx, st.repo, patch, paths, gitcli.ApplyOptions{Reverse: true}); err != nil {
		return nil, txn.Undo(err)
	}
	if err := d.applyPatch(ctx, st.repo, idxPatch, paths, gitcli.ApplyOptions{Reverse: true, Cached: true}); err != nil {
		return nil, txn.Undo(err)
	}
	d.refreshIndex(ctx, st.repo, paths)
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
func (d *Differ) restore(ctx context.Context, st *readState, want, index map[string]entry) ([]string, error) {
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

// Moved reports which of paths changed in checkout's working tree since
// tree: it captures the working tree now (as [Differ.Capture] does, without
// writing the user's index and without capturing submodules' contents, so
// a gitlink moves only with the submodule's HEAD) and returns, sorted and
// without duplicates, those of paths whose entry (blob id and mode, or
// absence) differs from their entry in tree. paths are repository-relative
// and /-separated, compared literally (no globs, no renames: a renamed file
// is its old path gone and its new path added). No paths gives an empty
// result without running git.
//
// This is the check a lastTurn revert makes before it changes anything
// (a moved path is what refuses it with diffChanged), so a caller can tell
// in advance whether an undo would be refused.
//
// Errors: errors matching gitcli.ErrNotRepo when checkout is not inside a
// work tree; [*ParamError] ("tree") when tree is not a full tree id of the
// repository; *gitcli.Error when git fails.
func (d *Differ) Moved(ctx context.Context, checkout, tree string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return []string{}, nil
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	if err := d.checkTrees(ctx, ri, [][2]string{{"tree", tree}}); err != nil {
		return nil, err
	}
	return d.movedSince(ctx, &readState{repo: ri.Repo}, tree, paths, "", nil)
}

// movedSince captures the checkout now (its working tree when files is not
// empty, its index when indexPaths is not empty: one capture) and returns,
// sorted and without duplicates, those of files whose working tree entry
// (blob id and mode, or absence) differs from their entry in tree, and
// those of indexPaths whose index entry differs from their entry in
// indexTree.
func (d *Differ) movedSince(ctx context.Context, st *readState, tree string, files []string, indexTree string, indexPaths []string) ([]string, error) {
	if len(files) == 0 && len(indexPaths) == 0 {
		return nil, nil
	}
	ri, err := d.discover(ctx, st.repo.Root)
	if err != nil {
		return nil, err
	}
	c, err := d.capture(ctx, ri, len(indexPaths) > 0, len(files) > 0)
	if err != nil {
		return nil, err
	}
	moved := map[string]bool{}
	differ := func(from, to string, paths []string) error {
		if len(paths) == 0 || from == to {
			return nil
		}
		var limit []string
		if len(paths) <= 64 {
			limit = paths
		}
		changes, err := d.treeChanges(ctx, ri.Repo, from, to, limit)
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, p := range paths {
			want[p] = true
		}
		for _, ch := range changes {
			if want[ch.path] {
				moved[ch.path] = true
			}
		}
		return nil
	}
	if err := differ(tree, c.WorktreeTree, files); err != nil {
		return nil, err
	}
	if err := differ(indexTree, c.IndexTree, indexPaths); err != nil {
		return nil, err
	}
	return sortedKeys(moved), nil
}

// removeWorktreeFile deletes root/p (a file or symlink; a missing one is
// fine) and then its parent folders that became empty, up to root, as git
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
		return fmt.Errorf("diffscope: %s is a folder, not a file", p)
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
