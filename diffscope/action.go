package diffscope

import (
	"context"
	"sort"
)

// This file holds what every action (revert, stage, unstage) shares: the
// re-read at the action's context and the lookup of a path or id in it.

// act runs an action (name: revert, reapply, stage or unstage; the name of
// its journal) after the caller's own parameter checks: it refuses a
// malformed id, then, again while a stale read makes it retry
// (retryStale): finishes what a journal left in the checkout
// (recoverFirst), takes the checkout lock, reads the scope again at the
// action's context (actionReadIn), looks the path or id up (selectTarget)
// and has plan work out the writes. Every refusal comes before the journal
// begins: the recovery point of a one-file action records its paths, which
// a file/folder clash would make fail. The writes go through the journal
// (begin, write, end) and the answer is the changed paths, sorted; a lock
// held by another git process is a concurrentChange naming the selected
// files' paths (lockConflict).
func (d *Differ) act(ctx context.Context, checkout, name string, ro ReadOptions, path, hunkID string, plan func(*readState, selection) (*writes, error)) ([]string, error) {
	if err := checkID(hunkID); err != nil {
		return nil, err
	}
	return retryStale(func() ([]string, error) {
		if err := d.recoverFirst(ctx, checkout); err != nil {
			return nil, err
		}
		ri, unlock, err := d.lockCheckout(ctx, checkout)
		if err != nil {
			return nil, err
		}
		defer unlock()
		st, err := d.actionReadIn(ctx, ri, ro, path, hunkID)
		if err != nil {
			return nil, err
		}
		sel, err := selectTarget(st, path, hunkID)
		if err != nil {
			return nil, err
		}
		w, err := plan(st, sel)
		if err != nil {
			return nil, lockConflict(err, filePaths(sel.files))
		}
		if err := d.begin(ctx, st, name, sel); err != nil {
			return nil, lockConflict(err, filePaths(sel.files))
		}
		paths, err := d.write(ctx, st, w)
		paths, err = d.end(ctx, st, paths, err)
		return paths, lockConflict(err, filePaths(sel.files))
	})
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
// nothing), with no budget so every file keeps its hunks. An action on a
// hunk of a named path takes that file from the last read of the scope
// when both its sides are unchanged since (cachedRead), else reads that
// path alone when it can (readPath), else the whole scope.
func (d *Differ) actionRead(ctx context.Context, checkout string, ro ReadOptions, path, hunkID string) (*readState, error) {
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	return d.actionReadIn(ctx, ri, ro, path, hunkID)
}

// actionReadIn is actionRead in the checkout ri describes.
func (d *Differ) actionReadIn(ctx context.Context, ri repoInfo, ro ReadOptions, path, hunkID string) (*readState, error) {
	n, err := actionContext(ro.Context, hunkID)
	if err != nil {
		return nil, err
	}
	if ro.IgnoreWhitespace && hunkID != "" {
		return nil, &ConflictError{Reason: ReasonDiffChanged}
	}
	if path != "" && hunkID != "" {
		scope := ro.Scope
		if scope == "" {
			scope = ScopeUncommitted
		}
		if st, ok, err := d.cachedRead(ctx, ri, scope, n, path, hunkID); err != nil || ok {
			return st, err
		}
		st, ok, err := d.readPath(ctx, ri, ro, n, path, hunkID)
		if err != nil || ok {
			return st, err
		}
	}
	ro.Context = &n
	ro.IgnoreWhitespace = false
	ro.Budget = actionBudget
	return d.readIn(ctx, ri, ro)
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
