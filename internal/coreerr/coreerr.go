// Package coreerr is the error vocabulary every core package (diffscope,
// workspace, gitstate, config, handoff, threads) returns for the two kinds of
// failure a client can act on: a parameter that is wrong ([ParamError], wire
// code invalidParams naming the field) and a repository that is not in the
// state the action needs ([ConflictError], wire code gitConflict with
// data.reason). Package rpc maps both in its one error table (rpc/errmap.go);
// conditions that are not about a parameter or a conflict stay sentinels of
// their own package (gitcli.ErrNotRepo, workspace.ErrUnbornHead, ...).
//
// It is a leaf: it imports only the standard library and knows nothing of
// JSON-RPC, git or threads.
package coreerr

import (
	"fmt"
	"strings"
)

// Conflict reasons: the values of [ConflictError.Reason], sent as
// gitConflict data.reason (spec: "Workspaces, diffs and git", the method
// reference for thread/diff/revert, git/*, thread/handoff and the worktree
// methods).
const (
	// ReasonDiffChanged: a hunk id or file id is not in the diff read again
	// at the same scope and context, or a lastTurn file is no longer as the
	// turn left (or found) it. The client reads the diff again.
	ReasonDiffChanged = "diffChanged"
	// ReasonPatchFailed: git refused the patch built from the read, or the
	// action would change paths it does not name (a file/folder clash).
	ReasonPatchFailed = "patchFailed"
	// ReasonConcurrentChange: another git process holds the index or a ref
	// (its lock file exists), or the checkout changed between the read and
	// the write, so the action changed nothing and can be tried again.
	ReasonConcurrentChange = "concurrentChange"
	// ReasonWorktreeInUse: a thread is loaded in the worktree, git has it
	// locked, or another registration occupies its path.
	ReasonWorktreeInUse = "worktreeInUse"
	// ReasonSubmodules: the worktree holds a nested repository, or a
	// snapshot to restore contains gitlinks whose contents cannot be
	// restored.
	ReasonSubmodules = "submodules"
	// ReasonWorktreeMissing: the worktree was deleted without a snapshot (or
	// its snapshot ref is gone), or its directory exists but git no longer
	// has it registered.
	ReasonWorktreeMissing = "worktreeMissing"
	// ReasonWorktreeDeleted: the worktree is already deleted.
	ReasonWorktreeDeleted = "worktreeDeleted"
	// ReasonLocalChanges: the destination holds changes or files the action
	// would overwrite (Paths lists them).
	ReasonLocalChanges = "localChanges"
	// ReasonRecoveryRequired: an action stopped part-way and left something
	// the user must deal with; the error's data says what and how.
	ReasonRecoveryRequired = "recoveryRequired"
	// ReasonPushRejected: the remote refused a push (non-fast-forward, or
	// a remote rule); Output is git's.
	ReasonPushRejected = "pushRejected"
	// ReasonHookRejected: one of the user's hooks (pre-commit, commit-msg,
	// pre-push, ...) refused; Output is its output.
	ReasonHookRejected = "hookRejected"
	// ReasonBranchExists: a branch to create exists already.
	ReasonBranchExists = "branchExists"
	// ReasonOperationInProgress: the index holds unmerged entries of a
	// merge, rebase, cherry-pick or revert, so no commit can be written.
	ReasonOperationInProgress = "operationInProgress"
	// ReasonTimedOut: a child process of the action (one of the user's
	// hooks, gh) ran past its deadline (the settings git.hookTimeoutSeconds
	// and git.ghTimeoutSeconds) and was stopped; Output says which, and
	// what was undone (issue 22).
	ReasonTimedOut = "timedOut"
	// ReasonInterrupted: turn/interrupt of the thread stopped the action
	// (its hooks or gh) before it finished; what it had changed was undone
	// as for a refusal (issue 22).
	ReasonInterrupted = "interrupted"
)

