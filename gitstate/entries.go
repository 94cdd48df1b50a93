package gitstate

import (
	"context"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Entry readers for actions that plan their writes before [Oplog.Begin]
// (branch switch): the same reads the journal makes of the paths it
// records, so a plan and its journal compare entries alike.

// TreeEntries returns the entries of paths (repository-relative,
// /-separated) in tree; an absent path is missing from the map.
func TreeEntries(ctx context.Context, repo *gitcli.Repo, tree string, paths []string) (map[string]Entry, error) {
	return treeEntries(ctx, repo, tree, paths)
}

// IndexEntries returns the stage-0 entries of paths in repo's index; an
// absent or unmerged path is missing from the map.
func IndexEntries(ctx context.Context, repo *gitcli.Repo, paths []string) (map[string]Entry, error) {
	return indexEntries(ctx, repo, paths)
}

// WorktreeEntries returns the working-tree entries of paths as `git add`
// would record them (mode, and the blob id through the clean filters),
// hashed in a copy of the index at tmp (a file the caller owns; the real
// index is never written). An absent path is missing from the map; a
// path held by a folder has mode "040000" and no id.
func WorktreeEntries(ctx context.Context, repo *gitcli.Repo, tmp string, paths []string) (map[string]Entry, error) {
	return worktreeEntries(ctx, repo, tmp, paths)
}

// TreePaths returns the entries of paths in tree as [TreeEntries] does
// (files, symlinks and gitlinks; a folder or an absent path is missing),
// reading only the trees along each path through the repository's object
// store (gitcli.Repo.Objects: in-process where go-git handles the
// repository), so a path-scoped action pays no whole-tree git process.
func TreePaths(ctx context.Context, repo *gitcli.Repo, tree string, paths []string) (map[string]Entry, error) {
	if tree == repo.EmptyTree() {
		return map[string]Entry{}, nil
	}
	s, err := repo.Objects(ctx)
	if err != nil {
		return nil, err
	}
	m, err := lookupPaths(ctx, s, tree, paths)
	if err != nil {
		return nil, err
	}
	for p, e := range m {
		if e.Mode == "040000" {
			delete(m, p)
		}
	}
	return m, nil
}

// TreeWith writes the tree that is base (a tree id; "" or the empty tree
// for none) with each path of changes set to its entry (an absent entry
// removes it) through the repository's object store, and returns its id:
// only the trees along the changed paths are read and written. Entries of
// base in the way of a change go; changes that clash with each other (a
// path and a path under it, both present) are an error.
func TreeWith(ctx context.Context, repo *gitcli.Repo, base string, changes map[string]Entry) (string, error) {
	s, err := repo.Objects(ctx)
	if err != nil {
		return "", err
	}
	if base == repo.EmptyTree() {
		base = ""
	}
	return writeTreeWith(ctx, repo, s, base, changes)
}
