package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	view, done, err := indexCopy(repo)
	if err != nil {
		return nil, err
	}
	defer done()
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
	return refused(ReasonNothingToCommit, "nothing to commit: the index matches HEAD")
}

// CommitResult is a commit [Commit] made: its id, the Branch it is on
// ("" on a detached HEAD) and git's one-line summary.
type CommitResult struct {
	Commit  string
	Branch  string
	Summary string
}

// CommitAction names git/commit's staging in the operation log.
const CommitAction = "commit"

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
// taking index.lock is committed). Works on a detached HEAD and on an
// unborn branch. The steps run under the repository lock.
//
// The staging is a transaction of oplog (issues 10 and 15): the paths
// `git add --all` changes are found in a copy of the index, a journal
// records the recovery point (the index, and the working-tree content of
// those paths) and the index is written through it. When no commit is
// made, the staging is rolled back (a partly staged file keeps its staged
// content; entries a refusing hook changed are left as the hook left
// them); a kill at any instant is recovered ([gitstate.Oplog.Recover]) to
// the index before the staging, or kept when the commit landed (HEAD
// moved). Unmerged entries are refused before anything is written, as
// `git commit -a` refuses them.
//
// The hooks run within git's hook timeout ([gitcli.Runner.WithHookTimeout]);
// when it passes, or ctx ends, git and the hooks are stopped (asked first,
// SIGTERM) and the staging is rolled back as for a refusing hook, unless
// git had recorded the commit (only a hook after it, post-commit, was
// stopped): the commit and the staging stay, and the timedOut or
// interrupted error says so.
//
// Errors: [*ParamError] emptyMessage (a blank message), nothingToCommit,
// identityUnknown (no user.name/user.email: git's message included);
// [*ConflictError] hookRejected with the hook's output, timedOut (the
// hooks' deadline passed), concurrentChange, or operationInProgress
// (unmerged entries); gitcli.ErrNotRepo, [ErrBareRepository].
func Commit(ctx context.Context, git *gitcli.Runner, oplog *gitstate.Oplog, checkout, message string, includeUnstaged bool, expectedIndexTree string) (*CommitResult, error) {
	if strings.TrimSpace(message) == "" {
		return nil, emptyMessage("the commit message is empty")
	}
	if strings.ContainsRune(message, 0) {
		return nil, paramErr("message", "the commit message holds a NUL byte, which git does not allow")
	}
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	if includeUnstaged {
		// An action of this checkout that died is finished first (Begin
		// would otherwise do it under the plan's feet).
		if err := oplog.RecoverPending(ctx, git, repo.Root); err != nil {
			return nil, err
		}
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
		return commitIndex(ctx, repo, head, headTree, message, expectedIndexTree)
	}
	if unmerged, err := listUnmerged(ctx, repo); err != nil {
		return nil, err
	} else if len(unmerged) > 0 {
		return nil, conflict(ReasonOperationInProgress, unmerged,
			"committing is not possible because the index has unmerged paths; resolve them first")
	}
	staged, err := stageByAddAll(ctx, repo)
	if err != nil {
		return nil, err
	}
	defer staged.done()
	paths := staged.paths
	if len(paths) == 0 {
		return commitIndex(ctx, repo, head, headTree, message, expectedIndexTree)
	}
	j, err := oplog.Begin(ctx, repo, gitstate.Action{Name: CommitAction, Paths: paths, EndsInCommit: true})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if len(j.Recovered) > 0 {
		return nil, j.Abort(ctx, conflict(ReasonConcurrentChange, nil,
			"an interrupted action in this checkout was recovered just now; commit again"))
	}
	if err := j.WriteIndex(ctx, paths, func(tmp *gitcli.Repo) error { return staged.install(ctx, tmp) }); err != nil {
		return nil, j.Abort(ctx, lockedConflict(err))
	}
	res, err := commitIndex(ctx, repo, head, headTree, message, expectedIndexTree)
	if err == nil {
		return res, j.Done(ctx)
	}
	// Keep the staging only when HEAD moved (a commit was made).
	if now, _, herr := repo.Head(context.WithoutCancel(ctx)); herr == nil && now != head {
		return nil, errors.Join(err, j.Done(ctx))
	}
	return nil, j.Abort(ctx, err)
}

// stagedIndex is `git add --all` run on a copy of the index: the paths
// whose entry it changed (added, updated or removed) and the staged copy.
type stagedIndex struct {
	paths []string
	view  *gitcli.Repo
	// real is the real index's path; source its os.Stat when it was
	// copied (nil: there was none).
	real   string
	source os.FileInfo
	done   func()
}

