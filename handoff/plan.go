package handoff

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/workspace"
)

// Direction is where the changes go (spec, thread/handoff "to").
type Direction string

// Directions.
const (
	ToLocal    Direction = "local"    // from a worktree to the main checkout
	ToWorktree Direction = "worktree" // from the main checkout to a worktree
)

// Options are one handoff's parameters, plain values from the thread
// layer.
type Options struct {
	// To is the direction; required.
	To Direction
	// Cwd is the thread's working directory, inside the source checkout
	// (the managed worktree for ToLocal, the main checkout for
	// ToWorktree). Required.
	Cwd string
	// Worktree, for ToWorktree, is the thread's own managed worktree to
	// move back into; "" makes a new one (workspace.Manager.Create with
	// WorktreesRoot, ThreadID and Environment; no carry).
	Worktree string
	// ThreadID and Title name the thread (the derived branch's slug; the
	// thread id when the title gives none).
	ThreadID, Title string
	// Branch is the spec's branch param (ToLocal only; "" none).
	Branch string
	// PreviousBranch is the branch of the thread's previous handoff, read
	// from its session's workspace entries ("" none).
	PreviousBranch string
	// BranchPrefix is worktrees.branchPrefix; "" means
	// [DefaultBranchPrefix].
	BranchPrefix string
	// WorktreesRoot is worktrees.root for a new worktree ("" the
	// workspace default).
	WorktreesRoot string
	// Environment is recorded on a new worktree (ToWorktree only; the
	// caller runs its setup script as thread/start does).
	Environment string
	// Changes are what the thread's turns changed: the moved paths they
	// did not change are named in the warnings (untouchedWarning). nil
	// makes no such warning.
	Changes *Changes
	// Record is called once the destination verified and before the
	// source is cleaned, as a journal step: the thread layer appends the
	// session's workspace entry (cwd, workspace, branch) there. An error
	// stops the handoff before the source is touched (the destination
	// keeps the changes; [Handoff.Recover] retries Record). nil skips it.
	Record func(ctx context.Context, l *Landed) error
}

// Changes are what a thread's turns changed (Options.Changes): a moved
// path counts as the thread's own when Paths lists it or a pair of Trees
// differs in it.
type Changes struct {
	// Paths are the repository-relative paths its turns' files list
	// (Turn.files; a rename lists its new path only).
	Paths []string
	// Trees are the worktree trees before and after each turn that
	// recorded them (the turn_end entry's beforeTree and afterTree).
	Trees [][2]string
}

// Planned is what a handoff would do, as [Handoff.Plan] decides it.
type Planned struct {
	To Direction `json:"to"`
	// ThreadID is Options.ThreadID (a recovery at server start tells
	// Record which thread landed).
	ThreadID string `json:"threadId,omitempty"`
	// Source and Destination are the checkouts' roots; Destination is ""
	// when a new worktree will be made (CreateWorktree).
	Source         string `json:"source"`
	Destination    string `json:"destination,omitempty"`
	CreateWorktree bool   `json:"createWorktree,omitempty"`
	// Head is the commit the destination ends at: the source's HEAD.
	Head string `json:"head"`
	// DestinationHead is the destination's HEAD before (its branch ref
	// in DestinationBranch, "" when detached).
	DestinationHead   string `json:"destinationHead,omitempty"`
	DestinationBranch string `json:"destinationBranch,omitempty"`
	// SourceBranch is the source's branch ref ("" detached): a to-local
	// handoff detaches the worktree from it.
	SourceBranch string `json:"sourceBranch,omitempty"`
	// Branch is the main checkout's branch after a to-local handoff.
	Branch *Branch `json:"branch,omitempty"`
	// Paths are the source's changed paths (staged, unstaged, untracked),
	// repository relative, sorted.
	Paths []string `json:"paths,omitempty"`
	// Prefix is the thread cwd's path inside its checkout ("" the root,
	// else "dir/").
	Prefix string `json:"prefix,omitempty"`
	// Nested lists the source's untracked nested repositories, which
	// stay where they are (read by Plan only; Run's result warns of
	// them from its capture).
	Nested []string `json:"nested,omitempty"`
	// untouched are the Paths no turn of the thread changed
	// (Options.Changes; read by Plan only).
	untouched []string
	// untouchedErr is why they could not be told.
	untouchedErr error
}

