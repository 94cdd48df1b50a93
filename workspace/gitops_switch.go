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

// SwitchAction names git/branch/switch in the operation log (its journals
// and the messages of its recovery points).
const SwitchAction = "switch"

// modeGitlink is a submodule's entry mode.
const modeGitlink = "160000"

// BranchSwitch checks out branch name (spec git/branch/switch) as `git
// switch --guess <name>` would, as a transaction of the operation log
// (issues 10 and 15): a local branch, or a remote-tracking branch of that
// name on exactly one remote (the local branch is then created at its tip
// and tracks it). Local changes to paths the switch does not touch are
// carried over, as git carries them.
//
// Every refusal comes before the first write, each with the paths:
// [*ConflictError] localChanges when the switch would overwrite a local
// change to a tracked file (git's rule: a path the two commits differ in
// must be unchanged in the index and the working tree, or already as the
// branch has it), an untracked file, or an ignored one (git overwrites
// those silently); operationInProgress for a merge, rebase, cherry-pick,
// revert or am in progress, or unmerged entries; branchExists when the
// branch is checked out in another worktree. Then, under the repository
// lock, a journal of oplog records the recovery point (the index and the
// working-tree content of the paths the switch writes, HEAD) and the
// writes go through it: files removed, files written (through the
// checkout filters), the index entries, the new branch (remote case),
// and HEAD, attached with git's reflog message "checkout: moving from
// <old> to <name>" (so `git switch -` works). A kill at any instant
// leaves a journal that [gitstate.Oplog.Recover] rolls back to exactly
// the state before, or forward once it is marked done. After the switch
// the user's post-checkout hook runs (`git hook run`; its failure does
// not undo the switch, as with git, and is not reported; stopped at its
// deadline or when ctx ends it is: timedOut or interrupted, saying the
// switch is made). Switching to the branch checked out changes nothing.
//
// Where it is stricter than git: a submodule replaced by a file or the
// reverse is refused as localChanges. Errors: [*ParamError] field "name"
// (invalid, or no such branch); the conflicts above; concurrentChange
// when another process held the index's lock or an interrupted action of
// this checkout was recovered meanwhile; timedOut or interrupted when the
// post-checkout hook was stopped after the switch was made;
// gitcli.ErrNotRepo, [ErrBareRepository].
func BranchSwitch(ctx context.Context, git *gitcli.Runner, oplog *gitstate.Oplog, checkout, name string) error {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return err
	}
	if err := checkBranchName(ctx, repo, name); err != nil {
		return err
	}
	current, err := currentBranch(ctx, repo)
	if err != nil {
		return err
	}
	if current == name {
		return nil
	}
	target, upstream, err := switchTarget(ctx, repo, name)
	if err != nil {
		return err
	}
	if op := OperationInProgress(repo.GitDir); op != "" && op != OpBisect {
		return conflict(ReasonOperationInProgress, nil, "a %s is in progress; finish or abort it before switching branches", op)
	}
	if upstream == "" {
		if elsewhere, err := checkedOutElsewhere(ctx, repo, "refs/heads/"+name); err != nil {
			return err
		} else if elsewhere != "" {
			return conflict(ReasonBranchExists, []string{"refs/heads/" + name}, "%s is checked out in %s", name, elsewhere)
		}
	}
	// An action of this checkout that died is finished before the plan
	// reads the state (Begin would otherwise do it under the plan's feet).
	if err := oplog.RecoverPending(ctx, git, repo.Root); err != nil {
		return err
	}
	lk, err := lock(ctx, repo.CommonDir)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if paths, err := listUnmerged(ctx, repo); err != nil {
		return err
	} else if len(paths) > 0 {
		return conflict(ReasonOperationInProgress, paths, "the index has unmerged paths; resolve them before switching branches: %s", strings.Join(paths, ", "))
	}
	head, headTree, err := repo.Head(ctx)
	if err != nil {
		return err
	}
	targetTree, err := repo.TreeOf(ctx, target)
	if err != nil {
		return err
	}
	if paths, err := overwrittenUntracked(ctx, repo, headTree, targetTree); err != nil {
		return err
	} else if len(paths) > 0 {
		return conflict(ReasonLocalChanges, paths,
			"switching to %s would overwrite untracked or ignored files the branch tracks; move them away first: %s", name, strings.Join(paths, ", "))
	}
	plan, err := planSwitch(ctx, repo, headTree, targetTree)
	if err != nil {
		return err
	}
	if len(plan.dirty) > 0 {
		return &ConflictError{Reason: ReasonLocalChanges, Paths: plan.dirty,
			Output: "error: Your local changes to the following files would be overwritten by checkout:\n\t" +
				strings.Join(plan.dirty, "\n\t") + "\nPlease commit your changes or stash them before you switch branches.\n"}
	}
	return runSwitch(ctx, repo, oplog, plan, switchRefs{from: switchedFrom(current, head), name: name,
		head: head, target: target, upstream: upstream})
}

