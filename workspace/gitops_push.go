package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cli/go-gh/v2"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/procgroup"
)

// PushResult is a push [Push] made: the Branch pushed, the Remote it went
// to, whether the upstream was set by it (SetUpstream), and git's
// report.
type PushResult struct {
	Branch      string
	Remote      string
	SetUpstream bool
	Output      string
}

// pushRemote is the remote a push of branch goes to, as git chooses it
// for `git push` without arguments: branch.<b>.pushRemote, then
// remote.pushDefault, then branch.<b>.remote, then "origin"
// (git-config(1)). A remote that does not exist is refused: [*ParamError]
// noRemote.
func pushRemote(ctx context.Context, repo *gitcli.Repo, branch string) (remote string, err error) {
	for _, key := range []string{"branch." + branch + ".pushRemote", "remote.pushDefault", "branch." + branch + ".remote"} {
		v, set, err := repo.ConfigGet(ctx, key)
		if err != nil {
			return "", err
		}
		if set && v != "" && v != "." {
			remote = v
			break
		}
	}
	if remote == "" {
		remote = "origin"
	}
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	if !contains(remotes, remote) {
		return "", refused(ReasonNoRemote, "no remote %q to push %s to: add one with git remote add", remote, branch)
	}
	return remote, nil
}

// headBranch is the branch HEAD names, refusing a detached HEAD
// ([*ParamError] detachedHead naming git/branch/create) and an unborn
// one ([ErrUnbornHead]).
func headBranch(ctx context.Context, repo *gitcli.Repo, what string) (string, error) {
	branch, err := currentBranch(ctx, repo)
	if err != nil {
		return "", err
	}
	if branch == "" {
		return "", refused(ReasonDetachedHead,
			"HEAD is detached: create a branch here with git/branch/create before %s", what)
	}
	if _, ok, err := repo.ResolveCommit(ctx, "refs/heads/"+branch); err != nil {
		return "", err
	} else if !ok {
		return "", ErrUnbornHead
	}
	return branch, nil
}

// Push publishes the branch checked out in checkout (spec git/push) with
// one explicit, non-forcing refspec refs/heads/<b>:refs/heads/<b> to the
// branch's push remote (pushRemote), setting the upstream
// (--set-upstream) when the branch has none (no branch.<b>.remote), with
// the user's pre-push hook, never prompting ([gitcli.Repo.Push]). Nothing
// but HEAD's branch is published. Errors: [*ParamError] detachedHead
// (the message names git/branch/create) or noRemote; [ErrUnbornHead];
// [*ConflictError] pushRejected (non-fast-forward or a remote's refusal)
// or hookRejected (pre-push), with git's output; an error matching
// [ErrAuthRequired] when credentials would have to be asked for;
// [*ConflictError] timedOut (the hooks' deadline) or interrupted (ctx
// ended: turn/interrupt), each saying the push may or may not have
// reached the remote; gitcli.ErrNotRepo, [ErrBareRepository].
func Push(ctx context.Context, git *gitcli.Runner, checkout string) (*PushResult, error) {
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	return push(ctx, repo)
}

func push(ctx context.Context, repo *gitcli.Repo) (*PushResult, error) {
	branch, err := headBranch(ctx, repo, "pushing")
	if err != nil {
		return nil, err
	}
	remote, err := pushRemote(ctx, repo, branch)
	if err != nil {
		return nil, err
	}
	_, hasUpstream, err := repo.ConfigGet(ctx, "branch."+branch+".remote")
	if err != nil {
		return nil, err
	}
	ref := "refs/heads/" + branch
	out, err := repo.Push(ctx, gitcli.PushOptions{Remote: remote, Refspec: ref + ":" + ref, SetUpstream: !hasUpstream})
	if err != nil {
		err = pushError(err, out)
		if ce, ok := errors.AsType[*ConflictError](err); ctx.Err() != nil && (!ok || ce.Reason != ReasonTimedOut) {
			return nil, &ConflictError{Reason: ReasonInterrupted, Output: fmt.Sprintf(
				"git push of %s to %s was stopped; the push may or may not have reached the remote: git/status shows whether the branch is ahead", branch, remote)}
		}
		return nil, err
	}
	return &PushResult{Branch: branch, Remote: remote, SetUpstream: !hasUpstream, Output: strings.TrimSpace(gitErrOutput(nil, out))}, nil
}

