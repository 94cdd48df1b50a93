package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Branch is one entry of [Branches]: Name is the short name ("main",
// "origin/main"), Ref the full ref, Remote marks a remote-tracking
// branch, Current the branch checked out, Commit its tip; Upstream (short
// name, "" when none), Ahead and Behind compare a local branch with its
// upstream, UpstreamGone marks an upstream that no longer exists.
type Branch struct {
	Name, Ref     string
	Remote        bool
	Current       bool
	Commit        string
	Upstream      string
	Ahead, Behind int
	UpstreamGone  bool
}

// Branches lists the local branches, then the remote-tracking ones
// (remote HEAD symrefs left out), each in ref order, with one
// `for-each-ref refs/heads refs/remotes`. Errors: gitcli.ErrNotRepo,
// [ErrBareRepository].
func Branches(ctx context.Context, git *gitcli.Runner, checkout string) ([]Branch, error) {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	lines, err := repo.ForEachRef(ctx, gitcli.ForEachRefOptions{
		Format:   "%(HEAD)%00%(refname)%00%(objectname)%00%(symref)%00%(upstream:short)%00%(upstream:track,nobracket)",
		Patterns: []string{"refs/heads/", "refs/remotes/"},
	})
	if err != nil {
		return nil, err
	}
	var local, remote []Branch
	for _, l := range lines {
		f := strings.Split(l, "\x00")
		if len(f) != 6 || f[3] != "" {
			continue
		}
		b := Branch{Ref: f[1], Current: f[0] == "*", Commit: f[2], Upstream: f[4]}
		if name, ok := strings.CutPrefix(b.Ref, "refs/heads/"); ok {
			b.Name = name
		} else {
			b.Name, b.Remote = strings.TrimPrefix(b.Ref, "refs/remotes/"), true
		}
		for _, part := range strings.Split(f[5], ", ") {
			k, v, _ := strings.Cut(part, " ")
			n, _ := strconv.Atoi(v)
			switch k {
			case "ahead":
				b.Ahead = n
			case "behind":
				b.Behind = n
			case "gone":
				b.UpstreamGone = true
			}
		}
		if b.Remote {
			remote = append(remote, b)
		} else {
			local = append(local, b)
		}
	}
	return append(local, remote...), nil
}

// checkBranchName refuses a name that is not a valid new branch name
// ([*ParamError] field "name"): empty, starting with "-", "HEAD", a part
// too long to be a file name (gitcli.RefComponentsFit), or refused by `git
// check-ref-format refs/heads/<name>`.
func checkBranchName(ctx context.Context, repo *gitcli.Repo, name string) error {
	switch {
	case name == "":
		return paramErr("name", "a branch name is required")
	case strings.HasPrefix(name, "-") || name == "HEAD" || strings.ContainsRune(name, 0):
		return paramErr("name", "%q is not a valid branch name", name)
	case !gitcli.RefComponentsFit(name):
		return paramErr("name", "each part of a branch name between slashes may hold at most %d bytes", gitcli.MaxRefComponentBytes)
	}
	ok, err := repo.CheckRefFormat(ctx, "refs/heads/"+name)
	if err != nil {
		return err
	}
	if !ok {
		return paramErr("name", "%q is not a valid branch name (git check-ref-format)", name)
	}
	return nil
}

// BranchCreate makes branch name at HEAD and switches to it (spec
// git/branch/create, "Create branch here"): `git switch --no-guess -c
// <name>`, which changes no file. No hook runs (it is not one of the
// user's own git operations). On an unborn HEAD, HEAD then names the new
// (still unborn) branch. Errors: [*ParamError] field "name" for an
// invalid name; [*ConflictError] branchExists; gitcli.ErrNotRepo,
// [ErrBareRepository].
func BranchCreate(ctx context.Context, git *gitcli.Runner, checkout, name string) error {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return err
	}
	if err := checkBranchName(ctx, repo, name); err != nil {
		return err
	}
	exists := func() *ConflictError {
		return conflict(ReasonBranchExists, []string{"refs/heads/" + name}, "a branch named %q already exists", name)
	}
	if _, ok, err := repo.VerifyRef(ctx, "refs/heads/"+name); err != nil {
		return err
	} else if ok {
		return exists()
	}
	lk, err := lock(ctx, repo.CommonDir)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	if err := repo.Switch(ctx, name, gitcli.SwitchOptions{Create: true}); err != nil {
		if strings.Contains(gitErrOutput(err, nil), "already exists") {
			return exists()
		}
		return lockedConflict(err)
	}
	return nil
}

