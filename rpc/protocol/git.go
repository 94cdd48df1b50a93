package protocol

// Rows of the git methods that act on the thread's checkout (spec: Method
// reference, git/*). They run per thread.
var (
	// GitStage ("git/stage") stages one hunk, one file or everything of the
	// unstaged scope.
	GitStage = clientRequest[GitStageParams, GitStageResult]("git/stage", PerThread)

	// GitUnstage ("git/unstage") unstages one hunk, one file or everything
	// of the staged scope.
	GitUnstage = clientRequest[GitUnstageParams, GitUnstageResult]("git/unstage", PerThread)
)

// GitStageParams are the params of git/stage: Path (repository-relative,
// taken literally, never a pattern) and HunkID (a hunk id or file id from a
// thread/diff/read of the unstaged scope at the same Context, default 3)
// narrow it to one file or hunk; neither means everything. Only an absent
// member widens: path or hunkId given as "" or null is invalidParams naming
// it, never everything.
type GitStageParams struct {
	ThreadID string `json:"threadId"`
	Path     string `json:"path,omitempty" jsonschema:"minLength=1"`
	HunkID   string `json:"hunkId,omitempty" jsonschema:"minLength=1"`
	Context  *int   `json:"context,omitempty"`
}

// Validate checks that context, when given, is 0..1000.
func (p GitStageParams) Validate() error { return validateContext(p.Context) }

// GitStageResult is the result of git/stage: the repository-relative paths
// whose index entry changed, sorted.
type GitStageResult struct {
	Paths []string `json:"paths"`
}

// GitUnstageParams are the params of git/unstage, as GitStageParams but the
// ids come from a read of the staged scope.
type GitUnstageParams GitStageParams

// Validate checks that context, when given, is 0..1000.
func (p GitUnstageParams) Validate() error { return validateContext(p.Context) }

// GitUnstageResult is the result of git/unstage: the repository-relative
// paths whose index entry changed, sorted.
type GitUnstageResult GitStageResult

// Rows of the git/* operations of issue 10 (spec: Method reference, git/*).
// Each acts on the thread's checkout: its worktree, or the user's checkout.
// Errors besides the ones named per row: threadNotFound, notGitRepo.
var (
	// GitStatus ("git/status") reads the checkout's branch, upstream,
	// ahead/behind, entry counts and the operation in progress; it never
	// writes the index.
	GitStatus = clientRequest[GitStatusParams, GitStatusResult]("git/status", PerThread)

	// GitOrigin ("git/origin") reads the checkout's root, the url of its
	// origin remote (else its first remote) and the branch checked out.
	GitOrigin = clientRequest[GitOriginParams, GitOriginResult]("git/origin", PerThread)

	// GitCommit ("git/commit") stages everything first unless
	// includeUnstaged is false, then commits with the message, or with one
	// the thread's model writes from the staged diff only when it is
	// absent or empty. The user's hooks run, within git.hookTimeoutSeconds
	// (default 600). While it runs the thread's other requests are not
	// held: its reads answer, and its writes (in that checkout) answer
	// turnInProgress naming git/commit; turn/interrupt of the thread stops
	// it. Errors: invalidParams with data.reason nothingToCommit, noModel
	// or emptyMessage; turnInProgress while another long git operation
	// runs in the checkout; gitConflict with data.reason concurrentChange
	// (the checkout changed between reading the diff and committing),
	// hookRejected (a hook refused; data.output is its output), timedOut
	// (the hooks' deadline passed), interrupted or operationInProgress
	// (unmerged entries); when no commit is made the staging is rolled
	// back.
	GitCommit = clientRequest[GitCommitParams, GitCommitResult]("git/commit", PerThread)

	// GitPush ("git/push") pushes the current branch with one explicit,
	// non-forcing refspec to its push remote and sets the upstream the
	// first time; it never prompts. A long operation as git/commit is, its
	// push (pre-push hook included) bounded by git.hookTimeoutSeconds.
	// Errors: invalidParams with data.reason detachedHead or noRemote;
	// gitConflict with data.reason pushRejected or hookRejected (pre-push)
	// and git's output, timedOut or interrupted; authRequired;
	// turnInProgress.
	GitPush = clientRequest[GitPushParams, GitPushResult]("git/push", PerThread)

	// GitPRCreate ("git/pr/create") runs gh pr create for the current
	// branch (pushing first when it has no upstream or is ahead), always
	// with --base: the branch the worktree's baseRef names, else the
	// remote's default branch (refs/remotes/<remote>/HEAD, else git
	// ls-remote --symref <remote> HEAD); or returns the pull request
	// already open for it. A long operation as git/commit is, gh bounded
	// by git.ghTimeoutSeconds (default 120). Errors: toolMissing without
	// gh; authRequired; invalidParams "title" (over 1024 bytes) or "body"
	// (over 65536 characters), and data.reason detachedHead, noRemote,
	// noBaseBranch or noCommonHistory (the branch shares no commit with the
	// base), each before gh runs; externalFailure toolFailed with gh's own
	// words and data.exitCode when gh fails; gitConflict timedOut or
	// interrupted (gh was stopped: the pull request may have been opened;
	// a push made first stays, and the message says so); git/push's
	// errors.
	GitPRCreate = clientRequest[GitPRCreateParams, GitPRCreateResult]("git/pr/create", PerThread)

	// GitBranches ("git/branches") lists the local branches, then the
	// remote-tracking ones, the current one marked.
	GitBranches = clientRequest[GitBranchesParams, GitBranchesResult]("git/branches", PerThread)

	// GitBranchCreate ("git/branch/create") creates a branch at HEAD and
	// switches to it ("Create branch here"; no file changes). Errors:
	// invalidParams field "name" (git check-ref-format); gitConflict
	// branchExists; turnInProgress while a turn runs in the checkout.
	GitBranchCreate = clientRequest[GitBranchCreateParams, GitBranchCreateResult]("git/branch/create", PerThread)

	// GitBranchSwitch ("git/branch/switch") switches the checkout to a
	// branch (a remote-tracking one's name creates the local branch). A
	// long operation as git/commit is (its post-checkout hook), which no
	// turn runs beside. Errors: gitConflict localChanges when it would
	// overwrite local changes or an ignored file the branch tracks
	// (data.paths); invalidParams field "name"; turnInProgress while a
	// turn or another long git operation runs in the checkout.
	GitBranchSwitch = clientRequest[GitBranchSwitchParams, GitBranchSwitchResult]("git/branch/switch", PerThread)

	// GitLog ("git/log") lists the commits since the base (the committed
	// scope), newest first.
	GitLog = clientRequest[GitLogParams, GitLogResult]("git/log", PerThread)
)

