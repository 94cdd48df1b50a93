package protocol

import "encoding/json"

// Thread is a conversation thread as thread/start, thread/resume,
// thread/fork and thread/read return it.
//
// CreatedAt is the session header's creation time and UpdatedAt the latest
// entry time (falling back to the header) for a loaded thread; both are
// ISO-8601 strings, unlike the Unix-millisecond times of turns and items.
// SessionFile is the session file's path once it has been saved (a thread
// with no entry yet has none). ForkedFromID is the parent session's header
// id, never a UUID inferred from a file name.
type Thread struct {
	ID           string       `json:"id"`
	Cwd          string       `json:"cwd"`
	CreatedAt    string       `json:"createdAt"`
	UpdatedAt    string       `json:"updatedAt"`
	Title        string       `json:"title,omitempty"`
	Status       ThreadStatus `json:"status"`
	SessionFile  string       `json:"sessionFile,omitempty"`
	ForkedFromID string       `json:"forkedFromId,omitempty"`
	Workspace    Workspace    `json:"workspace"`
}

// ThreadSummary is one row of thread/list. UpdatedAt is the transcript's
// file modification time as an ISO-8601 string; CreatedAt the header's
// timestamp. Title is the thread's name, else its first user text cut to
// 100 code points. Status is the thread's status when the page was made
// (thread/list always sends it). WorkspaceMode is "worktree" for worktree
// threads and absent otherwise; ProjectCwd is then the project the worktree
// was made from, so a client listing a project's threads (thread/list with
// that cwd) sees them too.
type ThreadSummary struct {
	ID            string        `json:"id"`
	Cwd           string        `json:"cwd"`
	CreatedAt     string        `json:"createdAt"`
	UpdatedAt     string        `json:"updatedAt"`
	Title         string        `json:"title,omitempty"`
	SessionFile   string        `json:"sessionFile"`
	ForkedFromID  string        `json:"forkedFromId,omitempty"`
	Status        *ThreadStatus `json:"status,omitempty"`
	WorkspaceMode string        `json:"workspaceMode,omitempty"`
	ProjectCwd    string        `json:"projectCwd,omitempty"`
}

// Thread status types (ThreadStatus.Type).
const (
	ThreadStatusNotLoaded   = "notLoaded"
	ThreadStatusIdle        = "idle"
	ThreadStatusActive      = "active"
	ThreadStatusSystemError = "systemError"
)

// Values of ThreadStatus.WaitingOn.
const (
	WaitingOnApproval = "approval"
	WaitingOnDialog   = "dialog"
)

// ThreadStatus is one of {type:"notLoaded"}, {type:"idle"},
// {type:"active", waitingOn:[...]} (waitingOn always present, possibly empty,
// holding "approval" and/or "dialog") or {type:"systemError", message}.
type ThreadStatus struct {
	Type      string   `json:"type"`
	WaitingOn []string `json:"waitingOn,omitempty"`
	Message   string   `json:"message,omitempty"`
}

// MarshalJSON writes exactly the fields of the status's type: waitingOn is
// always present (as [] when empty) for "active" and absent otherwise;
// message only for "systemError".
func (s ThreadStatus) MarshalJSON() ([]byte, error) {
	switch s.Type {
	case ThreadStatusActive:
		w := s.WaitingOn
		if w == nil {
			w = []string{}
		}
		return json.Marshal(struct {
			Type      string   `json:"type"`
			WaitingOn []string `json:"waitingOn"`
		}{s.Type, w})
	case ThreadStatusSystemError:
		return json.Marshal(struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}{s.Type, s.Message})
	default:
		return json.Marshal(struct {
			Type string `json:"type"`
		}{s.Type})
	}
}

// Workspace says where a thread runs: {mode: "local"}, the user's checkout, or {mode: "worktree", path,
// projectCwd, baseRef?, deleted?}, a managed git worktree: Path is the
// worktree's root (the thread's cwd is in it), ProjectCwd the project it was
// made from (the main checkout's root), BaseRef the baseRef it was created
// from when one was given, and Deleted is true while the worktree is deleted
// (archived or pruned; thread/worktree/restore rebuilds it).
type Workspace struct {
	Mode       string `json:"mode"`
	Path       string `json:"path,omitempty"`
	ProjectCwd string `json:"projectCwd,omitempty"`
	BaseRef    string `json:"baseRef,omitempty"`
	Deleted    bool   `json:"deleted,omitempty"`
}