// authFailures are git's and ssh's words for credentials that could not
// be had without a prompt (C locale).
var authFailures = []string{
	"terminal prompts disabled",
	"could not read Username",
	"could not read Password",
	"Authentication failed",
	"Permission denied (publickey",
	"Permission denied, please try again",
	"Host key verification failed",
	"The requested URL returned error: 401",
	"The requested URL returned error: 403",
	"HTTP Basic: Access denied",
	"Invalid username or password",
}

// pushError maps a failed `git push --porcelain`: a rejected ref ("!"
// lines of the porcelain report, "[rejected]", "[remote rejected]") is
// pushRejected; the words of an authentication failure are
// [ErrAuthRequired]; a failure with no rejected ref and no connection
// error (exit 1, "failed to push some refs") is the pre-push hook's
// refusal, hookRejected.
func pushError(err error, stdout []byte) error {
	if errors.Is(err, gitcli.ErrLocked) {
		return lockedConflict(err)
	}
	if te := hookTimedOut(err, stdout, "git push", "the push may or may not have reached the remote: git/status shows whether the branch is ahead"); te != nil {
		return te
	}
	output := gitErrOutput(err, stdout)
	rejected := strings.Contains(output, "[rejected]") || strings.Contains(output, "[remote rejected]")
	for _, line := range strings.Split(string(stdout), "\n") {
		if strings.HasPrefix(line, "!\t") {
			rejected = true
		}
	}
	switch {
	case rejected:
		return &ConflictError{Reason: ReasonPushRejected, Output: output}
	}
	for _, w := range authFailures {
		if strings.Contains(output, w) {
			return &AuthError{Output: output}
		}
	}
	if exitCodeOf(err) == 1 && strings.Contains(output, "failed to push some refs") {
		return &ConflictError{Reason: ReasonHookRejected, Output: output}
	}
	return err
}

// PROptions shape [PRCreate]: Title (at most [MaxPRTitleBytes]) and Body
// (at most [MaxPRBodyChars]; "" means from the commits, as `gh pr create
// --fill`), Draft, BaseRef, the worktree's base as it was given (""
// for the user's checkout or a worktree based on HEAD), and GhTimeout,
// gh's deadline (the setting git.ghTimeoutSeconds; 0 means its default,
// 2 minutes).
type PROptions struct {
	Title, Body string
	Draft       bool
	BaseRef     string
	GhTimeout   time.Duration
}

// Bounds of a pull request's text (issue 22): the title goes to gh as an
// argument, so it is bounded well below the system's argument limit; the
// body goes on gh's stdin (--body-file -) and is bounded by GitHub's own
// limit on a pull request body, in characters.
const (
	MaxPRTitleBytes = 1024
	MaxPRBodyChars  = 65536
)

// MaxToolOutput bounds the output a [*ToolError] carries, in bytes.
const MaxToolOutput = 4096

// ToolError is an external tool that ran and failed: Command is what ran
// ("gh pr create"), Tool the program ("gh"), ExitCode its exit code (0
// for a run that printed no result), Output its own words (stderr, else
// stdout), trimmed and bounded to [MaxToolOutput] bytes. rpc maps it to
// externalFailure with data {reason: "toolFailed", tool, exitCode,
// output}.
type ToolError struct {
	Command  string
	Tool     string
	ExitCode int
	Output   string
}

func (e *ToolError) Error() string {
	if e.Output == "" {
		return fmt.Sprintf("%s failed (exit code %d)", e.Command, e.ExitCode)
	}
	return fmt.Sprintf("%s failed (exit code %d): %s", e.Command, e.ExitCode, e.Output)
}