// Handoff runs handoffs for one agent directory.
type Handoff struct {
	git      *gitcli.Runner
	oplog    *gitstate.Oplog
	ws       *workspace.Manager
	agentDir string
	// StepHook, when set (tests), is called at each named step of a run
	// ("begun", "saved", "moving", "detached", "head", "moved",
	// "verified", "recorded", "cleaning", "cleaned"; an error makes the
	// handoff fail there) and at each step of its journal's writes
	// (gitstate.Oplog.StepHook: "checkout#3", "index-locked#1", ...; its
	// error is ignored). Tests stop a run there (runtime.Goexit) as a
	// kill -9 would.
	StepHook func(name string) error
}

// New returns a Handoff running git through r, making worktrees with ws,
// keeping its journals in the operation log <agentDir>/oplog (the folder
// revert and stage journal in; recovery points under
// refs/knightcode/oplog/) and the saved patches in <agentDir>/handoff/.
func New(r *gitcli.Runner, ws *workspace.Manager, agentDir string) *Handoff {
	h := &Handoff{git: r, ws: ws, agentDir: agentDir}
	h.oplog = &gitstate.Oplog{Dir: filepath.Join(agentDir, "oplog"), StepHook: func(s string) { _ = h.runStep(s) }}
	return h
}

func (h *Handoff) runStep(name string) error {
	if h.StepHook == nil {
		return nil
	}
	return h.StepHook(name)
}

// sides are the two checkouts a plan found.
type sides struct {
	src, dst *gitcli.Repo // dst nil when a worktree will be made
	main     *gitcli.Repo // the main checkout (src or dst)
	wts      []gitcli.Worktree
	dstTree  string // the tree of the destination's HEAD (the empty tree when unborn)
}

// Plan runs every check of a handoff and reports what it would do,
// writing nothing (it reads with status, ls-files, rev-parse, worktree
// list and lstat; no capture). Errors, all before any write:
// [*ParamError] (to, cwd, branch, environment, worktree, or a thread
// already on that side); [*ConflictError] with ReasonLocalChanges (message
// [MsgLocalChanges]; Paths the destination's changed paths; or
// [MsgOverwrite] for untracked or ignored files in the way),
// ReasonOperationInProgress, ReasonBranchExists, ReasonWorktreeDeleted;
// workspace.ErrUnbornHead; [*RecoveryError] when an earlier handoff of
// this repository needs recovery; git errors.
func (h *Handoff) Plan(ctx context.Context, o Options) (*Planned, error) {
	p, _, err := h.plan(ctx, &o, false)
	return p, err
}

