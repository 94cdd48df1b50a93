package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/agent"
)

// The values that cross the seam are Go structs that marshal to the JSON
// of pi's extension API (@mariozechner/pi-coding-agent 0.73.1,
// dist/core/extensions/types.d.ts), so a JavaScript runtime or a Node
// host can sit behind it. Content blocks are agent.ContentBlock, whose
// JSON is pi's ({"type":"text","text"} and {"type":"image","data",
// "mimeType"}).

// The actions of an InputResult (pi's InputEventResult).
const (
	// InputContinue leaves the input as it is ("" means the same).
	InputContinue = "continue"
	// InputTransform replaces the input's text (and images, when given).
	InputTransform = "transform"
	// InputHandled consumes the input: no turn starts (turn/start answers
	// "handled").
	InputHandled = "handled"
)

// InputSource is where an input came from (pi's InputSource).
const (
	// SourceInteractive: a person typed it (turn/start, turn/queue/add).
	SourceInteractive = "interactive"
)

// InputEvent is pi's input event: the text and images of an input before
// prompt templates and skills are expanded, as the previous input handler
// left them.
type InputEvent struct {
	Text   string               `json:"text"`
	Images []agent.ContentBlock `json:"images,omitempty"`
	Source string               `json:"source"`
}

// InputResult is an input handler's answer (pi's InputEventResult): Action
// is InputContinue (or ""), InputTransform with Text (and Images, nil to
// keep them), or InputHandled.
type InputResult struct {
	Action string               `json:"action,omitempty"`
	Text   string               `json:"text,omitempty"`
	Images []agent.ContentBlock `json:"images,omitempty"`
}

// Message is a message an extension adds to the conversation (pi's
// CustomMessage without its role and timestamp): CustomType names the
// extension (the extensionMessage item's extension), Content is what the
// model reads (as a user message), Display says whether a client shows
// it, Details is kept verbatim in the session file.
//
// View, when set, is a view object (see Widget) the extensionMessage item
// shows for display only (its controls send no ui/event); a view that is
// invalid or over 64 KiB is dropped with a warning, and the text shows.
type Message struct {
	CustomType string               `json:"customType"`
	Content    []agent.ContentBlock `json:"content"`
	Display    bool                 `json:"display"`
	Details    json.RawMessage      `json:"details,omitempty"`
	View       json.RawMessage      `json:"view,omitempty"`
}

// AgentMessage returns m as the custom message the conversation holds
// (role custom, no timestamp: the agent stamps it).
func (m Message) AgentMessage() agent.Message {
	return agent.Message{Role: agent.RoleCustom, CustomType: m.CustomType, Content: m.Content, Display: m.Display, Details: m.Details, View: m.View}
}

// Delivery says when a message sent with API.SendMessage reaches the
// model (pi's deliverAs).
type Delivery string

const (
	// DeliverSteer: into the running turn before its next model request;
	// with no turn running, or when the turn ends first, with the next
	// turn (after its input).
	DeliverSteer Delivery = "steer"
	// DeliverNextTurn: with the next turn, after its input.
	DeliverNextTurn Delivery = "nextTurn"
)

// BeforeAgentStartEvent is pi's before_agent_start event: the prompt of
// the turn about to run (the input's text as the model gets it, templates
// expanded), its images, and the system prompt as the previous handler
// left it.
type BeforeAgentStartEvent struct {
	Prompt       string               `json:"prompt"`
	Images       []agent.ContentBlock `json:"images,omitempty"`
	SystemPrompt string               `json:"systemPrompt"`
}

// BeforeAgentStartResult is a before_agent_start handler's answer (pi's
// BeforeAgentStartEventResult): a message to add after the input, and a
// system prompt replacing the current one (nil: unchanged).
type BeforeAgentStartResult struct {
	Message      *Message `json:"message,omitempty"`
	SystemPrompt *string  `json:"systemPrompt,omitempty"`
}

// AgentStart is what the before_agent_start handlers made of a turn: the
// system prompt the turn runs with and the messages added after its
// input, in dispatch order.
type AgentStart struct {
	SystemPrompt string
	Messages     []Message
}