// switchRefs are the refs a switch moves: HEAD from `from` (the branch's
// short name, else the detached commit) to refs/heads/<name> at target,
// created there when upstream (the remote-tracking branch it tracks) is
// set; head is HEAD's commit before ("" unborn).
type switchRefs struct {
	from, name, head, target, upstream string
}

func switchedFrom(current, head string) string {
	if current != "" {
		return current
	}
	return head
}

// runSwitch writes plan and moves the refs under a journal of oplog (the
// caller holds the repository lock), then runs the post-checkout hook.
func runSwitch(ctx context.Context, repo *gitcli.Repo, oplog *gitstate.Oplog, plan *switchPlan, r switchRefs) error {
	j, err := oplog.Begin(ctx, repo, gitstate.Action{Name: SwitchAction, Paths: plan.paths})
	if err != nil {
		return err
	}
	defer j.Close()
	if len(j.Recovered) > 0 {
		return j.Abort(ctx, conflict(ReasonConcurrentChange, nil,
			"an interrupted action in this checkout was recovered just now; switch again"))
	}
	branchRef := "refs/heads/" + r.name
	if r.upstream != "" {
		if err := j.UpdateRef(ctx, repo, branchRef, gitstate.RefValue{OID: r.target}, "branch: Created from "+r.upstream); err != nil {
			return j.Abort(ctx, err)
		}
	}
	if err := j.Remove(ctx, plan.remove); err != nil {
		return j.Abort(ctx, err)
	}
	for _, d := range plan.rmdirs {
		_ = os.Remove(filepath.Join(repo.Root, filepath.FromSlash(d))) // only when empty, as git does
	}
	// A folder the branch replaces by a file held only files the switch
	// removed, and maybe empty folders, which go as git removes them.
	for p := range plan.write {
		gitstate.RemoveEmptyFolder(filepath.Join(repo.Root, filepath.FromSlash(p)))
	}
	if err := j.Checkout(ctx, plan.write); err != nil {
		return j.Abort(ctx, err)
	}
	for _, d := range plan.mkdirs {
		_ = os.MkdirAll(filepath.Join(repo.Root, filepath.FromSlash(d)), 0o755)
	}
	if len(plan.paths) > 0 {
		err := j.WriteIndex(ctx, plan.paths, func(tmp *gitcli.Repo) error {
			if err := tmp.UpdateIndexInfo(ctx, plan.info); err != nil {
				return err
			}
			if len(plan.write) == 0 {
				return nil
			}
			return tmp.AddRefresh(ctx, sortedKeys(plan.write))
		})
		if err != nil {
			if errors.Is(err, gitcli.ErrLocked) {
				err = &ConflictError{Reason: ReasonConcurrentChange, Output: err.Error()}
			}
			return j.Abort(ctx, err)
		}
	}
	if err := j.UpdateRef(ctx, repo, "HEAD", gitstate.RefValue{Target: branchRef}, "checkout: moving from "+r.from+" to "+r.name); err != nil {
		return j.Abort(ctx, err)
	}
	if err := j.Done(ctx); err != nil {
		return err
	}
	// The rest is git switch's after the switch: the tracking config of a
	// branch it created, and the hook. Neither undoes the switch.
	if r.upstream != "" {
		if v, _, _ := repo.ConfigGet(ctx, "branch.autoSetupMerge"); v != "false" {
			_ = repo.SetUpstream(ctx, r.name, r.upstream)
		}
	}
	old := r.head
	if old == "" {
		old = repo.ZeroID()
	}
	// The hook's refusal does not undo the switch, as with git; stopped at
	// its deadline or by turn/interrupt, it is said, with the switch made.
	if err := repo.RunHook(ctx, "post-checkout", old, r.target, "1"); err != nil {
		done := fmt.Sprintf("the switch to %s is made (HEAD is on %s)", r.name, r.name)
		if e := afterHookStopped(ctx, err, nil, "the post-checkout hook of the switch to "+r.name, done); e != nil {
			return e
		}
	}
	return nil
}

// switchPlan is what a switch writes, decided before anything is.
type switchPlan struct {
	// paths are those whose index entry changes, sorted; info holds their
	// entries in the target (mode "0" removes one).
	paths []string
	info  []gitcli.IndexInfo
	// write are the files to write (present in the target, not
	// submodules); remove the files to delete.
	write  map[string]gitstate.Entry
	remove []string
	// mkdirs and rmdirs are the (empty) folders of submodules the target
	// adds or drops.
	mkdirs, rmdirs []string
	// dirty are the paths whose local changes the switch would overwrite.
	dirty []string
}