// plan runs the checks. With forRun the source's status is not read (the
// capture that follows gives its changes) and the collision check is left
// to the caller, who makes it from the captured trees
// (collisionsOf).
func (h *Handoff) plan(ctx context.Context, o *Options, forRun bool) (*Planned, *sides, error) {
	switch o.To {
	case ToLocal:
		if o.Environment != "" {
			return nil, nil, paramErr("environment", "environment applies to a handoff to a worktree")
		}
	case ToWorktree:
		if o.Branch != "" {
			return nil, nil, paramErr("branch", "branch applies to a handoff to the main checkout")
		}
	default:
		return nil, nil, paramErr("to", "must be \"local\" or \"worktree\"")
	}
	if o.Cwd == "" {
		return nil, nil, paramErr("cwd", "is required")
	}
	cwd, err := filepath.Abs(o.Cwd)
	if err != nil {
		return nil, nil, paramErr("cwd", "%v", err)
	}
	deleted := func() error {
		list, err := h.ws.Registry().List()
		if err != nil {
			return err
		}
		dir := evalPath(cwd)
		for _, w := range list {
			if w.Deleted && w.Contains(dir) {
				return conflict(ReasonWorktreeDeleted, []string{w.Path}, "the worktree %s is deleted", w.Path)
			}
		}
		return nil
	}
	if _, err := os.Stat(cwd); err != nil {
		if err := deleted(); err != nil {
			return nil, nil, err
		}
		return nil, nil, paramErr("cwd", "%s is not an existing directory", o.Cwd)
	}
	cwd = evalPath(cwd)
	src, err := h.git.Discover(ctx, cwd)
	if err != nil {
		if errors.Is(err, gitcli.ErrNotRepo) {
			if derr := deleted(); derr != nil {
				return nil, nil, derr
			}
		}
		return nil, nil, err
	}
	if src.Bare || src.Root == "" {
		return nil, nil, workspace.ErrBareRepository
	}
	if err := h.pendingRecovery(ctx, src.CommonDir); err != nil {
		return nil, nil, err
	}
	wts, err := src.WorktreeList(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(wts) == 0 || wts[0].Bare {
		return nil, nil, workspace.ErrBareRepository
	}
	mainRoot := wts[0].Path
	managed, isManaged, err := h.ws.Registry().Lookup(src.Root)
	if err != nil {
		return nil, nil, err
	}
	isManaged = isManaged && managed.Path == src.Root
	p := &Planned{To: o.To, ThreadID: o.ThreadID, Source: src.Root, Prefix: src.Prefix}
	s := &sides{src: src, wts: wts}
	switch o.To {
	case ToLocal:
		if !isManaged {
			return nil, nil, paramErr("to", "the thread already runs in the main checkout (not a managed worktree)")
		}
		if managed.Deleted {
			return nil, nil, conflict(ReasonWorktreeDeleted, []string{managed.Path}, "the worktree %s is deleted", managed.Path)
		}
		if s.dst, err = h.git.Discover(ctx, mainRoot); err != nil {
			return nil, nil, err
		}
		s.main = s.dst
		p.Destination = s.dst.Root
	case ToWorktree:
		if isManaged {
			return nil, nil, paramErr("to", "the thread already runs in a worktree")
		}
		s.main = src
		if o.Worktree != "" {
			w, ok, err := h.ws.Registry().Get(evalPath(o.Worktree))
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				return nil, nil, paramErr("worktree", "%s is not a managed worktree", o.Worktree)
			}
			if w.Deleted {
				return nil, nil, conflict(ReasonWorktreeDeleted, []string{w.Path}, "the worktree %s is deleted", w.Path)
			}
			if w.CommonDir != src.CommonDir {
				return nil, nil, paramErr("worktree", "%s belongs to another repository", o.Worktree)
			}
			if s.dst, err = h.git.Discover(ctx, w.Path); err != nil {
				return nil, nil, err
			}
			p.Destination = s.dst.Root
		} else {
			p.CreateWorktree = true
		}
	}
	var busy []string
	for _, r := range []*gitcli.Repo{s.src, s.dst} {
		if r != nil {
			busy = append(busy, operationInProgress(r.GitDir)...)
		}
	}
	if len(busy) > 0 {
		return nil, nil, conflict(ReasonOperationInProgress, busy, "a merge, rebase, cherry-pick, revert or bisect is in progress")
	}
	// The destination is read while the source is.
	var (
		dst     destination
		dstErr  error
		dstRead = make(chan struct{})
	)
	if s.dst != nil {
		dctx, cancel := context.WithCancel(ctx)
		defer func() {
			cancel()
			<-dstRead
		}()
		go func() {
			defer close(dstRead)
			dst, dstErr = readDestination(dctx, s.dst)
		}()
	} else {
		close(dstRead)
	}
	head, _, err := src.Head(ctx)
	if err != nil {
		return nil, nil, err
	}
	if head == "" {
		return nil, nil, workspace.ErrUnbornHead
	}
	p.Head = head
	if ref, ok, err := src.SymbolicRef(ctx, "HEAD"); err != nil {
		return nil, nil, err
	} else if ok {
		p.SourceBranch = ref
	}
	if forRun {
		unmerged, err := src.LsFilesUnmerged(ctx)
		if err != nil {
			return nil, nil, err
		}
		if len(unmerged) > 0 {
			var paths []string
			for _, e := range unmerged {
				paths = append(paths, e.Path)
			}
			return nil, nil, conflict(ReasonOperationInProgress, slices.Compact(paths), "the source has unmerged paths")
		}
	} else {
		srcStatus, err := readStatus(ctx, src)
		if err != nil {
			return nil, nil, err
		}
		if len(srcStatus.unmerged) > 0 {
			return nil, nil, conflict(ReasonOperationInProgress, srcStatus.unmerged, "the source has unmerged paths")
		}
		p.Paths = srcStatus.changed()
		p.Nested = srcStatus.nested
		p.untouched, p.untouchedErr = untouched(ctx, src, p.Paths, o.Changes)
		if err := sourceCollisions(ctx, src, p.Paths, srcStatus.untracked); err != nil {
			return nil, nil, err
		}
	}
	if s.dst == nil {
		return p, s, nil
	}
	<-dstRead
	if dstErr != nil {
		return nil, nil, dstErr
	}
	dstHead, dstTree := dst.head, dst.tree
	p.DestinationHead, p.DestinationBranch, s.dstTree = dst.head, dst.branch, dst.tree
	if err := dst.status.dirty(); err != nil {
		return nil, nil, err
	}
	if o.To == ToLocal {
		if p.Branch, err = resolveBranch(ctx, src, o, src.Root, s.dst.Root, head, wts); err != nil {
			return nil, nil, err
		}
	}
	if forRun {
		return p, s, nil
	}
	// What the destination will write: the paths its HEAD and the source's
	// HEAD differ in, and the source's changed paths.
	written := slices.Clone(p.Paths)
	if dstHead != head {
		srcTree, err := src.TreeOf(ctx, head)
		if err != nil {
			return nil, nil, err
		}
		names, err := s.dst.DiffTreeNames(ctx, dstTree, srcTree)
		if err != nil {
			return nil, nil, err
		}
		written = append(written, names...)
	}
	if err := refuseCollisions(ctx, src, s.dst, written, ""); err != nil {
		return nil, nil, err
	}
	return p, s, nil
}

