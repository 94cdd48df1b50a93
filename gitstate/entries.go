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