// install is the index write of [Commit]'s journal: tmp (the journal's
// copy of the real index) is replaced by the staged copy when the real
// index is still the file that copy was made from, so that `git add
// --all`, which stats every file and lists the untracked ones, runs once
// per commit; otherwise it runs again on tmp. The staged copy keeps the
// mtime git gave it (git's racy-clean check).
func (s *stagedIndex) install(ctx context.Context, tmp *gitcli.Repo) error {
	if cur, err := os.Stat(s.real); err == nil && s.source != nil && gitstate.SameIndexFile(s.source, cur) {
		if tmp.IndexFile() == s.real {
			return errors.New("workspace: the journal's index is the real one")
		}
		if err := os.Remove(tmp.IndexFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		ok, err := gitstate.CopyIndex(s.view.IndexFile(), tmp.IndexFile())
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return tmp.AddEverything(ctx)
}

// stageByAddAll runs `git add --all` on a copy of the index (the user's
// index is not written) and lists the paths whose index entry it
// changed. Call done when the copy is no longer needed.
func stageByAddAll(ctx context.Context, repo *gitcli.Repo) (*stagedIndex, error) {
	source, _ := os.Stat(repo.IndexPath)
	view, done, err := indexCopy(repo)
	if err != nil {
		return nil, err
	}
	s := &stagedIndex{view: view, real: repo.IndexPath, source: source, done: done}
	ok := false
	defer func() {
		if !ok {
			done()
		}
	}()
	before, err := allIndexEntries(ctx, view)
	if err != nil {
		return nil, err
	}
	// An intent-to-add entry that is an empty file keeps its id when
	// staged for real; it changes all the same.
	ita, err := gitstate.IntentToAdd(ctx, view, before)
	if err != nil {
		return nil, err
	}
	if err := view.AddEverything(ctx); err != nil {
		return nil, lockedConflict(err)
	}
	after, err := allIndexEntries(ctx, view)
	if err != nil {
		return nil, err
	}
	var paths []string
	for p, e := range after {
		if before[p] != e || ita[p] {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	s.paths, ok = paths, true
	return s, nil
}

// identityUnknown reports whether git refused a commit because it knows
// no author or committer ("Author identity unknown", "empty ident name",
// "no email was given" with user.useConfigOnly: git's ident.c).
func identityUnknown(err error) bool {
	ge, ok := errors.AsType[*gitcli.Error](err)
	if !ok {
		return false
	}
	for _, s := range []string{"identity unknown", "empty ident name", "no email was given", "no name was given", "Please tell me who you are"} {
		if strings.Contains(ge.Stderr, s) {
			return true
		}
	}
	return false
}

// commitIndex runs the steps of [Commit] after the staging; head and
// headTree are HEAD's commit and tree before.
func commitIndex(ctx context.Context, repo *gitcli.Repo, head, headTree, message, expectedIndexTree string) (*CommitResult, error) {
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
		// A hook after the commit (post-commit) stopped at its deadline or
		// by turn/interrupt: the commit is made all the same.
		if now, _, herr := repo.Head(context.WithoutCancel(ctx)); herr == nil && now != head {
			done := fmt.Sprintf("git commit recorded the commit %s (the staging is kept)", now)
			if e := afterHookStopped(ctx, err, out, "the hook after git commit (post-commit)", done); e != nil {
				return nil, e
			}
		}
		if te := hookTimedOut(err, out, "git commit", "nothing was committed, and the staging was undone as for a refusing hook"); te != nil {
			return nil, te
		}
		switch {
		case errors.Is(err, gitcli.ErrLocked):
			return nil, lockedConflict(err)
		case exitCodeOf(err) == 1 && strings.Contains(string(out), "nothing to commit"):
			return nil, nothingToCommit()
		case exitCodeOf(err) == 1:
			return nil, &ConflictError{Reason: ReasonHookRejected, Output: gitErrOutput(err, out)}
		case identityUnknown(err):
			return nil, refused(ReasonIdentityUnknown,
				"git does not know who is committing in this checkout: set user.name and user.email (git config user.name ...; git config user.email ...). git said: %s", gitErrOutput(err, nil))
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

// exitCodeOf is git's exit code of a failed call, -2 when err is not a
// git call's.
func exitCodeOf(err error) int {
	if ge, ok := errors.AsType[*gitcli.Error](err); ok {
		return ge.ExitCode
	}
	return -2
}

// allIndexEntries maps every stage-0 path of repo's index to its entry.
func allIndexEntries(ctx context.Context, repo *gitcli.Repo) (map[string]gitstate.Entry, error) {
	m := map[string]gitstate.Entry{}
	err := repo.LsFilesStage(ctx, nil, func(e gitcli.IndexEntry) error {
		if e.Stage == 0 {
			m[e.Path] = gitstate.Entry{Mode: e.Mode, OID: e.OID}
		}
		return nil
	})
	return m, err
}

// indexCopy returns a view of repo whose index is a copy of the user's in
// a temporary folder, which done removes: reads that stage (git add) in
// it never write the user's index.
func indexCopy(repo *gitcli.Repo) (view *gitcli.Repo, done func(), err error) {
	dir, err := os.MkdirTemp("", "knightcode-commit-")
	if err != nil {
		return nil, nil, err
	}
	tmp := filepath.Join(dir, "index")
	if _, err := gitstate.CopyIndex(repo.IndexPath, tmp); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return repo.WithIndex(tmp), func() { os.RemoveAll(dir) }, nil
}
