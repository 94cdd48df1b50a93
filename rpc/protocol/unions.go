package protocol

import (
	"reflect"
	"slices"
)

// Union says that a wire struct travels as one of several shapes told
// apart by one string member, its tag: Item by type, ThreadStatus by type.
// The Go struct holds every member of every shape; the schema and the
// TypeScript declarations describe each shape on its own (named Shape.Name,
// its tag a constant, only its own members, some of them required), and
// the struct's own name becomes the union of the shapes, so a client's
// compiler narrows a value by its tag. TagEnum names the set of tag values.
type Union struct {
	Type    reflect.Type
	Tag     string
	TagEnum string
	TagDoc  string
	Shapes  []Shape
}

// Shape is one member of a Union: its name in the schema, its tag value,
// its description (for a client developer in any language), the JSON
// members it carries besides the tag, and which of them it always carries.
type Shape struct {
	Name     string
	Tag      string
	Doc      string
	Members  []string
	Required []string
}

// unions is every Union of the protocol.
var unions = []Union{
	{Type: reflect.TypeFor[ThreadStatus](), Tag: "type", TagEnum: "ThreadStatusType",
		TagDoc: "The type of a thread's status.",
		Shapes: []Shape{
			{Name: "NotLoadedThreadStatus", Tag: ThreadStatusNotLoaded, Doc: "The thread is saved but not loaded by this server."},
			{Name: "IdleThreadStatus", Tag: ThreadStatusIdle, Doc: "The thread is loaded and runs no turn."},
			{Name: "ActiveThreadStatus", Tag: ThreadStatusActive,
				Doc:     "The thread runs a turn; waitingOn lists what the turn waits for (empty while it works on its own).",
				Members: []string{"waitingOn"}, Required: []string{"waitingOn"}},
			{Name: "SystemErrorThreadStatus", Tag: ThreadStatusSystemError,
				Doc:     "The thread lost ownership of its session file (another process took it over); message says what happened. It stays until the thread is loaded again successfully.",
				Members: []string{"message"}, Required: []string{"message"}},
		}},
	{Type: reflect.TypeFor[Item](), Tag: "type", TagEnum: "ItemType",
		TagDoc: "The type of a turn's item.",
		Shapes: []Shape{
			{Name: "UserMessageItem", Tag: ItemUserMessage,
				Doc: "What the user sent: text (what the user typed), the number of images attached, the review comments shown next to the text, " +
					"and the clientMessageId the turn/start or turn/queue/add gave (live items only). It carries only completedAt.",
				Members: []string{"id", "index", "completedAt", "text", "images", "clientMessageId", "comments", "ref"}},
			{Name: "AgentMessageItem", Tag: ItemAgentMessage,
				Doc:     "The agent's reply text; item/agentMessage/delta streams it.",
				Members: []string{"id", "index", "startedAt", "completedAt", "text", "ref"}},
			{Name: "ReasoningItem", Tag: ItemReasoning,
				Doc:     "The model's reasoning text; item/reasoning/delta streams it.",
				Members: []string{"id", "index", "startedAt", "completedAt", "text", "ref"}},
			{Name: "ToolCallItem", Tag: ItemToolCall,
				Doc: "A tool call: the tool's name, its arguments (a JSON object), its status and output, the files it changed " +
					"(fileChanges, for a completed edit or write) and, for a shell call run in the background, the background shell it started; " +
					"a call of an MCP tool with an app carries mcpApp on a thread a desktop-mode connection loaded. " +
					"Its id is the call's id.",
				Members:  []string{"id", "index", "startedAt", "completedAt", "name", "arguments", "status", "output", "fileChanges", "argumentsRef", "outputRef", "backgroundShellId", "mcpApp", "ref"},
				Required: []string{"name", "status"}},
			{Name: "CompactionItem", Tag: ItemCompaction,
				Doc:     "A compaction of the thread's history: text is the summary the model continues from. It carries only completedAt.",
				Members: []string{"id", "index", "completedAt", "text", "ref"}},
			{Name: "ExtensionMessageItem", Tag: ItemExtensionMessage,
				Doc: "A message an extension (or the server) added to the conversation for the model: extension names it, text is what the model reads, " +
					"and for extension background_shell, backgroundShells lists the background commands that ended. It carries only completedAt.",
				Members: []string{"id", "index", "completedAt", "extension", "text", "backgroundShells", "ref"}},
		}},
}

// Unions returns every Union of the protocol.
func Unions() []Union { return slices.Clone(unions) }
