package protocol

import (
	"reflect"
	"slices"
	"strings"
)

// Enum is a set of string values a wire member takes: the one list of
// them that the schema (a named string enumeration), the TypeScript
// declarations (a string-literal union of that name) and the rpc frame's
// params check (an empty string is refused for a member with an Enum)
// read. Values come from the constants of this package where it has
// them. A closed set is every value the member takes; an Open one lists
// the values a client can act on today and says that a newer server may
// send others (error codes, refusal reasons), so a client must have a
// default branch for unknown values.
//
// Doc is the enumeration's description as the schema and the TypeScript
// declarations show it: written for a client developer in any language.
type Enum struct {
	Name    string
	Doc     string
	Values  []string
	Open    bool
	Members []Member
}

// Member names one member of a wire struct: the Go struct type that
// declares the field and the member's JSON name. A string member takes one
// value of the Enum, a []string member a list of them, a map[string]string
// member values of it.
type Member struct {
	Type reflect.Type
	Name string
}

func in[T any](name string) Member { return Member{Type: reflect.TypeFor[T](), Name: name} }

// Git operations in progress (GitStatusResult.Operation).
const (
	GitOperationMerge      = "merge"
	GitOperationRebase     = "rebase"
	GitOperationCherryPick = "cherry-pick"
	GitOperationRevert     = "revert"
	GitOperationBisect     = "bisect"
	GitOperationAM         = "am"
)

// Git file modes as a diff read reports them (DiffFile.OldMode and
// NewMode): a regular file, an executable, a symbolic link and a
// submodule (gitlink).
const (
	GitModeFile       = "100644"
	GitModeExecutable = "100755"
	GitModeSymlink    = "120000"
	GitModeGitlink    = "160000"
)

// Thinking levels (ModelInfo.ThinkingLevels,
// ThreadSettingsUpdateParams.ThinkingLevel); package agent's
// ThinkingLevel constants are these.
const (
	ThinkingOff     = "off"
	ThinkingMinimal = "minimal"
	ThinkingLow     = "low"
	ThinkingMedium  = "medium"
	ThinkingHigh    = "high"
	ThinkingXHigh   = "xhigh"
)

// Model inputs (ModelInfo.Input).
const (
	ModelInputText  = "text"
	ModelInputImage = "image"
)

// Widget placements (UIWidget.Placement).
const (
	WidgetAboveEditor = "aboveEditor"
	WidgetBelowEditor = "belowEditor"
)

// Platforms (Platform.OS), in Node.js's process.platform names.
const (
	PlatformWindows = "win32"
	PlatformMacOS   = "darwin"
	PlatformLinux   = "linux"
)

// External programs an externalFailure names (ExternalFailureData.Tool).
const (
	ExternalToolGH  = "gh"
	ExternalToolGit = "git"
	// ExternalToolMCP: an MCP server answered an app's request with a
	// JSON-RPC error of its own; output is its message.
	ExternalToolMCP = "mcp"
)

// Reasons of a gitConflict error (GitConflictData.Reason): the wire names
// of package coreerr's conflict reasons (rpc's tests keep the two lists
// equal).
var gitConflictReasons = []string{
	"diffChanged", "patchFailed", "concurrentChange", "worktreeInUse", "submodules", "worktreeMissing",
	"worktreeDeleted", "localChanges", "recoveryRequired", "pushRejected", "hookRejected", "branchExists",
	"operationInProgress", "timedOut", "interrupted",
}

// Reasons of an invalidParams error (InvalidParamsData.Reason): package
// coreerr's parameter and state reasons, threads' noModel and
// providerNotLoaded and the payload/read reasons (rpc's tests keep the
// lists equal).
var invalidParamsReasons = []string{
	"untrusted", "detachedHead", "nothingToCommit", "emptyMessage", "noRemote", "identityUnknown",
	"noBaseBranch", "noCommonHistory", "unbornHead", "bareRepository", "notDeleted", "noTurn", "noHistory", "projectAuth",
	"unsupported", "incomplete", "ambiguous", "relativePath", "credentialsInUrl", "badCatalog", "nameConflict",
	"pluginServer", "pluginResource", "noModel", "providerNotLoaded", PayloadUnknown, PayloadExpired,
}

