package extensions

// Status is how knightcode's runtime provides a member of pi's extension
// API (EXTENSIBILITY.md §7 "Terminal-only API"; spec "Dialogs and
// extension UI").
type Status string

const (
	// Implemented: it does what pi documents, through the seam.
	Implemented Status = "implemented"
	// LogOnly: it draws only in pi's terminal; the server writes one line
	// to its log per member per thread load and draws nothing (spec).
	LogOnly Status = "logOnly"
	// NoOp: it does nothing (editor access, themes, tool expansion), and
	// a getter answers the empty value the member's doc gives.
	NoOp Status = "noop"
	// NotYet: knightcode does not provide it yet; calling it (or reading
	// the property) throws an Error naming the member.
	NotYet Status = "notYet"
)

// The interfaces of pi's extension API (dist/core/extensions/types.d.ts).
const (
	ExtensionAPI            = "ExtensionAPI"
	ExtensionContext        = "ExtensionContext"
	ExtensionCommandContext = "ExtensionCommandContext"
	ExtensionUIContext      = "ExtensionUIContext"
)

// Member is one member of pi's extension API and how it is provided;
// Property marks a property (read, not called).
type Member struct {
	Interface string
	Name      string
	Status    Status
	Property  bool
	Note      string
}

// Members is every member of pi 0.73.1's ExtensionAPI, ExtensionContext,
// ExtensionCommandContext (its own members; it extends ExtensionContext)
// and ExtensionUIContext, in types.d.ts's order. TestMembersCoverTypes
// checks it against the pinned testdata/pi-types.d.ts; README
// "Extensions" has the same table in brief.
var Members = []Member{
	{ExtensionAPI, "on", Implemented, false, "session_start (reason startup, resume, reload, new or fork), input, before_agent_start, agent_start, agent_end (the turn waits for it), turn_start, turn_end, message_start, message_update (text_delta, thinking_delta and toolcall_end), message_end (a replacement of the same role; one without text drops the assistant item: item/removed), context (the request's messages), tool_call, tool_result and session_shutdown are dispatched; other events are accepted and logged once as not dispatched"},
	{ExtensionAPI, "registerTool", Implemented, false, "TypeBox parameters as JSON Schema; execute(toolCallId, params, signal, onUpdate, ctx); details.fileChanges and details.view reach the item; onUpdate does nothing"},
	{ExtensionAPI, "registerCommand", Implemented, false, "/name args through turn/start answers handled"},
	{ExtensionAPI, "registerShortcut", LogOnly, false, "keyboard shortcuts are the terminal's"},
	{ExtensionAPI, "registerFlag", NoOp, false, "knightcode has no extension flags: getFlag answers the default"},
	{ExtensionAPI, "getFlag", Implemented, false, "the registered default"},
	{ExtensionAPI, "registerMessageRenderer", LogOnly, false, "renders in the terminal"},
	{ExtensionAPI, "sendMessage", Implemented, false, "deliverAs steer or nextTurn (followUp waits for the next turn); triggerTurn is not supported and logged; a view member (a view object) shows on the extensionMessage item"},
	{ExtensionAPI, "sendUserMessage", NotYet, false, ""},
	{ExtensionAPI, "appendEntry", Implemented, false, "a custom session entry"},
	{ExtensionAPI, "setSessionName", NotYet, false, ""},
	{ExtensionAPI, "getSessionName", NotYet, false, ""},
	{ExtensionAPI, "setLabel", NotYet, false, ""},
	{ExtensionAPI, "exec", Implemented, false, "as pi's execCommand, through child_process (the thread's process containment)"},
	{ExtensionAPI, "getActiveTools", NotYet, false, ""},
	{ExtensionAPI, "getAllTools", NotYet, false, ""},
	{ExtensionAPI, "setActiveTools", NotYet, false, ""},
	{ExtensionAPI, "getCommands", NotYet, false, ""},
	{ExtensionAPI, "setModel", NotYet, false, ""},
	{ExtensionAPI, "getThinkingLevel", NotYet, false, ""},
	{ExtensionAPI, "setThinkingLevel", NotYet, false, ""},
	{ExtensionAPI, "registerProvider", Implemented, false, "configuration-only (baseUrl, api openai-completions, openai-responses or anthropic-messages, apiKey, headers, models) for every thread while a loaded thread registers it; with streamSimple, for the threads that load it; oauth is not used; model/list lists its models"},
	{ExtensionAPI, "unregisterProvider", Implemented, false, "removes the extension's provider; model/list keeps its models with available: false when no loaded thread registers it"},
	{ExtensionAPI, "events", Implemented, true, "one bus shared by the JavaScript extensions of a thread load"},

	{ExtensionUIContext, "select", Implemented, false, "ui/dialog; opts.timeout and opts.signal cancel it"},
	{ExtensionUIContext, "confirm", Implemented, false, "ui/dialog"},
	{ExtensionUIContext, "input", Implemented, false, "ui/dialog"},
	{ExtensionUIContext, "notify", Implemented, false, "ui/notify"},
	{ExtensionUIContext, "onTerminalInput", LogOnly, false, "raw terminal input: the thread's log line"},
	{ExtensionUIContext, "setStatus", Implemented, false, "the thread's ui statuses"},
	{ExtensionUIContext, "setWorkingMessage", Implemented, false, "ui workingMessage"},
	{ExtensionUIContext, "setWorkingVisible", Implemented, false, "ui workingVisible"},
	{ExtensionUIContext, "setWorkingIndicator", LogOnly, false, "the working indicator draws in the terminal: the thread's log line"},
	{ExtensionUIContext, "setHiddenThinkingLabel", LogOnly, false, "terminal rendering"},
	{ExtensionUIContext, "setWidget", Implemented, false, "string[] lines, or a view object (it has a type member: the closed view schema) with {placement}; undefined removes; a component factory is log-only (the thread's log line)"},
	{ExtensionUIContext, "setFooter", LogOnly, false, "terminal component: the thread's log line"},
	{ExtensionUIContext, "setHeader", LogOnly, false, "terminal component: the thread's log line"},
	{ExtensionUIContext, "setTitle", Implemented, false, "ui title"},
	{ExtensionUIContext, "custom", LogOnly, false, "terminal component: the thread's log line; resolves undefined"},
	{ExtensionUIContext, "pasteToEditor", NoOp, false, "editor access does nothing (spec)"},
	{ExtensionUIContext, "setEditorText", NoOp, false, "editor access does nothing (spec)"},
	{ExtensionUIContext, "getEditorText", NoOp, false, "answers \"\""},
	{ExtensionUIContext, "editor", Implemented, false, "ui/dialog"},
	{ExtensionUIContext, "addAutocompleteProvider", LogOnly, false, "terminal editor"},
	{ExtensionUIContext, "setEditorComponent", LogOnly, false, "terminal component"},
	{ExtensionUIContext, "getEditorComponent", NoOp, false, "answers undefined"},
	{ExtensionUIContext, "theme", NoOp, true, "a theme whose styling functions return the text unstyled"},
	{ExtensionUIContext, "getAllThemes", NoOp, false, "answers []"},
	{ExtensionUIContext, "getTheme", NoOp, false, "answers undefined"},
	{ExtensionUIContext, "setTheme", NoOp, false, "answers {success: false}"},
	{ExtensionUIContext, "getToolsExpanded", NoOp, false, "answers false"},
	{ExtensionUIContext, "setToolsExpanded", NoOp, false, ""},

	{ExtensionContext, "ui", Implemented, true, "ExtensionUIContext"},
	{ExtensionContext, "hasUI", Implemented, true, "false on a terminal-mode connection's thread"},
	{ExtensionContext, "cwd", Implemented, true, "the thread's cwd"},
	{ExtensionContext, "sessionManager", NotYet, true, ""},
	{ExtensionContext, "modelRegistry", NotYet, true, ""},
	{ExtensionContext, "model", NotYet, true, ""},
	{ExtensionContext, "isIdle", Implemented, false, ""},
	{ExtensionContext, "signal", Implemented, true, "aborted when what the handler serves is interrupted"},
	{ExtensionContext, "abort", Implemented, false, "as turn/interrupt"},
	{ExtensionContext, "hasPendingMessages", NotYet, false, ""},
	{ExtensionContext, "shutdown", NotYet, false, ""},
	{ExtensionContext, "getContextUsage", NotYet, false, ""},
	{ExtensionContext, "compact", NotYet, false, ""},
	{ExtensionContext, "getSystemPrompt", NotYet, false, ""},

	{ExtensionCommandContext, "waitForIdle", Implemented, false, ""},
	{ExtensionCommandContext, "newSession", Implemented, false, "thread/replaced with the start's requestId; turn/start answers the new threadId; withSession gets the new thread's context; the old context is stale; parentSession and setup are ignored"},
	{ExtensionCommandContext, "fork", Implemented, false, "thread/replaced with the start's requestId, as newSession; the thread forked as thread/fork does through the turn before the entry (position \"before\", a turn's user message) or ending at it (\"at\", a turn's last entry); other entries reject; session_before_fork is not dispatched and selectedText is not answered"},
	{ExtensionCommandContext, "navigateTree", NotYet, false, ""},
	{ExtensionCommandContext, "switchSession", NotYet, false, ""},
	{ExtensionCommandContext, "reload", NotYet, false, ""},
}

// dispatchedEvents are the events of pi.on whose handlers run.
var dispatchedEvents = []string{"session_start", "input", "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end",
	"message_start", "message_update", "message_end", "context", "tool_call", "tool_result", "session_shutdown"}

// memberPrefix is how an Error names a member of iface ("pi.exec",
// "ctx.ui.custom").
func memberPrefix(iface string) string {
	switch iface {
	case ExtensionAPI:
		return "pi."
	case ExtensionUIContext:
		return "ctx.ui."
	}
	return "ctx."
}
