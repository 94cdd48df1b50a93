package protocol

// The plugin and marketplace methods (spec: Method reference, "plugin/*";
// EXTENSIBILITY.md §4 and §5): plugins in Claude Code's format installed
// by commit into an immutable cache, trusted only in the server's own
// trust store, and the marketplaces (catalogs) they come from. Reads use
// local state only; changes apply to threads that start, resume or reload
// afterwards.
var (
	// PluginList ("plugin/list") lists the installed plugins a thread in
	// cwd sees, with diagnostics and what Claude Code installed.
	PluginList = clientRequest[PluginListParams, PluginListResult]("plugin/list", Concurrent)
	// PluginInstall ("plugin/install") fetches and installs a plugin.
	PluginInstall = clientRequest[PluginInstallParams, PluginInstallResult]("plugin/install", Concurrent)
	// PluginSet ("plugin/set") turns a plugin on or off, or trusts it.
	PluginSet = clientRequest[PluginSetParams, PluginSetResult]("plugin/set", Concurrent)
	// PluginUpdate ("plugin/update") fetches a plugin's source again and
	// installs a new commit.
	PluginUpdate = clientRequest[PluginUpdateParams, PluginUpdateResult]("plugin/update", Concurrent)
	// PluginUninstall ("plugin/uninstall") removes a plugin from a scope.
	PluginUninstall = clientRequest[PluginUninstallParams, PluginUninstallResult]("plugin/uninstall", Concurrent)
	// PluginMarketplaceList ("plugin/marketplace/list") lists every
	// marketplace with its local catalog.
	PluginMarketplaceList = clientRequest[PluginMarketplaceListParams, PluginMarketplaceListResult]("plugin/marketplace/list", Concurrent)
	// PluginMarketplaceUpdate ("plugin/marketplace/update") fetches
	// catalogs.
	PluginMarketplaceUpdate = clientRequest[PluginMarketplaceUpdateParams, PluginMarketplaceUpdateResult]("plugin/marketplace/update", Concurrent)
	// PluginMarketplaceAdd ("plugin/marketplace/add") adds a marketplace
	// to a scope.
	PluginMarketplaceAdd = clientRequest[PluginMarketplaceAddParams, PluginMarketplaceAddResult]("plugin/marketplace/add", Concurrent)
	// PluginMarketplaceRemove ("plugin/marketplace/remove") removes a
	// marketplace from a scope, keeping its plugins installed.
	PluginMarketplaceRemove = clientRequest[PluginMarketplaceRemoveParams, PluginMarketplaceRemoveResult]("plugin/marketplace/remove", Concurrent)
)

// Where a marketplace or an importable plugin comes from (PluginImportable.From,
// PluginMarketplace.From).
const (
	PluginFromClaudeCode = "claudeCode"
	PluginFromGrokBuild  = "grokBuild"
)

// validSettingsScope checks a write's scope and that a project write has a cwd.
func validSettingsScope(scope, cwd string) error {
	switch scope {
	case ScopeGlobal, ScopeProject:
	default:
		return InvalidParams("scope", "must be global or project, got %q", scope)
	}
	if scope == ScopeProject && cwd == "" {
		return InvalidParams("cwd", "a project write needs cwd")
	}
	return nil
}

// PluginListParams are the params of plugin/list: cwd (absolute) of a new
// thread, absent for a project-less one.
type PluginListParams struct {
	Cwd string `json:"cwd,omitempty"`
}

// PluginListResult is the result of plugin/list: the installed plugins of
// the global settings and of cwd's trusted project in identity order;
// diagnostics (malformed registries and plugin folders, unreadable Claude
// Code files); importable, what Claude Code installed that is not
// installed here.
type PluginListResult struct {
	Plugins     []Plugin           `json:"plugins"`
	Diagnostics []PluginDiagnostic `json:"diagnostics"`
	Importable  []PluginImportable `json:"importable"`
}

// Plugin is one installed plugin: its identity (name@marketplace, or its
// canonical source github:owner/repo[#path], git:<url>[#path],
// path:/abs/dir), name, marketplace, scope, canonical source (credentials
// shown as ***), the ref and path it was installed with, commit (a commit
// id, or a folder's content hash), version (its manifest's); enabled;
// trusted (by the server's trust store, for this identity and source);
// active (a new thread in cwd loads it: enabled, trusted, installed);
// what it brings, whether or not active: skills and commands
// ("<plugin>:<name>"), MCP servers (runtime names "<plugin>_<server>"),
// the environment variables its MCP definitions read; unsupported, the
// parts knightcode ignores (agents, bin, hooks, lspServers, monitors,
// outputStyles), sorted; and warnings.
type Plugin struct {
	Identity    string   `json:"identity"`
	Name        string   `json:"name"`
	Marketplace string   `json:"marketplace,omitempty"`
	Scope       string   `json:"scope"`
	Source      string   `json:"source"`
	Ref         string   `json:"ref,omitempty"`
	Path        string   `json:"path,omitempty"`
	Commit      string   `json:"commit"`
	Version     string   `json:"version,omitempty"`
	Enabled     bool     `json:"enabled"`
	Trusted     bool     `json:"trusted"`
	Active      bool     `json:"active"`
	Skills      []string `json:"skills"`
	Commands    []string `json:"commands"`
	McpServers  []string `json:"mcpServers"`
	Env         []string `json:"env"`
	Unsupported []string `json:"unsupported"`
	Warnings    []string `json:"warnings"`
}