// toolError is a [*ToolError] of command ("gh pr create": its first word
// is the tool) with the first of outputs that is not blank, bounded.
func toolError(command string, code int, outputs ...string) *ToolError {
	tool, _, _ := strings.Cut(command, " ")
	e := &ToolError{Command: command, Tool: tool, ExitCode: code}
	for _, o := range outputs {
		if o = strings.TrimSpace(o); o != "" {
			e.Output = boundOutput(o)
			break
		}
	}
	return e
}

// boundOutput keeps the first [MaxToolOutput] bytes of s (cut at a
// character's start) and says how many were left out.
func boundOutput(s string) string {
	if len(s) <= MaxToolOutput {
		return s
	}
	n := MaxToolOutput
	for n > MaxToolOutput-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[... %d more bytes]", len(s)-n)
}

// PullRequest is a pull request [PRCreate] made or found: its URL and
// Number, and Existing when it was already open for the branch.
type PullRequest struct {
	URL      string
	Number   int
	Existing bool
}

// defaultGhTimeout bounds a gh call when PROptions.GhTimeout is 0 (the
// default of the setting git.ghTimeoutSeconds).
const defaultGhTimeout = 2 * time.Minute

// PRCreate opens a pull request for the branch checked out in checkout
// (spec git/pr/create) with `gh pr create`, gh found by go-gh (gh.Path:
// GH_PATH, else PATH) and run in checkout, non-interactive
// (GH_PROMPT_DISABLED, no tty), with explicit --head (owner:branch when
// the push remote is another owner's repository than the base
// repository), --base (always: [prBase]), --title and the body on stdin
// (--body-file -); a missing title or body is --fill's (from the
// commits). The base repository is the remote "upstream", else
// "origin", else the push remote; --repo names it when it parses as
// host/owner/name. Before anything is pushed or gh runs, a branch with no
// history in common with the base (its commit known locally) is refused.
// It pushes first ([Push]) when the branch has no upstream or is ahead of
// it. When a pull request for the branch exists it is returned (Existing)
// instead of failing. Errors: [*ParamError] for a title over
// [MaxPRTitleBytes] ("title") or a body over [MaxPRBodyChars] ("body"),
// detachedHead, noRemote, noBaseBranch (the base remote names no default
// branch and the worktree's base is no branch) or noCommonHistory (naming
// the branch and the base), all before gh runs; [ErrToolMissing]; an
// error matching [ErrAuthRequired] (gh's exit code 4, or git's when the
// remote is asked for its HEAD or pushed to); [Push]'s errors;
// [*ConflictError] timedOut when gh ran past o.GhTimeout, interrupted when
// ctx ended (turn/interrupt) while it ran: gh is stopped, and the error
// says the pull request may have been opened and that the branch was
// pushed first when it was (the push is not undone); a push stopped
// either way is the same reasons, saying gh did not run; [*ToolError]
// for any other gh failure, with gh's own words, or when `git ls-remote`
// cannot read the base remote.
func PRCreate(ctx context.Context, git *gitcli.Runner, checkout string, o PROptions) (*PullRequest, error) {
	if len(o.Title) > MaxPRTitleBytes {
		return nil, paramErr("title", "is %d bytes long; at most %d", len(o.Title), MaxPRTitleBytes)
	}
	if n := utf8.RuneCountInString(o.Body); n > MaxPRBodyChars {
		return nil, paramErr("body", "is %d characters long; GitHub takes at most %d", n, MaxPRBodyChars)
	}
	repo, err := openCheckout(ctx, git, checkout)
	if err != nil {
		return nil, err
	}
	branch, err := headBranch(ctx, repo, "opening a pull request")
	if err != nil {
		return nil, err
	}
	ghPath, err := FindGh()
	if err != nil {
		return nil, err
	}
	remote, err := pushRemote(ctx, repo, branch)
	if err != nil {
		return nil, err
	}
	args, err := prArgs(ctx, repo, branch, remote, o)
	if err != nil {
		return nil, err
	}
	out, err := repo.StatusBranch(ctx)
	if err != nil {
		return nil, err
	}
	pushed := "" // what was done before gh ran, for an error that stops it
	if st := gitcli.ParseStatusBranch(out); st.Upstream == "" || st.Ahead > 0 {
		res, err := push(ctx, repo)
		if ce, ok := errors.AsType[*ConflictError](err); ok && (ce.Reason == ReasonInterrupted || ce.Reason == ReasonTimedOut) {
			return nil, &ConflictError{Reason: ce.Reason, Output: ce.Output + "; gh did not run: no pull request was opened"}
		}
		if err != nil {
			return nil, err
		}
		pushed = fmt.Sprintf("pushed the branch %s to %s first (it stays pushed); ", res.Branch, res.Remote)
	}
	timeout := o.GhTimeout
	if timeout <= 0 {
		timeout = defaultGhTimeout
	}
	stdout, stderr, code, err := runGh(ctx, ghPath, checkout, o.Body, args, timeout)
	if ce, ok := errors.AsType[*ConflictError](err); ok {
		return nil, &ConflictError{Reason: ce.Reason, Output: pushed + ce.Output}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case code == 0:
		if pr := prFromText(stdout); pr != nil {
			return pr, nil
		}
		return nil, toolError("gh pr create", 0, stderr, stdout)
	case code == 4:
		return nil, &AuthError{Output: strings.TrimSpace(stderr)}
	case strings.Contains(stderr, "already exists"):
		if pr := prFromText(stderr); pr != nil {
			pr.Existing = true
			return pr, nil
		}
	}
	return nil, toolError("gh pr create", code, stderr, stdout)
}

