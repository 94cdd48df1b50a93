package rpc

import (
	"context"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/filesearch"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// The config family (spec: Method reference, config/read and config/write)
// over config.Store. Settings also carries the handlers of the families
// that read settings and resources, each in its family's file: tool/list
// and tool/settings/* (tool.go), command/list (command.go), resource/list
// and resource/set (resource.go), file/search over filesearch.Searcher
// (file.go), and the mcp/* configuration methods (mcp.go).

// Settings is what the settings handlers call. The wiring in cmd/knightcode
// builds every field; none may be nil.
type Settings struct {
	// Store reads and writes the settings files and finds resources.
	Store *config.Store
	// Tools is <agentDir>/tools.json.
	Tools *config.Tools
	// Models answers which models have credentials (tool/settings/read's
	// classifiers).
	Models *provider.Registry
	// Threads looks a thread's cwd up for command/list {threadId}.
	Threads *threads.Manager
	// Search answers file/search; the wiring closes it at shutdown.
	Search *filesearch.Searcher
}

// RegisterSettingsMethods installs config/read, config/write, tool/list,
// tool/settings/read, tool/settings/write, command/list, resource/list,
// resource/set, file/search, and mcp/list, mcp/add, mcp/update and
// mcp/remove (mcp.go) on srv.
func RegisterSettingsMethods(srv *jsonrpc.Server, s Settings) {
	jsonrpc.Handle(srv, protocol.ConfigRead, s.configRead)
	jsonrpc.Handle(srv, protocol.ConfigWrite, s.configWrite)
	jsonrpc.Handle(srv, protocol.ToolList, s.toolList)
	jsonrpc.Handle(srv, protocol.ToolSettingsRead, s.toolSettingsRead)
	jsonrpc.Handle(srv, protocol.ToolSettingsWrite, s.toolSettingsWrite)
	jsonrpc.Handle(srv, protocol.CommandList, s.commandList)
	jsonrpc.Handle(srv, protocol.ResourceList, s.resourceList)
	jsonrpc.Handle(srv, protocol.ResourceSet, s.resourceSet)
	jsonrpc.Handle(srv, protocol.FileSearch, s.fileSearch)
	jsonrpc.Handle(srv, protocol.McpList, s.mcpList)
	jsonrpc.Handle(srv, protocol.McpAdd, s.mcpAdd)
	jsonrpc.Handle(srv, protocol.McpUpdate, s.mcpUpdate)
	jsonrpc.Handle(srv, protocol.McpRemove, s.mcpRemove)
}

// optionalDir checks an optional cwd: absent, or an absolute path (whether
// it exists is the config package's check, *config.ParamError "cwd").
func optionalDir(cwd string) error {
	if cwd == "" {
		return nil
	}
	return absDir("cwd", cwd)
}

// configRead answers config/read from one Store.Read: the merged settings,
// origins, versions, paths and parse errors of the same read of each
// file, and the defaults. Errors: invalidParams "cwd"; an unreadable file
// (internal).
func (s Settings) configRead(ctx context.Context, _ *jsonrpc.Conn, p protocol.ConfigReadParams) (protocol.ConfigReadResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ConfigReadResult{}, err
	}
	snap, err := s.Store.Read(ctx, p.Cwd)
	if err != nil {
		return protocol.ConfigReadResult{}, err
	}
	origins := make(map[string]string, len(snap.Origins))
	for k, o := range snap.Origins {
		origins[k] = string(o)
	}
	return protocol.ConfigReadResult{
		Settings: snap.Settings,
		Defaults: s.Store.Defaults(),
		Origins:  origins,
		Versions: protocol.ConfigVersions{Global: snap.Versions.Global, Project: snap.Versions.Project},
		Paths:    protocol.ConfigPaths{Global: snap.Paths.Global, Project: snap.Paths.Project},
		Errors:   warnings(snap.Errors),
	}, nil
}

// configWrite answers config/write with Store.Write: the file's version
// after the write (the next read sees it: the store keeps no cache).
// Errors: invalidParams (scope, key, value, cwd; data.reason "untrusted"
// for an untrusted project); configConflict with data.version; a corrupt
// file or a failed write (internal).
func (s Settings) configWrite(ctx context.Context, _ *jsonrpc.Conn, p protocol.ConfigWriteParams) (protocol.ConfigWriteResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ConfigWriteResult{}, err
	}
	v, err := s.Store.Write(ctx, config.WriteRequest{
		Scope: config.Scope(p.Scope), Key: p.Key, Value: p.Value, Cwd: p.Cwd, ExpectedVersion: p.ExpectedVersion,
	})
	if err != nil {
		return protocol.ConfigWriteResult{}, err
	}
	return protocol.ConfigWriteResult{Version: v}, nil
}

// warnings converts config warnings to the wire's, never nil.
func warnings(ws []config.Warning) []protocol.Warning {
	out := make([]protocol.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, protocol.Warning(w))
	}
	return out
}
