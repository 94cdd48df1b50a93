package protocol

import (
	"encoding/json"
	"fmt"
)

// Error codes, the names the spec uses for errors on the wire (spec: Method
// reference; ARCHITECTURE.md Errors). A code is a JSON string, never a number.
const (
	CodeNotInitialized        = "notInitialized"        // a request before the handshake finished
	CodeMethodNotFound        = "methodNotFound"        // no such client request
	CodeInvalidParams         = "invalidParams"         // params that do not fit; data.field names the field
	CodeParseError            = "parseError"            // a line that is not a JSON-RPC message
	CodeShuttingDown          = "shuttingDown"          // the server stopped before the work could finish
	CodeThreadNotFound        = "threadNotFound"        // no thread with that id
	CodeTurnInProgress        = "turnInProgress"        // the thread is running a turn
	CodeTurnMismatch          = "turnMismatch"          // expectedTurnId/turnId is not the running turn
	CodeInvalidCursor         = "invalidCursor"         // diverged, foreign, expired or malformed cursor
	CodeGitConflict           = "gitConflict"           // data.reason says which (diffChanged, patchFailed, ...)
	CodeNotGitRepo            = "notGitRepo"            // the checkout is not in a git repository
	CodeFileChanged           = "fileChanged"           // file/write with a stale expectedMtimeMs
	CodeConfigConflict        = "configConflict"        // config/write with a stale expectedVersion; data.version
	CodeToolMissing           = "toolMissing"           // an external tool (fd, gh) is not installed
	CodeAuthRequired          = "authRequired"          // the remote or provider needs credentials
	CodeThreadLockedElsewhere = "threadLockedElsewhere" // another process owns the session file
	CodeThreadNotArchived     = "threadNotArchived"     // thread/delete of a thread not archived
	CodeArchiveConflict       = "archiveConflict"       // archive collision or hard-linked transcript
	CodeMCPUnavailable        = "mcpUnavailable"        // the named MCP server is not connected
	CodeApprovalRequired      = "approvalRequired"      // the MCP call needs the user's consent first
	CodeExternalFailure       = "externalFailure"       // a program or service the server called failed; data.reason says which
	CodeInternal              = "internal"              // anything else; the server logs its cause
)

// ErrorCodes lists every code constant above, in declaration order.
var ErrorCodes = []string{
	CodeNotInitialized, CodeMethodNotFound, CodeInvalidParams, CodeParseError,
	CodeShuttingDown, CodeThreadNotFound, CodeTurnInProgress, CodeTurnMismatch,
	CodeInvalidCursor, CodeGitConflict, CodeNotGitRepo, CodeFileChanged,
	CodeConfigConflict, CodeToolMissing, CodeAuthRequired, CodeThreadLockedElsewhere,
	CodeThreadNotArchived, CodeArchiveConflict, CodeMCPUnavailable, CodeApprovalRequired,
	CodeExternalFailure, CodeInternal,
}

// Error is the error of an error response: {"code": "<name>", "message":
// "...", "data"?: ...}. Code names the error; Data, when present, is
// structured detail whose shape depends on the code.
//
// Go: package jsonrpc names it jsonrpc.Error. errors.Is(err, &Error{Code:
// c}) reports whether err is an *Error with code c, whatever its message
// and data. An Error decoded from the wire keeps its data as the exact
// json.RawMessage that was sent.
type Error struct {
	// Code names the error; a newer server may send names not listed.
	//
	// Go: one of the Code* constants.
	Code string `json:"code"`
	// Message is for people; never match on it.
	Message string `json:"message"`
	// Data is structured detail, e.g. {reason, paths} of a gitConflict or
	// {field} of an invalidParams.
	Data any `json:"data,omitempty"`
}

// Error returns "code: message".
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Code == e.Code
}

// UnmarshalJSON decodes an error object keeping data as raw JSON.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error{Code: w.Code, Message: w.Message}
	if len(w.Data) > 0 {
		e.Data = w.Data
	}
	return nil
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParamsData is the data of an invalidParams error. A refusal that
// blames a parameter names it in Field; a refusal caused by the state of
// the repository or the project (nothing to commit, no remote, no branch
// checked out, git knows no identity, ...) carries a Reason and no Field,
// since every parameter was fine.
type InvalidParamsData struct {
	// Field is the dotted path of the wrong params member, e.g.
	// "capabilities.optOutNotifications"; absent when the params as a whole
	// are wrong or the refusal is about state, not a parameter.
	Field string `json:"field,omitempty"`
	// Reason is a machine-readable cause a client can act on, e.g.
	// "untrusted" or "nothingToCommit".
	Reason string `json:"reason,omitempty"`
	// Candidates are the readings of an ambiguous parameter (reasons
	// ambiguous and relativePath).
	Candidates []string `json:"candidates,omitempty"`
	// Existing is the source a nameConflict collides with.
	Existing string `json:"existing,omitempty"`
}

// TurnInProgressData is the data of a turnInProgress error that names the
// work holding a checkout (a request refused over another thread of the
// checkout, or of either checkout of a handoff): ThreadID is that thread,
// TurnID its running turn; or Action the method it runs that holds the
// checkout (thread/diff/revert, thread/handoff, git/stage, git/commit,
// git/pr/create, ...); or, with neither, Queued the inputs it has waiting
// to start. Checkout is the checkout's root. A turnInProgress about the
// thread asked about itself may carry it too; other refusals have no
// data.
type TurnInProgressData struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId,omitempty"`
	Action   string `json:"action,omitempty"`
	Queued   int    `json:"queued,omitempty"`
	Checkout string `json:"checkout,omitempty"`
}