// Turn statuses (Turn.Status).
const (
	TurnInProgress  = "inProgress"
	TurnCompleted   = "completed"
	TurnFailed      = "failed"
	TurnInterrupted = "interrupted"
)

// Turn is one agent run between durable start and end entries. StartedAt and CompletedAt are Unix milliseconds; a
// turn without an end entry has no CompletedAt. Error is set on failed
// turns. Files are the net line totals of the files changed while the turn
// ran: present whenever the turn has totals ([] when no file changed),
// exactly as turn/diff/updated carries them, absent only when it has none
// (outside git, or a capture failed), live and read back alike. Items is
// absent in summaries (turn/completed, thread/turn/completed).
//
// Ref is set on a turn a history page sent as a payload reference (the
// page would have exceeded 1 MiB): the turn then carries its summary only
// (id, status, times, usage, error.message bounded to 2,000 characters,
// and files unless the page needed their room too) and no items; the
// referenced payload (payload/read) is the whole turn as JSON, items and
// full error included.
type Turn struct {
	ID          string      `json:"id"`
	Status      string      `json:"status"`
	StartedAt   int64       `json:"startedAt"`
	CompletedAt int64       `json:"completedAt,omitempty"`
	Error       *TurnError  `json:"error,omitempty"`
	Usage       *TurnUsage  `json:"usage,omitempty"`
	Files       []FileTotal `json:"files,omitzero"`
	Items       []Item      `json:"items,omitempty"`
	Ref         *PayloadRef `json:"ref,omitempty"`
}

// Error kinds (TurnError.Kind), classified from the error text.
const (
	ErrorKindAuth            = "auth"
	ErrorKindRateLimit       = "rateLimit"
	ErrorKindContextOverflow = "contextOverflow"
	ErrorKindNetwork         = "network"
	ErrorKindProvider        = "provider"
	ErrorKindOther           = "other"
)

// TurnError is a failed turn's error. Summaries bound Message to 2,000
// characters; full payloads retain it.
type TurnError struct {
	Message string `json:"message"`
	Kind    string `json:"kind"`
}

// TurnUsage is the token usage of one turn: token counts and Cost, the total
// cost in US dollars.
type TurnUsage struct {
	Input      int64   `json:"input"`
	Output     int64   `json:"output"`
	CacheRead  int64   `json:"cacheRead"`
	CacheWrite int64   `json:"cacheWrite"`
	Cost       float64 `json:"cost"`
}

