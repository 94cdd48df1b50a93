package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/knightcode/knightcode/mcp"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// RegisterMCPAppMethods installs mcp/app/readResource and
// mcp/app/callTool (spec: "mcp/app/readResource and mcp/app/callTool"),
// calls of apps, the MCP Apps registry every thread load's MCP runtime
// joins (mcp.Options.Apps).
func RegisterMCPAppMethods(srv *jsonrpc.Server, apps *mcp.Apps) {
	a := mcpApps{apps}
	jsonrpc.Handle(srv, protocol.McpAppReadResource, a.readResource)
	jsonrpc.Handle(srv, protocol.McpAppCallTool, a.callTool)
}

// mcpApps are the MCP Apps handlers.
type mcpApps struct{ apps *mcp.Apps }

// readResource answers mcp/app/readResource with Apps.ReadResource: the
// server's ReadResourceResult, the app's HTML first. Errors:
// threadNotFound; mcpUnavailable {server, state}; invalidParams "uri"
// (over 4 MiB); internal (no answer within 60 s, the server's refusal).
func (a mcpApps) readResource(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpAppReadResourceParams) (protocol.McpAppReadResourceResult, error) {
	b, err := a.apps.ReadResource(ctx, p.ThreadID, p.Server, p.URI)
	if err != nil {
		return protocol.McpAppReadResourceResult{}, err
	}
	var res protocol.McpAppReadResourceResult
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("MCP server %s, resource %s: %w", p.Server, p.URI, err)
	}
	if res.Contents == nil {
		res.Contents = []json.RawMessage{}
	}
	return res, nil
}

// callTool answers mcp/app/callTool with Apps.CallTool: the tool's
// CallToolResult (a text saying the tool ran for one over 4 MiB). Errors:
// invalidParams "arguments" (not an object, over 1 MiB) or "name"
// (reason unknownTool, hidden or notAppVisible); threadNotFound;
// mcpUnavailable {server, state}; approvalRequired {server, tool};
// internal (the call failed).
func (a mcpApps) callTool(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpAppCallToolParams) (protocol.McpAppCallToolResult, error) {
	b, err := a.apps.CallTool(ctx, p.ThreadID, p.Server, p.Name, p.Arguments, p.Confirmed)
	if err != nil {
		return protocol.McpAppCallToolResult{}, err
	}
	var res protocol.McpAppCallToolResult
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("MCP server %s, tool %s: %w", p.Server, p.Name, err)
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	return res, nil
}