// destination is what plan reads of the destination checkout.
type destination struct {
	head, tree string // HEAD's commit ("" unborn) and tree
	branch     string // HEAD's branch ref, "" when detached
	status     status
}

// CheckDestination refuses as a handoff into the checkout holding dir
// refuses first when that checkout is not clean, reading its status
// only: a *ConflictError localChanges with the message [MsgLocalChanges]
// naming its staged, unstaged and untracked paths. The thread layer asks
// it before refusing a handoff over another thread's work in either
// checkout, so that the person learns first what they can act on.
// Errors: gitcli.ErrNotRepo and git's.
func (h *Handoff) CheckDestination(ctx context.Context, dir string) error {
	repo, err := h.git.Discover(ctx, dir)
	if err != nil {
		return err
	}
	st, err := readStatus(ctx, repo)
	if err != nil {
		return err
	}
	return st.dirty()
}

// readDestination reads the destination's HEAD, its branch and its
// status.
func readDestination(ctx context.Context, repo *gitcli.Repo) (destination, error) {
	var d destination
	var err error
	if d.head, d.tree, err = repo.Head(ctx); err != nil {
		return d, err
	}
	if ref, ok, err := repo.SymbolicRef(ctx, "HEAD"); err != nil {
		return d, err
	} else if ok {
		d.branch = ref
	}
	d.status, err = readStatus(ctx, repo)
	return d, err
}

// collisionsOf is the collision check of a run, from the captured
// source: the destination writes every path its HEAD's tree (dstTree)
// and the worktree tree differ in; when dstTree is the source's HEAD tree
// those are the source's changed paths, p.Paths.
func collisionsOf(ctx context.Context, p *Planned, src, dst *gitcli.Repo, dstTree string, st *gitstate.State) error {
	written := p.Paths
	if dstTree != st.HeadTree {
		var err error
		if written, err = dst.DiffTreeNames(ctx, dstTree, st.WorktreeTree); err != nil {
			return err
		}
	}
	return refuseCollisions(ctx, src, dst, slices.Clone(written), st.WorktreeTree)
}