// GitConflictData is the data of a gitConflict error: Reason says which
// conflict (diffChanged, patchFailed, concurrentChange, worktreeInUse,
// submodules, worktreeMissing, worktreeDeleted, localChanges, pushRejected,
// hookRejected, branchExists, operationInProgress, recoveryRequired,
// timedOut: a user's hook or gh ran past its deadline and was stopped,
// interrupted: turn/interrupt stopped it); Paths are the paths concerned,
// /-separated and relative to the repository's root (never null), except
// where a conflict is about something other than the repository's files:
// worktreeDeleted, worktreeMissing and worktreeInUse name the worktree's
// absolute path; branchExists names the branch's ref (refs/heads/<name>);
// submodules, and the recoveryRequired and localChanges of a worktree
// removal or restore, name entries of the worktree's folder, relative to
// it. Output is git's stderr or a hook's output where there is one.
//
// For reason "recoveryRequired" (a worktree removal that failed after its
// snapshot was written; the user has to deal with what is left before the
// worktree is gone) Paths are the entries left in its directory, Snapshot is
// the ref holding the worktree's state (nothing is lost), Registered says
// whether git still has the worktree registered, and RecoveryInstructions
// say what to do. For a handoff that stopped part-way and needs the user,
// Paths are the paths matching no journaled state, Snapshot the recovery
// point holding the saved changes, Patch the saved binary patch's path
// and RecoveryInstructions say how to get the changes back. Other reasons
// leave those out.
type GitConflictData struct {
	Reason               string   `json:"reason"`
	Paths                []string `json:"paths"`
	Output               string   `json:"output,omitempty"`
	Snapshot             string   `json:"snapshot,omitempty"`
	Registered           *bool    `json:"registered,omitempty"`
	RecoveryInstructions string   `json:"recoveryInstructions,omitempty"`
	Patch                string   `json:"patch,omitempty"`
}

// Reasons of an externalFailure error (ExternalFailureData.Reason).
const (
	// ExternalToolFailed: an external program ran and failed (gh pr
	// create exiting non-zero or printing no pull request, git ls-remote
	// unable to read the remote); the message and data.output carry its
	// own words, bounded, data.exitCode its exit code.
	ExternalToolFailed = "toolFailed"
	// ExternalProviderUnavailable: a model provider could not be reached
	// (a network error) or failed on its side (5xx) while checking a key;
	// the message carries the error's words, data.provider names it.
	ExternalProviderUnavailable = "providerUnavailable"
	// ExternalModelFailed: the thread's model failed to write what was
	// asked of it (git/commit's message); the message carries the
	// provider's words, data.provider names it and data.kind says what
	// failed, as a failed turn's error.kind does (auth, rateLimit,
	// contextOverflow, network, provider, other).
	ExternalModelFailed = "modelFailed"
)

// ExternalFailureData is the data of an externalFailure error: Reason is
// "toolFailed" (with Tool, the program, "gh", "git" or "mcp"; ExitCode, its exit
// code; Output, its own words, at most 4096 bytes and a note of what was
// left out), "providerUnavailable" (with Provider, the provider's name) or
// "modelFailed" (with Provider and Kind, the failure's kind as a turn
// error's). Nothing was changed by the failed call itself; a git/pr/create
// may have pushed the branch before gh ran.
type ExternalFailureData struct {
	Reason   string `json:"reason"`
	Tool     string `json:"tool,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Output   string `json:"output,omitempty"`
	Provider string `json:"provider,omitempty"`
	Kind     string `json:"kind,omitempty"`
}

// InvalidParams returns an invalidParams *Error naming field (a dotted JSON
// path) in its message and in data.field; with field "" (the params as a
// whole) it has no data.
func InvalidParams(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field == "" {
		return &Error{Code: CodeInvalidParams, Message: msg}
	}
	return &Error{Code: CodeInvalidParams, Message: field + ": " + msg, Data: InvalidParamsData{Field: field}}
}

// RequestID is a JSON-RPC id exactly as it was sent: a JSON string or number,
// kept as its raw bytes so it can be echoed byte for byte.
type RequestID []byte

// MarshalJSON writes the id's raw bytes (null when empty).
func (id RequestID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return id, nil
}

// UnmarshalJSON keeps a copy of the raw bytes.
func (id *RequestID) UnmarshalJSON(b []byte) error {
	*id = append((*id)[:0], b...)
	return nil
}

// ErrorParams are the params of the error notification.
type ErrorParams struct {
	// Code is an error code (parseError for a line that could not be read).
	Code string `json:"code,omitempty"`
	// Message says what happened, for people.
	Message string `json:"message"`
	// ID is the id of the request a dropped line carried, when it could be
	// recovered from the line's start (an oversized line): that request gets
	// no response.
	ID RequestID `json:"id,omitempty"`
	// ThreadID is the thread the error belongs to, if any.
	ThreadID string `json:"threadId,omitempty"`
	// ClientMessageID is the clientMessageId of a queued input that failed to
	// start.
	ClientMessageID string `json:"clientMessageId,omitempty"`
	// Cause is the error behind the notification, never sent: when Code is
	// empty the rpc frame sets it from Cause with the server's error table
	// (jsonrpc.Config.ErrorMappers, rpc/errmap.go), so the code is the one a
	// request failing the same way answers with.
	Cause error `json:"-"`
}

// ServerRequestCancelledParams are the params of serverRequest/cancelled.
type ServerRequestCancelledParams struct {
	// RequestID is the id of the withdrawn server request, as the server
	// sent it.
	RequestID RequestID `json:"requestId"`
}
