package handoff

import (
	"fmt"
	"strings"

	"github.com/knightcode/knightcode/workspace"
)

// ConflictError and ParamError are the errors the rest of the core uses
// for gitConflict (data.reason, data.paths, data.output) and invalidParams
// (naming a field); rpc maps them once.
type (
	ConflictError = workspace.ConflictError
	ParamError    = workspace.ParamError
)

// Conflict reasons of a handoff (spec, thread/handoff: gitConflict
// data.reason).
const (
	// ReasonLocalChanges: the destination is not clean (staged or unstaged
	// changes to tracked files, or untracked files that are not ignored;
	// the message is exactly [MsgLocalChanges]), or an untracked or
	// ignored file of the destination is where a moved path or the
	// switched-to branch would write (message [MsgOverwrite]; the user's
	// file is never overwritten), an ignored file of the destination the
	// moved .gitignore changes would stop ignoring ([MsgUnignored]), or
	// an ignored file of the source where the moved changes delete a
	// tracked file ([MsgIgnoredInSource]). Paths lists the files.
	ReasonLocalChanges = workspace.ReasonLocalChanges
	// ReasonOperationInProgress: a merge, rebase, cherry-pick, revert or
	// bisect is in progress in either checkout (Paths names the git files
	// that say so).
	ReasonOperationInProgress = "operationInProgress"
	// ReasonBranchExists: the branch exists and cannot be fast-forwarded
	// to the worktree's HEAD, or is checked out in another worktree.
	ReasonBranchExists = "branchExists"
	// ReasonWorktreeDeleted: the thread's worktree is deleted.
	ReasonWorktreeDeleted = workspace.ReasonWorktreeDeleted
	// ReasonSubmodules: a submodule of the source holds changes of its
	// own, which a handoff cannot move (Paths lists them).
	ReasonSubmodules = workspace.ReasonSubmodules
	// ReasonRecoveryRequired: an earlier handoff stopped and neither side
	// matches a state its journal recorded ([RecoveryError]).
	ReasonRecoveryRequired = "recoveryRequired"
)

// MsgLocalChanges is the exact message of a localChanges refusal (spec,
// "Workspaces, diffs and git").
const MsgLocalChanges = "Stash or commit your local changes to hand off."

// MsgOverwrite is the message of a localChanges refusal for untracked or
// ignored files in the way.
const MsgOverwrite = "Move these untracked or ignored files away to hand off: the handoff would write where they are."

// MsgUnignored is the message of a localChanges refusal for ignored
// files of the destination that the moved .gitignore changes would stop
// ignoring: they would become untracked files the handoff does not own.
const MsgUnignored = "Move these ignored files away to hand off: the .gitignore changes it moves would stop ignoring them."

// MsgIgnoredInSource is the message of a localChanges refusal for files
// of the source that no capture holds (ignored, or a nested repository)
// where the moved changes delete or replace a tracked file: cleaning the
// source writes that file back over them (`git rm --cached .env` with .env
// ignored, or a tracked file turned into a folder of ignored files).
const MsgIgnoredInSource = "Move these ignored files away, or commit the change that deletes the tracked file where they are, to hand off: the handoff would write that file back over them when it cleans the source."

// RecoveryError is gitConflict recoveryRequired: a handoff that stopped
// part-way could not be finished or undone because a side holds edits
// that match no journaled state. Nothing was deleted: the saved changes
// are the commit Ref (stash-shaped: parent 1 HEAD, parent 2 the index
// commit, its tree the worktree tree) and the binary patch at Patch
// (data.patch); Instructions (data.recoveryInstructions) says how to get
// them back with plain git. Unwrap gives the *ConflictError.
type RecoveryError struct {
	Conflict     *ConflictError
	ID           string
	Ref          string
	Patch        string
	Instructions string
}

func (e *RecoveryError) Error() string {
	return fmt.Sprintf("handoff %s needs recovery: %s", e.ID, e.Conflict.Error())
}

// Unwrap returns the *ConflictError (reason recoveryRequired).
func (e *RecoveryError) Unwrap() error { return e.Conflict }

func conflict(reason string, paths []string, format string, args ...any) *ConflictError {
	return &ConflictError{Reason: reason, Paths: paths, Output: fmt.Sprintf(format, args...)}
}

func paramErr(field, format string, args ...any) *ParamError {
	return &ParamError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func errorf(format string, args ...any) error { return fmt.Errorf("handoff: "+format, args...) }

// instructions is the recoveryInstructions text for a saved state.
func instructions(ref, patch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The changes are saved as the commit %s (shaped like a git stash entry: parent 1 HEAD, parent 2 the index) and as the binary patch %s.", ref, patch)
	fmt.Fprintf(&b, " In a clean checkout of %s^1: `git read-tree -m -u %s && git read-tree -m %s^2` brings back the working tree, then the index;", ref, ref, ref)
	fmt.Fprintf(&b, " or `git apply --binary %s` the working tree changes alone.", patch)
	return b.String()
}
