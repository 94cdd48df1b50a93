package agent

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Role names who wrote a Message: "user", "assistant" or "toolResult"
// (pi-compatible). Unknown roles read from a session file are kept as they are.
type Role string

// The roles of the LLM message model.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
	// RoleCustom is an extension's message (pi's CustomMessage): the model
	// reads it as a user message (ForModel); CustomType names the extension.
	RoleCustom Role = "custom"
)

// StopReason says why an assistant message ended.
type StopReason string

// The stop reasons of an assistant message. StopLength (the model hit its
// output limit) is kept for pi compatibility; this package never sets it.
const (
	StopReasonStop    StopReason = "stop"    // the reply is final and asks for no tool
	StopReasonToolUse StopReason = "toolUse" // the reply asks for tool calls
	StopReasonError   StopReason = "error"   // the provider failed; ErrorMessage says why
	StopReasonAborted StopReason = "aborted" // the run was interrupted mid-reply
	StopReasonLength  StopReason = "length"
)

// Message is one entry of the conversation in the pi-compatible JSON shape that
// session files store inside {"type":"message",...,"message":M} entries. Which
// fields are meaningful depends on Role; MarshalJSON writes exactly the fields of
// the role:
//
//	user:       {"role":"user","content":[text|image...],"typed"?,"comments"?,"timestamp":ms}
//	assistant:  {"role":"assistant","content":[thinking|text|toolCall...],"provider","model",
//	             "usage":{...},"stopReason","errorMessage"?,"timestamp":ms,"durationMs"?}
//	toolResult: {"role":"toolResult","toolCallId","toolName","content":[text...],
//	             "details"?,"isError":bool,"timestamp":ms}
//	custom:     {"role":"custom","customType","content":[text...],"display":bool,
//	             "details"?,"timestamp":ms}
//
// Timestamp and DurationMs are Unix milliseconds and milliseconds. Details is the
// tool's details object kept verbatim (a ToolDetails for the built-in tools); use
// FileChanges and ToolStatus to read it.
type Message struct {
	Role      Role
	Content   []ContentBlock
	Timestamp int64

	// Typed is, on a user message whose text the server expanded (a prompt
	// template or /skill:name, issue 13), the text the user typed: the
	// userMessage item shows it, while Content (what the model gets) holds
	// the expansion. Empty when the two are the same. Providers never send
	// it; pi ignores the extra field.
	Typed string
	// Comments are, on a user message, the review comments sent with it:
	// Content holds the commented lines quoted for the model, the
	// userMessage item shows the comments beside Typed.
	Comments []ReviewComment

	// Assistant messages.
	Provider     string
	Model        string
	Usage        Usage
	StopReason   StopReason
	ErrorMessage string
	DurationMs   int64

	// Tool result messages.
	ToolCallID string
	ToolName   string
	Details    json.RawMessage
	IsError    bool

	// Custom messages (Details too): the extension that wrote it, and
	// whether a client shows it. View is the view object its
	// extensionMessage item shows (checked before it is kept; written as
	// "view", which pi ignores; never sent to a model).
	CustomType string
	Display    bool
	View       json.RawMessage
}

// ForModel returns msgs as a model reads them: custom messages become user
// messages with the same content and time (pi's convertToLlm); the others
// are kept. msgs is not modified.
func ForModel(msgs []Message) []Message {
	out := msgs
	copied := false
	for i, m := range msgs {
		if m.Role != RoleCustom {
			continue
		}
		if !copied {
			out = append([]Message(nil), msgs...)
			copied = true
		}
		out[i] = Message{Role: RoleUser, Content: m.Content, Timestamp: m.Timestamp}
	}
	return out
}

// UserText returns a user message holding one text block, stamped with
// timestamp (Unix ms).
func UserText(text string, timestamp int64) Message {
	return Message{Role: RoleUser, Content: []ContentBlock{TextBlock(text)}, Timestamp: timestamp}
}

