package diffscope

import (
	"errors"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Conflict reasons of [ConflictError] (spec, thread/diff/revert and git/*:
// gitConflict with data.reason): coreerr's, named here for diffscope's
// callers.
const (
	// ReasonDiffChanged: a hunk id or file id is not in the diff read again
	// at the same scope and context, or a lastTurn file is no longer as
	// the turn left (or found) it.
	ReasonDiffChanged = coreerr.ReasonDiffChanged
	// ReasonPatchFailed: git refused the patch built from the read.
	ReasonPatchFailed = coreerr.ReasonPatchFailed
	// ReasonConcurrentChange: another git process holds the index or a ref
	// (its lock file exists: gitcli.ErrLocked), so the action changed
	// nothing; it can be tried again once that process is done.
	ReasonConcurrentChange = coreerr.ReasonConcurrentChange
)

// ConflictError is the core gitConflict error ([coreerr.ConflictError]):
// an action refused because the checkout is not what the caller's read
// showed, or is being changed by another git process. Reason is
// [ReasonDiffChanged], [ReasonPatchFailed] or [ReasonConcurrentChange];
// Paths are the repository-relative paths concerned; Output is git's stderr
// for patchFailed and concurrentChange.
type ConflictError = coreerr.ConflictError

// ParamError is the core invalidParams error ([coreerr.ParamError]): Field
// is the parameter's wire name ("commit", "against", "fromTree", "toTree",
// "path", "hunkId", "scope", "context", ...), Message says what is wrong.
type ParamError = coreerr.ParamError

func paramErr(field, format string, args ...any) *ParamError {
	return coreerr.Param(field, format, args...)
}

// lockConflict turns err into a [ConflictError] concurrentChange naming
// paths, with git's stderr as Output, when it is git failing to take a
// lock another process holds (gitcli.ErrLocked: index.lock, a ref's lock);
// other errors, and nil, are returned as they are. Actions call it once,
// on what they return, so every git step they run is covered.
func lockConflict(err error, paths []string) error {
	if err == nil || !errors.Is(err, gitcli.ErrLocked) {
		return err
	}
	out := ""
	if ge, ok := errors.AsType[*gitcli.Error](err); ok {
		out = ge.Stderr
	} else if le, ok := errors.AsType[*gitstate.LockedError](err); ok {
		out = le.Error() // the journal's own index commit, in git's words
	}
	return &ConflictError{Reason: ReasonConcurrentChange, Paths: paths, Output: out}
}
