package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// CurrentVersion is the session format version this package writes (pi's
// version 3). Older files are migrated when read (see [Read]).
const CurrentVersion = 3

// Header is a session file's first line:
// {"type":"session","version":3,"id":"<uuid>","timestamp":"<ISO>","cwd":"...","parentSession"?:"...","workspace"?:{...}}.
// Timestamp is ISO-8601 UTC with milliseconds; ParentSession is the path of
// the session this one was forked from.
type Header struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	ID            string `json:"id"`
	Timestamp     string `json:"timestamp"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession,omitempty"`
	// Workspace is the managed worktree the thread runs in; nil for a
	// thread in the user's own checkout (see [Workspace]).
	Workspace *Workspace `json:"workspace,omitempty"`
}

// Entry types this package knows. Other types (pi's branch_summary,
// label, ...) are kept in the tree with their stored line in Entry.Raw and
// produce no items.
const (
	TypeMessage             = "message"
	TypeModelChange         = "model_change"
	TypeThinkingLevelChange = "thinking_level_change"
	TypeApprovalMode        = "approval_mode"
	TypeSessionInfo         = "session_info"
	TypeTurnStart           = "turn_start"
	TypeTurnEnd             = "turn_end"
	TypeWorkspace           = "workspace"
	// TypeCompaction is pi's compaction entry: the messages of the branch
	// before FirstKeptEntryID were replaced by Summary.
	TypeCompaction = "compaction"
	// TypeCustom is pi's custom entry, {"type":"custom","customType",
	// "data"?}: state an extension (or the server) keeps in the session
	// file; it is not part of the model's context and produces no items.
	TypeCustom = "custom"
)

// Approval modes (Entry.Mode of an approval_mode entry).
const (
	ApprovalAsk        = "ask"
	ApprovalFullAccess = "fullAccess"
)

// Entry is one line after the header. ID (8 hex characters, unique in the
// file), ParentID ("" for a root, written as null) and Timestamp (ISO-8601)
// are set by [Session.Append]; the other fields depend on Type:
//
//	message                Message: the LLM message JSON (role user, assistant, toolResult, ...)
//	model_change           Provider, ModelID
//	thinking_level_change  ThinkingLevel
//	approval_mode          Mode: ask | fullAccess
//	session_info           Name (the thread title)
//	turn_start             TurnID, StartedAt (Unix ms)
//	turn_end               TurnID, Status (completed|failed|interrupted), Error, Usage,
//	                       BeforeTree, AfterTree (git tree ids), BeforeIndexTree,
//	                       AfterIndexTree (git tree ids), Files, CompletedAt (Unix ms)
//	workspace              Cwd, Workspace (nil: the user's checkout), Home, Branch: where a
//	                       handoff moved the thread (see [WorkspaceEntry])
//	compaction             Summary, FirstKeptEntryID, TokensBefore (pi's shape), Usage (the
//	                       summarizing request's, knightcode's addition)
//	custom                 CustomType, Data (any JSON, absent when nil): pi's CustomEntry
//
// Raw is the stored line of an entry whose Type this package does not know,
// or of a compaction or custom entry read from a file (pi's compaction may
// hold more fields, details and fromHook, which a rewrite keeps); it is nil
// for other known types.
type Entry struct {
	Type      string
	ID        string
	ParentID  string
	Timestamp string

	Message json.RawMessage

	Provider      string
	ModelID       string
	ThinkingLevel string
	Mode          string
	Name          string

	TurnID          string
	StartedAt       int64
	Status          string
	Error           *protocol.TurnError
	Usage           *protocol.TurnUsage
	BeforeTree      string
	AfterTree       string
	BeforeIndexTree string
	AfterIndexTree  string
	Files           []protocol.FileTotal
	CompletedAt     int64

	Cwd              string
	Workspace        *Workspace
	Home             *Workspace
	Branch           string
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64

	CustomType string
	Data       json.RawMessage

	Raw json.RawMessage
}

