package protocol

import "encoding/json"

// Rows of the MCP server configuration methods (spec: Method reference,
// "mcp/list, mcp/update, mcp/add and mcp/remove"): the global
// <agentDir>/mcp.json and, for an explicitly trusted project,
// <project>/.knightcode/mcp.json, in Claude Code's mcpServers format.
// They read and write those files only: threads do not connect to the
// servers yet.
var (
	// McpList ("mcp/list") lists the MCP servers a thread in cwd would use,
	// with the problems found in the files.
	McpList = clientRequest[McpListParams, McpListResult]("mcp/list", Concurrent)

	// McpAdd ("mcp/add") adds or replaces one mcpServers entry.
	McpAdd = clientRequest[McpAddParams, McpAddResult]("mcp/add", Concurrent)

	// McpUpdate ("mcp/update") turns a server on or off or changes its
	// exposure, where /mcp would save it.
	McpUpdate = clientRequest[McpUpdateParams, McpUpdateResult]("mcp/update", Concurrent)

	// McpRemove ("mcp/remove") removes one mcpServers entry.
	McpRemove = clientRequest[McpRemoveParams, McpRemoveResult]("mcp/remove", Concurrent)
)

// MCP transports (McpServer.Transport) and exposures (McpServer.Exposure,
// McpUpdateParams.Exposure).
const (
	McpTransportStdio  = "stdio"
	McpTransportHTTP   = "http"
	McpExposureDirect  = "direct"
	McpExposureSearch  = "search"
	mcpNameDescription = "a letter or digit, then up to 63 letters, digits, _ or -"
)

// McpListParams are the params of mcp/list: without cwd only the global
// file is read; with cwd (absolute) a trusted project's file too (at a
// managed worktree's cwd, its project's).
type McpListParams struct {
	Cwd string `json:"cwd,omitempty"`
}

// McpListResult is the result of mcp/list: the servers in name order, one
// row per name (a project server wins over a global one of the same
// name); Errors, one source "settings" warning per problem in the files
// (a file that does not parse, an entry left out or loaded without a key,
// an override for an unknown server), with line and column when known;
// Paths, the files (Project when the read had a cwd).
type McpListResult struct {
	Servers []McpServer `json:"servers"`
	Errors  []Warning   `json:"errors"`
	Paths   ConfigPaths `json:"paths"`
}

// McpServer is one server of mcp/list: its name; scope and source, the
// file of its effective definition; override, the trusted project's
// mcp.json whose entry (only enabled, exposure, enabledTools,
// disabledTools) applies to this global server; transport (stdio, or http
// for http, streamable-http and sse); target, the command line (POSIX
// shell quoting) or URL as written, before ${VAR} expansion; description;
// enabled (default true); exposure (direct, the default, or search). Env
// and header values never appear.
type McpServer struct {
	Name        string `json:"name"`
	Scope       string `json:"scope"`
	Source      string `json:"source"`
	Override    string `json:"override,omitempty"`
	Transport   string `json:"transport"`
	Target      string `json:"target"`
	Description string `json:"description,omitempty"`
	Enabled     bool   `json:"enabled"`
	Exposure    string `json:"exposure"`
}

// McpAddParams are the params of mcp/add: Scope "global" or "project"
// (Cwd, absolute, required for a project, which must be explicitly
// trusted); Name, a letter or digit then up to 63 letters, digits, _ or -;
// Config, an mcpServers entry as Claude Code writes it: exactly one of
// command (with args, env, cwd) and url (with headers), and optionally
// type (stdio, http, streamable-http, sse), enabled, exposure,
// description, enabledTools, disabledTools, startupTimeoutSec,
// toolTimeoutSec, and auth or oauth (global file only). Unknown keys are
// refused (field config.<key>). In a project file, an entry holding only
// enabled, exposure, enabledTools or disabledTools for a global server is
// that server's override. ${VAR} is stored as written.
type McpAddParams struct {
	Scope  string          `json:"scope"`
	Cwd    string          `json:"cwd,omitempty"`
	Name   string          `json:"name" jsonschema:"maxLength=64"`
	Config json.RawMessage `json:"config"`
}

// Validate checks the name and that a project write has a cwd; the
// config is checked by the config package.
func (p McpAddParams) Validate() error {
	if err := validMcpName(p.Name); err != nil {
		return err
	}
	if p.Scope == ScopeProject && p.Cwd == "" {
		return InvalidParams("cwd", "a project write needs cwd")
	}
	return nil
}

// McpAddResult is the result of mcp/add: whether an entry of that name was
// replaced.
type McpAddResult struct {
	Replaced bool `json:"replaced"`
}

// McpUpdateParams are the params of mcp/update: the server Name as mcp/list
// {cwd} shows it and at least one of Enabled and Exposure. The change is
// saved in the project override when the row has one, else in the file
// defining the server.
type McpUpdateParams struct {
	Cwd      string `json:"cwd,omitempty"`
	Name     string `json:"name" jsonschema:"maxLength=64"`
	Enabled  *bool  `json:"enabled,omitempty"`
	Exposure string `json:"exposure,omitempty"`
}

// Validate checks the name and that something is changed.
func (p McpUpdateParams) Validate() error {
	if err := validMcpName(p.Name); err != nil {
		return err
	}
	if p.Enabled == nil && p.Exposure == "" {
		return InvalidParams("", "give enabled, exposure or both")
	}
	return nil
}

// McpUpdateResult is the result of mcp/update: the server's row as
// mcp/list now shows it.
type McpUpdateResult struct {
	Server McpServer `json:"server"`
}

// McpRemoveParams are the params of mcp/remove: Scope and Cwd as for
// mcp/add, and the Name of the entry to remove from that scope's file.
type McpRemoveParams struct {
	Scope string `json:"scope"`
	Cwd   string `json:"cwd,omitempty"`
	Name  string `json:"name" jsonschema:"maxLength=64"`
}

// Validate checks the name and that a project write has a cwd.
func (p McpRemoveParams) Validate() error {
	if err := validMcpName(p.Name); err != nil {
		return err
	}
	if p.Scope == ScopeProject && p.Cwd == "" {
		return InvalidParams("cwd", "a project write needs cwd")
	}
	return nil
}

// McpRemoveResult is the result of mcp/remove: whether the entry was
// there (removing an absent one changes nothing).
type McpRemoveResult struct {
	Removed bool `json:"removed"`
}

// validMcpName refuses an empty name; its shape is the config package's
// check (a letter or digit, then up to 63 letters, digits, _ or -).
func validMcpName(name string) error {
	if name == "" {
		return InvalidParams("name", "must not be empty: %s", mcpNameDescription)
	}
	return nil
}