// Parameter reasons: the values of [ParamError.Reason], sent as
// invalidParams data.reason where a client can act on the cause. Most are
// about the state of the repository or the project, not a parameter: such
// a refusal names no field ([Refusal]).
const (
	// ReasonUntrusted: the project is not trusted (config/write to a
	// project file, resources of an untrusted project, environment scripts).
	ReasonUntrusted = "untrusted"
	// ReasonDetachedHead: push or PR creation on a detached HEAD.
	ReasonDetachedHead = "detachedHead"
	// ReasonNothingToCommit: the commit would record no change.
	ReasonNothingToCommit = "nothingToCommit"
	// ReasonEmptyMessage: no commit message (blank once cleaned).
	ReasonEmptyMessage = "emptyMessage"
	// ReasonNoRemote: push or PR creation with no remote to push to.
	ReasonNoRemote = "noRemote"
	// ReasonIdentityUnknown: git/commit where git knows no author or
	// committer (user.name and user.email unset).
	ReasonIdentityUnknown = "identityUnknown"
	// ReasonNoBaseBranch: PR creation where the base remote names no
	// default branch and the worktree's base is no branch.
	ReasonNoBaseBranch = "noBaseBranch"
	// ReasonNoCommonHistory: PR creation from a branch that has no commit
	// in common with the base branch; the message names both.
	ReasonNoCommonHistory = "noCommonHistory"
	// ReasonUnbornHead: the repository has no commit yet (a worktree, a
	// snapshot or an archive needs one).
	ReasonUnbornHead = "unbornHead"
	// ReasonBareRepository: the repository has no working tree.
	ReasonBareRepository = "bareRepository"
	// ReasonNotDeleted: a worktree to restore is not deleted.
	ReasonNotDeleted = "notDeleted"
	// ReasonNoTurn: the thread has no finished turn (a lastTurn revert).
	ReasonNoTurn = "noTurn"
	// ReasonNoHistory: the thread has no message yet (a fork, a handoff).
	ReasonNoHistory = "noHistory"
	// ReasonProjectAuth: mcp/add of an entry with auth (or oauth) to a
	// project file; sign-in settings are read only from the global file.
	ReasonProjectAuth = "projectAuth"
	// ReasonUnsupported: a key knightcode knows and does not support
	// (mcp/add's headersHelper).
	ReasonUnsupported = "unsupported"
	// ReasonIncomplete: an mcp/add entry with neither command nor url that
	// is no project override of a global server.
	ReasonIncomplete = "incomplete"
	// ReasonAmbiguous: a plugin name that matches several installed
	// plugins of the scope (Candidates lists their identities).
	ReasonAmbiguous = "ambiguous"
	// ReasonRelativePath: a plugin or marketplace source that is a
	// relative folder path, or an owner/repo source that is also a folder
	// of cwd (Candidates lists both readings).
	ReasonRelativePath = "relativePath"
	// ReasonCredentialsInURL: a source URL with user information
	// (https://user:token@host/...); credentials come from git's
	// credential helpers.
	ReasonCredentialsInURL = "credentialsInUrl"
	// ReasonBadCatalog: a marketplace catalog that breaks the format or
	// the naming rules.
	ReasonBadCatalog = "badCatalog"
	// ReasonNameConflict: a marketplace name already used with another
	// source (Existing names it).
	ReasonNameConflict = "nameConflict"
	// ReasonPluginServer: mcp/update or mcp/remove naming a plugin's MCP
	// server (turn the plugin on or off instead).
	ReasonPluginServer = "pluginServer"
	// ReasonPluginResource: resource/set naming a plugin's skill or
	// prompt template.
	ReasonPluginResource = "pluginResource"
)

// ConflictReasons lists every conflict reason above, in declaration order:
// the values of the wire's GitConflictReason (rpc's tests keep the two
// lists equal).
var ConflictReasons = []string{
	ReasonDiffChanged, ReasonPatchFailed, ReasonConcurrentChange, ReasonWorktreeInUse, ReasonSubmodules,
	ReasonWorktreeMissing, ReasonWorktreeDeleted, ReasonLocalChanges, ReasonRecoveryRequired, ReasonPushRejected,
	ReasonHookRejected, ReasonBranchExists, ReasonOperationInProgress, ReasonTimedOut, ReasonInterrupted,
}

