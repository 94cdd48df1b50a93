package protocol

import "encoding/json"

// Rows of the settings and resource methods (spec: Method reference,
// config/read, config/write, tool/list, tool/settings/read and
// tool/settings/write, resource/list and resource/set, command/list).
// Reads use local state only; nothing runs and, except for the writes,
// nothing is written.
var (
	// CommandList ("command/list") lists the commands a thread offers, or a
	// new thread in a cwd would offer.
	CommandList = clientRequest[CommandListParams, CommandListResult]("command/list", Concurrent)

	// ConfigRead ("config/read") reads the merged settings with their
	// origins, versions and parse errors.
	ConfigRead = clientRequest[ConfigReadParams, ConfigReadResult]("config/read", Concurrent)

	// ConfigWrite ("config/write") sets or deletes one dotted settings key.
	// A key the server understands takes only the values it uses
	// (invalidParams "value" naming the key and the range otherwise; a
	// key read from the global file only, written to the project file, is
	// invalidParams "scope"); a legacy key is written to its canonical
	// name. Other keys are kept as written.
	ConfigWrite = clientRequest[ConfigWriteParams, ConfigWriteResult]("config/write", Concurrent)

	// ResourceList ("resource/list") lists extensions, skills, prompt
	// templates and themes with their enabled state.
	ResourceList = clientRequest[ResourceListParams, ResourceListResult]("resource/list", Concurrent)

	// ResourceSet ("resource/set") turns one resource on or off.
	ResourceSet = clientRequest[ResourceSetParams, ResourceSetResult]("resource/set", Concurrent)

	// ToolList ("tool/list") lists the tools a new thread would register.
	ToolList = clientRequest[ToolListParams, ToolListResult]("tool/list", Concurrent)

	// ToolSettingsRead ("tool/settings/read") reads tools.json.
	ToolSettingsRead = clientRequest[ToolSettingsReadParams, ToolSettingsReadResult]("tool/settings/read", Concurrent)

	// ToolSettingsWrite ("tool/settings/write") sets one setting of a tool
	// in tools.json.
	ToolSettingsWrite = clientRequest[ToolSettingsWriteParams, ToolSettingsWriteResult]("tool/settings/write", Concurrent)
)

