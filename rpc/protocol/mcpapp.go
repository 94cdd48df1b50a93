package protocol

import "encoding/json"

// Rows of the MCP Apps methods (spec: Method reference,
// "mcp/app/readResource and mcp/app/callTool"; EXTENSIBILITY.md §3). Both
// reach one server of a loaded thread's MCP extension.
var (
	// McpAppReadResource ("mcp/app/readResource") reads a resource of a
	// thread's MCP server for an app (its HTML first).
	McpAppReadResource = clientRequest[McpAppReadResourceParams, McpAppReadResourceResult]("mcp/app/readResource", Concurrent)

	// McpAppCallTool ("mcp/app/callTool") calls a tool of a thread's MCP
	// server for an app, outside the conversation.
	McpAppCallTool = clientRequest[McpAppCallToolParams, McpAppCallToolResult]("mcp/app/callTool", Concurrent)
)

// McpAppReadResourceParams are the params of mcp/app/readResource: the
// loaded thread, the name of one of its MCP servers and the resource's
// URI (a ui:// app, or any resource the app's view reads).
type McpAppReadResourceParams struct {
	ThreadID string `json:"threadId"`
	Server   string `json:"server" jsonschema:"minLength=1"`
	URI      string `json:"uri" jsonschema:"minLength=1"`
}

// McpAppReadResourceResult is the server's ReadResourceResult as it sent
// it: Contents, each {uri, mimeType?, text | blob, _meta?}, reordered so
// the app's HTML comes first (text/html;profile=mcp-app, then
// text/html; the others in the server's order), and Meta, its _meta.
type McpAppReadResourceResult struct {
	Contents []json.RawMessage `json:"contents"`
	Meta     json.RawMessage   `json:"_meta,omitempty"`
}

// McpAppCallToolParams are the params of mcp/app/callTool: the loaded
// thread, the server, the tool's name (as the server names it), its
// Arguments (a JSON object, at most 1 MiB as JSON) and Confirmed, true
// when the person agreed to this one call of a tool that is not
// read-only (outside fullAccess it is approvalRequired without).
type McpAppCallToolParams struct {
	ThreadID  string          `json:"threadId"`
	Server    string          `json:"server" jsonschema:"minLength=1"`
	Name      string          `json:"name" jsonschema:"minLength=1"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Confirmed bool            `json:"confirmed,omitempty"`
}

// McpAppCallToolResult is the tool's CallToolResult as the server sent it:
// Content (its content blocks), StructuredContent, IsError and Meta (its
// _meta). A result over 4 MiB as JSON is left out: Content is then one
// text block saying the tool ran and Meta is
// {"knightcode/resultOmitted": true}.
type McpAppCallToolResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}

// McpUnavailableData is the data of an mcpUnavailable error: the Server
// named and its State: notConfigured, disabled, connecting, failed or
// signInRequired.
type McpUnavailableData struct {
	Server string `json:"server"`
	State  string `json:"state"`
}

// The states of McpUnavailableData.State.
const (
	McpStateNotConfigured  = "notConfigured"
	McpStateDisabled       = "disabled"
	McpStateConnecting     = "connecting"
	McpStateFailed         = "failed"
	McpStateSignInRequired = "signInRequired"
)

// ApprovalRequiredData is the data of an approvalRequired error: the
// server and tool that need the person's consent (mcp/app/callTool again
// with confirmed: true once they agreed).
type ApprovalRequiredData struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}
