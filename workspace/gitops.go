package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/cli/go-gh/v2/pkg/repository"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file and gitops_*.go are the operations behind the spec's git/*
// methods (status, origin, commit, push, pr/create, branches,
// branch/create, branch/switch, log) as functions over a checkout path:
// the thread's worktree or the user's checkout. They return plain Go
// values and typed errors; rpc translates (issue 10).

// Conflict reasons of the git/* operations (gitConflict data.reason), in
// addition to [ReasonLocalChanges].
const (
	// ReasonPushRejected: the remote refused the push (non-fast-forward,
	// or a remote rule: "[rejected]", "[remote rejected]"); Output is
	// git's.
	ReasonPushRejected = coreerr.ReasonPushRejected
	// ReasonHookRejected: one of the user's hooks (pre-commit,
	// commit-msg, pre-push, ...) refused; Output is its output.
	ReasonHookRejected = coreerr.ReasonHookRejected
	// ReasonBranchExists: git/branch/create named a branch that exists.
	ReasonBranchExists = coreerr.ReasonBranchExists
	// ReasonConcurrentChange: the checkout changed between the read a
	// caller acted on and the action (or another git process holds a lock).
	ReasonConcurrentChange = coreerr.ReasonConcurrentChange
	// ReasonOperationInProgress: the index holds unmerged entries of a
	// merge, rebase, cherry-pick or revert, so no commit can be written.
	ReasonOperationInProgress = coreerr.ReasonOperationInProgress
	// ReasonTimedOut: a user's hook or gh ran past its deadline and was
	// stopped; Output names the setting and what was undone.
	ReasonTimedOut = coreerr.ReasonTimedOut
	// ReasonInterrupted: the operation was stopped by its context's end
	// (turn/interrupt) after git had done its part; Output says what was
	// done (a switch made, a commit recorded) and what was stopped (a
	// hook that runs after it).
	ReasonInterrupted = coreerr.ReasonInterrupted
)

// Reasons of the git/* refusals ([ParamError].Reason: invalidParams
// data.reason).
const (
	// ReasonDetachedHead: push or PR creation on a detached HEAD.
	ReasonDetachedHead = coreerr.ReasonDetachedHead
	// ReasonNothingToCommit: the commit would record no change.
	ReasonNothingToCommit = coreerr.ReasonNothingToCommit
	// ReasonEmptyMessage: no commit message (the model's answer was
	// empty once cleaned, or the given message is blank).
	ReasonEmptyMessage = coreerr.ReasonEmptyMessage
	// ReasonNoRemote: push or PR creation with no remote to push to.
	ReasonNoRemote = coreerr.ReasonNoRemote
	// ReasonIdentityUnknown: git/commit where git knows no author or
	// committer; the message holds git's own words.
	ReasonIdentityUnknown = coreerr.ReasonIdentityUnknown
	// ReasonNoBaseBranch: PR creation where the base remote names no
	// default branch (git ls-remote --symref) and the worktree's base is
	// no branch.
	ReasonNoBaseBranch = coreerr.ReasonNoBaseBranch
	// ReasonNoCommonHistory: PR creation from a branch with no history in
	// common with the base; the message names both.
	ReasonNoCommonHistory = coreerr.ReasonNoCommonHistory
)

// Sentinel errors of the git/* operations (compare with errors.Is).
var (
	// ErrAuthRequired: the remote asked for credentials that are not
	// available without a prompt (HTTP 401/403, ssh publickey, gh's exit
	// code 4). rpc maps it to authRequired. The error's text carries the
	// tool's output ([*AuthError]).
	ErrAuthRequired = errors.New("workspace: authentication required")
	// ErrToolMissing: the gh CLI was not found (go-gh's gh.Path: GH_PATH,
	// then PATH). rpc maps it to toolMissing.
	ErrToolMissing = errors.New("workspace: the gh CLI is not installed")
)

// AuthError is an authentication failure with the tool's Output; it
// matches [ErrAuthRequired].
type AuthError struct {
	Output string
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%v: %s", ErrAuthRequired, e.Output)
}

func (e *AuthError) Unwrap() error { return ErrAuthRequired }

// refused returns a [*ParamError] for a request refused because of the
// checkout's state (the refusal Reason* constants), naming no parameter:
// every parameter was fine. The message says what to do instead. rpc maps
// it to invalidParams with data.reason and no data.field.
func refused(reason, format string, args ...any) *ParamError {
	return coreerr.Refusal(reason, format, args...)
}

