package diffscope

import "context"

// This file finds what moved since a read or a turn: the check that makes
// a stale id or a moved lastTurn file a diffChanged conflict.

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
	c, err := d.capture(ctx, ri, len(indexPaths) > 0, len(files) > 0, nil)
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