// enums is every Enum, in the order the schema lists them.
var enums = []Enum{
	{Name: "ErrorCode", Open: true, Values: ErrorCodes,
		Doc:     "The code of an error, a string. A newer server may send codes not listed here: treat an unknown code as a failure whose message is for people.",
		Members: []Member{in[Error]("code"), in[ErrorParams]("code")}},
	{Name: "InvalidParamsReason", Open: true, Values: invalidParamsReasons,
		Doc: "Why an invalidParams error refused, when a client can act on the cause. Caused by state, with no field: untrusted " +
			"(the project is not trusted: project/trust/set), detachedHead (no branch is checked out), nothingToCommit, noRemote, " +
			"identityUnknown (git knows no user.name and user.email; the message holds git's advice), noBaseBranch, noCommonHistory " +
			"(the branch shares no commit with the base), unbornHead (the repository has no commit yet), bareRepository (it has no " +
			"working tree), notDeleted (the worktree to restore is not deleted), noTurn (the thread has no finished turn), noHistory " +
			"(the thread has no message yet), noModel " +
			"(no usable model is selected: thread/settings/update). With a field: emptyMessage and noModel (field message: give a " +
			"commit message), providerNotLoaded (field model: the model's provider comes from an extension this thread does not load, " +
			"or that no loaded thread registers any more; model/list marks the latter available: false), unknown and expired (field id: a payload id; read the thread again); projectAuth (field config.auth or config.oauth: " +
			"sign-in settings go in the global mcp.json), unsupported (a known key knightcode does not support, e.g. " +
			"config.headersHelper) and incomplete (field config: an mcp/add entry with neither command nor url that overrides no global server); " +
			"for plugins and marketplaces: ambiguous (field name: candidates lists the identities), relativePath (field source: a relative " +
			"folder, or an owner/repo that is also a folder of cwd; candidates lists the readings), credentialsInUrl (field source: a URL " +
			"with user information), badCatalog (a marketplace catalog that breaks the format or the naming rules), nameConflict (field " +
			"source: existing is the marketplace's source), pluginServer (field name: a plugin's MCP server; use plugin/set) and " +
			"pluginResource (field path: a plugin's skill or template; use plugin/set). " +
			"A newer server may send others.",
		Members: []Member{in[InvalidParamsData]("reason")}},
	{Name: "GitConflictReason", Open: true, Values: gitConflictReasons,
		Doc: "Which conflict a gitConflict error is: diffChanged (read the diff again), patchFailed, concurrentChange (try again), " +
			"worktreeInUse, submodules, worktreeMissing, worktreeDeleted, localChanges (the destination holds changes: paths names them), " +
			"recoveryRequired (an action stopped part-way; the data says how to get the changes back), pushRejected, hookRejected " +
			"(output is the hook's), branchExists, operationInProgress (a merge, rebase, cherry-pick or revert is unfinished), " +
			"timedOut (a hook or gh ran past its deadline and was stopped), interrupted (turn/interrupt stopped it). A newer server may send others.",
		Members: []Member{in[GitConflictData]("reason")}},
	{Name: "ExternalFailureReason", Open: true, Values: []string{ExternalToolFailed, ExternalProviderUnavailable, ExternalModelFailed},
		Doc:     "Which outside party an externalFailure error is about: toolFailed (a program the server ran failed), providerUnavailable (a model provider could not be reached or failed on its side) or modelFailed (the thread's model failed to write what was asked of it, such as a commit message; kind says how). A newer server may send others.",
		Members: []Member{in[ExternalFailureData]("reason")}},
	{Name: "ExternalTool", Open: true, Values: []string{ExternalToolGH, ExternalToolGit, ExternalToolMCP},
		Doc:     "The program a toolFailed externalFailure names: gh, git, or mcp (an MCP server answered an app's request with an error of its own). A newer server may name others.",
		Members: []Member{in[ExternalFailureData]("tool")}},
	{Name: "ApprovalMode", Values: []string{ApprovalAsk, ApprovalFullAccess},
		Doc:     "Whether a thread asks before its tools run: ask (the default for threads started over this protocol) or fullAccess (every call runs without asking).",
		Members: []Member{in[ThreadStartParams]("approvalMode"), in[ThreadSettingsUpdateParams]("approvalMode")}},
	{Name: "ApprovalDecision", Values: []string{DecisionAccept, DecisionAcceptForSession, DecisionAcceptPrefixForSession, DecisionDecline, DecisionCancel},
		Doc: "An answer to an approval request: accept runs the call; acceptForSession also runs later calls of the same tool without " +
			"asking while the thread stays loaded; acceptPrefixForSession also runs later shell commands whose own prefix is exactly the " +
			"offered prefix; decline does not run it (the model reads the message as the reason); cancel does not run it and ends the turn interrupted.",
		Members: []Member{in[ItemToolCallRequestApprovalParams]("decisions"), in[ItemToolCallRequestApprovalResult]("decision")}},
	{Name: "WaitingOn", Values: []string{WaitingOnApproval, WaitingOnDialog},
		Doc:     "What an active thread waits for: an approval or a dialog the person has not answered.",
		Members: []Member{in[ThreadStatus]("waitingOn")}},
	{Name: "WorkspaceMode", Values: []string{WorkspaceLocal, WorkspaceWorktree},
		Doc:     "Where a thread runs: local (the user's checkout) or worktree (a managed git worktree of its own).",
		Members: []Member{in[Workspace]("mode"), in[ThreadStartWorkspace]("mode"), in[ThreadSummary]("workspaceMode")}},
	{Name: "HandoffTarget", Values: []string{HandoffToLocal, HandoffToWorktree},
		Doc:     "Where a handoff moves a thread: local (from its worktree to the main checkout) or worktree (back, or into a new managed worktree).",
		Members: []Member{in[ThreadHandoffParams]("to")}},
	{Name: "TurnStatus", Values: []string{TurnInProgress, TurnCompleted, TurnFailed, TurnInterrupted},
		Doc:     "A turn's status: inProgress while it runs, then completed, failed (with error) or interrupted. A saved turn that never ended reads as interrupted.",
		Members: []Member{in[Turn]("status")}},
	{Name: "TurnErrorKind", Values: []string{ErrorKindAuth, ErrorKindRateLimit, ErrorKindContextOverflow, ErrorKindNetwork, ErrorKindProvider, ErrorKindOther},
		Doc:     "What kind of failure ended a turn (or is being retried), classified from the error text.",
		Members: []Member{in[TurnError]("kind"), in[ExternalFailureData]("kind")}},
	{Name: "TurnStartStatus", Values: []string{TurnStartStarted, TurnStartHandled, TurnStartCancelled},
		Doc:     "What turn/start did with the input: started a turn, handled it without one (an extension consumed it), or cancelled it before it was accepted.",
		Members: []Member{in[TurnStartResult]("status")}},
	{Name: "ToolCallStatus", Values: []string{ToolInProgress, ToolCompleted, ToolFailed, ToolDeclined},
		Doc:     "A tool call's status: inProgress while it waits or runs, then completed, failed, or declined (the approval was refused, so the call never ran; the model reads the decline's message).",
		Members: []Member{in[Item]("status")}},
	{Name: "FileChangeKind", Values: []string{FileAdd, FileModify, FileDelete},
		Doc:     "How a tool call changed a file.",
		Members: []Member{in[FileChange]("kind")}},
	{Name: "WarningSource", Values: []string{WarningSourceSettings, WarningSourceExtension, WarningSourceTrust, WarningSourceServer},
		Doc:     "What a warning is about: a settings file, an extension, the project's trust, or the server itself (recoveries, files a capture or snapshot left out, a kept worktree).",
		Members: []Member{in[Warning]("source")}},
	{Name: "UnsubscribeStatus", Values: []string{UnsubscribeUnsubscribed, UnsubscribeNotSubscribed},
		Doc:     "Whether thread/unsubscribe withdrew a subscription or the connection had none.",
		Members: []Member{in[ThreadUnsubscribeResult]("status")}},
	{Name: "ReviewSide", Values: []string{ReviewSideOld, ReviewSideNew},
		Doc:     "Which side of a diff a review comment's lines are on: old (fromTree) or new (toTree).",
		Members: []Member{in[ReviewComment]("side")}},
	{Name: "DiffScope", Values: []string{ScopeLastTurn, ScopeUncommitted, ScopeUnstaged, ScopeStaged, ScopeCommitted, ScopeBranch},
		Doc: "A diff scope: lastTurn (what the thread's last turn changed), uncommitted (the working tree against HEAD, untracked files " +
			"included; the default), unstaged (the working tree against the index), staged (the index against HEAD), committed (one commit " +
			"against its parent) or branch (HEAD against the base branch).",
		Members: []Member{in[ThreadDiffReadParams]("scope"), in[ThreadDiffReadResult]("scope"), in[ThreadDiffRevertParams]("scope")}},
	{Name: "DiffFileStatus", Values: []string{FileStatusAdded, FileStatusModified, FileStatusDeleted, FileStatusRenamed, FileStatusTypeChanged},
		Doc:     "How a file changed in a diff: typeChanged is a change between a regular file, a symbolic link and a submodule.",
		Members: []Member{in[DiffFile]("status")}},
	{Name: "GitFileMode", Values: []string{GitModeFile, GitModeExecutable, GitModeSymlink, GitModeGitlink},
		Doc:     "A file's mode as git records it, in octal: a regular file, an executable file, a symbolic link or a submodule.",
		Members: []Member{in[DiffFile]("oldMode"), in[DiffFile]("newMode")}},
	{Name: "GitOperation", Values: []string{GitOperationMerge, GitOperationRebase, GitOperationCherryPick, GitOperationRevert, GitOperationBisect, GitOperationAM},
		Doc:     "A git operation in progress in a checkout.",
		Members: []Member{in[GitStatusResult]("operation")}},
	{Name: "McpServerState", Values: []string{McpStateNotConfigured, McpStateDisabled, McpStateConnecting, McpStateFailed, McpStateSignInRequired},
		Doc:     "Why an MCP server cannot be reached: not configured for the thread, disabled, still connecting, failed, or waiting for a sign-in.",
		Members: []Member{in[McpUnavailableData]("state")}},
	{Name: "ClientMode", Values: []string{ClientModeDesktop, ClientModeTerminal},
		Doc:     "What kind of client a connection is: desktop (the default) or terminal, whose threads default to fullAccess and have no dialogs.",
		Members: []Member{in[ClientCapabilities]("mode")}},
	{Name: "DialogKind", Values: []string{DialogSelect, DialogConfirm, DialogInput, DialogEditor},
		Doc:     "Which dialog a ui/dialog request asks.",
		Members: []Member{in[UIDialogParams]("kind")}},
	{Name: "NotifyLevel", Values: []string{NotifyInfo, NotifyWarning, NotifyError},
		Doc:     "How a ui/notify notice is shown.",
		Members: []Member{in[UINotifyParams]("level")}},
	{Name: "WidgetPlacement", Values: []string{WidgetAboveEditor, WidgetBelowEditor},
		Doc:     "Where an extension's widget is shown: above or below the message editor.",
		Members: []Member{in[UIWidget]("placement"), in[UIWidgetParams]("placement")}},
	{Name: "SettingsScope", Values: []string{ScopeGlobal, ScopeProject},
		Doc: "Which settings file: the global one, or the project's (read only for a trusted project).",
		Members: []Member{in[ConfigWriteParams]("scope"), in[ConfigReadResult]("origins"), in[ResourceInfo]("scope"),
			in[McpServer]("scope"), in[McpAddParams]("scope"), in[McpRemoveParams]("scope"),
			in[Plugin]("scope"), in[PluginInstallParams]("scope"), in[PluginSetParams]("scope"), in[PluginUpdateParams]("scope"),
			in[PluginUninstallParams]("scope"), in[PluginMarketplace]("scope"), in[PluginMarketplaceAddParams]("scope"),
			in[PluginMarketplaceRemoveParams]("scope")}},
	{Name: "McpTransport", Values: []string{McpTransportStdio, McpTransportHTTP},
		Doc:     "How an MCP server is reached: stdio (a command the server runs) or http (a URL: streamable HTTP, or legacy SSE for type sse).",
		Members: []Member{in[McpServer]("transport")}},
	{Name: "McpExposure", Values: []string{McpExposureDirect, McpExposureSearch},
		Doc:     "How an MCP server's tools reach the model: direct (each tool is a model tool, mcp__<server>__<tool>) or search (behind one mcp tool that searches, describes and calls them).",
		Members: []Member{in[McpServer]("exposure"), in[McpUpdateParams]("exposure")}},
	{Name: "ResourceType", Values: []string{ResourceExtensions, ResourceSkills, ResourcePrompts, ResourceThemes},
		Doc:     "A kind of resource a thread loads.",
		Members: []Member{in[ResourceInfo]("type"), in[ResourceSetParams]("type")}},
	{Name: "ResourceSource", Values: []string{"auto", "local"},
		Doc:     "How a resource was found: auto (a conventional folder) or local (a path in the settings).",
		Members: []Member{in[ResourceInfo]("source")}},
	{Name: "ToolSource", Values: []string{ToolSourceBuiltin, ToolSourceExtension, ToolSourceMCP},
		Doc:     "Where a tool comes from.",
		Members: []Member{in[ToolInfo]("source")}},
	{Name: "FileEntryType", Values: []string{FileEntryFile, FileEntryDirectory},
		Doc:     "What a file/list entry is: directory (a folder, or a symbolic link to one) or file (anything else).",
		Members: []Member{in[FileEntry]("type")}},
	{Name: "PlatformOS", Open: true, Values: []string{PlatformWindows, PlatformMacOS, PlatformLinux},
		Doc:     "The server's operating system in Node.js's process.platform names; another system reports its own lowercase name (freebsd, openbsd, ...).",
		Members: []Member{in[Platform]("os")}},
	{Name: "BackgroundShellStatus", Values: []string{BackgroundShellRunning, BackgroundShellCompleted, BackgroundShellFailed, BackgroundShellStopped, BackgroundShellTimedOut},
		Doc:     "A background command's status: running, or how it ended: completed (exited by itself), failed, stopped (by the person, the thread or the server) or timed_out.",
		Members: []Member{in[BackgroundShell]("status"), in[BackgroundShellNotice]("status")}},
	{Name: "WorkspacePhase", Values: []string{WorkspacePhaseSetup, WorkspacePhaseCleanup},
		Doc:     "Which environment script a progress chunk comes from.",
		Members: []Member{in[ThreadWorkspaceProgressParams]("phase")}},
	{Name: "AccountSource", Values: []string{AccountSourceEnv, AccountSourceAuthFile},
		Doc:     "Where a provider's key comes from: env (an environment variable, which wins) or authFile (stored by account/login/start).",
		Members: []Member{in[Account]("source")}},
	{Name: "ModelInput", Values: []string{ModelInputText, ModelInputImage},
		Doc:     "A kind of input a model accepts.",
		Members: []Member{in[ModelInfo]("input")}},
	{Name: "ThinkingLevel", Values: []string{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh},
		Doc:     "How much a model reasons before it answers; a model lists the levels it accepts (a model that does not reason accepts only off).",
		Members: []Member{in[ModelInfo]("thinkingLevels"), in[ThreadSettingsUpdateParams]("thinkingLevel")}},
}