// emptyMessage refuses a commit without a message (reason emptyMessage),
// naming the message parameter: giving one is what makes it pass.
func emptyMessage(msg string) *ParamError {
	return coreerr.ParamReason("message", ReasonEmptyMessage, "%s", msg)
}

// gitErrOutput is git's stderr (and, when given, its stdout) of a failed
// call.
func gitErrOutput(err error, stdout []byte) string {
	var parts []string
	if s := strings.TrimSpace(string(stdout)); s != "" {
		parts = append(parts, s)
	}
	if ge, ok := errors.AsType[*gitcli.Error](err); ok && ge.Stderr != "" {
		parts = append(parts, ge.Stderr)
	}
	return strings.Join(parts, "\n")
}

// hookTimedOut is [ReasonTimedOut] for a git call (what: "git commit")
// stopped at the user's hooks' deadline (a *gitcli.TimeoutError of a call
// with hooks), with undone saying what was left as it was and the hooks'
// output so far; nil when err is something else.
func hookTimedOut(err error, stdout []byte, what, undone string) error {
	te, ok := errors.AsType[*gitcli.TimeoutError](err)
	if !ok || !te.Hooks {
		return nil
	}
	out := fmt.Sprintf("%s, which runs the user's hooks, ran past their deadline of %v (setting git.hookTimeoutSeconds) and was stopped; %s", what, te.Timeout, undone)
	if hooks := gitErrOutput(err, stdout); hooks != "" {
		out += "\n" + hooks
	}
	return &ConflictError{Reason: ReasonTimedOut, Output: out}
}

// afterHookStopped is the error of a git call that did its part (a
// commit recorded, a branch switched: done says which) and then failed
// while running a hook that comes after it (post-commit, post-checkout;
// what names the call): [*ConflictError] timedOut when the hook ran past
// its deadline, interrupted when ctx ended (turn/interrupt), each saying
// what was done; nil for any other failure (git ignores those hooks'
// exit codes, and so does the caller).
func afterHookStopped(ctx context.Context, err error, stdout []byte, what, done string) error {
	if te := hookTimedOut(err, stdout, what, done+"; it is not undone"); te != nil {
		return te
	}
	if ctx.Err() != nil {
		return &ConflictError{Reason: ReasonInterrupted, Output: done + "; only the hook that runs after it was stopped"}
	}
	return nil
}

// lockedConflict turns a lock another git process holds into
// concurrentChange; other errors are returned as they are.
func lockedConflict(err error) error {
	if err == nil || !errors.Is(err, gitcli.ErrLocked) {
		return err
	}
	return &ConflictError{Reason: ReasonConcurrentChange, Output: gitErrOutput(err, nil)}
}

// openCheckout discovers the repository of checkout, refusing a bare one.
func openCheckout(ctx context.Context, git *gitcli.Runner, checkout string) (*gitcli.Repo, error) {
	repo, err := git.Discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	if repo.Bare || repo.Root == "" {
		return nil, ErrBareRepository
	}
	return repo, nil
}

// Operations in progress reported by [Status] (git's names).
const (
	OpMerge      = "merge"
	OpRebase     = "rebase"
	OpCherryPick = "cherry-pick"
	OpRevert     = "revert"
	OpBisect     = "bisect"
	OpAm         = "am"
)

// GitStatus is git/status's answer. Branch is "" when HEAD is detached;
// Upstream ("origin/main") is "" when the branch has none; Ahead and
// Behind count commits against the upstream (0 without one); the counts
// are entries of `git status`: Staged (index differs from HEAD),
// Unstaged (work tree differs from the index), Untracked (files, ignored
// ones not counted) and Conflicted (unmerged); Operation is one of the
// Op* constants or "" (none). Head is HEAD's commit ("" when unborn).
type GitStatus struct {
	Branch                                  string
	Head                                    string
	Upstream                                string
	Ahead, Behind                           int
	Staged, Unstaged, Untracked, Conflicted int
	Operation                               string
}

// Status reads the checkout's state with one `git status --porcelain=v2
// --branch -z` (GIT_OPTIONAL_LOCKS=0: it never writes the index) and
// the operation in progress from the git dir's state files
// ([OperationInProgress]). Errors: gitcli.ErrNotRepo, [ErrBareRepository].
func Status(ctx context.Context, git *gitcli.Runner, checkout string) (*GitStatus, error) {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	out, err := repo.StatusBranch(ctx)
	if err != nil {
		return nil, err
	}
	s := gitcli.ParseStatusBranch(out)
	return &GitStatus{
		Branch: s.Head, Head: s.OID, Upstream: s.Upstream, Ahead: s.Ahead, Behind: s.Behind,
		Staged: s.Staged, Unstaged: s.Unstaged, Untracked: s.Untracked, Conflicted: s.Conflicted,
		Operation: OperationInProgress(repo.GitDir),
	}, nil
}