// ParamReasons lists every parameter reason above, in declaration order.
var ParamReasons = []string{
	ReasonUntrusted, ReasonDetachedHead, ReasonNothingToCommit, ReasonEmptyMessage, ReasonNoRemote,
	ReasonIdentityUnknown, ReasonNoBaseBranch, ReasonNoCommonHistory, ReasonUnbornHead, ReasonBareRepository,
	ReasonNotDeleted, ReasonNoTurn, ReasonNoHistory, ReasonProjectAuth, ReasonUnsupported, ReasonIncomplete,
	ReasonAmbiguous, ReasonRelativePath, ReasonCredentialsInURL, ReasonBadCatalog, ReasonNameConflict,
	ReasonPluginServer, ReasonPluginResource,
}

// ParamError is a request refused before it acted: an invalid parameter,
// or a refusal because of the state of the repository or the project.
// Field is the wrong parameter's wire name as a dotted JSON path ("cwd",
// "hunkId", "environments[2].name"), "" for a refusal caused by state
// (every parameter was fine: [Refusal]); Message says what is wrong or
// what to do instead. rpc maps it to invalidParams with data.field = Field
// when set and, when Reason is set, data.reason = Reason (for example
// "untrusted").
type ParamError struct {
	Field   string
	Message string
	Reason  string
	// Candidates are the readings of an ambiguous parameter (reasons
	// ambiguous and relativePath), sent as data.candidates.
	Candidates []string
	// Existing is what a nameConflict collides with, sent as
	// data.existing.
	Existing string
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return fmt.Sprintf("invalid %s: %s", e.Field, e.Message)
}

// Param returns a *ParamError naming field with a formatted message.
func Param(field, format string, args ...any) *ParamError {
	return &ParamError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Refusal returns a *ParamError for a request refused because of the
// state of the repository or the project, not a parameter: no Field, a
// machine-readable reason (one of the parameter Reason* constants) and a
// formatted message saying what to do.
func Refusal(reason, format string, args ...any) *ParamError {
	return &ParamError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ParamReason returns a *ParamError naming field with a machine-readable
// reason (one of the parameter Reason* constants) and a formatted message.
func ParamReason(field, reason, format string, args ...any) *ParamError {
	return &ParamError{Field: field, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ConflictError is an action refused because the repository is not what the
// caller's read showed, or is being changed by someone else, or the action
// would overwrite work it does not own. Reason is one of the Reason*
// constants; Paths are the repository-relative paths concerned (never nil
// on the wire); Output is git's stderr or a hook's output where there is
// one. rpc maps it to gitConflict with data {reason, paths, output?}. The
// text of a diffChanged conflict tells the client to read the diff again.
type ConflictError struct {
	Reason string
	Paths  []string
	Output string
}

// MessagePaths is how many of a [ConflictError]'s Paths its message
// names; the rest are counted ("and 12 more"): data.paths carries them
// all.
const MessagePaths = 20

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conflict (%s)", e.Reason)
	if n := len(e.Paths); n > MessagePaths {
		fmt.Fprintf(&b, ": %s and %d more", strings.Join(e.Paths[:MessagePaths], ", "), n-MessagePaths)
	} else if n > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(e.Paths, ", "))
	}
	if e.Output != "" {
		fmt.Fprintf(&b, ": %s", e.Output)
	}
	if e.Reason == ReasonDiffChanged {
		b.WriteString(": the diff changed since it was read; read the diff again (thread/diff/read) for current hunk ids")
	}
	return b.String()
}

// Conflict returns a *ConflictError with reason, paths and a formatted
// Output.
func Conflict(reason string, paths []string, format string, args ...any) *ConflictError {
	return &ConflictError{Reason: reason, Paths: paths, Output: fmt.Sprintf(format, args...)}
}
