package rpc

import (
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// CoreErrorMappers are the error mappers of the core packages the thread
// methods reach, in the order ToWireError tries them (the wiring passes them
// in Config.ErrorMappers). Keep every core mapping here, one line per error:
//
//	threads.ErrThreadNotFound       -> threadNotFound
//	threads.ErrTurnInProgress       -> turnInProgress
//	threads.ErrTurnMismatch         -> turnMismatch
//	threads.ErrThreadNotArchived    -> threadNotArchived
//	threads.ErrShuttingDown         -> shuttingDown
//	threads.ErrFileChanged          -> fileChanged
//	session.ErrInvalidCursor        -> invalidCursor
//	session.ErrLockedElsewhere      -> threadLockedElsewhere
//	session.ErrHardLinked           -> archiveConflict, data {path, links, surviving}
//	*session.ExistsError            -> archiveConflict, data {path, destination, surviving}
//	*workspace.RemoveError          -> gitConflict recoveryRequired, data {reason, paths, output, snapshot, registered, recoveryInstructions}
//	*diffscope.ConflictError        -> gitConflict, data {reason, paths, output?} (workspace's too: the same type)
//	gitcli.ErrLocked                -> gitConflict concurrentChange, data {reason, paths: [], output: git's stderr}
//	*diffscope.ParamError           -> invalidParams naming data.field (workspace's too)
//	*config.ParamError              -> invalidParams naming data.field
//	workspace.ErrNotDeleted         -> invalidParams, field "path"
//	workspace.ErrUnbornHead         -> invalidParams, field "cwd"
//	workspace.ErrBareRepository     -> invalidParams, field "cwd"
//	workspace.ErrUntrusted          -> invalidParams, data {field: "cwd", reason: "untrusted"}
//	gitcli.ErrNotRepo               -> notGitRepo, message "<dir> is not a git repository"
//	*workspace.RefusedError         -> invalidParams, data {field, reason}
//	workspace.ErrToolMissing        -> toolMissing
//	workspace.ErrAuthRequired       -> authRequired
func CoreErrorMappers() []jsonrpc.ErrorMapper {
	return []jsonrpc.ErrorMapper{
		jsonrpc.MapSentinel(threads.ErrThreadNotFound, protocol.CodeThreadNotFound),
		jsonrpc.MapSentinel(threads.ErrTurnInProgress, protocol.CodeTurnInProgress),
		jsonrpc.MapSentinel(threads.ErrTurnMismatch, protocol.CodeTurnMismatch),
		jsonrpc.MapSentinel(threads.ErrThreadNotArchived, protocol.CodeThreadNotArchived),
		jsonrpc.MapSentinel(threads.ErrShuttingDown, protocol.CodeShuttingDown),
		jsonrpc.MapSentinel(threads.ErrFileChanged, protocol.CodeFileChanged),
		jsonrpc.MapSentinel(session.ErrInvalidCursor, protocol.CodeInvalidCursor),
		jsonrpc.MapSentinel(session.ErrLockedElsewhere, protocol.CodeThreadLockedElsewhere),
		mapHardLink,
		jsonrpc.MapAs(func(e *session.ExistsError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeArchiveConflict, Message: e.Error(),
				Data: protocol.ArchiveConflictData{Path: e.Source, Destination: e.Destination, Surviving: e.Surviving()}}
		}),
		jsonrpc.MapAs(mapRemoveError),
		jsonrpc.MapAs(func(e *diffscope.ConflictError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: ConflictData{Reason: e.Reason, Paths: nonNil(e.Paths), Output: e.Output}}
		}),
		mapLocked,
		jsonrpc.MapAs(func(e *diffscope.ParamError) *jsonrpc.Error {
			return jsonrpc.InvalidParams(e.Field, "%s", e.Message)
		}),
		jsonrpc.MapAs(func(e *config.ParamError) *jsonrpc.Error {
			return jsonrpc.InvalidParams(e.Field, "%s", e.Message)
		}),
		mapParamSentinel(workspace.ErrNotDeleted, "path"),
		mapParamSentinel(workspace.ErrUnbornHead, "cwd"),
		mapParamSentinel(workspace.ErrBareRepository, "cwd"),
		func(err error) (*jsonrpc.Error, bool) {
			if !errors.Is(err, workspace.ErrUntrusted) {
				return nil, false
			}
			return &jsonrpc.Error{Code: protocol.CodeInvalidParams, Message: "cwd: " + err.Error(),
				Data: protocol.InvalidParamsData{Field: "cwd", Reason: "untrusted"}}, true
		},
		mapNotRepo,
		jsonrpc.MapAs(func(e *workspace.RefusedError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeInvalidParams, Message: e.Field + ": " + e.Message,
				Data: protocol.InvalidParamsData{Field: e.Field, Reason: e.Reason}}
		}),
		jsonrpc.MapSentinel(workspace.ErrToolMissing, protocol.CodeToolMissing),
		jsonrpc.MapSentinel(workspace.ErrAuthRequired, protocol.CodeAuthRequired),
	}
}