// OperationInProgress reports the operation git has in progress in the
// worktree whose git dir is gitDir, from its state files, as git status
// reads them (wt-status.c, wt_status_get_state): rebase-merge/ or
// rebase-apply/ (with rebase-apply/applying: am), MERGE_HEAD,
// CHERRY_PICK_HEAD, REVERT_HEAD, a sequencer/todo of picks or reverts,
// BISECT_LOG. "" means none.
func OperationInProgress(gitDir string) string {
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(gitDir, name))
		return err == nil
	}
	switch {
	case exists("rebase-merge"):
		return OpRebase
	case exists("rebase-apply"):
		if exists(filepath.Join("rebase-apply", "applying")) {
			return OpAm
		}
		return OpRebase
	case exists("MERGE_HEAD"):
		return OpMerge
	case exists("CHERRY_PICK_HEAD"):
		return OpCherryPick
	case exists("REVERT_HEAD"):
		return OpRevert
	}
	if todo, err := os.ReadFile(filepath.Join(gitDir, "sequencer", "todo")); err == nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(todo)), " ")
		switch first {
		case "pick", "p":
			return OpCherryPick
		case "revert":
			return OpRevert
		}
	}
	if exists("BISECT_LOG") {
		return OpBisect
	}
	return ""
}

// GitOrigin is git/origin's answer: the checkout's Root, the URL of its
// origin remote (else of its first remote in `git remote` order) with
// any password removed, the Remote's name, and the Branch checked out;
// each "" when there is none. Repo is the URL parsed as a GitHub-style
// host/owner/name (go-gh's repository parsing), nil when it is not one
// (a file path, a URL with a deeper path).
type GitOrigin struct {
	Root   string
	Remote string
	URL    string
	Branch string
	Repo   *RemoteRepo
}

// RemoteRepo is a remote URL's host, owner and repository name.
type RemoteRepo struct {
	Host, Owner, Name string
}

// Origin reads the checkout's root, remote and branch. Errors:
// gitcli.ErrNotRepo, [ErrBareRepository].
func Origin(ctx context.Context, git *gitcli.Runner, checkout string) (*GitOrigin, error) {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	o := &GitOrigin{Root: repo.Root}
	if o.Branch, err = currentBranch(ctx, repo); err != nil {
		return nil, err
	}
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case len(remotes) == 0:
		return o, nil
	case contains(remotes, "origin"):
		o.Remote = "origin"
	default:
		o.Remote = remotes[0]
	}
	raw, err := repo.RemoteGetURL(ctx, o.Remote)
	if err != nil {
		return nil, err
	}
	o.URL = RedactURL(raw)
	o.Repo = ParseRemoteURL(raw)
	return o, nil
}

// currentBranch is the short name of the branch HEAD names ("" when
// detached).
func currentBranch(ctx context.Context, repo *gitcli.Repo) (string, error) {
	ref, ok, err := repo.SymbolicRef(ctx, "HEAD")
	if err != nil || !ok {
		return "", err
	}
	return strings.TrimPrefix(ref, "refs/heads/"), nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// RedactURL removes the password of a URL with a scheme
// ("https://user:token@host/x" -> "https://user@host/x"); other forms
// (scp-like "git@host:x", paths) carry none and are returned as they are.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	u.User = url.User(u.User.Username())
	return u.String()
}

// ParseRemoteURL parses a remote URL (https, ssh, git, scp-like
// "user@host:owner/name.git") into host, owner and name with go-gh's
// repository parsing; nil when it names no host/owner/name (a file URL or
// path, a deeper path).
func ParseRemoteURL(raw string) *RemoteRepo {
	s := raw
	if !strings.Contains(s, "://") {
		// scp-like: "[user@]host:path" with the colon before any slash;
		// go-gh reads it as ssh://[user@]host/path.
		colon, slash := strings.IndexByte(s, ':'), strings.IndexByte(s, '/')
		if colon <= 0 || (slash >= 0 && slash < colon) {
			return nil
		}
		s = "ssh://" + s[:colon] + "/" + s[colon+1:]
	}
	if strings.HasPrefix(s, "file:") {
		return nil
	}
	r, err := repository.ParseWithHost(s, "")
	if err != nil || r.Host == "" || r.Owner == "" || r.Name == "" {
		return nil
	}
	return &RemoteRepo{Host: r.Host, Owner: r.Owner, Name: r.Name}
}