// entryWire is the JSON shape of an entry line (pi-compatible field names).
// Files is omitted only when nil: a turn with totals and no changed file
// stores [] and reads back [] (see TurnEnd).
type entryWire struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`

	Message json.RawMessage `json:"message,omitempty"`

	Provider      string `json:"provider,omitempty"`
	ModelID       string `json:"modelId,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	Mode          string `json:"mode,omitempty"`
	Name          string `json:"name,omitempty"`

	TurnID          string               `json:"turnId,omitempty"`
	StartedAt       int64                `json:"startedAt,omitempty"`
	Status          string               `json:"status,omitempty"`
	Error           *protocol.TurnError  `json:"error,omitempty"`
	Usage           *protocol.TurnUsage  `json:"usage,omitempty"`
	BeforeTree      string               `json:"beforeTree,omitempty"`
	AfterTree       string               `json:"afterTree,omitempty"`
	BeforeIndexTree string               `json:"beforeIndexTree,omitempty"`
	AfterIndexTree  string               `json:"afterIndexTree,omitempty"`
	Files           []protocol.FileTotal `json:"files,omitzero"`
	CompletedAt     int64                `json:"completedAt,omitempty"`

	Cwd              string     `json:"cwd,omitempty"`
	Workspace        *Workspace `json:"workspace,omitempty"`
	Home             *Workspace `json:"home,omitempty"`
	Branch           string     `json:"branch,omitempty"`
	Summary          string     `json:"summary,omitempty"`
	FirstKeptEntryID string     `json:"firstKeptEntryId,omitempty"`
	TokensBefore     int64      `json:"tokensBefore,omitempty"`

	CustomType string          `json:"customType,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

func knownType(t string) bool {
	switch t {
	case TypeMessage, TypeModelChange, TypeThinkingLevelChange, TypeApprovalMode,
		TypeSessionInfo, TypeTurnStart, TypeTurnEnd, TypeWorkspace, TypeCompaction, TypeCustom:
		return true
	}
	return false
}

// keepsRaw reports whether an entry of type typ read from a file keeps its
// stored line in Raw: unknown types, compaction and custom entries.
func keepsRaw(typ string) bool {
	return !knownType(typ) || typ == TypeCompaction || typ == TypeCustom
}

// MarshalJSON writes the entry as one JSON object in the stored shape. An
// entry of an unknown type, or a compaction or custom entry, with Raw set
// is written as Raw.
func (e Entry) MarshalJSON() ([]byte, error) {
	if keepsRaw(e.Type) && len(e.Raw) > 0 {
		return e.Raw, nil
	}
	w := entryWire{
		Type: e.Type, ID: e.ID, Timestamp: e.Timestamp, Message: e.Message,
		Provider: e.Provider, ModelID: e.ModelID, ThinkingLevel: e.ThinkingLevel,
		Mode: e.Mode, Name: e.Name, TurnID: e.TurnID, StartedAt: e.StartedAt,
		Status: e.Status, Error: e.Error, Usage: e.Usage, BeforeTree: e.BeforeTree,
		AfterTree: e.AfterTree, BeforeIndexTree: e.BeforeIndexTree, AfterIndexTree: e.AfterIndexTree,
		Files: e.Files, CompletedAt: e.CompletedAt,
		Cwd: e.Cwd, Workspace: e.Workspace, Home: e.Home, Branch: e.Branch,
		Summary: e.Summary, FirstKeptEntryID: e.FirstKeptEntryID, TokensBefore: e.TokensBefore,
		CustomType: e.CustomType, Data: e.Data,
	}
	if e.ParentID != "" {
		p := e.ParentID
		w.ParentID = &p
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads an entry line. Unknown types keep the whole line in Raw.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w entryWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Entry{
		Type: w.Type, ID: w.ID, Timestamp: w.Timestamp, Message: w.Message,
		Provider: w.Provider, ModelID: w.ModelID, ThinkingLevel: w.ThinkingLevel,
		Mode: w.Mode, Name: w.Name, TurnID: w.TurnID, StartedAt: w.StartedAt,
		Status: w.Status, Error: w.Error, Usage: w.Usage, BeforeTree: w.BeforeTree,
		AfterTree: w.AfterTree, BeforeIndexTree: w.BeforeIndexTree, AfterIndexTree: w.AfterIndexTree,
		Files: w.Files, CompletedAt: w.CompletedAt,
		Cwd: w.Cwd, Workspace: w.Workspace, Home: w.Home, Branch: w.Branch,
		Summary: w.Summary, FirstKeptEntryID: w.FirstKeptEntryID, TokensBefore: w.TokensBefore,
		CustomType: w.CustomType, Data: w.Data,
	}
	if w.ParentID != nil {
		e.ParentID = *w.ParentID
	}
	if keepsRaw(w.Type) {
		e.Raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// Roles of LLM messages (see the agent package's message model).
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
)

// messageHead is the part of an LLM message every accessor needs.
type messageHead struct {
	Role      string `json:"role"`
	Timestamp int64  `json:"timestamp"`
}

func (e Entry) head() messageHead {
	var h messageHead
	if e.Type == TypeMessage && len(e.Message) > 0 {
		_ = json.Unmarshal(e.Message, &h)
	}
	return h
}

// Role is the role of a message entry's LLM message ("user", "assistant",
// "toolResult", ...), or "" for other entries and unreadable messages.
func (e Entry) Role() string { return e.head().Role }

// MessageTimestamp is a message entry's LLM message timestamp in Unix
// milliseconds, or 0 when absent.
func (e Entry) MessageTimestamp() int64 { return e.head().Timestamp }

// Time parses the entry's ISO-8601 Timestamp; the zero time when it is
// missing or malformed.
func (e Entry) Time() time.Time {
	t, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// NewMessage returns a message entry holding msg, an LLM message JSON object
// with a string "role". It returns an error when msg is not such an object.
func NewMessage(msg json.RawMessage) (Entry, error) {
	var h struct {
		Role *string `json:"role"`
	}
	if err := json.Unmarshal(msg, &h); err != nil {
		return Entry{}, fmt.Errorf("session: message is not a JSON object: %w", err)
	}
	if h.Role == nil || *h.Role == "" {
		return Entry{}, errors.New("session: message has no role")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return Entry{}, fmt.Errorf("session: message: %w", err)
	}
	return Entry{Type: TypeMessage, Message: buf.Bytes()}, nil
}

// NewModelChange returns a model_change entry.
func NewModelChange(provider, modelID string) Entry {
	return Entry{Type: TypeModelChange, Provider: provider, ModelID: modelID}
}

// NewThinkingLevelChange returns a thinking_level_change entry.
func NewThinkingLevelChange(level string) Entry {
	return Entry{Type: TypeThinkingLevelChange, ThinkingLevel: level}
}

// NewApprovalMode returns an approval_mode entry; mode is ApprovalAsk or
// ApprovalFullAccess.
func NewApprovalMode(mode string) Entry {
	return Entry{Type: TypeApprovalMode, Mode: mode}
}

// NewSessionInfo returns a session_info entry naming the thread (its title).
func NewSessionInfo(name string) Entry {
	return Entry{Type: TypeSessionInfo, Name: name}
}

// NewTurnStart returns a turn_start entry; startedAt is Unix milliseconds.
func NewTurnStart(turnID string, startedAt int64) Entry {
	return Entry{Type: TypeTurnStart, TurnID: turnID, StartedAt: startedAt}
}

// TurnEnd is what a turn_end entry records. Status is completed, failed or
// interrupted; CompletedAt is Unix milliseconds; BeforeTree and AfterTree are
// the git tree ids of the working tree captured before and after the turn,
// BeforeIndexTree and AfterIndexTree those of the index (both empty outside
// git; an undo of the turn restores the index from them when they differ).
// Files are the turn's file totals: nil when it has none (outside git, a
// failed capture), else the list, empty when no file changed.
type TurnEnd struct {
	TurnID          string
	Status          string
	Error           *protocol.TurnError
	Usage           *protocol.TurnUsage
	BeforeTree      string
	AfterTree       string
	BeforeIndexTree string
	AfterIndexTree  string
	Files           []protocol.FileTotal
	CompletedAt     int64
}

// NewTurnEnd returns a turn_end entry.
func NewTurnEnd(end TurnEnd) Entry {
	return Entry{
		Type: TypeTurnEnd, TurnID: end.TurnID, Status: end.Status, Error: end.Error,
		Usage: end.Usage, BeforeTree: end.BeforeTree, AfterTree: end.AfterTree,
		BeforeIndexTree: end.BeforeIndexTree, AfterIndexTree: end.AfterIndexTree,
		Files: end.Files, CompletedAt: end.CompletedAt,
	}
}

// NewCompaction returns a compaction entry: the branch's messages before
// the entry firstKeptEntryID are replaced by summary in the model's
// context; tokensBefore is the context's estimated size before.
func NewCompaction(summary, firstKeptEntryID string, tokensBefore int64) Entry {
	return Entry{Type: TypeCompaction, Summary: summary, FirstKeptEntryID: firstKeptEntryID, TokensBefore: tokensBefore}
}

// NewCustom returns a custom entry of customType holding data (any JSON
// value; nil for none).
func NewCustom(customType string, data json.RawMessage) Entry {
	return Entry{Type: TypeCustom, CustomType: customType, Data: data}
}

// isoTime formats t like JavaScript's Date.toISOString: UTC, milliseconds, Z.
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
