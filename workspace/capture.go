package workspace

import (
	"context"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// state is a checkout captured completely, for carrying and snapshots
// ([gitstate.State]).
type state = gitstate.State

// captureState captures the checkout at root (the top of a work tree)
// without writing its index: [gitstate.Complete] (HEAD, the index tree, the
// worktree tree with every untracked, non-ignored file, the intent-to-add
// entries and the dirty submodules).
func (m *Manager) captureState(ctx context.Context, root string) (*state, error) {
	repo, err := m.git.Discover(ctx, root)
	if err != nil {
		return nil, err
	}
	return gitstate.Complete(ctx, repo)
}

// populate fills the worktree at dir, whose index is empty (created with
// --no-checkout): `read-tree --reset -u` writes the worktree tree's files,
// `read-tree -m` of the index tree sets the index (keeping the stat data of
// entries that match), then the intent-to-add entries are marked again
// (`add -N`). cfg are the checkout configuration overrides
// ([Manager.checkoutConfig]). Mode bits, symlinks, deletions and
// staged-vs-unstaged differences come out as captured; ignored files were
// never captured.
func (m *Manager) populate(ctx context.Context, dir string, cfg []string, worktreeTree, indexTree string, ita []string) error {
	repo, err := m.git.Discover(ctx, dir)
	if err != nil {
		return err
	}
	wt := repo.WithConfig(cfg...)
	if err := wt.ReadTree(ctx, worktreeTree, gitcli.ReadTreeOptions{Reset: true, Update: true}); err != nil {
		return err
	}
	if indexTree != worktreeTree {
		if err := wt.ReadTree(ctx, indexTree, gitcli.ReadTreeOptions{Merge: true}); err != nil {
			return err
		}
	}
	if len(ita) > 0 {
		if err := wt.AddIntentToAdd(ctx, ita); err != nil {
			return err
		}
	}
	return nil
}
