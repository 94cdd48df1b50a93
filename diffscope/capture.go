package diffscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Limits on the untracked files a capture includes (spec, thread/diff/read:
// "More than 500 untracked files are counted in untrackedSkipped and left
// out"): gitstate's.
const (
	// MaxUntracked is the most untracked files a capture includes.
	MaxUntracked = gitstate.MaxUntracked
	// BigFolder is the number of untracked files from which a folder is
	// left out first when there are more than MaxUntracked.
	BigFolder = gitstate.BigFolder
	// MaxUntrackedSize is the largest untracked file, in bytes, a capture
	// includes (10 MiB).
	MaxUntrackedSize = gitstate.MaxUntrackedSize
)

// Capture is a checkout captured as trees without writing the user's index
// ([gitstate.Capture]).
type Capture = gitstate.Capture

// repoInfo is what discovery tells about a checkout: the repository and
// HEAD.
type repoInfo struct {
	*gitcli.Repo
	head     string // HEAD's commit; "" when unborn
	headTree string // HEAD's tree; the empty tree when unborn
}

// discover describes the checkout: one rev-parse for the repository
// (object format, git dirs, work tree root, prefix, the index path per
// worktree: C13) and one for HEAD. Errors match gitcli.ErrNotRepo outside a
// repository and for a directory without a work tree (a bare repository or
// a git dir).
func (d *Differ) discover(ctx context.Context, checkout string) (repoInfo, error) {
	if st, err := os.Stat(checkout); err != nil || !st.IsDir() {
		return repoInfo{}, fmt.Errorf("diffscope: %s is not a directory: %w", checkout, gitcli.ErrNotRepo)
	}
	repo, head, headTree, err := d.git.DiscoverHead(ctx, checkout)
	if err != nil {
		var ge *gitcli.Error
		if !errors.Is(err, gitcli.ErrNotRepo) && errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree") {
			return repoInfo{}, fmt.Errorf("diffscope: %s has no working tree: %w", checkout, gitcli.ErrNotRepo)
		}
		return repoInfo{}, err
	}
	if repo.Bare || repo.Root == "" {
		return repoInfo{}, fmt.Errorf("diffscope: %s has no working tree: %w", checkout, gitcli.ErrNotRepo)
	}
	return repoInfo{Repo: repo, head: head, headTree: headTree}, nil
}

// Capture captures checkout (any directory inside a work tree: a
// subdirectory, a linked worktree, a bare-repository-plus-worktrees layout)
// as trees without writing the user's index:
//
//   - HeadTree: HEAD's tree, the empty tree when HEAD is unborn.
//   - IndexTree: write-tree of a temporary copy of the real index. For an
//     unmerged path the copy takes stage 2 ("ours", HEAD's side of the
//     merge), or leaves the path out when ours deleted it, so a conflicted
//     index never fails a capture.
//   - WorktreeTree: a second temporary copy (keeping the index's mtime, so
//     git's racy-clean check and stat cache behave as for the real index),
//     `git add -u` (tracked files as on disk through the user's filters and
//     core.autocrlf; unmerged paths take the file on disk; intent-to-add
//     entries take their content), then the untracked non-ignored files
//     chosen by the limits ([MaxUntracked], [BigFolder], [MaxUntrackedSize]) added with `update-index --add`, then
//     write-tree. Symlinks are mode 120000 blobs, submodules one gitlink
//     each. Untracked nested repositories (listed by git as "dir/") are not
//     captured.
//
// The real index is only read, with GIT_OPTIONAL_LOCKS=0: it stays byte
// identical with the same mtime and index.lock is never taken. Temporary
// files are removed before Capture returns.
//
// The trees are written to the object database but referenced by nothing:
// `git gc` may prune them after its grace period unless the caller pins them
// (the threads layer keeps them under refs/knightcode/).
//
// Submodules gets a token per initialized submodule (see [Capture]): the
// gitlinks are listed from the index (`ls-files -s`, read only) and each
// submodule's checkout is captured the same way, recursively, which writes
// its trees to the submodule's own object database, unreferenced like the
// parent's. A repository without submodules pays one `ls-files`.
//
// Errors: an error matching [gitcli.ErrNotRepo] when checkout is not inside
// a work tree; *gitcli.Error when git fails.
func (d *Differ) Capture(ctx context.Context, checkout string) (*Capture, error) {
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	return gitstate.Take(ctx, ri.Repo, ri.head, ri.headTree, gitstate.Options{Index: true, Worktree: true, Submodules: true})
}

// capture computes the parts of a Capture a read needs: the index tree when
// withIndex, the worktree tree (and untracked accounting) when withWorktree.
// HeadTree and Head are always set. alongside, when set, runs beside the
// worktree tree's write-tree (gitstate.Options.AlongsideTree).
func (d *Differ) capture(ctx context.Context, ri repoInfo, withIndex, withWorktree bool, alongside func(context.Context, *gitcli.Repo) error) (*Capture, error) {
	return gitstate.Take(ctx, ri.Repo, ri.head, ri.headTree, gitstate.Options{Index: withIndex, Worktree: withWorktree, AlongsideTree: alongside})
}