// evalPath resolves symlinks of p, or returns it cleaned.
func evalPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// operationInProgress lists the files of gitDir that say a merge, rebase,
// cherry-pick, revert or bisect is in progress (git's own markers, as
// wt-status.c reads them).
func operationInProgress(gitDir string) []string {
	var out []string
	for _, n := range []string{"MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG", "sequencer"} {
		p := filepath.Join(gitDir, n)
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// status is a checkout's `git status --porcelain=v2` as paths.
type status struct {
	tracked   []string // staged or unstaged changes (renames: both paths)
	untracked []string
	unmerged  []string
	nested    []string // untracked nested repositories, without the "/"
}

// dirty is the refusal of a destination with changes: localChanges,
// [MsgLocalChanges], the paths; nil when there is none.
func (s status) dirty() error {
	if ch := s.changed(); len(ch) > 0 {
		return &ConflictError{Reason: ReasonLocalChanges, Paths: ch, Output: MsgLocalChanges}
	}
	return nil
}

func (s status) changed() []string {
	out := append(slices.Clone(s.tracked), s.untracked...)
	out = append(out, s.unmerged...)
	slices.Sort(out)
	return slices.Compact(out)
}

// readStatus reads `status --porcelain=v2 -z --untracked-files=all`
// (read only: no optional locks, so the index is not refreshed on disk):
// untracked files are listed one by one, not as folders.
func readStatus(ctx context.Context, repo *gitcli.Repo) (status, error) {
	var s status
	out, err := repo.StatusAllV2(ctx)
	if err != nil {
		return s, err
	}
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		switch {
		case strings.HasPrefix(rec, "1 "):
			if f := strings.SplitN(rec, " ", 9); len(f) == 9 {
				s.tracked = append(s.tracked, f[8])
			}
		case strings.HasPrefix(rec, "2 "):
			if f := strings.SplitN(rec, " ", 10); len(f) == 10 {
				s.tracked = append(s.tracked, f[9])
			}
			if i+1 < len(recs) {
				i++
				s.tracked = append(s.tracked, recs[i])
			}
		case strings.HasPrefix(rec, "u "):
			if f := strings.SplitN(rec, " ", 11); len(f) == 11 {
				s.unmerged = append(s.unmerged, f[10])
			}
		case strings.HasPrefix(rec, "? ") && strings.HasSuffix(rec, "/"):
			// An untracked nested repository (git lists it as "dir/"):
			// not a change a handoff moves or one that makes a
			// checkout dirty; it stays where it is.
			s.nested = append(s.nested, strings.TrimSuffix(rec[2:], "/"))
		case strings.HasPrefix(rec, "? "):
			s.untracked = append(s.untracked, rec[2:])
		}
	}
	return s, nil
}

// refuseCollisions refuses a handoff whose destination dst holds
// untracked or ignored files where it writes (written: [collisions],
// [MsgOverwrite]) or, when written holds a .gitignore, ignored files the
// rules dst ends with no longer ignore ([unignored], [MsgUnignored];
// movedTree is the captured worktree tree of a run, "" in a plan). Both
// kinds are named when both are there, with MsgOverwrite.
func refuseCollisions(ctx context.Context, src, dst *gitcli.Repo, written []string, movedTree string) error {
	slices.Sort(written)
	written = slices.Compact(written)
	clash, err := collisions(ctx, src, dst, written)
	if err != nil {
		return err
	}
	var un []string
	if slices.ContainsFunc(written, isGitignore) {
		if un, err = unignored(ctx, src, dst, movedTree); err != nil {
			return err
		}
	}
	switch {
	case len(clash) > 0:
		all := append(clash, un...)
		slices.Sort(all)
		return conflict(ReasonLocalChanges, slices.Compact(all), "%s", MsgOverwrite)
	case len(un) > 0:
		return conflict(ReasonLocalChanges, un, "%s", MsgUnignored)
	}
	return nil
}

// collisions lists the paths (and leading folders) of written (sorted,
// without duplicates) that exist in dst's work tree without being
// tracked there: untracked or ignored files a handoff would overwrite.
// dst is clean, so what is not in its index is untracked or ignored. A
// folder that holds no file (gitstate.EmptyFolder) is never one: an
// uninitialized submodule's folder, or one such a submodule left.
func collisions(ctx context.Context, src, dst *gitcli.Repo, written []string) ([]string, error) {
	var out []string
	candidates := map[string]bool{}
	for _, p := range written {
		for d := p; d != "." && d != ""; d = pathDir(d) {
			if _, err := os.Lstat(filepath.Join(dst.Root, filepath.FromSlash(d))); err == nil {
				candidates[d] = true
			} else if !errors.Is(err, os.ErrNotExist) && !isNotDir(err) {
				return nil, err
			}
		}
	}
	if len(candidates) == 0 {
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	tracked := map[string]bool{}
	trackedDir := map[string]bool{}
	err := dst.LsFilesStage(ctx, nil, func(e gitcli.IndexEntry) error {
		tracked[e.Path] = true
		for d := pathDir(e.Path); d != "." && d != ""; d = pathDir(d) {
			if trackedDir[d] {
				break
			}
			trackedDir[d] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d := range candidates {
		full := filepath.Join(dst.Root, filepath.FromSlash(d))
		fi, err := os.Lstat(full)
		if err != nil {
			continue
		}
		if fi.IsDir() && gitstate.EmptyFolder(full) {
			// No file to lose: the write removes the folder, or keeps it
			// for a gitlink (an uninitialized submodule's folder), as git
			// does.
			continue
		}
		if fi.IsDir() {
			// A folder the handoff writes into is fine; an untracked
			// folder where a file goes is not, nor are the untracked or
			// ignored files of a tracked folder that becomes a file
			// (the source has a file there): removing its tracked files
			// leaves them in the way.
			if _, found := slices.BinarySearch(written, d); found {
				if !trackedDir[d] {
					out = append(out, d)
				} else if sfi, err := os.Lstat(filepath.Join(src.Root, filepath.FromSlash(d))); err == nil && !sfi.IsDir() {
					files, nested, err := filesIn(dst.Root, d)
					if err != nil {
						return nil, err
					}
					out = append(out, nested...)
					for _, f := range files {
						if !tracked[f] {
							out = append(out, f)
						}
					}
				}
			}
			continue
		}
		if !tracked[d] {
			out = append(out, d)
		}
	}
	for d := range candidates {
		// A written path inside an untracked nested repository would
		// land in that repository's files.
		if _, err := os.Lstat(filepath.Join(dst.Root, filepath.FromSlash(d), ".git")); err == nil && !trackedDir[d] && !tracked[d] {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// filesIn lists the files under the folder dir (repository relative) of
// the work tree at root, and apart the nested repositories in it (as
// folders), which it does not enter.
func filesIn(root, dir string) (files, nested []string, err error) {
	top := filepath.Join(root, filepath.FromSlash(dir))
	err = filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.IsDir() {
			files = append(files, rel)
		} else if path != top {
			if _, err := os.Lstat(filepath.Join(path, ".git")); err == nil {
				nested = append(nested, rel)
				return filepath.SkipDir
			}
		}
		return nil
	})
	return files, nested, err
}

// sourceCollisions refuses (MsgIgnoredInSource) a handoff whose source
// holds, at a changed path, something its capture does not: an ignored
// file where the index no longer has the tracked file (`git rm --cached`
// of an ignored name), or, where a tracked file became a folder, the
// ignored files and nested repositories inside it. Cleaning the source
// writes HEAD's file there, which would overwrite the one or fail on the
// other after the destination was written. changed are the source's
// changed paths, untracked its untracked files the capture holds.
func sourceCollisions(ctx context.Context, src *gitcli.Repo, changed, untracked []string) error {
	isUntracked := make(map[string]bool, len(untracked))
	for _, u := range untracked {
		isUntracked[u] = true
	}
	var (
		check []string // on disk, not untracked: in the index, or ignored
		out   []string
	)
	for _, p := range changed {
		abs := filepath.Join(src.Root, filepath.FromSlash(p))
		fi, err := os.Lstat(abs)
		switch {
		case errors.Is(err, os.ErrNotExist) || isNotDir(err):
			continue
		case err != nil:
			return err
		case !fi.IsDir():
			if !isUntracked[p] {
				check = append(check, p)
			}
			continue
		}
		if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
			continue // a submodule: its gitlink is what moves
		}
		// A tracked file turned into a folder: every file in it must be
		// one the capture holds.
		files, nested, err := filesIn(src.Root, p)
		if err != nil {
			return err
		}
		out = append(out, nested...)
		for _, f := range files {
			if !isUntracked[f] {
				check = append(check, f)
			}
		}
	}
	if len(check) > 0 {
		cached, err := src.LsFilesCached(ctx, check)
		if err != nil {
			return err
		}
		inIndex := make(map[string]bool, len(cached))
		for _, c := range cached {
			inIndex[c] = true
		}
		for _, c := range check {
			if !inIndex[c] {
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return conflict(ReasonLocalChanges, slices.Compact(out), "%s", MsgIgnoredInSource)
}

func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

func isNotDir(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}