// ToolCallEvent is pi's tool_call event: a call the model asked for, with
// its input as the previous handler left it. It comes before the call's
// approval.
type ToolCallEvent struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Input      json.RawMessage `json:"input"`
}

// ToolCallResult is a tool_call handler's answer (pi's ToolCallEventResult):
// Block stops the call (the model reads Reason as its error result; later
// handlers are not asked); otherwise Input, when set, replaces the call's
// input for the later handlers, the approval and the run (pi's handlers
// change event.input in place).
type ToolCallResult struct {
	Block  bool            `json:"block,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// ToolResultEvent is pi's tool_result event: a call that ran, with its
// result as the previous handler left it.
type ToolResultEvent struct {
	ToolCallID string               `json:"toolCallId"`
	ToolName   string               `json:"toolName"`
	Input      json.RawMessage      `json:"input"`
	Content    []agent.ContentBlock `json:"content"`
	Details    json.RawMessage      `json:"details,omitempty"`
	IsError    bool                 `json:"isError"`
}

// ToolResultResult is a tool_result handler's answer (pi's
// ToolResultEventResult): each field set replaces that part of the result.
type ToolResultResult struct {
	Content []agent.ContentBlock `json:"content,omitempty"`
	Details json.RawMessage      `json:"details,omitempty"`
	IsError *bool                `json:"isError,omitempty"`
}

// TurnEndEvent is pi's turn_end event: one model reply and the results of
// the calls it asked for (none for a reply that asked for none) are done,
// and the agent is about to take the steering messages. TurnIndex is the
// turn's, as its TurnStartEvent's.
type TurnEndEvent struct {
	TurnIndex   int             `json:"turnIndex"`
	Message     agent.Message   `json:"message"`
	ToolResults []agent.Message `json:"toolResults"`
}

// AgentStartEvent is pi's agent_start event: the agent run of a turn
// begins, after the before_agent_start handlers.
type AgentStartEvent struct{}

// AgentEndEvent is pi's agent_end event: the agent run ended (completed,
// failed or interrupted); Messages are the messages it added, in order
// (the input, steering, replies and tool results). The thread's turn
// keeps admission until its handlers return (EXTENSIBILITY.md §7).
type AgentEndEvent struct {
	Messages []agent.Message `json:"messages"`
}

// TurnStartEvent is pi's turn_start event: a turn of the run (one model
// reply and the calls it asks for) begins. TurnIndex counts the run's
// turns from 0; Timestamp is Unix milliseconds.
type TurnStartEvent struct {
	TurnIndex int   `json:"turnIndex"`
	Timestamp int64 `json:"timestamp"`
}

// MessageStartEvent is pi's message_start event: a message begins (a user
// or custom message complete; an assistant reply before it streams, with
// no content; a tool result once its call ended).
type MessageStartEvent struct {
	Message agent.Message `json:"message"`
}

// The types of an AssistantMessageEvent (pi-ai's AssistantMessageEvent
// types that knightcode's providers stream).
const (
	UpdateTextDelta     = "text_delta"
	UpdateThinkingDelta = "thinking_delta"
	UpdateToolCallEnd   = "toolcall_end"
)

// AssistantMessageEvent is what extended a streaming reply (pi-ai's
// AssistantMessageEvent): Type UpdateTextDelta or UpdateThinkingDelta
// with Delta, or UpdateToolCallEnd with ToolCall (a whole toolCall
// block), at ContentIndex of the reply. pi's partial member is the
// event's message; a runtime sets it (the JavaScript runtime does) rather
// than this struct carrying the reply twice.
type AssistantMessageEvent struct {
	Type         string              `json:"type"`
	ContentIndex int                 `json:"contentIndex"`
	Delta        string              `json:"delta,omitempty"`
	ToolCall     *agent.ContentBlock `json:"toolCall,omitempty"`
}

// MessageUpdateEvent is pi's message_update event: the reply streaming so
// far (Message) and what extended it. It is dispatched only while a
// message_update handler is registered (Runner.Handles), per stream event.
type MessageUpdateEvent struct {
	Message               agent.Message         `json:"message"`
	AssistantMessageEvent AssistantMessageEvent `json:"assistantMessageEvent"`
}

// MessageEndEvent is pi's message_end event: a message is final, before
// it is recorded.
type MessageEndEvent struct {
	Message agent.Message `json:"message"`
}

// MessageEndResult is a message_end handler's answer (pi's
// MessageEndEventResult): Message, when set, replaces the finalized
// message; it must keep the message's role.
type MessageEndResult struct {
	Message *agent.Message `json:"message,omitempty"`
}

// ContextEvent is pi's context event: the messages the model is about to
// get for one request (the conversation, compacted), as the previous
// handler left them.
type ContextEvent struct {
	Messages []agent.Message `json:"messages"`
}

// ContextResult is a context handler's answer (pi's ContextEventResult):
// Messages, when not nil (an empty list included), replace the messages
// of this request; the stored conversation is unchanged.
type ContextResult struct {
	Messages []agent.Message `json:"messages,omitempty"`
}

// The reasons of a SessionStartEvent (pi's session_start reasons).
const (
	SessionStartup = "startup"
	SessionReload  = "reload"
	SessionNew     = "new"
	SessionResume  = "resume"
	SessionFork    = "fork"
)

// SessionStartEvent is pi's session_start event: the thread load's
// extensions are loaded, for Reason (SessionStartup for a new thread,
// SessionResume for a saved one, SessionReload after /reload, SessionNew
// and SessionFork for the thread a session-replacing command made).
type SessionStartEvent struct {
	Reason string `json:"reason"`
}

// Tool is a tool an extension registers (pi's ToolDefinition): the model
// is told Name, Description and Parameters (a JSON Schema object);
// Execute runs one call. Execute must honour ctx (an interrupt cancels it)
// and report a failure as a result with IsError, or as an error (the
// model reads its text). Calls go through the thread's approval gate like
// any tool's.
//
// Source and Server say where the tool comes from in tool/list (Source
// "" is an extension's tool, SourceMCP an MCP server's, with Server).
// Approve, when set, says what the approval gate decides a call as
// (ApproveAs); an extension written in Go sets it (the MCP runtime: a
// call through its search tool is approved as the real tool).
type Tool struct {
	Name        string                                                                   `json:"name"`
	Label       string                                                                   `json:"label,omitempty"`
	Description string                                                                   `json:"description"`
	Parameters  json.RawMessage                                                          `json:"parameters"`
	Execute     func(ctx context.Context, th *Thread, call ToolCall) (ToolResult, error) `json:"-"`
	Source      string                                                                   `json:"-"`
	Server      string                                                                   `json:"-"`
	Approve     func(input json.RawMessage) ApproveAs                                    `json:"-"`
}

// SourceMCP is the Source of a tool an MCP server provides (tool/list's
// source "mcp", EXTENSIBILITY.md §8).
const SourceMCP = "mcp"

// ApproveAs is what the approval gate decides one call of a tool as
// (Tool.Approve): Tool is the name the request names and a session grant
// remembers ("" or a name of the thread's own tools: the tool's own
// name), Input the input it shows (nil: the call's), and ReadOnly says the
// call only reads, so the ask mode runs it without asking (MCP's
// annotations.readOnlyHint, EXTENSIBILITY.md §2 "Tool calls").
type ApproveAs struct {
	Tool     string
	Input    json.RawMessage
	ReadOnly bool
}

// Definition is what the model is told of t.
func (t Tool) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// ToolCall is one call of a registered tool: its id, name and input (the
// JSON arguments object, after the tool_call handlers).
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult is what a call of a registered tool produced (pi's
// AgentToolResult plus isError): the content the model reads, details kept
// on the toolResult message (the thread reads the members it knows, such
// as fileChanges; a malformed details object is ignored as a whole), and
// whether it failed.
type ToolResult struct {
	Content []agent.ContentBlock `json:"content"`
	Details json.RawMessage      `json:"details,omitempty"`
	IsError bool                 `json:"isError,omitempty"`
}

// ErrorResult is a failed ToolResult whose content is the text msg.
func ErrorResult(msg string) ToolResult {
	return ToolResult{Content: []agent.ContentBlock{agent.TextBlock(msg)}, IsError: true}
}

// Command is a slash command an extension registers (pi's
// RegisteredCommand): "/Name args" given to turn/start or turn/queue/add
// runs Handler with args instead of a turn (turn/start answers
// "handled").
type Command struct {
	Name        string                                                   `json:"name"`
	Description string                                                   `json:"description,omitempty"`
	Handler     func(ctx context.Context, th *Thread, args string) error `json:"-"`
}

// Provider is a model provider an extension registers (pi's
// registerProvider), in one of two forms (EXTENSIBILITY.md §7 "Extension
// providers in model/list"):
//   - configuration-only: Config is pi's ProviderConfig as JSON, without
//     functions ({"baseUrl", "api", "apiKey"?, "headers"?, "models":
//     [{"id", "name"?, "reasoning"?, "input"?, "contextWindow"?,
//     "maxTokens"?, "cost"?}]}); the thread runs it through its own
//     provider clients, so every thread may use it while a loaded thread
//     registers it;
//   - with functions: Models are the models it offers (their Provider is
//     Name) and Streamer streams their replies. It runs in the runtime
//     that registered it, so only threads that load it can use it.
type Provider struct {
	Name     string          `json:"name"`
	Config   json.RawMessage `json:"config,omitempty"`
	Models   []agent.Model   `json:"models,omitempty"`
	Streamer agent.Streamer  `json:"-"`
}

// ProviderHost is implemented by a Host that uses the providers its
// extensions register: the Runner calls ProvidersChanged with every
// provider the load registers, in load and registration order, once its
// extensions are loaded and whenever a loaded extension registers or
// unregisters one afterwards, and with nil when the load is disposed.
// The errors it returns, by provider name (a provider it cannot use),
// are warnings of the extensions that registered them.
type ProviderHost interface {
	ProvidersChanged(ps []Provider) map[string]error
}

// Warning is a problem of one extension the thread reports (a warning of
// source "extension"): Path is the extension's Path, or for a failure
// located in its source (a SourceError) the file of that position, with
// its 1-based Line and Column (0 when unknown).
type Warning struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// SourceError is a failure located in an extension's source: the
// absolute File and the 1-based Line and Column in it (a syntax error, an
// unresolvable import, a throw while loading, mapped to the TypeScript
// source). A Load failing with one (wrapped or not) is a load warning
// carrying that position (Runner.Load).
type SourceError struct {
	File         string
	Line, Column int
	Err          error
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

// The dialog kinds of UI.Dialog (the spec's ui/dialog kinds).
const (
	DialogSelect  = "select"
	DialogConfirm = "confirm"
	DialogInput   = "input"
	DialogEditor  = "editor"
)

// Dialog is a dialog an extension asks (pi's ctx.ui.select, confirm, input
// and editor): Kind is DialogSelect (with Options), DialogConfirm (with
// Message), DialogInput (with Placeholder) or DialogEditor (with Prefill);
// Title is shown for every kind.
type Dialog struct {
	Kind        string   `json:"kind"`
	Title       string   `json:"title"`
	Options     []string `json:"options,omitempty"`
	Message     string   `json:"message,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Prefill     string   `json:"prefill,omitempty"`
}