// planSwitch decides, from the trees of HEAD and of the target, the
// index and the working tree, what switching writes: for every path the
// two trees differ in, the path must be as HEAD has it in the index and
// the working tree (it then becomes as the target has it; a file deleted
// where the target deletes it too counts as HEAD's), or its index entry
// already the target's (left alone, file included); anything else is
// dirty. git's
// two-way merge (read-tree -m -u, which git switch runs) decides alike.
// A folder where the target has a file counts as absent when every file
// in it is a file the switch removes.
func planSwitch(ctx context.Context, repo *gitcli.Repo, headTree, targetTree string) (*switchPlan, error) {
	plan := &switchPlan{write: map[string]gitstate.Entry{}}
	changed, err := repo.DiffTreeNames(ctx, headTree, targetTree)
	if err != nil || len(changed) == 0 {
		return plan, err
	}
	slices.Sort(changed)
	h, err := gitstate.TreeEntries(ctx, repo, headTree, changed)
	if err != nil {
		return nil, err
	}
	t, err := gitstate.TreeEntries(ctx, repo, targetTree, changed)
	if err != nil {
		return nil, err
	}
	ix, err := gitstate.IndexEntries(ctx, repo, changed)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knightcode-switch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	wt, err := gitstate.WorktreeEntries(ctx, repo, filepath.Join(tmp, "index"), changed)
	if err != nil {
		return nil, err
	}
	removed := map[string]bool{}
	for _, p := range changed {
		if file(h[p]) && !file(t[p]) {
			removed[p] = true
		}
	}
	for _, p := range changed {
		H, T, I, W := h[p], t[p], ix[p], wt[p]
		link := H.Mode == modeGitlink || T.Mode == modeGitlink
		if W.Mode == "040000" && !link && emptiedBy(repo.Root, p, removed) {
			W = gitstate.Entry{}
		}
		switch {
		case link && (file(H) || file(T)):
			plan.dirty = append(plan.dirty, p) // a submodule and a file trade places
		case same(I, T):
			// The index already has the target's entry: git keeps it, and
			// the file as it is.
		case same(I, H) && (link || same(W, H) || T.Absent() && W.Absent()):
			// As HEAD has it (or deleted where the target deletes it).
			plan.paths = append(plan.paths, p)
			if T.Absent() {
				plan.info = append(plan.info, gitcli.IndexInfo{Mode: "0", OID: repo.ZeroID(), Path: p})
			} else {
				plan.info = append(plan.info, gitcli.IndexInfo{Mode: T.Mode, OID: T.OID, Path: p})
			}
			switch {
			case file(T):
				plan.write[p] = T
			case file(H):
				plan.remove = append(plan.remove, p)
			case T.Mode == modeGitlink && H.Absent():
				plan.mkdirs = append(plan.mkdirs, p)
			case H.Mode == modeGitlink && T.Absent():
				plan.rmdirs = append(plan.rmdirs, p)
			}
		default:
			plan.dirty = append(plan.dirty, p)
		}
	}
	return plan, nil
}

// file reports an entry that is a file or symlink (not absent, not a
// submodule, not a folder).
func file(e gitstate.Entry) bool {
	return !e.Absent() && e.Mode != modeGitlink && e.Mode != "040000"
}

// same compares two entries, every absent one alike.
func same(a, b gitstate.Entry) bool {
	if a.Absent() || b.Absent() {
		return a.Absent() && b.Absent()
	}
	return a == b
}

// emptiedBy reports whether every file under the folder root/dir is in
// removed (so removing them leaves no folder there).
func emptiedBy(root, dir string, removed map[string]bool) bool {
	ok := true
	base := filepath.Join(root, filepath.FromSlash(dir))
	err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if !removed[filepath.ToSlash(rel)] {
			ok = false
			return filepath.SkipAll
		}
		return nil
	})
	return err == nil && ok
}

// checkedOutElsewhere returns the path of another worktree of repo that
// has branchRef checked out ("" when none).
func checkedOutElsewhere(ctx context.Context, repo *gitcli.Repo, branchRef string) (string, error) {
	wts, err := repo.WorktreeList(ctx)
	if err != nil {
		return "", err
	}
	for _, w := range wts {
		if w.Branch == branchRef && !w.Bare && filepath.Clean(w.Path) != filepath.Clean(repo.Root) {
			return w.Path, nil
		}
	}
	return "", nil
}

func sortedKeys(m map[string]gitstate.Entry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