// FindGh finds the gh CLI as go-gh does (gh.Path: GH_PATH, else gh on
// PATH). Errors: [ErrToolMissing] when there is none.
func FindGh() (string, error) {
	p, err := gh.Path()
	if err != nil || p == "" {
		return "", fmt.Errorf("%w: %v", ErrToolMissing, err)
	}
	return p, nil
}

// prArgs builds gh pr create's arguments.
func prArgs(ctx context.Context, repo *gitcli.Repo, branch, pushRemote string, o PROptions) ([]string, error) {
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	baseRemote := pushRemote
	for _, r := range []string{"upstream", "origin"} {
		if contains(remotes, r) {
			baseRemote = r
			break
		}
	}
	pushRepo, err := remoteRepo(ctx, repo, pushRemote)
	if err != nil {
		return nil, err
	}
	baseRepo, err := remoteRepo(ctx, repo, baseRemote)
	if err != nil {
		return nil, err
	}
	args := []string{"pr", "create"}
	head := branch
	if baseRepo != nil {
		args = append(args, "--repo", baseRepo.Host+"/"+baseRepo.Owner+"/"+baseRepo.Name)
		if pushRepo != nil && (!strings.EqualFold(pushRepo.Owner, baseRepo.Owner) || !strings.EqualFold(pushRepo.Host, baseRepo.Host)) {
			head = pushRepo.Owner + ":" + branch
		}
	}
	args = append(args, "--head", head)
	base, err := prBase(ctx, repo, o.BaseRef, pushRemote, baseRemote)
	if err != nil {
		return nil, err
	}
	if base.commit != "" {
		if _, ok, err := repo.MergeBase(ctx, base.commit, "HEAD"); err != nil {
			return nil, err
		} else if !ok {
			return nil, refused(ReasonNoCommonHistory,
				"%s has no history in common with the base %s/%s: a pull request needs a branch made from the base; rebase %s onto %s/%s, or create the branch from it",
				branch, baseRemote, base.branch, branch, baseRemote, base.branch)
		}
	}
	args = append(args, "--base", base.branch)
	if o.Title == "" || o.Body == "" {
		args = append(args, "--fill")
	}
	if o.Title != "" {
		args = append(args, "--title", o.Title)
	}
	if o.Body != "" {
		args = append(args, "--body-file", "-")
	}
	if o.Draft {
		args = append(args, "--draft")
	}
	return args, nil
}

