package rpc

import (
	"context"
	"slices"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/filesearch"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// The settings families (spec: Method reference): config/read and
// config/write over config.Store, tool/list and tool/settings/* over
// config.Tools, command/list, resource/list and resource/set over
// config.Store's resources, and file/search over filesearch.Searcher.

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
// resource/set and file/search on srv.
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
func (s Settings) toolList(ctx context.Context, _ *jsonrpc.Conn, p protocol.ToolListParams) (protocol.ToolListResult, error) {
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

// commandList answers command/list: the prompt templates and skills
// ("skill:<name>") of the resources a thread in cwd finds (for threadId,
// the loaded thread's cwd, as of now), found without starting anything or
// writing. Errors: invalidParams; threadNotFound.
func (s Settings) commandList(ctx context.Context, _ *jsonrpc.Conn, p protocol.CommandListParams) (protocol.CommandListResult, error) {
	cwd := p.Cwd
	if p.ThreadID != "" {
		var err error
		if cwd, err = s.Threads.Checkout(p.ThreadID); err != nil {
			return protocol.CommandListResult{}, err
		}
	} else if err := absDir("cwd", cwd); err != nil {
		return protocol.CommandListResult{}, err
	}
	set, err := s.Store.Resources(ctx, cwd)
	if err != nil {
		return protocol.CommandListResult{}, err
	}
	res := protocol.CommandListResult{Commands: []protocol.CommandInfo{}}
	for _, c := range set.Commands() {
		res.Commands = append(res.Commands, protocol.CommandInfo{Name: c.Name, Description: c.Description})
	}
	return res, nil
}

// resourceList answers resource/list from Store.Resources: what a thread
// in cwd (or with no project) finds, installing nothing.
func (s Settings) resourceList(ctx context.Context, _ *jsonrpc.Conn, p protocol.ResourceListParams) (protocol.ResourceListResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ResourceListResult{}, err
	}
	set, err := s.Store.Resources(ctx, p.Cwd)
	if err != nil {
		return protocol.ResourceListResult{}, err
	}
	res := protocol.ResourceListResult{Resources: []protocol.ResourceInfo{}}
	for _, r := range set.Resources {
		res.Resources = append(res.Resources, protocol.ResourceInfo{
			Type: r.Type, Path: r.Path, Name: r.Name, Enabled: r.Enabled,
			Scope: string(r.Scope), Origin: r.Origin, Source: r.Source,
		})
	}
	return res, nil
}

// resourceSet answers resource/set with Store.SetResource: a + or -
// pattern in the settings of the scope defining the resource, for threads
// that load afterwards. Errors: invalidParams for an unknown path ("path")
// or an untrusted project ("cwd", data.reason "untrusted"); a corrupt
// settings file (internal).
func (s Settings) resourceSet(ctx context.Context, _ *jsonrpc.Conn, p protocol.ResourceSetParams) (protocol.ResourceSetResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.ResourceSetResult{}, err
	}
	if err := s.Store.SetResource(ctx, p.Cwd, p.Type, p.Path, p.Enabled); err != nil {
		return protocol.ResourceSetResult{}, err
	}
	return protocol.ResourceSetResult{}, nil
}

// fileSearch answers file/search with the server's one Searcher. Errors:
// invalidParams; toolMissing without fd; shuttingDown once the server
// stops; internal for a listing that timed out or failed empty.
func (s Settings) fileSearch(ctx context.Context, _ *jsonrpc.Conn, p protocol.FileSearchParams) (protocol.FileSearchResult, error) {
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.FileSearchResult{}, err
	}
	limit := 0
	if p.Limit != nil {
		limit = *p.Limit
	}
	r, err := s.Search.Search(ctx, filesearch.Request{Cwd: p.Cwd, Query: p.Query, Limit: limit, SearchID: p.SearchID})
	if err != nil {
		return protocol.FileSearchResult{}, err
	}
	res := protocol.FileSearchResult{Files: make([]protocol.FileMatch, 0, len(r.Files)), Truncated: r.Truncated}
	for _, m := range r.Files {
		idx := m.Indices
		if idx == nil {
			idx = []int{}
		}
		res.Files = append(res.Files, protocol.FileMatch{Path: m.Path, Score: m.Score, Indices: idx})
	}
	return res, nil
}

// warnings converts config warnings to the wire's, never nil.
func warnings(ws []config.Warning) []protocol.Warning {
	out := make([]protocol.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, protocol.Warning(w))
	}
	return out
}