// DialogAnswer is the answer to a Dialog: Cancelled (pi's undefined, or
// false for a confirm) when the person cancelled, nobody could be asked,
// or the thread has no UI; otherwise Value holds the select, input or
// editor value, and a confirm was confirmed.
type DialogAnswer struct {
	Cancelled bool   `json:"cancelled,omitempty"`
	Value     string `json:"value,omitempty"`
}

// Question is one question of UI.Questions (ask_user's): ID keys its
// answer, Text is shown, Options are the answers offered.
type Question struct {
	ID      string           `json:"id"`
	Text    string           `json:"text"`
	Options []QuestionOption `json:"options"`
}

// QuestionOption is one answer a Question offers.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Answer is the person's answer to one Question: an option's Label with an
// optional Note, or Other, their own answer.
type Answer struct {
	Label string `json:"label,omitempty"`
	Note  string `json:"note,omitempty"`
	Other string `json:"other,omitempty"`
}

// ErrDismissed is returned (wrapped) by UI.Questions when the person
// dismissed the questions or nobody could be asked.
var ErrDismissed = errors.New("the user dismissed the questions")

// The placements of a widget.
const (
	AboveEditor = "aboveEditor"
	BelowEditor = "belowEditor"
)

// Widget is what an extension shows beside the transcript under a key
// (pi's ctx.ui.setWidget with lines, or with a view object): Placement is
// AboveEditor (the default when empty) or BelowEditor; Lines are its text
// lines (an empty list is an empty widget, not a removal); View, when set,
// is a view object of the closed schema of EXTENSIBILITY.md §6 "View
// schema" (JSON: {"type":"stack"|"list"|"text"|"button"|"input"|"select"|
// "toggle"|"progress"|"link", ...}) shown instead of the lines. The thread
// checks it (CheckView) before showing it: an invalid view, or one over
// 16 KiB, is dropped with one warning per key per load, and the lines show.
type Widget struct {
	Placement string          `json:"placement"`
	Lines     []string        `json:"lines"`
	View      json.RawMessage `json:"view,omitempty"`
}