// remoteRepo parses the configured URL of remote (remote.<r>.url as
// written, before url.<base>.insteadOf), nil when it names no
// host/owner/name.
func remoteRepo(ctx context.Context, repo *gitcli.Repo, remote string) (*RemoteRepo, error) {
	raw, set, err := repo.ConfigGet(ctx, "remote."+remote+".url")
	if err != nil || !set {
		return nil, err
	}
	return ParseRemoteURL(raw), nil
}

// prTarget is a pull request's base: its branch name on the base
// repository and, when known locally, its commit.
type prTarget struct {
	branch, commit string
}

// prBase finds the pull request's base branch, which gh is always given
// (issue 22; gh without --base asks GitHub, and a stale guess opens the
// request against the wrong branch): the branch the worktree's baseRef
// names (refs/heads/x, x, refs/remotes/<r>/x, <r>/x: the branch the person
// chose to work from), else the base remote's default branch as git
// learns it: refs/remotes/<r>/HEAD of the base remote, then of the push
// remote, else the branch `git ls-remote --symref <base remote> HEAD`
// names (what `git remote set-head --auto` and `git clone` ask). Its
// commit is the base remote's remote-tracking branch, else the push
// remote's, else the commit ls-remote reported when it is in the
// repository, else the local branch; "" when none is known. Errors:
// [*ParamError] noBaseBranch when the remote names no branch; an error
// matching [ErrAuthRequired] when the remote wants credentials;
// [*ToolError] (tool git) when ls-remote fails otherwise.
func prBase(ctx context.Context, repo *gitcli.Repo, baseRef, pushRemote, baseRemote string) (prTarget, error) {
	var t prTarget
	lsCommit := ""
	if b, err := baseRefBranch(ctx, repo, baseRef); err != nil {
		return t, err
	} else if b != "" {
		t.branch = b
	}
	for _, r := range []string{baseRemote, pushRemote} {
		if t.branch != "" {
			break
		}
		ref, ok, err := repo.SymbolicRef(ctx, "refs/remotes/"+r+"/HEAD")
		if err != nil {
			return t, err
		}
		if ok {
			t.branch = strings.TrimPrefix(ref, "refs/remotes/"+r+"/")
		}
	}
	if t.branch == "" {
		h, err := repo.LsRemoteHead(ctx, baseRemote)
		if err != nil {
			return t, lsRemoteError(err, baseRemote)
		}
		if h.Branch == "" {
			return t, refused(ReasonNoBaseBranch,
				"the remote %s names no default branch (git ls-remote --symref %s HEAD): push the base branch to it, or start the thread's worktree from a branch", baseRemote, baseRemote)
		}
		t.branch, lsCommit = h.Branch, h.Commit
	}
	for _, rev := range []string{"refs/remotes/" + baseRemote + "/" + t.branch, "refs/remotes/" + pushRemote + "/" + t.branch, lsCommit, "refs/heads/" + t.branch} {
		if rev == "" {
			continue
		}
		id, ok, err := repo.ResolveCommit(ctx, rev)
		if err != nil {
			return t, err
		}
		if ok {
			t.commit = id
			break
		}
	}
	return t, nil
}