// GitStatusParams are the params of git/status.
type GitStatusParams struct {
	ThreadID string `json:"threadId"`
}

// GitStatusResult is the result of git/status: Branch (short name, absent
// when HEAD is detached), Head (HEAD's commit, absent when unborn),
// Upstream ("origin/main", absent without one), Ahead and Behind (commits
// against the upstream, 0 without one), the entry counts of git status
// (Staged: index differs from HEAD; Unstaged: work tree differs from the
// index; Untracked: files, ignored ones not counted; Conflicted: unmerged)
// and Operation, the operation in progress: "merge", "rebase",
// "cherry-pick", "revert", "bisect" or "am", absent when none.
type GitStatusResult struct {
	Branch     string `json:"branch,omitempty"`
	Head       string `json:"head,omitempty"`
	Upstream   string `json:"upstream,omitempty"`
	Ahead      int    `json:"ahead"`
	Behind     int    `json:"behind"`
	Staged     int    `json:"staged"`
	Unstaged   int    `json:"unstaged"`
	Untracked  int    `json:"untracked"`
	Conflicted int    `json:"conflicted"`
	Operation  string `json:"operation,omitempty"`
}

// GitOriginParams are the params of git/origin.
type GitOriginParams struct {
	ThreadID string `json:"threadId"`
}

// GitOriginResult is the result of git/origin: the checkout's Root
// (absolute path), the URL of its origin remote, else of its first remote
// in `git remote` order, with any password removed, and the Branch checked
// out (short name); each absent when there is none.
type GitOriginResult struct {
	Root   string `json:"root,omitempty"`
	URL    string `json:"url,omitempty"`
	Branch string `json:"branch,omitempty"`
}

// GitCommitParams are the params of git/commit: Message (absent or empty:
// the thread's model writes it from the staged diff) and IncludeUnstaged
// (default true: stage everything first, tracked and untracked files,
// ignored ones never; false commits the index as it is). Refusals are
// invalidParams with data.reason emptyMessage, nothingToCommit or
// identityUnknown (git knows no user.name/user.email; the message holds
// git's advice), or gitConflict hookRejected, timedOut, interrupted or
// concurrentChange.
type GitCommitParams struct {
	ThreadID        string `json:"threadId"`
	Message         string `json:"message,omitempty"`
	IncludeUnstaged *bool  `json:"includeUnstaged,omitempty"`
}

// GitCommitResult is the result of git/commit: the new Commit's id, the
// Branch it is on (absent on a detached HEAD) and the Message it was made
// with (the model's when it wrote it).
type GitCommitResult struct {
	Commit  string `json:"commit"`
	Branch  string `json:"branch,omitempty"`
	Message string `json:"message"`
}

// GitPushParams are the params of git/push.
type GitPushParams struct {
	ThreadID string `json:"threadId"`
}

// GitPushResult is the result of git/push: the Branch pushed, the Remote
// it went to, whether this push set the branch's upstream (SetUpstream)
// and git's report (Output).
type GitPushResult struct {
	Branch      string `json:"branch"`
	Remote      string `json:"remote"`
	SetUpstream bool   `json:"setUpstream"`
	Output      string `json:"output"`
}