// PluginDiagnostic is one problem plugin/list found: what, and the file.
type PluginDiagnostic struct {
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// PluginImportable is a plugin another tool installed that is not
// installed here: name is the name@marketplace plugin/install takes,
// from the tool (claudeCode), source the marketplace's source, enabled
// the tool's setting.
type PluginImportable struct {
	Name    string `json:"name"`
	From    string `json:"from"`
	Source  string `json:"source"`
	Enabled bool   `json:"enabled"`
}

// PluginInstallParams are the params of plugin/install: scope (global or
// project; a project needs cwd and a trusted project); source, one of
// owner/repo or github:owner/repo, a git URL (https://, ssh://, git://,
// file://, git@host:path; no credentials in it), an absolute folder, or
// name@marketplace; ref, a branch, tag or full commit; path, a subfolder
// of the repository; trust, to trust it now (without it, nothing of the
// plugin runs).
type PluginInstallParams struct {
	Scope  string `json:"scope"`
	Cwd    string `json:"cwd,omitempty"`
	Source string `json:"source" jsonschema:"maxLength=2048"`
	Ref    string `json:"ref,omitempty" jsonschema:"maxLength=256"`
	Path   string `json:"path,omitempty" jsonschema:"maxLength=1024"`
	Trust  bool   `json:"trust,omitempty"`
}

// Validate checks scope, cwd and that source is given.
func (p PluginInstallParams) Validate() error {
	if err := validSettingsScope(p.Scope, p.Cwd); err != nil {
		return err
	}
	if p.Source == "" {
		return InvalidParams("source", "must not be empty")
	}
	return nil
}

// PluginInstallResult is the result of plugin/install: the plugin's row,
// whether an install of the same identity in the scope was replaced (its
// enabled and trust kept), and warnings.
type PluginInstallResult struct {
	Plugin   Plugin   `json:"plugin"`
	Replaced bool     `json:"replaced"`
	Warnings []string `json:"warnings"`
}

// PluginSetParams are the params of plugin/set: the plugin (its name,
// name@marketplace or identity) in scope; enabled turns it on or off;
// trust: true trusts it and approves its current MCP servers (false
// leaves trust as it is: plugin/set never revokes trust).
type PluginSetParams struct {
	Scope   string `json:"scope"`
	Cwd     string `json:"cwd,omitempty"`
	Name    string `json:"name" jsonschema:"maxLength=2048"`
	Enabled *bool  `json:"enabled,omitempty"`
	Trust   *bool  `json:"trust,omitempty"`
}

// Validate checks scope, cwd and name.
func (p PluginSetParams) Validate() error { return validName(p.Scope, p.Cwd, p.Name) }

func validName(scope, cwd, name string) error {
	if err := validSettingsScope(scope, cwd); err != nil {
		return err
	}
	if name == "" {
		return InvalidParams("name", "must not be empty")
	}
	return nil
}

// PluginSetResult is the result of plugin/set: the plugin's row.
type PluginSetResult struct {
	Plugin Plugin `json:"plugin"`
}

// PluginUpdateParams are the params of plugin/update: the plugin in scope.
type PluginUpdateParams struct {
	Scope string `json:"scope"`
	Cwd   string `json:"cwd,omitempty"`
	Name  string `json:"name" jsonschema:"maxLength=2048"`
}

// Validate checks scope, cwd and name.
func (p PluginUpdateParams) Validate() error { return validName(p.Scope, p.Cwd, p.Name) }

// PluginUpdateResult is the result of plugin/update: the row; updated,
// whether a new commit was installed (from and to are the commits then);
// warnings (a catalog not refreshed, MCP servers the update adds or
// changes, which do not start until plugin/set {trust: true}).
type PluginUpdateResult struct {
	Plugin   Plugin   `json:"plugin"`
	Updated  bool     `json:"updated"`
	From     string   `json:"from,omitempty"`
	To       string   `json:"to,omitempty"`
	Warnings []string `json:"warnings"`
}

// PluginUninstallParams are the params of plugin/uninstall: the plugin in
// scope.
type PluginUninstallParams struct {
	Scope string `json:"scope"`
	Cwd   string `json:"cwd,omitempty"`
	Name  string `json:"name" jsonschema:"maxLength=2048"`
}

// Validate checks scope, cwd and name.
func (p PluginUninstallParams) Validate() error { return validName(p.Scope, p.Cwd, p.Name) }

// PluginUninstallResult is the result of plugin/uninstall: whether it was
// installed in the scope (uninstalling an absent plugin changes nothing).
type PluginUninstallResult struct {
	Removed bool `json:"removed"`
}

// PluginMarketplaceListParams are the params of plugin/marketplace/list.
type PluginMarketplaceListParams struct {
	Cwd string `json:"cwd,omitempty"`
}

// PluginMarketplaceListResult is the result of plugin/marketplace/list:
// built in, added (global, then project), then Claude Code's; one row per
// name.
type PluginMarketplaceListResult struct {
	Marketplaces []PluginMarketplace `json:"marketplaces"`
}

// PluginMarketplace is one marketplace: name; canonical source; ref; from
// (claudeCode) when another tool's and not added; added and, then, scope;
// updatedAt (RFC 3339), when knightcode last fetched its catalog; missing,
// when no local catalog exists (plugins is then empty); its whole catalog;
// diagnostics (entries skipped, name conflicts).
type PluginMarketplace struct {
	Name        string              `json:"name"`
	Source      string              `json:"source"`
	Ref         string              `json:"ref,omitempty"`
	From        string              `json:"from,omitempty"`
	Added       bool                `json:"added"`
	Scope       string              `json:"scope,omitempty"`
	UpdatedAt   string              `json:"updatedAt,omitempty"`
	Missing     bool                `json:"missing,omitempty"`
	Plugins     []PluginCatalogItem `json:"plugins"`
	Diagnostics []string            `json:"diagnostics"`
}

// PluginCatalogItem is one plugin of a catalog: installed (name@marketplace
// is installed) and update (installed, and the catalog's sha, else its
// version, differs from what is installed).
type PluginCatalogItem struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	Author      string `json:"author,omitempty"`
	Installed   bool   `json:"installed"`
	Update      bool   `json:"update"`
}

