package rpc

import (
	"context"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The MCP server configuration family (spec: Method reference, "mcp/list,
// mcp/update, mcp/add and mcp/remove") over config.Store's mcp.json files.
// Nothing here connects to a server, and nothing expands ${VAR}: env and
// header values are never read into an answer (a row's target is the
// command line or the URL).

// mcpList answers mcp/list with Store.MCPList. Errors: invalidParams
// "cwd"; an unreadable file (internal). A malformed file is in errors.
func (s Settings) mcpList(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpListParams) (protocol.McpListResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.McpListResult{}, err
	}
	l, err := s.Store.MCPList(ctx, p.Cwd)
	if err != nil {
		return protocol.McpListResult{}, err
	}
	servers := make([]protocol.McpServer, 0, len(l.Servers))
	for _, r := range l.Servers {
		servers = append(servers, mcpServer(r))
	}
	return protocol.McpListResult{
		Servers: servers,
		Errors:  warnings(l.Errors),
		Paths:   protocol.ConfigPaths{Global: l.Paths.Global, Project: l.Paths.Project},
	}, nil
}

// mcpAdd answers mcp/add with Store.MCPAdd. Errors: invalidParams (scope,
// name, cwd, config and config.<key>; data.reason "untrusted",
// "projectAuth", "unsupported" or "incomplete"); a corrupt file or a
// failed write (internal).
func (s Settings) mcpAdd(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpAddParams) (protocol.McpAddResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.McpAddResult{}, err
	}
	replaced, err := s.Store.MCPAdd(ctx, config.MCPAddRequest{Scope: config.Scope(p.Scope), Cwd: p.Cwd, Name: p.Name, Config: p.Config})
	if err != nil {
		return protocol.McpAddResult{}, err
	}
	return protocol.McpAddResult{Replaced: replaced}, nil
}

// mcpUpdate answers mcp/update with Store.MCPUpdate: the row as mcp/list
// now shows it. Errors: invalidParams (name, exposure, cwd; data.reason
// "untrusted"); a corrupt file or a failed write (internal).
func (s Settings) mcpUpdate(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpUpdateParams) (protocol.McpUpdateResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.McpUpdateResult{}, err
	}
	req := config.MCPUpdateRequest{Cwd: p.Cwd, Name: p.Name, Enabled: p.Enabled}
	if p.Exposure != "" {
		req.Exposure = &p.Exposure
	}
	r, err := s.Store.MCPUpdate(ctx, req)
	if err != nil {
		return protocol.McpUpdateResult{}, err
	}
	return protocol.McpUpdateResult{Server: mcpServer(r)}, nil
}

// mcpRemove answers mcp/remove with Store.MCPRemove. Errors: as mcpAdd's
// for scope, name and cwd.
func (s Settings) mcpRemove(ctx context.Context, _ *jsonrpc.Conn, p protocol.McpRemoveParams) (protocol.McpRemoveResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.McpRemoveResult{}, err
	}
	removed, err := s.Store.MCPRemove(ctx, config.Scope(p.Scope), p.Cwd, p.Name)
	if err != nil {
		return protocol.McpRemoveResult{}, err
	}
	return protocol.McpRemoveResult{Removed: removed}, nil
}

// mcpServer converts a config row to the wire's.
func mcpServer(r config.MCPServer) protocol.McpServer {
	return protocol.McpServer{Name: r.Name, Scope: string(r.Scope), Source: r.Source, Override: r.Override,
		Transport: r.Transport, Target: r.Target, Description: r.Description, Enabled: r.Enabled, Exposure: r.Exposure}
}