// GitPRCreateParams are the params of git/pr/create: Title (at most 1024
// bytes) and Body (at most 65536 characters, GitHub's limit; it reaches gh
// on stdin), absent: from the commits since the base, as gh pr create
// --fill makes them; and Draft.
type GitPRCreateParams struct {
	ThreadID string `json:"threadId"`
	Title    string `json:"title,omitempty"`
	Body     string `json:"body,omitempty"`
	Draft    bool   `json:"draft,omitempty"`
}

// GitPRCreateResult is the result of git/pr/create: the pull request's URL
// and Number.
type GitPRCreateResult struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
}

// GitBranchesParams are the params of git/branches.
type GitBranchesParams struct {
	ThreadID string `json:"threadId"`
}

// GitBranchesResult is the result of git/branches: the local branches,
// then the remote-tracking ones, each in ref order.
type GitBranchesResult struct {
	Branches []GitBranch `json:"branches"`
}

// GitBranch is one branch of git/branches: Name is the short name ("main",
// "origin/main"), Ref the full ref, Remote marks a remote-tracking branch,
// Current the branch checked out, Commit its tip; for a local branch,
// Upstream (short name, absent without one), Ahead and Behind compare it
// with its upstream and UpstreamGone marks an upstream that no longer
// exists.
type GitBranch struct {
	Name         string `json:"name"`
	Ref          string `json:"ref"`
	Remote       bool   `json:"remote"`
	Current      bool   `json:"current"`
	Commit       string `json:"commit"`
	Upstream     string `json:"upstream,omitempty"`
	Ahead        int    `json:"ahead"`
	Behind       int    `json:"behind"`
	UpstreamGone bool   `json:"upstreamGone,omitempty"`
}

// GitBranchCreateParams are the params of git/branch/create: the new
// branch's Name (short, as for git switch -c).
type GitBranchCreateParams struct {
	ThreadID string `json:"threadId"`
	Name     string `json:"name" jsonschema:"minLength=1"`
}

// GitBranchCreateResult is the result of git/branch/create: the Branch
// now checked out.
type GitBranchCreateResult struct {
	Branch string `json:"branch"`
}

// GitBranchSwitchParams are the params of git/branch/switch: the Name of a
// local branch, or of a remote-tracking branch without its remote prefix
// (git switch's guess creates the local branch).
type GitBranchSwitchParams struct {
	ThreadID string `json:"threadId"`
	Name     string `json:"name" jsonschema:"minLength=1"`
}

// GitBranchSwitchResult is the result of git/branch/switch: the Branch now
// checked out.
type GitBranchSwitchResult struct {
	Branch string `json:"branch"`
}

// GitLogParams are the params of git/log: Limit is the most commits
// (default 50, 1..500).
type GitLogParams struct {
	ThreadID string `json:"threadId"`
	Limit    *int   `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500"`
}

// Validate checks that limit, when given, is 1..500.
func (p GitLogParams) Validate() error {
	if p.Limit != nil && (*p.Limit < 1 || *p.Limit > 500) {
		return InvalidParams("limit", "limit must be between 1 and 500, got %d", *p.Limit)
	}
	return nil
}

// GitLogResult is the result of git/log: Base is the base the commits are
// counted from (the worktree's base commit, else the default branch;
// absent when there is none or HEAD is on the base branch, and then the
// commits are the last Limit of HEAD), Commits newest first.
type GitLogResult struct {
	Base    string         `json:"base,omitempty"`
	Commits []GitLogCommit `json:"commits"`
}

// GitLogCommit is one commit of git/log: its ID, Parents' ids, Subject,
// Author and Time (the author time, Unix milliseconds).
type GitLogCommit struct {
	ID      string    `json:"id"`
	Parents []string  `json:"parents"`
	Subject string    `json:"subject"`
	Author  GitAuthor `json:"author"`
	Time    int64     `json:"time"`
}

// GitAuthor is a commit's author: Name and Email.
type GitAuthor struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// ThreadKey methods of the git/* params (threadkey.go has the others).
func (p GitStatusParams) ThreadKey() string       { return p.ThreadID }
func (p GitOriginParams) ThreadKey() string       { return p.ThreadID }
func (p GitCommitParams) ThreadKey() string       { return p.ThreadID }
func (p GitPushParams) ThreadKey() string         { return p.ThreadID }
func (p GitPRCreateParams) ThreadKey() string     { return p.ThreadID }
func (p GitBranchesParams) ThreadKey() string     { return p.ThreadID }
func (p GitBranchCreateParams) ThreadKey() string { return p.ThreadID }
func (p GitBranchSwitchParams) ThreadKey() string { return p.ThreadID }
func (p GitLogParams) ThreadKey() string          { return p.ThreadID }
