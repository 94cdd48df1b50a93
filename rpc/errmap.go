package rpc

import (
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/filesearch"
	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/safefile"
	"github.com/knightcode/knightcode/mcp"
	"github.com/knightcode/knightcode/plugins"
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
//	*threads.BusyError              -> turnInProgress, data {threadId, turnId?, action?, queued?, checkout}
//	threads.ErrTurnInProgress       -> turnInProgress
//	threads.ErrTurnMismatch         -> turnMismatch
//	threads.ErrThreadNotArchived    -> threadNotArchived
//	threads.ErrShuttingDown         -> shuttingDown
//	*threads.NoKeyError             -> authRequired, data {provider}
//	workspace.ErrFileChanged          -> fileChanged
//	session.ErrInvalidCursor        -> invalidCursor
//	session.ErrLockedElsewhere      -> threadLockedElsewhere
//	session.ErrHardLinked           -> archiveConflict, data {path, links, surviving}
//	*session.ExistsError            -> archiveConflict, data {path, destination, surviving}
//	*workspace.RemoveError          -> gitConflict recoveryRequired, data {reason, paths, output, snapshot, registered, recoveryInstructions}
//	*handoff.RecoveryError          -> gitConflict recoveryRequired, data {reason, paths, output, snapshot, patch, recoveryInstructions}
//	*coreerr.ConflictError          -> gitConflict, data {reason, paths, output?} (diffscope's, workspace's and handoff's: the same type;
//	                                   a handoff's localChanges has the spec's message, handoff.MsgLocalChanges)
//	gitcli.ErrLocked                -> gitConflict concurrentChange, data {reason, paths: [], output: git's stderr}
//	*coreerr.ParamError             -> invalidParams, data {field, reason?}, or {reason} for a refusal caused by state
//	                                   (diffscope's, workspace's, config's and filesearch's: the same type)
//	workspace.ErrAuthRequired       -> authRequired (*workspace.AuthError's text carries the tool's output)
//	workspace.ErrToolMissing        -> toolMissing
//	*workspace.ToolError            -> externalFailure, data {reason: "toolFailed", tool, exitCode, output} (gh's or git's own words)
//	*provider.UnavailableError      -> externalFailure, data {reason: "providerUnavailable", provider} (the network error's words)
//	*threads.ModelError             -> externalFailure, data {reason: "modelFailed", provider, kind} (the provider's words)
//	*config.VersionConflictError    -> configConflict, data {version}
//	*config.CorruptError            -> internal, naming the file and line
//	*filesearch.ToolMissingError    -> toolMissing
//	filesearch.ErrShuttingDown      -> shuttingDown
//	filesearch.ErrTimeout           -> internal
//	workspace.ErrNotDeleted         -> invalidParams, data {reason: "notDeleted"}
//	workspace.ErrUnbornHead         -> invalidParams, data {reason: "unbornHead"}
//	workspace.ErrBareRepository     -> invalidParams, data {reason: "bareRepository"}
//	workspace.ErrUntrusted          -> invalidParams, data {reason: "untrusted"}
//	gitcli.ErrNotRepo               -> notGitRepo, message "<dir> is not a git repository"
//	mcp.ErrThreadNotLoaded          -> threadNotFound
//	*mcp.UnavailableError           -> mcpUnavailable, data {server, state}
//	*mcp.ApprovalRequiredError      -> approvalRequired, data {server, tool}
//	*mcp.ServerError                -> externalFailure, data {reason: "toolFailed", tool: "mcp", output} (the MCP server's own error response)
//	*plugins.FetchError             -> externalFailure, data {reason: "toolFailed", tool: "git", output} (git's words, credentials redacted)
//	*safefile.Error                 -> internal, naming the file and what it is (a configuration or state file that is a FIFO, ...)
//	*safefile.TooLargeError         -> internal, naming the file and the limit
//
// A refusal caused by the state of the repository, the project or the
// thread names no field (every parameter was fine): it carries a reason.
func CoreErrorMappers() []jsonrpc.ErrorMapper {
	return []jsonrpc.ErrorMapper{
		jsonrpc.MapSentinel(threads.ErrThreadNotFound, protocol.CodeThreadNotFound),
		jsonrpc.MapAs(func(e *threads.BusyError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeTurnInProgress, Message: e.Error(),
				Data: protocol.TurnInProgressData{ThreadID: e.ThreadID, TurnID: e.TurnID, Action: e.Action, Queued: e.Queued, Checkout: e.Checkout}}
		}),
		jsonrpc.MapSentinel(threads.ErrTurnInProgress, protocol.CodeTurnInProgress),
		jsonrpc.MapSentinel(threads.ErrTurnMismatch, protocol.CodeTurnMismatch),
		jsonrpc.MapSentinel(threads.ErrThreadNotArchived, protocol.CodeThreadNotArchived),
		jsonrpc.MapSentinel(threads.ErrShuttingDown, protocol.CodeShuttingDown),
		jsonrpc.MapAs(func(e *threads.NoKeyError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeAuthRequired, Message: e.Error(), Data: map[string]string{"provider": e.Provider}}
		}),
		jsonrpc.MapSentinel(workspace.ErrFileChanged, protocol.CodeFileChanged),
		jsonrpc.MapSentinel(session.ErrInvalidCursor, protocol.CodeInvalidCursor),
		jsonrpc.MapSentinel(session.ErrLockedElsewhere, protocol.CodeThreadLockedElsewhere),
		mapHardLink,
		jsonrpc.MapAs(func(e *session.ExistsError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeArchiveConflict, Message: e.Error(),
				Data: protocol.ArchiveConflictData{Path: e.Source, Destination: e.Destination, Surviving: e.Surviving()}}
		}),
		jsonrpc.MapAs(mapRemoveError),
		jsonrpc.MapAs(mapHandoffRecovery),
		jsonrpc.MapAs(func(e *coreerr.ConflictError) *jsonrpc.Error {
			msg := e.Error()
			if e.Output == handoff.MsgLocalChanges {
				msg = e.Output // the spec's exact message
			}
			return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: msg, Data: protocol.GitConflictData{Reason: e.Reason, Paths: nonNil(e.Paths), Output: e.Output}}
		}),
		mapLocked,
		jsonrpc.MapAs(paramError),
		jsonrpc.MapSentinel(workspace.ErrAuthRequired, protocol.CodeAuthRequired),
		jsonrpc.MapSentinel(workspace.ErrToolMissing, protocol.CodeToolMissing),
		jsonrpc.MapAs(func(e *workspace.ToolError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeExternalFailure, Message: e.Error(), Data: protocol.ExternalFailureData{
				Reason: protocol.ExternalToolFailed, Tool: e.Tool, ExitCode: &e.ExitCode, Output: e.Output}}
		}),
		jsonrpc.MapAs(func(e *provider.UnavailableError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeExternalFailure, Message: e.Error(), Data: protocol.ExternalFailureData{
				Reason: protocol.ExternalProviderUnavailable, Provider: e.Provider}}
		}),
		jsonrpc.MapAs(func(e *threads.ModelError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeExternalFailure, Message: e.Error(), Data: protocol.ExternalFailureData{
				Reason: protocol.ExternalModelFailed, Provider: e.Provider, Kind: e.Kind}}
		}),
		jsonrpc.MapAs(func(e *config.VersionConflictError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeConfigConflict, Message: e.Error() + "; read the settings again",
				Data: protocol.ConfigConflictData{Version: e.Version}}
		}),
		jsonrpc.MapAs(func(e *config.CorruptError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeInternal, Message: e.Error()}
		}),
		jsonrpc.MapAs(func(e *filesearch.ToolMissingError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeToolMissing, Message: e.Error()}
		}),
		jsonrpc.MapSentinel(filesearch.ErrShuttingDown, protocol.CodeShuttingDown),
		jsonrpc.MapSentinel(filesearch.ErrTimeout, protocol.CodeInternal),
		mapRefusal(workspace.ErrNotDeleted, coreerr.ReasonNotDeleted),
		mapRefusal(workspace.ErrUnbornHead, coreerr.ReasonUnbornHead),
		mapRefusal(workspace.ErrBareRepository, coreerr.ReasonBareRepository),
		mapRefusal(workspace.ErrUntrusted, coreerr.ReasonUntrusted),
		jsonrpc.MapAs(func(e *plugins.FetchError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeExternalFailure, Message: e.Error(), Data: protocol.ExternalFailureData{
				Reason: protocol.ExternalToolFailed, Tool: "git", Output: e.Output}}
		}),
		mapNotRepo,
		jsonrpc.MapSentinel(mcp.ErrThreadNotLoaded, protocol.CodeThreadNotFound),
		jsonrpc.MapAs(func(e *mcp.UnavailableError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeMCPUnavailable, Message: e.Error(),
				Data: protocol.McpUnavailableData{Server: e.Server, State: e.State}}
		}),
		jsonrpc.MapAs(func(e *mcp.ServerError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeExternalFailure, Message: e.Error(), Data: protocol.ExternalFailureData{
				Reason: protocol.ExternalToolFailed, Tool: protocol.ExternalToolMCP, Output: e.Message}}
		}),
		jsonrpc.MapAs(func(e *mcp.ApprovalRequiredError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeApprovalRequired, Message: e.Error(),
				Data: protocol.ApprovalRequiredData{Server: e.Server, Tool: e.Tool}}
		}),
		// Last: a method that refuses such a path itself (file/read's
		// invalidParams) has mapped it above.
		jsonrpc.MapAs(func(e *safefile.Error) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeInternal, Message: e.Error()}
		}),
		jsonrpc.MapAs(func(e *safefile.TooLargeError) *jsonrpc.Error {
			return &jsonrpc.Error{Code: protocol.CodeInternal, Message: e.Error()}
		}),
	}
}