// Enums returns every Enum of the protocol, in a fixed order.
func Enums() []Enum { return slices.Clone(enums) }

// EnumOf returns the Enum the member name (a JSON name) of struct type t
// takes; t is the struct that declares the field, not one embedding it.
func EnumOf(t reflect.Type, name string) (Enum, bool) {
	e, ok := enumIndex[Member{Type: t, Name: name}]
	return e, ok
}

var enumIndex = func() map[Member]Enum {
	m := map[Member]Enum{}
	for _, e := range enums {
		for _, mb := range e.Members {
			if _, dup := m[mb]; dup {
				panic("protocol: " + mb.Type.Name() + "." + mb.Name + " is in two enums")
			}
			m[mb] = e
		}
	}
	return m
}()

// WireField is one JSON member of a wire struct: the struct that declares
// the Go field (Owner, the type EnumOf takes), the Go field, the member's
// JSON name and whether it may be left out (omitempty or omitzero).
type WireField struct {
	Owner    reflect.Type
	Field    reflect.StructField
	Name     string
	Optional bool
}

// WireFields lists the JSON members of struct type t as encoding/json
// writes them: fields tagged "-" and unexported fields left out, embedded
// structs without a JSON name flattened (their members' Owner is the
// embedded struct), in declaration order.
func WireFields(t reflect.Type) []WireField {
	var out []WireField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				out = append(out, WireFields(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		out = append(out, WireField{Owner: t, Field: f, Name: name, Optional: optional})
	}
	return out
}