// baseRefBranch is the branch a worktree's baseRef names (x of
// refs/heads/x, x, refs/remotes/<r>/x or <r>/x when that ref exists), ""
// when it names none (a commit, a tag, or nothing).
func baseRefBranch(ctx context.Context, repo *gitcli.Repo, baseRef string) (string, error) {
	if baseRef == "" {
		return "", nil
	}
	remotes, err := repo.Remotes(ctx)
	if err != nil {
		return "", err
	}
	name := strings.TrimPrefix(baseRef, "refs/")
	if b, ok := strings.CutPrefix(name, "heads/"); ok {
		return b, nil
	}
	name = strings.TrimPrefix(name, "remotes/")
	for _, r := range remotes {
		if b, ok := strings.CutPrefix(name, r+"/"); ok {
			if _, ok, err := repo.VerifyRef(ctx, "refs/remotes/"+r+"/"+b); err != nil {
				return "", err
			} else if ok {
				return b, nil
			}
		}
	}
	if _, ok, err := repo.VerifyRef(ctx, "refs/heads/"+baseRef); err != nil {
		return "", err
	} else if ok {
		return baseRef, nil
	}
	return "", nil
}

// lsRemoteError maps a failed `git ls-remote` of remote: the words of an
// authentication failure are [ErrAuthRequired]; anything else git said is
// a [*ToolError] with its stderr.
func lsRemoteError(err error, remote string) error {
	ge, ok := errors.AsType[*gitcli.Error](err)
	if !ok {
		return err
	}
	for _, w := range authFailures {
		if strings.Contains(ge.Stderr, w) {
			return &AuthError{Output: strings.TrimSpace(ge.Stderr)}
		}
	}
	return toolError("git ls-remote "+remote, ge.ExitCode, ge.Stderr)
}

// ghTimedOut is the cause of a gh call stopped at its deadline.
var ghTimedOut = errors.New("gh ran past its deadline")

// runGh runs gh with args in dir, body on stdin, without a terminal or a
// prompt, stopping it after timeout; code is gh's exit code. err is a
// failure to run it at all, [*ConflictError] timedOut past timeout or
// interrupted when ctx ended (gh is killed with its process group either
// way).
func runGh(ctx context.Context, ghPath, dir, body string, args []string, timeout time.Duration) (stdout, stderr string, code int, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ghTimedOut)
	defer cancel()
	cmd := exec.CommandContext(ctx, ghPath, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(body)
	cmd.Env = append(ghEnv(os.Environ()), "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "GH_SPINNER_DISABLED=1",
		"NO_COLOR=1", "CLICOLOR=0", "GIT_TERMINAL_PROMPT=0", "GH_PAGER=cat")
	procgroup.Setup(cmd) // a cancel kills gh and its helpers (git, ssh) together
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	if runErr != nil {
		var ee *exec.ExitError
		if errors.Is(context.Cause(ctx), ghTimedOut) {
			out := fmt.Sprintf("gh %s ran past its deadline of %v (setting git.ghTimeoutSeconds) and was stopped; the pull request may have been opened: look for it before trying again",
				strings.Join(args[:min(2, len(args))], " "), timeout)
			if e := strings.TrimSpace(errb.String()); e != "" {
				out += "\n" + e
			}
			return "", "", -1, &ConflictError{Reason: ReasonTimedOut, Output: out}
		}
		if ctx.Err() != nil {
			return "", "", -1, &ConflictError{Reason: ReasonInterrupted, Output: fmt.Sprintf(
				"gh %s was stopped; the pull request may have been opened: look for it before trying again", strings.Join(args[:min(2, len(args))], " "))}
		}
		if !errors.As(runErr, &ee) {
			return "", "", -1, fmt.Errorf("workspace: running gh: %w: %s", runErr, strings.TrimSpace(errb.String()))
		}
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, nil
}

// ghEnv is environ without the variables that would point gh's own git
// calls at another repository than the checkout's.
func ghEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX", "GIT_NAMESPACE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT":
			continue
		}
		out = append(out, kv)
	}
	return out
}

var prURLRe = regexp.MustCompile(`https?://\S+/pull/(\d+)`)

// prFromText finds the last pull request URL in gh's output.
func prFromText(s string) *PullRequest {
	all := prURLRe.FindAllStringSubmatch(s, -1)
	if len(all) == 0 {
		return nil
	}
	m := all[len(all)-1]
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return nil
	}
	return &PullRequest{URL: m[0], Number: n}
}
