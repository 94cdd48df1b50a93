package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// CommitDraft is what a commit would record, read without writing the
// user's index: IndexTree is the tree the index would hold after
// staging (the tree [Commit]'s expectedIndexTree compares with), HeadTree
// HEAD's tree, Diff the staged diff (`diff-index --cached -p -M` against
// HEAD, the pinned diff flags) that [CommitMessage] writes a message from.
type CommitDraft struct {
	IndexTree string
	HeadTree  string
	Diff      string
}

// PrepareCommit reads what [Commit] would record: the index as it is, or
// with includeUnstaged everything in the work tree staged as [Commit]
// stages it (tracked and untracked files, never ignored ones). The
// staging happens in a temporary copy of the index; the user's index is
// never written. Errors: gitcli.ErrNotRepo, [ErrBareRepository],
// [*ParamError] nothingToCommit, [*ConflictError] operationInProgress
// (unmerged entries).
func PrepareCommit(ctx context.Context, git *gitcli.Runner, checkout string, includeUnstaged bool) (*CommitDraft, error) {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	_, headTree, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	tmpDir, err := os.MkdirTemp("", "knightcode-commit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpDir)
	tmpIndex := filepath.Join(tmpDir, "index")
	if _, err := gitstate.CopyIndex(repo.IndexPath, tmpIndex); err != nil {
		return nil, err
	}
	view := repo.WithIndex(tmpIndex)
	if includeUnstaged {
		if err := view.AddEverything(ctx); err != nil {
			return nil, err
		}
	}
	tree, err := writeIndexTree(ctx, view)
	if err != nil {
		return nil, err
	}
	if tree == headTree && !mergeInProgress(repo) {
		return nil, nothingToCommit()
	}
	diff, err := view.DiffIndexPatch(ctx, headTree, gitcli.DiffIndexOptions{Context: 3, Cached: true, Renames: true})
	if err != nil {
		return nil, err
	}
	return &CommitDraft{IndexTree: tree, HeadTree: headTree, Diff: string(diff)}, nil
}

// writeIndexTree writes repo's index as a tree; unmerged entries are
// [*ConflictError] operationInProgress with git's output.
func writeIndexTree(ctx context.Context, repo *gitcli.Repo) (string, error) {
	tree, err := repo.WriteTree(ctx)
	if err == nil {
		return tree, nil
	}
	if out := gitErrOutput(err, nil); strings.Contains(out, "unmerged") {
		return "", &ConflictError{Reason: ReasonOperationInProgress, Output: out}
	}
	return "", lockedConflict(err)
}

// mergeInProgress reports MERGE_HEAD: a merge commit may record HEAD's
// tree.
func mergeInProgress(repo *gitcli.Repo) bool {
	_, err := os.Lstat(filepath.Join(repo.GitDir, "MERGE_HEAD"))
	return err == nil
}

func nothingToCommit() *ParamError {
	return refused("threadId", ReasonNothingToCommit, "nothing to commit: the index matches HEAD")
}

// CommitResult is a commit [Commit] made: its id, the Branch it is on
// ("" on a detached HEAD) and git's one-line summary.
type CommitResult struct {
	Commit  string
	Branch  string
	Summary string
}

// Commit records the checkout's index as a new commit of HEAD (spec
// git/commit), as the user's own `git commit`: with includeUnstaged it
// first stages everything in the work tree (`git add --all`: tracked and
// untracked files, never ignored ones); then, when expectedIndexTree is
// not "", the index's tree must still be expectedIndexTree (the tree a
// model-written message was generated from, [PrepareCommit]) or nothing
// is committed ([*ConflictError] concurrentChange). Then `git commit -F
// -` runs with the message on stdin and the user's hooks (changes a
// pre-commit hook makes are committed, not a concurrent change; a change
// another process makes in the moment between the comparison and git
// taking index.lock is committed). When no commit is made after the
// staging, the index is put back as it was before it (under git's
// index.lock protocol, see [savedIndex]), so a partly staged file keeps
// its staged content. Works on a detached HEAD and on an unborn branch.
// The steps run under the repository lock. Errors: [*ParamError]
// emptyMessage (a blank message), nothingToCommit; [*ConflictError]
// hookRejected with the hook's output, concurrentChange, or
// operationInProgress (unmerged entries); gitcli.ErrNotRepo,
// [ErrBareRepository].
func Commit(ctx context.Context, git *gitcli.Runner, checkout, message string, includeUnstaged bool, expectedIndexTree string) (*CommitResult, error) {
	if strings.TrimSpace(message) == "" {
		return nil, refused("message", ReasonEmptyMessage, "the commit message is empty")
	}
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	lk, err := lock(ctx, repo.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	head, headTree, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	if !includeUnstaged {
		return commitIndex(ctx, repo, headTree, message, expectedIndexTree)
	}
	saved, err := saveIndex(repo.IndexPath)
	if err != nil {
		return nil, err
	}
	defer saved.discard()
	if err := repo.AddEverything(ctx); err != nil {
		// git add changed nothing: its index.lock was rolled back.
		return nil, lockedConflict(err)
	}
	res, err := commitIndex(ctx, repo, headTree, message, expectedIndexTree)
	if err == nil {
		return res, nil
	}
	// Put the index back only when HEAD did not move (no commit was made).
	if now, _, herr := repo.Head(context.WithoutCancel(ctx)); herr == nil && now == head {
		if rerr := saved.restore(); rerr != nil {
			return nil, fmt.Errorf("%w (everything stays staged: the index could not be put back: %v)", err, rerr)
		}
	}
	return nil, err
}

// commitIndex runs the steps of [Commit] after the staging.
func commitIndex(ctx context.Context, repo *gitcli.Repo, headTree, message, expectedIndexTree string) (*CommitResult, error) {
	tree, err := writeIndexTree(ctx, repo)
	if err != nil {
		return nil, err
	}
	if tree == headTree && !mergeInProgress(repo) {
		return nil, nothingToCommit()
	}
	if expectedIndexTree != "" && tree != expectedIndexTree {
		return nil, conflict(ReasonConcurrentChange, nil,
			"the checkout changed since the commit message was written (index tree %s, expected %s); read the diff again", tree, expectedIndexTree)
	}
	out, err := repo.Commit(ctx, message)
	if err != nil {
		switch {
		case errors.Is(err, gitcli.ErrLocked):
			return nil, lockedConflict(err)
		case exitCodeOf(err) == 1 && strings.Contains(string(out), "nothing to commit"):
			return nil, nothingToCommit()
		case exitCodeOf(err) == 1:
			return nil, &ConflictError{Reason: ReasonHookRejected, Output: gitErrOutput(err, out)}
		}
		return nil, err
	}
	commit, _, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	branch, err := currentBranch(ctx, repo)
	if err != nil {
		return nil, err
	}
	summary, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return &CommitResult{Commit: commit, Branch: branch, Summary: summary}, nil
}

// savedIndex is a copy of the user's index (bytes and mtime, as
// gitstate.CopyIndex keeps them) taken before [Commit] stages
// everything; had is false when there was no index file.
type savedIndex struct {
	dir, copy, index string
	had              bool
}

func saveIndex(index string) (*savedIndex, error) {
	dir, err := os.MkdirTemp("", "knightcode-index-")
	if err != nil {
		return nil, err
	}
	s := &savedIndex{dir: dir, copy: filepath.Join(dir, "index"), index: index}
	if s.had, err = gitstate.CopyIndex(index, s.copy); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// restore puts the saved index back as git itself writes an index: it
// creates <index>.lock exclusively (failing, and changing nothing, while
// another git process holds it), writes the saved bytes into it with
// their mtime (so git's racy-clean check sees what it saw before), and
// renames it over the index. With no index file before, the index is
// removed under the lock.
func (s *savedIndex) restore() error {
	lockPath := s.index + ".lock"
	f, err := os.OpenFile(lockPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(lockPath)
		return err
	}
	if !s.had {
		if err := os.Remove(s.index); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err)
		}
		return fail(nil)
	}
	data, err := os.ReadFile(s.copy)
	if err != nil {
		return fail(err)
	}
	st, err := os.Stat(s.copy)
	if err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(lockPath)
		return err
	}
	if err := os.Chtimes(lockPath, st.ModTime(), st.ModTime()); err != nil {
		os.Remove(lockPath)
		return err
	}
	if err := os.Rename(lockPath, s.index); err != nil {
		os.Remove(lockPath)
		return err
	}
	return nil
}

func (s *savedIndex) discard() { os.RemoveAll(s.dir) }

// exitCodeOf is git's exit code of a failed call, -2 when err is not a
// git call's.
func exitCodeOf(err error) int {
	if ge, ok := errors.AsType[*gitcli.Error](err); ok {
		return ge.ExitCode
	}
	return -2
}