// switchTarget resolves the commit `git switch --guess name` would check
// out: refs/heads/<name>, else refs/remotes/<r>/<name> on exactly one
// remote (or on the remote checkout.defaultRemote names), whose short
// name ("<r>/<name>") it returns as upstream (the branch is then created,
// tracking it).
func switchTarget(ctx context.Context, repo *gitcli.Repo, name string) (id, upstream string, err error) {
	if id, ok, err := repo.ResolveCommit(ctx, "refs/heads/"+name); err != nil || ok {
		return id, "", err
	}
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return "", "", err
	}
	var found, from []string
	for _, r := range remotes {
		id, ok, err := repo.ResolveCommit(ctx, "refs/remotes/"+r+"/"+name)
		if err != nil {
			return "", "", err
		}
		if ok {
			found, from = append(found, id), append(from, r+"/"+name)
		}
	}
	switch len(found) {
	case 1:
		return found[0], from[0], nil
	case 0:
		return "", "", paramErr("name", "no branch named %q", name)
	}
	// git's checkout.defaultRemote picks one of several.
	if def, ok, err := repo.ConfigGet(ctx, "checkout.defaultRemote"); err != nil {
		return "", "", err
	} else if ok {
		for i, f := range from {
			if f == def+"/"+name {
				return found[i], f, nil
			}
		}
	}
	return "", "", paramErr("name", "%q names a branch on %d remotes; create a local branch from one of them", name, len(found))
}

