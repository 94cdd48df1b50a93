package rpc

import (
	"context"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// The tool family: tool/list and tool/settings/* over config.Tools and the
// settings a new thread would read (spec: Method reference, tool/list,
// tool/settings/read and tool/settings/write). Installed by
// RegisterSettingsMethods.

// knownTools are the tools a thread can register (tools.All), each on by
// default: the names tool/settings/* accept.
func knownTools() []config.KnownTool {
	var known []config.KnownTool
	for _, t := range tools.All("") {
		known = append(known, config.KnownTool{Name: t.Definition().Name, DefaultEnabled: true})
	}
	return known
}

// toolList answers tool/list from the settings a new thread in cwd would
// read and tools.json, building the tools in memory (nothing runs or is
// written): the built-in tools named by the resolved defaultTools and not
// disabled by tools.json, in defaultTools' order.
//
// With threadId it answers the loaded thread's live tools instead
// (threadTools).
func (s Settings) toolList(ctx context.Context, _ *jsonrpc.Conn, p protocol.ToolListParams) (protocol.ToolListResult, error) {
	if p.ThreadID != "" {
		return s.threadTools(ctx, p.ThreadID)
	}
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ToolListResult{}, err
	}
	snap, err := s.Store.Read(ctx, p.Cwd)
	if err != nil {
		return protocol.ToolListResult{}, err
	}
	vals, _ := snap.Values()
	disabled, _ := s.Tools.Disabled()
	byName := map[string]protocol.ToolInfo{}
	for _, t := range tools.All(p.Cwd) {
		d := t.Definition()
		byName[d.Name] = protocol.ToolInfo{Name: d.Name, Description: d.Description, Source: protocol.ToolSourceBuiltin}
	}
	res := protocol.ToolListResult{Tools: []protocol.ToolInfo{}, DefaultTools: slices.Clone(vals.DefaultTools)}
	if res.DefaultTools == nil {
		res.DefaultTools = []string{}
	}
	for _, name := range config.ResolveTools(vals.DefaultTools, disabled) {
		if t, ok := byName[name]; ok {
			res.Tools = append(res.Tools, t)
		}
	}
	return res, nil
}

// threadTools answers tool/list {threadId} (EXTENSIBILITY.md §8): the
// loaded thread's own tools (source builtin), then its extensions' tools:
// those of the built-in extensions (ask_user, background_shell) as
// builtin, an MCP server's as mcp with the server, the others as
// extension with the extension's path. defaultTools is the global setting
// as for a cwd. Errors: threadNotFound.
func (s Settings) threadTools(ctx context.Context, threadID string) (protocol.ToolListResult, error) {
	own, exts, err := s.Threads.Tools(threadID)
	if err != nil {
		return protocol.ToolListResult{}, err
	}
	snap, err := s.Store.Read(ctx, "")
	if err != nil {
		return protocol.ToolListResult{}, err
	}
	vals, _ := snap.Values()
	res := protocol.ToolListResult{Tools: []protocol.ToolInfo{}, DefaultTools: slices.Clone(vals.DefaultTools)}
	if res.DefaultTools == nil {
		res.DefaultTools = []string{}
	}
	for _, d := range own {
		res.Tools = append(res.Tools, protocol.ToolInfo{Name: d.Name, Description: d.Description, Source: protocol.ToolSourceBuiltin})
	}
	for _, r := range exts {
		info := protocol.ToolInfo{Name: r.Value.Name, Description: r.Value.Description}
		switch {
		case r.Value.Source == ext.SourceMCP:
			info.Source, info.Server = protocol.ToolSourceMCP, r.Value.Server
		case strings.HasPrefix(r.Path, ext.BuiltinPathPrefix):
			info.Source = protocol.ToolSourceBuiltin
		default:
			info.Source, info.Path = protocol.ToolSourceExtension, r.Path
		}
		res.Tools = append(res.Tools, info)
	}
	return res, nil
}

// toolSettingsRead answers tool/settings/read: each known tool's state in
// tools.json (secrets masked) and the models whose provider has
// credentials. Errors: a tools.json that cannot be read or parsed
// (internal).
func (s Settings) toolSettingsRead(context.Context, *jsonrpc.Conn, protocol.ToolSettingsReadParams) (protocol.ToolSettingsReadResult, error) {
	states, err := s.Tools.Read(knownTools())
	if err != nil {
		return protocol.ToolSettingsReadResult{}, err
	}
	res := protocol.ToolSettingsReadResult{Tools: []protocol.ToolState{}, Classifiers: []protocol.ClassifierModel{}}
	for _, st := range states {
		settings := st.Settings
		if settings == nil {
			settings = map[string]string{}
		}
		res.Tools = append(res.Tools, protocol.ToolState{Name: st.Name, Enabled: st.Enabled, Settings: settings})
	}
	for _, m := range s.Models.List() {
		if s.Models.HasKey(m.Provider) {
			res.Classifiers = append(res.Classifiers, protocol.ClassifierModel{Provider: m.Provider, ID: m.ID, Name: m.Name})
		}
	}
	return res, nil
}

// toolSettingsWrite answers tool/settings/write with Tools.Write. Errors:
// invalidParams for an unknown tool ("name"), a malformed key ("key") or a
// value of the wrong type ("value"); a corrupt tools.json (internal).
func (s Settings) toolSettingsWrite(ctx context.Context, _ *jsonrpc.Conn, p protocol.ToolSettingsWriteParams) (protocol.ToolSettingsWriteResult, error) {
	if err := s.Tools.Write(ctx, knownTools(), p.Name, p.Key, p.Value); err != nil {
		return protocol.ToolSettingsWriteResult{}, err
	}
	return protocol.ToolSettingsWriteResult{}, nil
}