// ViewEvent is a press of the button ID, or a change of the field ID, in
// the view of the widget WidgetKey (the spec's ui/event, pi-style
// {widgetKey, id, value?}): Value is a string for an input or a select
// (one of its options), a bool for a toggle, nil for a button. The field
// still shows the view's value: a handler answers by setting the widget
// again.
type ViewEvent struct {
	WidgetKey string `json:"widgetKey"`
	ID        string `json:"id"`
	Value     any    `json:"value,omitempty"`
}

// ViewEventHandler handles a ViewEvent (ctx.ui.onViewEvent's handler). ctx
// ends after 10 s, when the ui/event is answered anyway; an error (or a
// panic) is a warning.
type ViewEventHandler func(ctx context.Context, e ViewEvent) error

// UI is the thread's user interface as an extension reaches it (pi's
// ExtensionUIContext, the part a desktop client can show). Its methods are
// safe for concurrent use; those that ask wait for the answer or ctx.
//
// Dialog and Questions are asked the way approvals are (spec "Dialogs and
// extension UI"): of the initiating subscriber first, migrating when it
// goes, while the thread reports waitingOn ["dialog"]; on a thread without
// UI (a terminal-mode connection's) Dialog answers cancelled at once.
// Notify sends ui/notify. The state and widget setters change the
// thread's extension UI, the ui of the thread/start, resume and fork
// results.
type UI interface {
	// Dialog asks d. Errors: an unknown kind, a select without options.
	Dialog(ctx context.Context, d Dialog) (DialogAnswer, error)
	// Questions asks ask_user's questions qs of the tool call callID, all
	// at once (item/toolCall/requestUserInput), and returns the answers
	// by question id (a skipped question is absent). Errors: one wrapping
	// ErrDismissed; ctx's error.
	Questions(ctx context.Context, callID string, qs []Question) (map[string]Answer, error)
	// Notify shows message at level "info", "warning" or "error".
	Notify(level, message string)
	// SetStatus sets the status text under key; "" clears it.
	SetStatus(key, text string)
	// SetWidget sets the widget under key; nil removes it.
	SetWidget(key string, w *Widget)
	// SetTitle sets the title; "" clears it.
	SetTitle(title string)
	// SetWorkingMessage sets the waiting indicator's text; "" restores
	// the default.
	SetWorkingMessage(message string)
	// SetWorkingVisible shows or hides the waiting indicator.
	SetWorkingVisible(visible bool)
	// OnViewEvent registers h for the ui/event requests of the thread's
	// widgets' views (ctx.ui.onViewEvent) and returns the function that
	// unregisters it. Every handler gets every event; the ui/event is
	// answered once they all returned (at most 10 s), so the widgets they
	// set reach the client before the answer.
	OnViewEvent(h ViewEventHandler) (unregister func())
	// TerminalOnly reports a call that draws only in the terminal (a
	// widget factory, custom(), a header or footer, raw input, the
	// working indicator; method is its name, "setWidget"): the server
	// logs one line per method per thread load and draws nothing (spec
	// "Dialogs and extension UI"). It is no error, so no warning.
	TerminalOnly(method string)
}

// ExtensionUIHost is implemented by a Host whose UI can name the
// extension acting through it (in the warnings of a refused widget or
// status, or of a failing view event handler): the Runner gives each
// extension ExtensionUI(its Path) instead of UI().
type ExtensionUIHost interface {
	ExtensionUI(path string) UI
}