// FileTotal is one file's net line totals between the working tree before
// and after a turn (turn/diff/updated and a turn's files). Binary (present
// only when true) marks a binary file, which has no line count: its 0/0
// is not "unchanged lines".
type FileTotal struct {
	Path      string `json:"path"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Binary    bool   `json:"binary,omitempty"`
}

// Item types (Item.Type).
const (
	ItemUserMessage  = "userMessage"
	ItemAgentMessage = "agentMessage"
	ItemReasoning    = "reasoning"
	ItemToolCall     = "toolCall"
	// ItemCompaction is a compaction of the thread's history (issue 12):
	// Text is the summary the model continues from; it carries only
	// CompletedAt.
	ItemCompaction = "compaction"
	// ItemExtensionMessage is a message an extension (or the server, for
	// extension background_shell) added to the conversation for the model.
	ItemExtensionMessage = "extensionMessage"
)

// Tool call statuses (Item.Status).
const (
	ToolInProgress = "inProgress"
	ToolCompleted  = "completed"
	ToolFailed     = "failed"
	ToolDeclined   = "declined"
)

// File change kinds (FileChange.Kind).
const (
	FileAdd    = "add"
	FileModify = "modify"
	FileDelete = "delete"
)

// Item is one entry of a turn: a user message, an agent message, reasoning,
// a tool call, a compaction or an extension message, told apart by Type.
// Its ID is the durable ordinal "item-<n>" except for tool calls, whose ID
// is the call id; an ID is unique only within its thread and turn. Index
// is the item's top-level position in its turn (0-based; order by its
// latest value). StartedAt and CompletedAt are Unix milliseconds; user,
// compaction and extension message items carry only CompletedAt. Text is
// always sent for the types that have it, even when empty, unless the item
// is a reference (Ref).
//
// Values over the 64 KiB inline limit travel as payload references
// (payload/read): a tool call's arguments or output whose JSON alone
// exceeds it is left out and named by ArgumentsRef (the arguments' JSON) or
// OutputRef (the output's UTF-8 text); an item still over the limit after
// that is sent with Ref, the whole item as JSON, and carries only id, type,
// index, times, name, status, clientMessageId and images (no text,
// arguments, output or fileChanges: those are in the payload).
//
// Go: one struct holds every type's fields; the schema and the TypeScript
// declarations describe each type's shape on its own (unions.go).
type Item struct {
	ID              string          `json:"id"`
	Type            string          `json:"type"`
	Index           *int            `json:"index,omitempty"`
	StartedAt       int64           `json:"startedAt,omitempty"`
	CompletedAt     int64           `json:"completedAt,omitempty"`
	Text            string          `json:"text,omitempty"`
	Images          int             `json:"images,omitempty"`
	ClientMessageID string          `json:"clientMessageId,omitempty"`
	Name            string          `json:"name,omitempty"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	Status          string          `json:"status,omitempty"`
	Output          *string         `json:"output,omitempty"`
	FileChanges     []FileChange    `json:"fileChanges,omitempty"`
	ArgumentsRef    *PayloadRef     `json:"argumentsRef,omitempty"`
	OutputRef       *PayloadRef     `json:"outputRef,omitempty"`
	Ref             *PayloadRef     `json:"ref,omitempty"`
	// Comments are a userMessage's review comments, shown next to its text
	// (the text is what the user typed; the model got the commented lines
	// quoted after it).
	Comments []ReviewComment `json:"comments,omitempty"`
	// BackgroundShellID is the background shell a shell call run in the
	// background started (thread/backgroundShells/*).
	BackgroundShellID string `json:"backgroundShellId,omitempty"`
	// Extension names the extension that added the message
	// (background_shell for the server's notice of ended background
	// commands).
	Extension string `json:"extension,omitempty"`
	// BackgroundShells are the background commands a background_shell
	// message reports ended.
	BackgroundShells []BackgroundShellNotice `json:"backgroundShells,omitempty"`
	// View is the view object of an extension tool's result (toolCall) or
	// of an extension's message (extensionMessage), checked by the server
	// (the schema of ui/widget's view, at most 64 KiB): for display only,
	// its controls send no ui/event.
	View json.RawMessage `json:"view,omitempty"`
	// McpApp is on a call of an MCP tool with an app (its
	// _meta.ui.resourceUri), on a thread whose loading connection sent
	// capabilities.mode "desktop" explicitly (a client that draws apps).
	McpApp *McpApp `json:"mcpApp,omitempty"`
}

// McpApp is the app of a toolCall item: the MCP Server that owns it, the
// ui:// ResourceURI of its HTML (mcp/app/readResource), and Result, the
// server's whole CallToolResult (with _meta and structuredContent), or
// ResultOmitted true when that is over 256 KiB as JSON: the app then gets
// the item's text output.
type McpApp struct {
	Server        string          `json:"server"`
	ResourceURI   string          `json:"resourceUri"`
	Result        json.RawMessage `json:"result,omitempty"`
	ResultOmitted bool            `json:"resultOmitted,omitempty"`
}

type itemFields Item

// MarshalJSON writes text for the text-bearing item types (compaction
// too) even when it is empty, and arguments as {} for a tool call without
// any, unless the item is a reference (Ref) or its arguments are
// (ArgumentsRef).
func (it Item) MarshalJSON() ([]byte, error) {
	var text *string
	switch it.Type {
	case ItemUserMessage, ItemAgentMessage, ItemReasoning, ItemCompaction, ItemExtensionMessage:
		if it.Ref == nil {
			t := it.Text
			text = &t
		}
	}
	fields := itemFields(it)
	if it.Type == ItemToolCall && len(fields.Arguments) == 0 && it.Ref == nil && it.ArgumentsRef == nil {
		fields.Arguments = json.RawMessage(`{}`)
	}
	// The outer Text field is shallower than the embedded one, so it wins.
	return json.Marshal(struct {
		itemFields
		Text *string `json:"text,omitempty"`
	}{fields, text})
}

