package rpc

import (
	"context"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/plugins"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The plugin family (spec: Method reference, "plugin/*"; EXTENSIBILITY.md
// §4 and §5) over plugins.Manager: plugin/list, install, set, update and
// uninstall, and plugin/marketplace/list, update, add and remove.

// RegisterPluginMethods installs the nine plugin/* methods on srv.
func RegisterPluginMethods(srv *jsonrpc.Server, m *plugins.Manager) {
	p := pluginHandlers{m: m}
	jsonrpc.Handle(srv, protocol.PluginList, p.list)
	jsonrpc.Handle(srv, protocol.PluginInstall, p.install)
	jsonrpc.Handle(srv, protocol.PluginSet, p.set)
	jsonrpc.Handle(srv, protocol.PluginUpdate, p.update)
	jsonrpc.Handle(srv, protocol.PluginUninstall, p.uninstall)
	jsonrpc.Handle(srv, protocol.PluginMarketplaceList, p.marketList)
	jsonrpc.Handle(srv, protocol.PluginMarketplaceUpdate, p.marketUpdate)
	jsonrpc.Handle(srv, protocol.PluginMarketplaceAdd, p.marketAdd)
	jsonrpc.Handle(srv, protocol.PluginMarketplaceRemove, p.marketRemove)
}

type pluginHandlers struct{ m *plugins.Manager }

// list answers plugin/list from local state. Errors: invalidParams "cwd";
// a corrupt trust store or unreadable settings (internal).
func (h pluginHandlers) list(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginListParams) (protocol.PluginListResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginListResult{}, err
	}
	l, err := h.m.List(ctx, p.Cwd)
	if err != nil {
		return protocol.PluginListResult{}, err
	}
	res := protocol.PluginListResult{Plugins: []protocol.Plugin{}, Diagnostics: []protocol.PluginDiagnostic{}, Importable: []protocol.PluginImportable{}}
	for _, r := range l.Plugins {
		res.Plugins = append(res.Plugins, pluginRow(r))
	}
	for _, d := range l.Diagnostics {
		res.Diagnostics = append(res.Diagnostics, protocol.PluginDiagnostic{Message: d.Message, Path: d.Path})
	}
	for _, i := range l.Importable {
		res.Importable = append(res.Importable, protocol.PluginImportable{Name: i.Name, From: i.From, Source: i.Source, Enabled: i.Enabled})
	}
	return res, nil
}

// install answers plugin/install. Errors: invalidParams (scope, cwd,
// source with reasons relativePath, credentialsInUrl; untrusted);
// externalFailure toolFailed for a failed fetch (git's words).
func (h pluginHandlers) install(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginInstallParams) (protocol.PluginInstallResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginInstallResult{}, err
	}
	r, err := h.m.Install(ctx, plugins.InstallRequest{Scope: config.Scope(p.Scope), Cwd: p.Cwd, Source: p.Source, Ref: p.Ref, Path: p.Path, Trust: p.Trust})
	if err != nil {
		return protocol.PluginInstallResult{}, err
	}
	return protocol.PluginInstallResult{Plugin: pluginRow(r.Plugin), Replaced: r.Replaced, Warnings: nonNil(r.Warnings)}, nil
}

// set answers plugin/set. Errors: invalidParams (name: unknown, or
// ambiguous with candidates; untrusted).
func (h pluginHandlers) set(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginSetParams) (protocol.PluginSetResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginSetResult{}, err
	}
	r, err := h.m.Set(ctx, config.Scope(p.Scope), p.Cwd, p.Name, p.Enabled, p.Trust)
	if err != nil {
		return protocol.PluginSetResult{}, err
	}
	return protocol.PluginSetResult{Plugin: pluginRow(r)}, nil
}

// update answers plugin/update. Errors: as set's; externalFailure for a
// failed fetch (the old install untouched).
func (h pluginHandlers) update(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginUpdateParams) (protocol.PluginUpdateResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginUpdateResult{}, err
	}
	r, err := h.m.Update(ctx, config.Scope(p.Scope), p.Cwd, p.Name)
	if err != nil {
		return protocol.PluginUpdateResult{}, err
	}
	return protocol.PluginUpdateResult{Plugin: pluginRow(r.Plugin), Updated: r.Updated, From: r.From, To: r.To, Warnings: nonNil(r.Warnings)}, nil
}

// uninstall answers plugin/uninstall. Errors: as set's, but an unknown
// name answers removed: false.
func (h pluginHandlers) uninstall(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginUninstallParams) (protocol.PluginUninstallResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginUninstallResult{}, err
	}
	removed, err := h.m.Uninstall(ctx, config.Scope(p.Scope), p.Cwd, p.Name)
	if err != nil {
		return protocol.PluginUninstallResult{}, err
	}
	return protocol.PluginUninstallResult{Removed: removed}, nil
}

// marketList answers plugin/marketplace/list from local state.
func (h pluginHandlers) marketList(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginMarketplaceListParams) (protocol.PluginMarketplaceListResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginMarketplaceListResult{}, err
	}
	rows, err := h.m.MarketplaceList(ctx, p.Cwd)
	if err != nil {
		return protocol.PluginMarketplaceListResult{}, err
	}
	res := protocol.PluginMarketplaceListResult{Marketplaces: []protocol.PluginMarketplace{}}
	for _, r := range rows {
		res.Marketplaces = append(res.Marketplaces, marketRow(r))
	}
	return res, nil
}

// marketUpdate answers plugin/marketplace/update: per-marketplace failures
// are in errors. Errors: invalidParams "name" for an unknown name.
func (h pluginHandlers) marketUpdate(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginMarketplaceUpdateParams) (protocol.PluginMarketplaceUpdateResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginMarketplaceUpdateResult{}, err
	}
	updated, errs, err := h.m.MarketplaceUpdate(ctx, p.Cwd, p.Name)
	if err != nil {
		return protocol.PluginMarketplaceUpdateResult{}, err
	}
	res := protocol.PluginMarketplaceUpdateResult{Updated: nonNil(updated), Errors: []protocol.PluginMarketplaceError{}}
	for _, e := range errs {
		res.Errors = append(res.Errors, protocol.PluginMarketplaceError{Name: e.Name, Message: e.Message})
	}
	return res, nil
}

// marketAdd answers plugin/marketplace/add. Errors: invalidParams (source
// with reasons relativePath, credentialsInUrl, nameConflict with
// existing, badCatalog; untrusted); externalFailure for a failed fetch.
func (h pluginHandlers) marketAdd(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginMarketplaceAddParams) (protocol.PluginMarketplaceAddResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginMarketplaceAddResult{}, err
	}
	row, already, err := h.m.MarketplaceAdd(ctx, config.Scope(p.Scope), p.Cwd, p.Source, p.Ref)
	if err != nil {
		return protocol.PluginMarketplaceAddResult{}, err
	}
	return protocol.PluginMarketplaceAddResult{Marketplace: marketRow(row), AlreadyAdded: already}, nil
}

// marketRemove answers plugin/marketplace/remove.
func (h pluginHandlers) marketRemove(ctx context.Context, _ *jsonrpc.Conn, p protocol.PluginMarketplaceRemoveParams) (protocol.PluginMarketplaceRemoveResult, error) {
	if err := optionalDir(p.Cwd); err != nil {
		return protocol.PluginMarketplaceRemoveResult{}, err
	}
	removed, err := h.m.MarketplaceRemove(ctx, config.Scope(p.Scope), p.Cwd, p.Name)
	if err != nil {
		return protocol.PluginMarketplaceRemoveResult{}, err
	}
	return protocol.PluginMarketplaceRemoveResult{Removed: removed}, nil
}

func pluginRow(r plugins.Row) protocol.Plugin {
	return protocol.Plugin{Identity: r.Identity, Name: r.Name, Marketplace: r.Marketplace, Scope: string(r.Scope),
		Source: r.Source, Ref: r.Ref, Path: r.Path, Commit: r.Commit, Version: r.Version,
		Enabled: r.Enabled, Trusted: r.Trusted, Active: r.Active,
		Skills: nonNil(r.Skills), Commands: nonNil(r.Commands), McpServers: nonNil(r.MCPServers),
		Env: nonNil(r.Env), Unsupported: nonNil(r.Unsupported), Warnings: nonNil(r.Warnings)}
}

func marketRow(r plugins.MarketRow) protocol.PluginMarketplace {
	out := protocol.PluginMarketplace{Name: r.Name, Source: r.Source, Ref: r.Ref, From: r.From, Added: r.Added,
		Scope: string(r.Scope), UpdatedAt: r.UpdatedAt, Missing: r.Missing, Plugins: []protocol.PluginCatalogItem{},
		Diagnostics: nonNil(r.Diagnostics)}
	for _, p := range r.Plugins {
		out.Plugins = append(out.Plugins, protocol.PluginCatalogItem{Name: p.Name, Description: p.Description,
			Version: p.Version, Author: p.Author, Installed: p.Installed, Update: p.Update})
	}
	return out
}