// overwrittenUntracked lists the paths target's tree adds over headTree
// that exist in the work tree without being in the index (untracked or
// ignored files, or a file where the branch has a folder), sorted.
func overwrittenUntracked(ctx context.Context, repo *gitcli.Repo, headTree, target string) ([]string, error) {
	added, err := repo.DiffTreeAdded(ctx, headTree, target)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var candidates []string
	for _, p := range added {
		// A file where the branch needs a folder is overwritten too.
		parts := strings.Split(p, "/")
		for i := 1; i <= len(parts); i++ {
			sub := strings.Join(parts[:i], "/")
			if seen[sub] {
				continue
			}
			fi, err := os.Lstat(filepath.Join(repo.Root, filepath.FromSlash(sub)))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				break
			}
			if err != nil {
				return nil, err
			}
			if i < len(parts) && fi.IsDir() {
				continue
			}
			seen[sub] = true
			if gitstate.EmptyFolder(filepath.Join(repo.Root, filepath.FromSlash(sub))) {
				break // no file to overwrite: git removes it, or keeps it for a gitlink
			}
			candidates = append(candidates, sub)
			break
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	tracked, err := repo.LsFilesCached(ctx, candidates)
	if err != nil {
		return nil, err
	}
	inIndex := map[string]bool{}
	for _, p := range tracked {
		// A folder with tracked files in it is git's to handle.
		for q := p; q != "."; q = filepath.ToSlash(filepath.Dir(q)) {
			inIndex[q] = true
		}
	}
	var out []string
	for _, p := range candidates {
		if !inIndex[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// tabbedPaths are the tab-indented lines of git's refusal: the paths it
// lists.
func tabbedPaths(out string) []string {
	var paths []string
	for _, l := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(l, "\t"); ok && p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// LogOptions shape [Log]: Limit is the most commits (0 means 50, at most
// 500); BaseRef is the base the commits are counted from (a worktree's
// baseRef or base commit; "" means the default branch:
// refs/remotes/origin/HEAD, else main or master).
type LogOptions struct {
	Limit   int
	BaseRef string
}

// Log limits (spec git/log; issue 10's decisions).
const (
	DefaultLogLimit = 50
	MaxLogLimit     = 500
)

// LogCommit is one commit of [Log]: ID, Parents, Subject, the author's
// name and email, and the author time in Unix seconds.
type LogCommit struct {
	ID                      string
	Parents                 []string
	Subject                 string
	AuthorName, AuthorEmail string
	Time                    int64
}

// LogResult is git/log's answer: Base is the base the commits were
// counted from as it was named ("" when there is none or HEAD is on it),
// Commits newest first.
type LogResult struct {
	Base    string
	Commits []LogCommit
}

// Log lists the commits since the base (spec git/log, the committed
// scope): `git log ^<base> HEAD`, newest first, at most Limit; on the
// base branch itself (the branch checked out is the base's branch), or
// without a base, the last Limit commits of HEAD. An unborn HEAD has no
// commits. Errors: [*ParamError] field "limit" (negative or above 500) or
// "baseRef" (names no commit); gitcli.ErrNotRepo, [ErrBareRepository].
func Log(ctx context.Context, git *gitcli.Runner, checkout string, o LogOptions) (*LogResult, error) {
	limit := o.Limit
	switch {
	case limit == 0:
		limit = DefaultLogLimit
	case limit < 0 || limit > MaxLogLimit:
		return nil, paramErr("limit", "limit must be between 1 and %d, got %d", MaxLogLimit, o.Limit)
	}
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	head, _, err := repo.Head(ctx)
	if err != nil {
		return nil, err
	}
	if head == "" {
		return &LogResult{Commits: []LogCommit{}}, nil
	}
	current, err := currentBranch(ctx, repo)
	if err != nil {
		return nil, err
	}
	base, baseName, baseBranch, err := logBase(ctx, repo, o.BaseRef, current)
	if err != nil {
		return nil, err
	}
	revs := []string{"HEAD"}
	if base != "" && !(current != "" && current == baseBranch) {
		revs = []string{"^" + base, "HEAD"}
	} else {
		baseName = ""
	}
	entries, err := repo.Log(ctx, gitcli.LogOptions{Revs: revs, MaxCount: limit})
	if err != nil {
		return nil, err
	}
	res := &LogResult{Base: baseName, Commits: make([]LogCommit, 0, len(entries))}
	for _, e := range entries {
		res.Commits = append(res.Commits, LogCommit{ID: e.ID, Parents: e.Parents, Subject: e.Subject,
			AuthorName: e.AuthorName, AuthorEmail: e.AuthorEmail, Time: e.AuthorTime})
	}
	return res, nil
}

// logBase resolves the base of [Log]: commit id, the name as given or
// found, and the branch name it stands for (x of refs/heads/x, x,
// <remote>/x); commit is "" when there is none.
func logBase(ctx context.Context, repo *gitcli.Repo, baseRef, current string) (commit, name, branch string, err error) {
	branchOf := func(ref string) string {
		ref = strings.TrimPrefix(ref, "refs/")
		if b, ok := strings.CutPrefix(ref, "heads/"); ok {
			return b
		}
		if r, ok := strings.CutPrefix(ref, "remotes/"); ok {
			_, b, _ := strings.Cut(r, "/")
			return b
		}
		return ""
	}
	if baseRef != "" {
		id, ok, err := repo.ResolveCommit(ctx, baseRef)
		if err != nil {
			return "", "", "", err
		}
		if !ok {
			return "", "", "", paramErr("baseRef", "%q names no commit", baseRef)
		}
		full, _, err := repo.VerifyRef(ctx, "refs/heads/"+baseRef)
		if err != nil {
			return "", "", "", err
		}
		b := branchOf(baseRef)
		if full != "" {
			b = baseRef
		} else if b == "" {
			if _, ok, err := repo.VerifyRef(ctx, "refs/remotes/"+baseRef); err == nil && ok {
				b = branchOf("refs/remotes/" + baseRef)
			}
		}
		return id, baseRef, b, nil
	}
	if ref, ok, err := repo.SymbolicRef(ctx, "refs/remotes/origin/HEAD"); err != nil {
		return "", "", "", err
	} else if ok {
		if id, ok, err := repo.ResolveCommit(ctx, ref); err != nil || ok {
			return id, strings.TrimPrefix(ref, "refs/remotes/"), branchOf(ref), err
		}
	}
	for _, b := range []string{"main", "master"} {
		id, ok, err := repo.ResolveCommit(ctx, "refs/heads/"+b)
		if err != nil {
			return "", "", "", err
		}
		if ok {
			return id, b, b, nil
		}
	}
	return "", "", "", nil
}