// PluginMarketplaceUpdateParams are the params of
// plugin/marketplace/update: a marketplace name (added or known; it is not
// added), or none for every added one.
type PluginMarketplaceUpdateParams struct {
	Cwd  string `json:"cwd,omitempty"`
	Name string `json:"name,omitempty" jsonschema:"maxLength=64"`
}

// PluginMarketplaceUpdateResult is the result of
// plugin/marketplace/update: the marketplaces refreshed, and the ones that
// failed (their previous catalog kept).
type PluginMarketplaceUpdateResult struct {
	Updated []string                 `json:"updated"`
	Errors  []PluginMarketplaceError `json:"errors"`
}

// PluginMarketplaceError is one marketplace that could not be refreshed.
type PluginMarketplaceError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// PluginMarketplaceAddParams are the params of plugin/marketplace/add:
// scope; source, a source (as plugin/install's, without name@marketplace)
// or a known marketplace's name; ref, the branch or tag to follow.
type PluginMarketplaceAddParams struct {
	Scope  string `json:"scope"`
	Cwd    string `json:"cwd,omitempty"`
	Source string `json:"source" jsonschema:"maxLength=2048"`
	Ref    string `json:"ref,omitempty" jsonschema:"maxLength=256"`
}

// Validate checks scope, cwd and that source is given.
func (p PluginMarketplaceAddParams) Validate() error {
	if err := validSettingsScope(p.Scope, p.Cwd); err != nil {
		return err
	}
	if p.Source == "" {
		return InvalidParams("source", "must not be empty")
	}
	return nil
}

// PluginMarketplaceAddResult is the result of plugin/marketplace/add: the
// marketplace's row, and whether it was already added from that source.
type PluginMarketplaceAddResult struct {
	Marketplace  PluginMarketplace `json:"marketplace"`
	AlreadyAdded bool              `json:"alreadyAdded"`
}

// PluginMarketplaceRemoveParams are the params of
// plugin/marketplace/remove: the marketplace's name in scope.
type PluginMarketplaceRemoveParams struct {
	Scope string `json:"scope"`
	Cwd   string `json:"cwd,omitempty"`
	Name  string `json:"name" jsonschema:"maxLength=64"`
}

// Validate checks scope, cwd and name.
func (p PluginMarketplaceRemoveParams) Validate() error { return validName(p.Scope, p.Cwd, p.Name) }

// PluginMarketplaceRemoveResult is the result of plugin/marketplace/remove:
// whether the scope had it.
type PluginMarketplaceRemoveResult struct {
	Removed bool `json:"removed"`
}