// mapLocked maps a git lock held by another process (gitcli.ErrLocked:
// index.lock or a ref's lock exists) that no core package turned into a
// *diffscope.ConflictError naming its paths to gitConflict
// concurrentChange with git's stderr: the call changed nothing and can be
// tried again.
func mapLocked(err error) (*jsonrpc.Error, bool) {
	if !errors.Is(err, gitcli.ErrLocked) {
		return nil, false
	}
	out := ""
	if ge, ok := errors.AsType[*gitcli.Error](err); ok {
		out = ge.Stderr
	}
	return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: "another git process is changing the repository: " + err.Error(),
		Data: ConflictData{Reason: diffscope.ReasonConcurrentChange, Paths: []string{}, Output: out}}, true
}

// mapNotRepo maps errors matching gitcli.ErrNotRepo to notGitRepo. When git
// said so (a *gitcli.Error), the message names the directory git ran in
// (the thread's checkout) rather than git's command line and stderr, which
// stay in the server's log (Server logs a mapped error's cause).
func mapNotRepo(err error) (*jsonrpc.Error, bool) {
	if !errors.Is(err, gitcli.ErrNotRepo) {
		return nil, false
	}
	msg := err.Error()
	if ge, ok := errors.AsType[*gitcli.Error](err); ok {
		msg = "not a git repository"
		if ge.Dir != "" {
			msg = ge.Dir + " is not a git repository"
		}
	}
	return &jsonrpc.Error{Code: protocol.CodeNotGitRepo, Message: msg}, true
}

// mapParamSentinel maps errors matching target to invalidParams naming
// field, with the error's text as message.
func mapParamSentinel(target error, field string) jsonrpc.ErrorMapper {
	return func(err error) (*jsonrpc.Error, bool) {
		if !errors.Is(err, target) {
			return nil, false
		}
		return jsonrpc.InvalidParams(field, "%v", err), true
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

// RemoveConflictData is the data of the gitConflict for a worktree whose
// removal failed after its snapshot was written (*workspace.RemoveError):
// reason "recoveryRequired" (the user has to deal with what is left before
// the worktree is gone), Paths the entries left in its directory, Output
// git's error, Snapshot the ref holding the worktree's state (nothing is
// lost), Registered whether git still has the worktree registered, and
// RecoveryInstructions saying what to do.
type RemoveConflictData struct {
	Reason               string   `json:"reason"`
	Paths                []string `json:"paths"`
	Output               string   `json:"output,omitempty"`
	Snapshot             string   `json:"snapshot"`
	Registered           bool     `json:"registered"`
	RecoveryInstructions string   `json:"recoveryInstructions"`
}

// ReasonRecoveryRequired is the gitConflict reason of a failed worktree
// removal (spec: "Workspaces, diffs and git" lists recoveryRequired).
const ReasonRecoveryRequired = "recoveryRequired"

// mapRemoveError maps a worktree removal that failed after its snapshot to
// gitConflict recoveryRequired, naming the snapshot so nothing is lost.
func mapRemoveError(e *workspace.RemoveError) *jsonrpc.Error {
	out := ""
	if e.Err != nil {
		out = e.Err.Error()
		if ge, ok := errors.AsType[*gitcli.Error](e.Err); ok && ge.Stderr != "" {
			out = ge.Stderr
		}
	}
	how := fmt.Sprintf("The worktree's state is saved in %s. Remove what is left in %s by hand", e.Snapshot, e.Path)
	if e.Registered {
		how += ", then delete the worktree again"
	}
	how += "."
	return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: RemoveConflictData{
		Reason: ReasonRecoveryRequired, Paths: nonNil(e.Remaining), Output: out, Snapshot: e.Snapshot,
		Registered: e.Registered, RecoveryInstructions: how,
	}}
}

// mapHardLink maps a hard-linked transcript to archiveConflict, naming the
// file (its other names are unknown: every link survives).
func mapHardLink(err error) (*jsonrpc.Error, bool) {
	if !errors.Is(err, session.ErrHardLinked) {
		return nil, false
	}
	e := &jsonrpc.Error{Code: protocol.CodeArchiveConflict, Message: err.Error()}
	if hl, ok := errors.AsType[*session.HardLinkError](err); ok {
		e.Data = protocol.ArchiveConflictData{Path: hl.Path, Links: hl.Links, Surviving: []string{hl.Path}}
	}
	return e, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