// Text returns the concatenation of the message's text blocks (thinking and
// tool calls excluded), the text of an agentMessage item.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ReviewComment is a review comment on a diff sent with a user message
// (the wire's ReviewComment: path, side "old" or "new", one-based inclusive
// startLine and endLine, body, and the trees of the diff read it was made
// on).
type ReviewComment struct {
	Path      string `json:"path"`
	Side      string `json:"side"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Body      string `json:"body"`
	FromTree  string `json:"fromTree"`
	ToTree    string `json:"toTree"`
}

// DisplayText returns what a user message's userMessage item shows: the text
// the user typed (Typed) when the server expanded it or added review
// comments to it, else Text.
func (m Message) DisplayText() string {
	if m.Typed != "" || len(m.Comments) > 0 {
		return m.Typed
	}
	return m.Text()
}

// ToolCalls returns the message's tool call blocks in order (empty for
// non-assistant messages).
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, c := range m.Content {
		if c.Type == ContentToolCall {
			calls = append(calls, c.ToolCall())
		}
	}
	return calls
}

// ToolDetails is the details object the built-in tools attach to their
// toolResult messages (Message.Details). All fields are optional.
type ToolDetails struct {
	// FileChanges lists the files a completed edit/write changed; failed calls
	// report none (spec "Threads and turns").
	FileChanges []FileChange `json:"fileChanges,omitempty"`
	// Declined is true when the approval hook refused the call; the result's
	// text carries the reason.
	Declined bool `json:"declined,omitempty"`
	// ExitCode is bash's exit status (absent when the command was killed or did
	// not start).
	ExitCode *int `json:"exitCode,omitempty"`
	// Truncated is true when the output shown was cut to the tool's limits.
	Truncated bool `json:"truncated,omitempty"`
	// BackgroundShellID is the id of the background shell a bash call
	// with run_in_background started (spec, thread/backgroundShells).
	BackgroundShellID string `json:"backgroundShellId,omitempty"`
	// View is the view object an extension tool's result gave
	// (details.view), checked before it is kept; the toolCall item shows
	// it, for display only.
	View json.RawMessage `json:"view,omitempty"`
	// StructuredContent is an MCP tool's structuredContent (EXTENSIBILITY.md
	// §2 "Tool calls"), kept as the server sent it.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// MCPApp is the mcpApp of a call of an MCP tool with an app
	// (EXTENSIBILITY.md §3): {server, resourceUri, result?,
	// resultOmitted?}, kept so the toolCall item read back equals the live
	// one.
	MCPApp json.RawMessage `json:"mcpApp,omitempty"`
}

func (d ToolDetails) isZero() bool {
	return len(d.FileChanges) == 0 && !d.Declined && d.ExitCode == nil && !d.Truncated && d.BackgroundShellID == "" &&
		len(d.View) == 0 && len(d.StructuredContent) == 0 && len(d.MCPApp) == 0
}

// FileChangeKind is how a tool call changed a file: "add", "modify" or "delete".
type FileChangeKind string

// The file change kinds of the spec's fileChanges.
const (
	FileAdd    FileChangeKind = "add"
	FileModify FileChangeKind = "modify"
	FileDelete FileChangeKind = "delete"
)

// FileChange is one entry of a tool result's details.fileChanges: the path
// (relative to the thread's cwd when inside it, slash-separated; else absolute),
// the kind, and a unified diff of the change (omitted when empty).
type FileChange struct {
	Path string         `json:"path"`
	Kind FileChangeKind `json:"kind"`
	Diff string         `json:"diff,omitempty"`
}

// FileChanges returns the validated details.fileChanges of a toolResult
// message. A malformed report (details not an object, fileChanges not an array
// of {path, kind, diff?} with a non-empty path and a known kind) is ignored as a
// whole, and failed calls report none (spec "Threads and turns").
func (m Message) FileChanges() []FileChange {
	if m.Role != RoleToolResult || m.IsError || len(m.Details) == 0 {
		return nil
	}
	var d struct {
		FileChanges []FileChange `json:"fileChanges"`
	}
	if err := json.Unmarshal(m.Details, &d); err != nil {
		return nil
	}
	for _, fc := range d.FileChanges {
		switch fc.Kind {
		case FileAdd, FileModify, FileDelete:
		default:
			return nil
		}
		if fc.Path == "" {
			return nil
		}
	}
	return d.FileChanges
}

// ToolStatus is the final status of a tool call as the wire's toolCall item
// shows it.
type ToolStatus string

// The final statuses of a tool call ("inProgress" is the caller's, while the
// call runs).
const (
	ToolCompleted ToolStatus = "completed"
	ToolFailed    ToolStatus = "failed"
	ToolDeclined  ToolStatus = "declined"
)

// ToolStatus derives a toolResult message's status: declined when its details
// say so, failed when IsError, else completed. It reads back the same status Run
// reported in EventToolEnd.
func (m Message) ToolStatus() ToolStatus {
	var d struct {
		Declined bool `json:"declined"`
	}
	if len(m.Details) > 0 && json.Unmarshal(m.Details, &d) == nil && d.Declined {
		return ToolDeclined
	}
	if m.IsError {
		return ToolFailed
	}
	return ToolCompleted
}

// Usage is the token usage of one assistant reply (counts of tokens) and its
// cost in US dollars.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Cost       Cost  `json:"cost"`
}

// Cost is the price of a reply in US dollars.
type Cost struct {
	Total float64 `json:"total"`
}

// ContextTokens returns the size in tokens of the conversation as a reply
// left it: its prompt (input, cache read, cache write) plus its output, the
// spec's TokenUsage contextTokens after that reply (0 when the provider
// reported no usage).
func (u Usage) ContextTokens() int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Add returns the field-by-field sum of u and v (for cumulative thread usage).
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		Cost:       Cost{Total: u.Cost.Total + v.Cost.Total},
	}
}

type userJSON struct {
	Role      Role            `json:"role"`
	Content   []ContentBlock  `json:"content"`
	Typed     string          `json:"typed,omitempty"`
	Comments  []ReviewComment `json:"comments,omitempty"`
	Timestamp int64           `json:"timestamp"`
}

type assistantJSON struct {
	Role         Role           `json:"role"`
	Content      []ContentBlock `json:"content"`
	Provider     string         `json:"provider"`
	Model        string         `json:"model"`
	Usage        Usage          `json:"usage"`
	StopReason   StopReason     `json:"stopReason"`
	ErrorMessage string         `json:"errorMessage,omitempty"`
	Timestamp    int64          `json:"timestamp"`
	DurationMs   int64          `json:"durationMs,omitempty"`
}

type customJSON struct {
	Role       Role            `json:"role"`
	CustomType string          `json:"customType"`
	Content    []ContentBlock  `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	View       json.RawMessage `json:"view,omitempty"`
	Timestamp  int64           `json:"timestamp"`
}