// mapLocked maps a git lock held by another process (gitcli.ErrLocked:
// index.lock or a ref's lock exists) that no core package turned into a
// *coreerr.ConflictError naming its paths to gitConflict
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
		Data: protocol.GitConflictData{Reason: coreerr.ReasonConcurrentChange, Paths: []string{}, Output: out}}, true
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

// paramError maps a *coreerr.ParamError to invalidParams: data {field} for
// a wrong parameter, {field, reason} with a reason, {reason} for a refusal
// caused by state (no Field); the message is prefixed with the field.
func paramError(e *coreerr.ParamError) *jsonrpc.Error {
	we := jsonrpc.InvalidParams(e.Field, "%s", e.Message)
	if e.Reason != "" {
		we.Data = protocol.InvalidParamsData{Field: e.Field, Reason: e.Reason, Candidates: e.Candidates, Existing: e.Existing}
	}
	return we
}

// mapRefusal maps errors matching target, a refusal caused by state, as
// the *coreerr.ParamError coreerr.Refusal(reason) with the error's text.
func mapRefusal(target error, reason string) jsonrpc.ErrorMapper {
	return func(err error) (*jsonrpc.Error, bool) {
		if !errors.Is(err, target) {
			return nil, false
		}
		return paramError(coreerr.Refusal(reason, "%v", err)), true
	}
}

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
	return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: protocol.GitConflictData{
		Reason: coreerr.ReasonRecoveryRequired, Paths: nonNil(e.Remaining), Output: out, Snapshot: e.Snapshot,
		Registered: &e.Registered, RecoveryInstructions: how,
	}}
}

// mapHandoffRecovery maps a handoff that stopped part-way and matches no
// journaled state to gitConflict recoveryRequired with the saved changes:
// the recovery point (snapshot), the binary patch (patch) and how to get
// them back (recoveryInstructions).
func mapHandoffRecovery(e *handoff.RecoveryError) *jsonrpc.Error {
	c := e.Conflict
	return &jsonrpc.Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: protocol.GitConflictData{
		Reason: coreerr.ReasonRecoveryRequired, Paths: nonNil(c.Paths), Output: c.Output, Snapshot: e.Ref,
		Patch: e.Patch, RecoveryInstructions: e.Instructions,
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
