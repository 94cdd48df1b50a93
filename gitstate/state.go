package gitstate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// State is a checkout captured completely, for carrying, snapshots and
// handoff: HEAD, the index tree, and the worktree tree with every
// untracked, non-ignored file (a diff's capture leaves files out past its
// limits; a snapshot or a carry must not), plus what no tree can record.
type State struct {
	Head, HeadTree, IndexTree, WorktreeTree string
	// IntentToAdd lists the index's intent-to-add paths (`git add -N`;
	// repository relative, /-separated, in git's order), which write-tree
	// leaves out of IndexTree.
	IntentToAdd []string
	// Untracked counts the untracked files in WorktreeTree.
	Untracked int
	// UntrackedPaths lists them (repository relative, /-separated,
	// sorted); not saved with a journal's state.
	UntrackedPaths []string `json:"-"`
	// DirtySubmodules lists the submodules whose contents differ from
	// their recorded commit (see [DirtySubmodules]), sorted.
	DirtySubmodules []string
	// NestedRepositories lists the untracked nested repositories the
	// capture could not hold ([Capture.NestedRepositories]).
	NestedRepositories []string
}

// Complete captures the checkout of repo (a work tree: repo.Root set)
// completely without writing its index: [Take] with the index and every
// untracked, non-ignored file (untracked nested repositories, listed as
// "dir/", cannot be captured and stay out), the intent-to-add entries
// (`diff-files --diff-filter=A`), and, when an initialized submodule is
// checked out, the dirty submodules. Errors: *gitcli.Error when git fails.
func Complete(ctx context.Context, repo *gitcli.Repo) (*State, error) {
	return CompleteKeepingIndex(ctx, repo, "")
}

// CompleteKeepingIndex is [Complete] that, when worktreeIndex is not "",
// leaves at that path (which must not exist; the caller removes it) the
// index the WorktreeTree was written from ([Options.WorktreeIndex]): the
// worktree tree's entries with the stat data their files were read with.
// The intent-to-add entries and the gitlinks are read while the trees
// are written (`ls-files -s`; `diff-files --diff-filter=A` only when an
// entry has the empty blob's id, as every intent-to-add entry has).
func CompleteKeepingIndex(ctx context.Context, repo *gitcli.Repo, worktreeIndex string) (*State, error) {
	head, headTree, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	var (
		wg     sync.WaitGroup
		ita    []string
		links  []string
		lnErr  error
		itaErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// One listing of the index gives the gitlinks and tells whether
		// any entry can be intent-to-add: git records those with the
		// empty blob's id, so without one diff-files has nothing to list.
		empty := EmptyBlobID(repo)
		maybeITA := false
		lnErr = repo.LsFilesStage(ctx, nil, func(e gitcli.IndexEntry) error {
			if e.Mode == modeGitlink && (len(links) == 0 || links[len(links)-1] != e.Path) {
				links = append(links, e.Path)
			}
			if e.Stage == 0 && e.OID == empty {
				maybeITA = true
			}
			return nil
		})
		if lnErr == nil && maybeITA {
			ita, itaErr = repo.DiffFilesAdded(ctx)
		}
	}()
	c, err := Take(ctx, repo, head, headTree, Options{Index: true, Worktree: true, AllUntracked: true, WorktreeIndex: worktreeIndex})
	wg.Wait()
	for _, err := range []error{err, lnErr, itaErr} {
		if err != nil {
			return nil, err
		}
	}
	s := &State{Head: c.Head, HeadTree: c.HeadTree, IndexTree: c.IndexTree, WorktreeTree: c.WorktreeTree,
		Untracked: len(c.Untracked), UntrackedPaths: c.Untracked, IntentToAdd: ita, NestedRepositories: c.NestedRepositories}
	for _, p := range links {
		if _, err := os.Lstat(filepath.Join(repo.Root, filepath.FromSlash(p), ".git")); err == nil {
			if s.DirtySubmodules, err = DirtySubmodules(ctx, repo); err != nil {
				return nil, err
			}
			break
		}
	}
	return s, nil
}

// DirtySubmodules lists (repository relative, /-separated, sorted) the
// submodules of repo's checkout whose own contents a carry cannot bring:
// edits or untracked files inside them, or a new commit checked out and
// not staged. It reads `git status --porcelain=v2 -z` (git-status(1),
// "Porcelain Format Version 2"): the <sub> field "S<c><m><u>" of an entry
// flags a submodule, M and U its tracked and untracked changes, and C with
// a worktree status (Y) other than "." a commit that differs from the
// index's gitlink. A staged gitlink alone is carried as is and not listed.
func DirtySubmodules(ctx context.Context, repo *gitcli.Repo) ([]string, error) {
	out, err := repo.StatusV2(ctx)
	if err != nil {
		return nil, err
	}
	var dirty []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		var n int // fields before the path
		switch {
		case strings.HasPrefix(rec, "1 "):
			n = 8
		case strings.HasPrefix(rec, "2 "):
			n = 9
			i++ // the original path follows in its own record
		case strings.HasPrefix(rec, "u "):
			n = 10
		default:
			continue
		}
		f := strings.SplitN(rec, " ", n+1)
		if len(f) != n+1 || len(f[1]) != 2 || len(f[2]) != 4 || f[2][0] != 'S' {
			continue
		}
		sub := f[2]
		if sub[2] == 'M' || sub[3] == 'U' || (sub[1] == 'C' && f[1][1] != '.') {
			dirty = append(dirty, f[n])
		}
	}
	slices.Sort(dirty)
	return dirty, nil
}