// FileChange is one file a completed edit/write (or extension) tool call
// changed: Kind is add, modify or delete; Diff is the tool result's
// non-empty patch.
type FileChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Diff string `json:"diff,omitempty"`
}

// Warning is a problem that did not stop a thread from loading, or that no
// response carries: {message, source, path?, line?, column?}. Source is
// settings, extension, trust or server; Line and Column are 1-based.
type Warning struct {
	Message string `json:"message"`
	Source  string `json:"source"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// WarningParams are the params of the warning notification: a [Warning]
// about the thread ThreadID (absent for a worktree/delete of a worktree no
// thread was attached to).
type WarningParams struct {
	ThreadID string `json:"threadId,omitempty"`
	Warning
}

// Warning sources (Warning.Source).
const (
	WarningSourceSettings  = "settings"
	WarningSourceExtension = "extension"
	WarningSourceTrust     = "trust"
	WarningSourceServer    = "server"
)

// Workspace modes (Workspace.Mode).
const (
	WorkspaceLocal    = "local"
	WorkspaceWorktree = "worktree"
)

// Approval modes of a thread (thread/start and thread/settings/update
// approvalMode; spec: Approvals).
const (
	ApprovalAsk        = "ask"
	ApprovalFullAccess = "fullAccess"
)

// ModelRef names a model of model/list: {provider, id}.
type ModelRef struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// ThreadUI is a thread's extension UI as it stands when a response is
// written: statuses sorted by key, an
// optional title and working message, whether the working indicator shows,
// and the widgets. Without extensions it is {statuses: [], workingVisible:
// true, widgets: []}: nothing shown, and the working indicator at its
// default (visible while the agent works).
type ThreadUI struct {
	Statuses       []UIStatus `json:"statuses"`
	Title          string     `json:"title,omitempty"`
	WorkingMessage string     `json:"workingMessage,omitempty"`
	WorkingVisible bool       `json:"workingVisible"`
	Widgets        []UIWidget `json:"widgets"`
}

// UIStatus is one status an extension shows: {key, text}.
type UIStatus struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// UIWidget is one widget an extension shows: {key, placement, lines} or
// {key, placement, view}. View is a checked view object, kept as JSON.
type UIWidget struct {
	Key       string          `json:"key"`
	Placement string          `json:"placement"`
	Lines     []string        `json:"lines,omitempty"`
	View      json.RawMessage `json:"view,omitempty"`
}

// MarshalJSON writes lines, [] when empty, for a widget without a view.
func (w UIWidget) MarshalJSON() ([]byte, error) {
	type fields UIWidget
	if w.View != nil {
		return json.Marshal(fields(w))
	}
	lines := w.Lines
	if lines == nil {
		lines = []string{}
	}
	f := fields(w)
	f.Lines = nil
	return json.Marshal(struct {
		fields
		Lines []string `json:"lines"`
	}{f, lines})
}

// EmptyUI returns the UI of a thread without extension UI.
func EmptyUI() ThreadUI {
	return ThreadUI{Statuses: []UIStatus{}, WorkingVisible: true, Widgets: []UIWidget{}}
}

// ThreadStartWorkspace is the workspace thread/start asks for: {mode:
// "local"} (the default) or {mode: "worktree", baseRef?, carryLocalChanges?,
// environment?}. BaseRef is the
// commit-ish the new worktree is detached at (default: the checkout's HEAD);
// CarryLocalChanges brings the checkout's uncommitted changes along (staged
// stay staged, untracked files included, ignored files not); Environment
// names an environment of the project's .knightcode/environments.json whose
// setup script runs in the new worktree when the project is trusted. A
// start whose cwd is inside a managed worktree joins that worktree whatever
// the mode (the worktree options are then unused, with a warning).
type ThreadStartWorkspace struct {
	Mode              string `json:"mode"`
	BaseRef           string `json:"baseRef,omitempty" jsonschema:"minLength=1"`
	CarryLocalChanges bool   `json:"carryLocalChanges,omitempty"`
	Environment       string `json:"environment,omitempty" jsonschema:"minLength=1"`
}

// ThreadStartParams are the params of thread/start: the project directory
// (absolute, an existing directory), the approval mode (ask, the default
// for threads started over this protocol, or fullAccess), the model to use
// and the workspace (default {mode: "local"}).
type ThreadStartParams struct {
	Cwd          string                `json:"cwd"`
	ApprovalMode string                `json:"approvalMode,omitempty"`
	Model        *ModelRef             `json:"model,omitempty"`
	Workspace    *ThreadStartWorkspace `json:"workspace,omitempty"`
}

// ThreadStartResult is the result of thread/start: the new thread (not
// saved yet: no sessionFile until its first entry), the warnings of its
// load and its extension UI.
type ThreadStartResult struct {
	Thread   Thread    `json:"thread"`
	Warnings []Warning `json:"warnings"`
	UI       ThreadUI  `json:"ui"`
}

// ThreadResumeParams are the params of thread/resume: the thread and an
// optional history cursor (a nextCursor of thread/read or thread/resume).
type ThreadResumeParams struct {
	ThreadID string `json:"threadId"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"minLength=1"`
}

// QueueSnapshot is the queue of a thread: the steering texts not delivered
// to the agent yet and the queued inputs, oldest first (turn/queue/updated
// and thread/resume's queue).
type QueueSnapshot struct {
	Steering []string      `json:"steering"`
	FollowUp []QueuedInput `json:"followUp"`
}

// QueuedInput is one queued input: its queueId, the user's text and the
// number of attachments (images) the text alone does not show.
type QueuedInput struct {
	ID          string `json:"id"`
	Text        string `json:"text"`
	Attachments int    `json:"attachments,omitempty"`
}

// TokenUsage is a thread's cumulative token usage: token counts, Cost in US dollars, ContextTokens (the
// tokens of the current context, absent when unknown) and ContextWindow
// (the model's window in tokens, 0 when no model is selected).
type TokenUsage struct {
	Input         int64   `json:"input"`
	Output        int64   `json:"output"`
	CacheRead     int64   `json:"cacheRead"`
	CacheWrite    int64   `json:"cacheWrite"`
	Cost          float64 `json:"cost"`
	ContextTokens *int64  `json:"contextTokens,omitempty"`
	ContextWindow int64   `json:"contextWindow"`
}

// ThreadResumeResult is the result of thread/resume: the thread, its load
// warnings, one history page (newest first page, chronological turns) with
// the cursor of older turns, and send-time snapshots of the running turn
// (with its items so far), the queue, the cumulative usage and the UI.
type ThreadResumeResult struct {
	Thread      Thread        `json:"thread"`
	Warnings    []Warning     `json:"warnings"`
	Turns       []Turn        `json:"turns"`
	NextCursor  string        `json:"nextCursor,omitempty"`
	RunningTurn *Turn         `json:"runningTurn,omitempty"`
	Queue       QueueSnapshot `json:"queue"`
	Usage       TokenUsage    `json:"usage"`
	UI          ThreadUI      `json:"ui"`
}

// ThreadReadParams are the params of thread/read.
type ThreadReadParams struct {
	ThreadID string `json:"threadId"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"minLength=1"`
}

// ThreadReadResult is the result of thread/read: the thread as saved
// (status notLoaded unless it is loaded), one history page of turns and the
// cursor of older turns.
type ThreadReadResult struct {
	Thread     Thread `json:"thread"`
	Turns      []Turn `json:"turns"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// ThreadUnsubscribeParams are the params of thread/unsubscribe.
type ThreadUnsubscribeParams struct {
	ThreadID string `json:"threadId"`
}

// Values of ThreadUnsubscribeResult.Status.
const (
	UnsubscribeUnsubscribed  = "unsubscribed"
	UnsubscribeNotSubscribed = "notSubscribed"
)

// ThreadUnsubscribeResult is the result of thread/unsubscribe.
type ThreadUnsubscribeResult struct {
	Status string `json:"status"`
}

// ThreadListParams are the params of thread/list: an optional project
// directory to filter by, a continuation cursor, a page size (1-200,
// default 50 when absent; 0 is refused) and Archived, which lists the
// archived threads instead of the others (archived threads are never listed
// without it).
type ThreadListParams struct {
	Cwd      string `json:"cwd,omitempty"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"minLength=1"`
	Limit    *int   `json:"limit,omitempty"`
	Archived bool   `json:"archived,omitempty"`
}

// ThreadListResult is one page of thread/list, newest first, and the cursor
// of the next page. A page holds fewer rows than the limit when the rows
// would take more than 1 MiB; nextCursor then continues after the last row
// sent.
type ThreadListResult struct {
	Threads    []ThreadSummary `json:"threads"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// ThreadStatusChangedParams are the params of thread/status/changed.
type ThreadStatusChangedParams struct {
	ThreadID string       `json:"threadId"`
	Status   ThreadStatus `json:"status"`
}

// ThreadSettingsUpdateParams are the params of thread/settings/update: any
// of a model of model/list, a thinking level among that model's
// thinkingLevels, and an approval mode (ask or fullAccess).
type ThreadSettingsUpdateParams struct {
	ThreadID      string    `json:"threadId"`
	Model         *ModelRef `json:"model,omitempty"`
	ThinkingLevel string    `json:"thinkingLevel,omitempty"`
	ApprovalMode  string    `json:"approvalMode,omitempty"`
}

// ThreadSettingsUpdateResult is the (empty) result of thread/settings/update.
type ThreadSettingsUpdateResult struct{}

// ThreadTurnCompletedParams are the params of thread/turn/completed, sent
// to every initialized connection: the turn's summary (no items).
type ThreadTurnCompletedParams struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ThreadSidebarParams are the params of thread/sidebar: the whole sidebar
// row of thread ThreadID, replacing the one the client holds, or Deleted
// (true, with no Row) when the thread was deleted (thread/delete), after
// which the thread does not exist any more.
//
// A client initializes its rows from thread/list and the newest
// thread/read page (without loading or subscribing to the threads), then
// replaces a row by every thread/sidebar
// for its thread; a row arriving while such a read is outstanding is
// applied after the read's result. A row is sent at each of these
// changes, when it differs from the last row sent for the thread: a thread
// starting, loading or unloading (status), a turn starting (status active,
// updatedAt), a turn asking for an approval or a dialog and being answered
// (waitingOn), a turn ending (lastTurn, status idle), the first user
// message of a thread (title), a handoff (cwd), ownership loss
// (systemError), archive and unarchive (archived, status notLoaded). The
// entries written in between (a running turn's messages and tool results)
// send none, so updatedAt can lag the latest entry until the next row.
type ThreadSidebarParams struct {
	ThreadID string      `json:"threadId"`
	Row      *SidebarRow `json:"row,omitempty"`
	Deleted  bool        `json:"deleted,omitempty"`
}

// SidebarRow is one thread as a desktop app's sidebar shows it
// (thread/sidebar).
//
// Cwd is the thread's working directory (a worktree thread's is inside its
// worktree). Title is the title thread/list shows (the thread's name, else
// its first user text cut to 100 code points; absent before either
// exists). UpdatedAt is the latest entry time (ISO-8601, as a loaded
// Thread reports it; the header's creation time before any entry). Status
// is the thread's status as thread/status/changed sends it: notLoaded,
// idle, active with waitingOn (approval, dialog), or systemError with its
// message after an ownership loss, kept until a successful reload; an
// archived thread is notLoaded. LastTurn is the summary of the last turn
// that ended (completed, failed or interrupted; a saved turn without an
// end entry reads as interrupted), as thread/turn/completed sends it (no
// items, error.message bounded to 2,000 characters); absent before the
// first turn ended. While a turn runs, status active outranks LastTurn,
// which stays the previous outcome. Archived is true while the transcript
// is in the archive (thread/archive until thread/unarchive).
type SidebarRow struct {
	Cwd       string       `json:"cwd"`
	Title     string       `json:"title,omitempty"`
	UpdatedAt string       `json:"updatedAt"`
	Status    ThreadStatus `json:"status"`
	LastTurn  *Turn        `json:"lastTurn,omitempty"`
	Archived  bool         `json:"archived"`
}

// ThreadTokenUsageUpdatedParams are the params of
// thread/tokenUsage/updated: the thread's cumulative usage after a reply of
// turnId was finalized.
type ThreadTokenUsageUpdatedParams struct {
	ThreadID string     `json:"threadId"`
	TurnID   string     `json:"turnId"`
	Usage    TokenUsage `json:"usage"`
}

// TimeLayout is the time.Layout of every time on the wire that is a string:
// ISO 8601 in UTC with milliseconds and a Z, as JavaScript's
// Date.prototype.toISOString writes it (createdAt, lastUsedAt, ...; the
// session files use the same form).
const TimeLayout = "2006-01-02T15:04:05.000Z"