// Settings scopes (config/write scope, config/read origins, resource scope).
const (
	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// ConfigReadParams are the params of config/read: without cwd only the
// global settings are read; with cwd (absolute) a trusted project's
// settings merge over them.
type ConfigReadParams struct {
	Cwd string `json:"cwd,omitempty"`
}

// ConfigReadResult is the result of config/read. Settings are the merged
// settings (project over global, objects merged recursively); Defaults what
// an unset key means, in the shape of settings; Origins maps each dotted
// leaf key of Settings to "global" or "project"; Versions the SHA-256 (hex)
// of each file's raw bytes or "none"; Paths the files; Errors one
// source "settings" warning per file that does not parse (with one-based
// line and column when known). All come from the same read of each file.
type ConfigReadResult struct {
	Settings map[string]any    `json:"settings"`
	Defaults map[string]any    `json:"defaults"`
	Origins  map[string]string `json:"origins"`
	Versions ConfigVersions    `json:"versions"`
	Paths    ConfigPaths       `json:"paths"`
	Errors   []Warning         `json:"errors"`
}

// ConfigVersions are the settings files' versions: SHA-256 hex of the raw
// bytes, or "none" for an absent file or an untrusted project's unread one.
// Project is present when the read had a cwd.
type ConfigVersions struct {
	Global  string `json:"global"`
	Project string `json:"project,omitempty"`
}

// ConfigPaths names the settings files: Global always, Project when the
// read had a cwd.
type ConfigPaths struct {
	Global  string `json:"global"`
	Project string `json:"project,omitempty"`
}

// ConfigWriteParams are the params of config/write: Scope "global" or
// "project"; Key a dotted key (retry.provider.maxRetryDelayMs); Value any
// JSON value, null deleting the leaf (required: absent is refused); Cwd (absolute) required for the
// project scope, whose project must be explicitly trusted;
// ExpectedVersion, when present, must equal the file's current version
// ("none" for an absent file) or the write answers configConflict.
type ConfigWriteParams struct {
	Scope           string          `json:"scope"`
	Key             string          `json:"key"`
	Value           json.RawMessage `json:"value,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	ExpectedVersion *string         `json:"expectedVersion,omitempty"`
}

// Validate checks the scope and that a project write has a cwd.
func (p ConfigWriteParams) Validate() error {
	switch p.Scope {
	case ScopeGlobal, ScopeProject:
	default:
		return InvalidParams("scope", "must be global or project, got %q", p.Scope)
	}
	if p.Key == "" {
		return InvalidParams("key", "must not be empty")
	}
	if len(p.Value) == 0 {
		return InvalidParams("value", "required (null deletes the key)")
	}
	if p.Scope == ScopeProject && p.Cwd == "" {
		return InvalidParams("cwd", "a project write needs cwd")
	}
	return nil
}

// ConfigWriteResult is the result of config/write: the file's version after
// the write.
type ConfigWriteResult struct {
	Version string `json:"version"`
}

// ConfigConflictData is the data of a configConflict error: the file's
// current version, to read again and resolve against.
type ConfigConflictData struct {
	Version string `json:"version"`
}

// ToolListParams are the params of tool/list: the cwd (absolute) of the
// new thread, absent for a project-less one; or, additive
// (EXTENSIBILITY.md §8), the id of a loaded thread whose live tools to
// list, its extensions' and MCP servers' included.
type ToolListParams struct {
	Cwd      string `json:"cwd,omitempty"`
	ThreadID string `json:"threadId,omitempty"`
}

// Validate refuses cwd and threadId together.
func (p ToolListParams) Validate() error {
	if p.Cwd != "" && p.ThreadID != "" {
		return InvalidParams("threadId", "give at most one of threadId and cwd")
	}
	return nil
}

// ToolListResult is the result of tool/list: the tools a new thread
// registers, and DefaultTools, the global defaultTools setting resolved
// (+name and -name applied) or the built-in read, bash, edit, write.
type ToolListResult struct {
	Tools        []ToolInfo `json:"tools"`
	DefaultTools []string   `json:"defaultTools"`
}

// Tool sources (ToolInfo.Source).
const (
	// ToolSourceBuiltin is a tool built into knightcode.
	ToolSourceBuiltin = "builtin"
	// ToolSourceExtension is a tool an extension registered (with path).
	ToolSourceExtension = "extension"
	// ToolSourceMCP is a tool of an MCP server (with server).
	ToolSourceMCP = "mcp"
)

// ToolInfo is one tool of tool/list: its name, its description as the
// model reads it, and where it comes from: "builtin", "extension" with
// Path (the extension's entry file), or "mcp" with Server (additive
// members, EXTENSIBILITY.md §8).
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
	Path        string `json:"path,omitempty"`
	Server      string `json:"server,omitempty"`
}

// ToolSettingsReadParams are the (empty) params of tool/settings/read.
type ToolSettingsReadParams struct{}

// ToolSettingsReadResult is the result of tool/settings/read: each known
// tool's state in tools.json (its default when the file does not say) and
// the classifier models that have credentials.
type ToolSettingsReadResult struct {
	Tools       []ToolState       `json:"tools"`
	Classifiers []ClassifierModel `json:"classifiers"`
}

// ToolState is one tool of tool/settings/read: whether it is enabled and its
// own settings, the values of keys ending in "Key" masked to their last
// four characters ("****1234").
type ToolState struct {
	Name     string            `json:"name"`
	Enabled  bool              `json:"enabled"`
	Settings map[string]string `json:"settings"`
}

// ClassifierModel is a model with credentials the classifier gate can use.
type ClassifierModel struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Name     string `json:"name"`
}

// ToolSettingsWriteParams are the params of tool/settings/write: a known
// tool's name, a key ("enabled" or a letter then letters, digits, _ or -)
// and the value: a boolean for enabled, a string otherwise, null deleting
// the key (required: absent is refused).
type ToolSettingsWriteParams struct {
	Name  string          `json:"name"`
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Validate checks that name, key and value are given (value may be null).
func (p ToolSettingsWriteParams) Validate() error {
	if p.Name == "" {
		return InvalidParams("name", "must not be empty")
	}
	if p.Key == "" {
		return InvalidParams("key", "must not be empty")
	}
	if len(p.Value) == 0 {
		return InvalidParams("value", "required (null deletes the key)")
	}
	return nil
}

// ToolSettingsWriteResult is the (empty) result of tool/settings/write.
type ToolSettingsWriteResult struct{}

// CommandListParams are the params of command/list: exactly one of a
// loaded thread's id or a cwd (absolute) for a new thread there.
type CommandListParams struct {
	ThreadID string `json:"threadId,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
}

// Validate checks that exactly one of threadId and cwd is given: both
// name threadId (as tool/list's refusal does), neither names cwd.
func (p CommandListParams) Validate() error {
	switch {
	case p.ThreadID != "" && p.Cwd != "":
		return InvalidParams("threadId", "give exactly one of threadId and cwd")
	case p.ThreadID == "" && p.Cwd == "":
		return InvalidParams("cwd", "give exactly one of threadId and cwd")
	}
	return nil
}

// CommandListResult is the result of command/list: prompt templates by name
// and skills as "skill:<name>", without the leading "/".
type CommandListResult struct {
	Commands []CommandInfo `json:"commands"`
}

// CommandInfo is one command of command/list.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Resource types (resource/list type, resource/set type).
const (
	ResourceExtensions = "extensions"
	ResourceSkills     = "skills"
	ResourcePrompts    = "prompts"
	ResourceThemes     = "themes"
)

// ResourceListParams are the params of resource/list: the cwd (absolute) of
// a new thread, absent for a project-less one.
type ResourceListParams struct {
	Cwd string `json:"cwd,omitempty"`
}

// ResourceListResult is the result of resource/list. Warnings (additive)
// are what keeps a resource from being listed or loaded: a settings entry
// naming nothing, a package that is not installed (resource/list installs
// nothing), a malformed skill, a name two resources claim.
type ResourceListResult struct {
	Resources []ResourceInfo `json:"resources"`
	Warnings  []Warning      `json:"warnings,omitempty"`
}

// ResourceInfo is one resource: its type (extensions, skills, prompts,
// themes), absolute path, name, whether a thread loads it, the scope that
// defines it (global or project, for a package's: where the package entry
// is), its origin ("top-level", or "package") and where it was found
// ("auto": a conventional folder; "local": a path in the settings; for a
// package's resource, the package's source string as the settings give
// it).
type ResourceInfo struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Scope   string `json:"scope"`
	Origin  string `json:"origin"`
	Source  string `json:"source"`
}

// ResourceSetParams are the params of resource/set: one resource resource/list
// lists for cwd (absolute, absent for no project), by type and path, and
// whether threads load it.
type ResourceSetParams struct {
	Cwd     string `json:"cwd,omitempty"`
	Type    string `json:"type"`
	Path    string `json:"path"`
	Enabled bool   `json:"enabled"`
}

// Validate checks that type and path are given.
func (p ResourceSetParams) Validate() error {
	switch p.Type {
	case ResourceExtensions, ResourceSkills, ResourcePrompts, ResourceThemes:
	default:
		return InvalidParams("type", "must be extensions, skills, prompts or themes, got %q", p.Type)
	}
	if p.Path == "" {
		return InvalidParams("path", "must not be empty")
	}
	return nil
}

// ResourceSetResult is the (empty) result of resource/set.
type ResourceSetResult struct{}