type toolResultJSON struct {
	Role       Role            `json:"role"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Content    []ContentBlock  `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
	IsError    bool            `json:"isError"`
	Timestamp  int64           `json:"timestamp"`
}

// anyJSON reads every role and writes unknown ones.
type anyJSON struct {
	Role         Role            `json:"role"`
	Content      []ContentBlock  `json:"content"`
	Provider     string          `json:"provider,omitempty"`
	Model        string          `json:"model,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
	StopReason   StopReason      `json:"stopReason,omitempty"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	ToolName     string          `json:"toolName,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
	IsError      bool            `json:"isError,omitempty"`
	Typed        string          `json:"typed,omitempty"`
	Comments     []ReviewComment `json:"comments,omitempty"`
	Timestamp    int64           `json:"timestamp"`
	DurationMs   int64           `json:"durationMs,omitempty"`
	CustomType   string          `json:"customType,omitempty"`
	Display      bool            `json:"display,omitempty"`
	View         json.RawMessage `json:"view,omitempty"`
}

// MarshalJSON writes the message in the pi-compatible shape of its role (see
// Message). A nil Content is written as [].
func (m Message) MarshalJSON() ([]byte, error) {
	content := m.Content
	if content == nil {
		content = []ContentBlock{}
	}
	details := m.Details
	if bytes.Equal(bytes.TrimSpace(details), []byte("null")) {
		details = nil
	}
	switch m.Role {
	case RoleUser:
		return json.Marshal(userJSON{Role: m.Role, Content: content, Typed: m.Typed, Comments: m.Comments, Timestamp: m.Timestamp})
	case RoleAssistant:
		return json.Marshal(assistantJSON{
			Role: m.Role, Content: content, Provider: m.Provider, Model: m.Model, Usage: m.Usage,
			StopReason: m.StopReason, ErrorMessage: m.ErrorMessage, Timestamp: m.Timestamp,
			DurationMs: m.DurationMs,
		})
	case RoleToolResult:
		return json.Marshal(toolResultJSON{
			Role: m.Role, ToolCallID: m.ToolCallID, ToolName: m.ToolName, Content: content,
			Details: details, IsError: m.IsError, Timestamp: m.Timestamp,
		})
	case RoleCustom:
		return json.Marshal(customJSON{
			Role: m.Role, CustomType: m.CustomType, Content: content, Display: m.Display,
			Details: details, View: m.View, Timestamp: m.Timestamp,
		})
	}
	a := anyJSON{
		Role: m.Role, Content: content, Provider: m.Provider, Model: m.Model,
		StopReason: m.StopReason, ErrorMessage: m.ErrorMessage, ToolCallID: m.ToolCallID,
		ToolName: m.ToolName, Details: details, IsError: m.IsError, Typed: m.Typed, Comments: m.Comments, Timestamp: m.Timestamp,
		DurationMs: m.DurationMs,
	}
	if m.Usage != (Usage{}) {
		a.Usage = &m.Usage
	}
	return json.Marshal(a)
}

// UnmarshalJSON reads a message of any role; fields that do not belong to the
// role are read too and kept. Unknown fields are ignored. A content given as a
// plain string (which pi allows for user messages) reads as one text block.
func (m *Message) UnmarshalJSON(data []byte) error {
	var a struct {
		anyJSON
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	var content []ContentBlock
	if c := bytes.TrimSpace(a.Content); len(c) > 0 && c[0] == '"' {
		var text string
		if err := json.Unmarshal(c, &text); err != nil {
			return err
		}
		content = []ContentBlock{TextBlock(text)}
	} else if len(c) > 0 {
		if err := json.Unmarshal(c, &content); err != nil {
			return err
		}
	}
	*m = Message{
		Role: a.Role, Content: content, Timestamp: a.Timestamp, Provider: a.Provider,
		Model: a.Model, StopReason: a.StopReason, ErrorMessage: a.ErrorMessage,
		DurationMs: a.DurationMs, ToolCallID: a.ToolCallID, ToolName: a.ToolName,
		Details: a.Details, IsError: a.IsError, Typed: a.Typed, Comments: a.Comments,
		CustomType: a.CustomType, Display: a.Display, View: a.View,
	}
	if a.Usage != nil {
		m.Usage = *a.Usage
	}
	return nil
}
