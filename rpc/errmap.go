package rpc

import (
	"errors"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/threads/session"
)

// CoreErrorMappers are the error mappers of the core packages the thread
// methods reach, in the order ToWireError tries them (the wiring passes them
// in Config.ErrorMappers). Keep every core mapping here, one line per error:
//
//	threads.ErrThreadNotFound       -> threadNotFound
//	threads.ErrTurnInProgress       -> turnInProgress
//	threads.ErrTurnMismatch         -> turnMismatch
//	session.ErrInvalidCursor        -> invalidCursor
//	session.ErrLockedElsewhere      -> threadLockedElsewhere
//	session.ErrHardLinked           -> archiveConflict, data {path, links}
//	*diffscope.ConflictError        -> gitConflict, data {reason, paths, output?}
//	*diffscope.ParamError           -> invalidParams naming data.field
//	gitcli.ErrNotRepo               -> notGitRepo
func CoreErrorMappers() []ErrorMapper {
	return []ErrorMapper{
		MapSentinel(threads.ErrThreadNotFound, protocol.CodeThreadNotFound),
		MapSentinel(threads.ErrTurnInProgress, protocol.CodeTurnInProgress),
		MapSentinel(threads.ErrTurnMismatch, protocol.CodeTurnMismatch),
		MapSentinel(session.ErrInvalidCursor, protocol.CodeInvalidCursor),
		MapSentinel(session.ErrLockedElsewhere, protocol.CodeThreadLockedElsewhere),
		mapHardLink,
		MapAs(func(e *diffscope.ConflictError) *Error {
			return &Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: ConflictData{Reason: e.Reason, Paths: nonNil(e.Paths), Output: e.Output}}
		}),
		MapAs(func(e *diffscope.ParamError) *Error {
			return InvalidParams(e.Field, "%s", e.Message)
		}),
		MapSentinel(gitcli.ErrNotRepo, protocol.CodeNotGitRepo),
	}
}

// ConflictData is the data of a gitConflict error: the reason (diffChanged,
// patchFailed, ...), the repository-relative paths concerned and git's
// output for patchFailed.
type ConflictData struct {
	Reason string   `json:"reason"`
	Paths  []string `json:"paths"`
	Output string   `json:"output,omitempty"`
}

// HardLinkData is the data of an archiveConflict for a hard-linked
// transcript: the file and its link count.
type HardLinkData struct {
	Path  string `json:"path"`
	Links uint64 `json:"links"`
}

// mapHardLink maps a hard-linked transcript to archiveConflict.
func mapHardLink(err error) (*Error, bool) {
	if !errors.Is(err, session.ErrHardLinked) {
		return nil, false
	}
	e := &Error{Code: protocol.CodeArchiveConflict, Message: err.Error()}
	if hl, ok := errors.AsType[*session.HardLinkError](err); ok {
		e.Data = HardLinkData{Path: hl.Path, Links: hl.Links}
	}
	return e, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
