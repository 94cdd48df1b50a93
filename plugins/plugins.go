package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Manager installs, trusts, updates and removes plugins and marketplaces
// of one agent directory (spec plugin/*; EXTENSIBILITY.md §4 and §5). It
// reads the settings and the trust store through config, which also tells
// threads what the active plugins bring. Safe for concurrent use; two
// Managers (two servers) on one agent directory serialize through file
// locks.
type Manager struct {
	store    *config.Store
	git      *gitcli.Runner
	agentDir string
	home     string
	grokHome string
}

// New returns the manager of store's agent directory; home is the user's
// home folder, where Claude Code keeps its state (~/.claude/plugins/) and
// Grok Build its own (~/.grok/, or the environment's GROK_HOME), read for
// importable plugins and known marketplaces and never written.
func New(store *config.Store, git *gitcli.Runner, home string) *Manager {
	return &Manager{store: store, git: git, agentDir: store.AgentDir(), home: home, grokHome: os.Getenv("GROK_HOME")}
}

// Row is one installed plugin as plugin/list reports it (EXTENSIBILITY.md
// §4 "Full row"): Skills and Commands are "<plugin>:<name>", MCPServers
// the runtime names "<plugin>_<server>", Env the variables its MCP
// definitions read, Unsupported the parts that are ignored.
type Row struct {
	Identity, Name, Marketplace string
	Scope                       config.Scope
	Source, Ref, Path, Commit   string
	Version                     string
	Enabled, Trusted, Active    bool
	Skills, Commands            []string
	MCPServers, Env             []string
	Unsupported, Warnings       []string
}

// Importable is a plugin Claude Code (From "claudeCode") or Grok Build
// ("grokBuild") installed and this server did not: Name is the
// name@marketplace that installs it, Source the marketplace's canonical
// source, Enabled the tool's setting. A Grok Build plugin installed from
// no marketplace knightcode knows has its plugin name as Name and the
// canonical source it came from as Source (plugin/install takes it).
type Importable struct {
	Name, From, Source string
	Enabled            bool
}

// List is plugin/list's answer.
type List struct {
	Plugins     []Row
	Diagnostics []config.Warning
	Importable  []Importable
}

// scopeKey is the trust record's and the state's name of a scope: "global",
// or the project's path.
func scopeKey(scope config.Scope, project string) string {
	if scope == config.ScopeProject {
		return project
	}
	return string(config.ScopeGlobal)
}

// checkScope validates scope and, for a project write, that cwd's project
// is trusted; it returns the scope's key. Errors ([*coreerr.ParamError]):
// a bad scope ("scope"); a project scope without cwd ("cwd") or with an
// untrusted project (reason untrusted).
func (m *Manager) checkScope(ctx context.Context, scope config.Scope, cwd string) (string, error) {
	switch scope {
	case config.ScopeGlobal:
		return scopeKey(scope, ""), nil
	case config.ScopeProject:
		if cwd == "" {
			return "", coreerr.Param("cwd", "is required for the project scope")
		}
		project, trusted, err := m.store.Project(ctx, cwd)
		if err != nil {
			return "", err
		}
		if !trusted {
			return "", coreerr.Refusal(coreerr.ReasonUntrusted, "project %s is not trusted: trust it (project/trust/set) before changing its plugins", project)
		}
		return scopeKey(scope, project), nil
	}
	return "", coreerr.Param("scope", "%q is not global or project", scope)
}

// scopeCwd is the cwd of a settings read for scope: "" for global.
func scopeCwd(scope config.Scope, cwd string) string {
	if scope == config.ScopeGlobal {
		return ""
	}
	return cwd
}

// entries reads the plugin entries of one scope. Errors: a malformed
// registry (the write would lose it).
func (m *Manager) entries(ctx context.Context, scope config.Scope, cwd string) ([]config.PluginEntry, error) {
	snap, err := m.store.Read(ctx, scopeCwd(scope, cwd))
	if err != nil {
		return nil, err
	}
	var out []config.PluginEntry
	if w := snap.ScopeEntries(scope, config.PluginsKey, &out); w != nil {
		return nil, fmt.Errorf("plugins: %s: %s", w.Path, w.Message)
	}
	return out, nil
}

// resolve finds the entry name names in scope: its identity, its
// name@marketplace, or its name when only one entry has it. Errors
// ([*coreerr.ParamError] "name"): none matches (found false, no error
// when allowMissing); several match (reason ambiguous, Candidates).
func (m *Manager) resolve(ctx context.Context, scope config.Scope, cwd, name string, allowMissing bool) (config.PluginEntry, bool, error) {
	if name == "" {
		return config.PluginEntry{}, false, coreerr.Param("name", "is required")
	}
	list, err := m.entries(ctx, scope, cwd)
	if err != nil {
		return config.PluginEntry{}, false, err
	}
	var hits []config.PluginEntry
	for _, e := range list {
		if e.Identity == name {
			return e, true, nil
		}
		if e.PluginName() == name {
			hits = append(hits, e)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], true, nil
	case 0:
		if allowMissing {
			return config.PluginEntry{}, false, nil
		}
		return config.PluginEntry{}, false, coreerr.Param("name", "no plugin %s is installed in the %s scope (plugin/list lists them)", name, scope)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Identity)
	}
	slices.Sort(ids)
	return config.PluginEntry{}, false, &coreerr.ParamError{Field: "name", Reason: coreerr.ReasonAmbiguous, Candidates: ids,
		Message: fmt.Sprintf("%s names several plugins of the %s scope: send one of %s", name, scope, strings.Join(ids, ", "))}
}

// editEntry replaces (or with e.Identity unmatched, appends; with remove,
// deletes) the entry of e.Identity in scope's settings under the file's
// lock, and returns the entry it replaced.
func (m *Manager) editEntry(ctx context.Context, scope config.Scope, cwd string, e config.PluginEntry, remove bool) (old *config.PluginEntry, err error) {
	err = m.store.EditSettingsList(ctx, scope, cwd, config.PluginsKey, func(raw json.RawMessage) (json.RawMessage, bool, error) {
		var list []json.RawMessage
		if raw != nil {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, false, fmt.Errorf("plugins: the %s settings' plugins is not an array: %w", scope, err)
			}
		}
		old = nil
		out := []json.RawMessage{}
		for _, item := range list {
			var cur config.PluginEntry
			if json.Unmarshal(item, &cur) == nil && cur.Identity == e.Identity {
				if old == nil {
					old = &cur
					if !remove {
						b, _ := json.Marshal(e)
						out = append(out, b)
					}
				}
				continue
			}
			out = append(out, item)
		}
		if old == nil {
			if remove {
				return nil, false, nil
			}
			b, _ := json.Marshal(e)
			out = append(out, b)
		}
		if len(out) == 0 {
			return nil, true, nil
		}
		b, err := json.Marshal(out)
		return b, true, err
	})
	return old, err
}

// List answers plugin/list {cwd}: the plugins of the global settings and
// of cwd's trusted project, with what each brings and whether a new thread
// there loads it; the registries' and folders' problems; and what Claude
// Code installed that is not installed here. Reads local state only.
func (m *Manager) List(ctx context.Context, cwd string) (*List, error) {
	set, err := m.store.Plugins(ctx, cwd)
	if err != nil {
		return nil, err
	}
	markets, _ := m.markets(ctx, set.Settings)
	known := map[string]string{}
	for _, k := range markets {
		known[k.Name] = Redact(k.Source.Canonical())
	}
	out := &List{Plugins: []Row{}, Diagnostics: slices.Clone(set.Diagnostics), Importable: []Importable{}}
	installed := map[string]bool{}
	for _, r := range set.Rows {
		row := rowOf(r)
		if _, ok := known[row.Marketplace]; row.Marketplace != "" && !ok {
			row.Warnings = append(row.Warnings, fmt.Sprintf("marketplace %s was removed; updates use the recorded source", row.Marketplace))
		}
		installed[row.Identity] = true
		out.Plugins = append(out.Plugins, row)
	}
	imp, diags := m.claudeInstalled()
	gimp, gdiags := m.grokInstalled(known)
	out.Diagnostics = append(append(out.Diagnostics, diags...), gdiags...)
	for _, i := range append(imp, gimp...) {
		if !installed[i.Name] && !installed[i.Source] {
			out.Importable = append(out.Importable, i)
		}
	}
	return out, nil
}

// rowOf converts config's row to the list row.
func rowOf(r config.PluginRow) Row {
	e := r.Entry
	row := Row{Identity: e.Identity, Name: e.PluginName(), Marketplace: e.Marketplace, Scope: r.Scope,
		Source: Redact(e.Source), Ref: e.Ref, Path: e.Path, Commit: e.Commit, Enabled: e.IsEnabled(),
		Trusted: r.Trusted, Active: r.Active, Skills: []string{}, Commands: []string{}, MCPServers: []string{},
		Env: []string{}, Unsupported: []string{}, Warnings: []string{}}
	if c := r.Contents; c != nil {
		row.Name, row.Version = c.Name, c.Version
		for _, s := range c.Skills {
			row.Skills = append(row.Skills, s.Name)
		}
		for _, s := range c.Commands {
			row.Commands = append(row.Commands, s.Name)
		}
		for _, s := range c.MCPServers {
			row.MCPServers = append(row.MCPServers, s.Name)
		}
		row.Env = append(row.Env, c.Env...)
		row.Unsupported = append(row.Unsupported, c.Unsupported...)
	}
	for _, w := range r.Warnings {
		row.Warnings = append(row.Warnings, Redact(w))
	}
	return row
}

// row is the list row of identity in scope, as a new thread in cwd sees it.
func (m *Manager) row(ctx context.Context, scope config.Scope, cwd, identity string) (Row, error) {
	set, err := m.store.Plugins(ctx, scopeCwd(scope, cwd))
	if err != nil {
		return Row{}, err
	}
	for _, r := range set.Rows {
		if r.Entry.Identity == identity && r.Scope == scope {
			return rowOf(r), nil
		}
	}
	return Row{}, fmt.Errorf("plugins: %s is not in the %s settings after the write", identity, scope)
}

// InstallRequest is one plugin/install.
type InstallRequest struct {
	Scope             config.Scope
	Cwd               string
	Source, Ref, Path string
	Trust             bool
}

// InstallResult is plugin/install's answer: the plugin's row, whether an
// entry of the same identity in the scope was replaced, and warnings.
type InstallResult struct {
	Plugin   Row
	Replaced bool
	Warnings []string
}

// Install answers plugin/install (EXTENSIBILITY.md §4): it fetches the
// source (outside any lock) into a temporary folder, moves it into the
// immutable cache folder of its commit, and records the entry in the
// scope's settings: a reinstall of the same identity keeps enabled and
// trust and answers replaced. It trusts only with Trust. A name@marketplace
// from a known marketplace not added yet adds it to the scope first.
//
// Errors: [*coreerr.ParamError] for the scope ("scope", "cwd", reason
// untrusted), the source ([ParseSource]'s; a marketplace or entry that is
// unknown; a folder that is no valid plugin) and ref/path; [*FetchError]
// when git or the copy failed (nothing changed); settings, trust store and
// file system failures.
func (m *Manager) Install(ctx context.Context, req InstallRequest) (InstallResult, error) {
	key, err := m.checkScope(ctx, req.Scope, req.Cwd)
	if err != nil {
		return InstallResult{}, err
	}
	src, err := ParseSource(req.Source, req.Ref, req.Path, req.Cwd, true)
	if err != nil {
		return InstallResult{}, err
	}
	var warnings []string
	entry := config.PluginEntry{Ref: req.Ref, Path: src.Path}
	fetchSrc := src
	if src.Kind == KindMarketplace {
		mk, plugin, w, err := m.marketplaceEntry(ctx, req.Scope, req.Cwd, src.Marketplace, src.Name, true)
		if err != nil {
			return InstallResult{}, err
		}
		warnings = append(warnings, w...)
		fetchSrc = plugin.Source
		if req.Ref != "" {
			fetchSrc.Ref = req.Ref
		}
		entry.Identity, entry.Name, entry.Marketplace, entry.MarketplaceSource = src.Canonical(), src.Name, mk.Name, mk.Source.Canonical()
		entry.Ref, entry.Path = fetchSrc.Ref, fetchSrc.Path
	} else {
		entry.Identity = src.Canonical()
	}
	entry.Source = fetchSrc.Canonical()
	f, err := m.fetch(ctx, fetchSrc)
	if fe, ok := err.(*FetchError); ok && src.Kind == KindGitHub && !strings.HasPrefix(req.Source, "github:") {
		// EXTENSIBILITY.md §4 "source forms": owner/repo is GitHub's;
		// a folder is named by its absolute path, or found in cwd.
		fe.Hint = fmt.Sprintf("%q was read as the GitHub repository %s; a folder needs its absolute path, or the request's cwd when it is a folder of cwd", req.Source, src.Repo)
	}
	if err != nil {
		return InstallResult{}, err
	}
	defer f.cleanup()
	c, err := config.ReadPluginDir(f.dir, entry.PluginName())
	if err != nil {
		return InstallResult{}, coreerr.Param("source", "%s is not a valid plugin: %v", shownAt(fetchSrc, f.commit), err)
	}
	if entry.Marketplace != "" && c.Name != entry.Name {
		warnings = append(warnings, fmt.Sprintf("the plugin calls itself %s; the catalog's name %s is used", c.Name, entry.Name))
	}
	entry.Name, entry.Commit = c.Name, f.commit
	if entry.Marketplace != "" {
		entry.Name = src.Name
	}
	unlock, err := m.lockIdentity(ctx, entry.Identity)
	if err != nil {
		return InstallResult{}, err
	}
	defer unlock()
	if _, err := m.place(entry.Identity, f); err != nil {
		return InstallResult{}, err
	}
	prev, err := m.resolveIdentity(ctx, req.Scope, req.Cwd, entry.Identity)
	if err != nil {
		return InstallResult{}, err
	}
	if prev != nil {
		entry.Enabled = prev.Enabled
	}
	if err := m.updateState(ctx, func(st *state) { st.setInstall(entry.Identity, key, entry.Commit) }); err != nil {
		return InstallResult{}, err
	}
	if _, err := m.editEntry(ctx, req.Scope, req.Cwd, entry, false); err != nil {
		return InstallResult{}, err
	}
	if err := m.recordTrust(ctx, entry, key, req.Trust, c); err != nil {
		return InstallResult{}, err
	}
	m.collect(ctx, entry.Identity)
	row, err := m.row(ctx, req.Scope, req.Cwd, entry.Identity)
	if err != nil {
		return InstallResult{}, err
	}
	return InstallResult{Plugin: row, Replaced: prev != nil, Warnings: append(warnings, row.Warnings...)}, nil
}

// shownAt is where a fetched plugin came from, as errors show it: a
// folder source's folder (with its path), else the source (redacted) at
// the fetched commit; never the server's temporary copy.
func shownAt(src Source, commit string) string {
	if src.Kind == KindPath {
		return filepath.Join(src.Dir, filepath.FromSlash(src.Path)) + string(filepath.Separator)
	}
	return fmt.Sprintf("%s at %s", Redact(src.Canonical()), commit)
}

// resolveIdentity returns the entry of identity in scope, nil when none.
func (m *Manager) resolveIdentity(ctx context.Context, scope config.Scope, cwd, identity string) (*config.PluginEntry, error) {
	list, err := m.entries(ctx, scope, cwd)
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		if e.Identity == identity {
			return &e, nil
		}
	}
	return nil, nil
}

// recordTrust adds scope key to identity's trust record (an install), and
// with trust makes the record trust the entry's source and approve its
// current MCP servers (c; nil reads nothing new).
func (m *Manager) recordTrust(ctx context.Context, e config.PluginEntry, key string, trust bool, c *config.PluginContents) error {
	ts := m.store.Trust()
	if ts == nil {
		if trust {
			return fmt.Errorf("plugins: the server has no trust store")
		}
		return nil
	}
	return ts.UpdatePluginTrusts(ctx, func(recs map[string]*config.PluginTrust) error {
		rec := recs[e.Identity]
		if rec == nil && !trust {
			return nil
		}
		if rec == nil || trust {
			next := &config.PluginTrust{Source: e.TrustSource(), TrustedAt: time.Now().UTC().Format(time.RFC3339), Servers: map[string]string{}}
			if rec != nil {
				next.Scopes = rec.Scopes
			}
			if c != nil {
				for _, s := range c.MCPServers {
					next.Servers[s.Name] = s.Hash
				}
			}
			rec = next
			recs[e.Identity] = rec
		}
		rec.Scopes = slices.DeleteFunc(rec.Scopes, goneProject)
		if !slices.Contains(rec.Scopes, key) {
			rec.Scopes = append(rec.Scopes, key)
		}
		return nil
	})
}

// goneProject reports a trust record's scope that is a project path no
// longer existing (dropped at the next write, EXTENSIBILITY.md §4).
func goneProject(scope string) bool {
	if scope == string(config.ScopeGlobal) {
		return false
	}
	st, err := os.Stat(scope)
	return err != nil || !st.IsDir()
}

// Set answers plugin/set: Enabled turns the entry on or off in the scope's
// settings; Trust true trusts its identity and source and approves its
// current MCP servers. Trust false changes nothing: plugin/set never
// revokes trust (spec). Errors: as Install for the scope; an unknown or
// ambiguous name ("name"); write failures.
func (m *Manager) Set(ctx context.Context, scope config.Scope, cwd, name string, enabled, trust *bool) (Row, error) {
	key, err := m.checkScope(ctx, scope, cwd)
	if err != nil {
		return Row{}, err
	}
	e, _, err := m.resolve(ctx, scope, cwd, name, false)
	if err != nil {
		return Row{}, err
	}
	unlock, err := m.lockIdentity(ctx, e.Identity)
	if err != nil {
		return Row{}, err
	}
	defer unlock()
	if enabled != nil && e.IsEnabled() != *enabled {
		e.Enabled = enabled
		if _, err := m.editEntry(ctx, scope, cwd, e, false); err != nil {
			return Row{}, err
		}
	}
	if trust != nil && *trust {
		var c *config.PluginContents
		if dir := config.PluginDir(m.agentDir, e.Identity, e.Commit); e.Commit != "" {
			if cc, err := config.ReadPluginDir(dir, e.PluginName()); err == nil {
				c = cc
			}
		}
		if err := m.recordTrust(ctx, e, key, true, c); err != nil {
			return Row{}, err
		}
	}
	return m.row(ctx, scope, cwd, e.Identity)
}

// UpdateResult is plugin/update's answer: the row, whether the commit
// changed (From and To are the commits then), and warnings (a catalog that
// was not refreshed; MCP servers the update adds or changes).
type UpdateResult struct {
	Plugin   Row
	Updated  bool
	From, To string
	Warnings []string
}

// Update answers plugin/update (EXTENSIBILITY.md §4 "Update semantics"):
// for a marketplace plugin whose marketplace is added or known, the
// catalog is fetched first (a failure keeps the previous one, with a
// warning) and its entry's source and sha or ref used; otherwise the
// recorded source and ref. The source is fetched, and a new commit is
// installed into a new immutable folder and the entry swapped; commits
// are compared, never version strings. A failed fetch changes nothing.
// Errors: as Set's; [*FetchError].
func (m *Manager) Update(ctx context.Context, scope config.Scope, cwd, name string) (UpdateResult, error) {
	key, err := m.checkScope(ctx, scope, cwd)
	if err != nil {
		return UpdateResult{}, err
	}
	e, _, err := m.resolve(ctx, scope, cwd, name, false)
	if err != nil {
		return UpdateResult{}, err
	}
	var warnings []string
	src, err := ParseCanonical(e.Source)
	if err != nil {
		return UpdateResult{}, coreerr.Param("name", "%s's recorded source: %v", e.Identity, err)
	}
	src.Ref = e.Ref
	if e.Marketplace != "" {
		_, plugin, w, err := m.marketplaceEntry(ctx, scope, cwd, e.Marketplace, e.Name, false)
		switch {
		case err == nil:
			src = plugin.Source
		case isParamError(err):
			warnings = append(warnings, fmt.Sprintf("updating from the recorded source: %v", err))
		default:
			return UpdateResult{}, err
		}
		warnings = append(warnings, w...)
	}
	f, err := m.fetch(ctx, src)
	if err != nil {
		return UpdateResult{}, err
	}
	defer f.cleanup()
	next := e
	next.Source, next.Ref, next.Path, next.Commit = src.Canonical(), src.Ref, src.Path, f.commit
	if next.Commit == e.Commit && next.Source == e.Source {
		row, err := m.row(ctx, scope, cwd, e.Identity)
		return UpdateResult{Plugin: row, Warnings: append(warnings, []string{}...)}, err
	}
	c, err := config.ReadPluginDir(f.dir, e.PluginName())
	if err != nil {
		return UpdateResult{}, coreerr.Param("name", "%s (%s) is not a valid plugin: %v", e.Identity, shownAt(src, f.commit), err)
	}
	if e.Marketplace == "" {
		next.Name = c.Name
	}
	var old *config.PluginContents
	if e.Commit != "" {
		old, _ = config.ReadPluginDir(config.PluginDir(m.agentDir, e.Identity, e.Commit), e.PluginName())
	}
	warnings = append(warnings, newServers(old, c)...)
	if next.Source != e.Source {
		warnings = append(warnings, fmt.Sprintf("the plugin moved from %s to %s", Redact(e.Source), Redact(next.Source)))
	}
	unlock, err := m.lockIdentity(ctx, e.Identity)
	if err != nil {
		return UpdateResult{}, err
	}
	defer unlock()
	if _, err := m.place(e.Identity, f); err != nil {
		return UpdateResult{}, err
	}
	if err := m.updateState(ctx, func(st *state) { st.setInstall(e.Identity, key, next.Commit) }); err != nil {
		return UpdateResult{}, err
	}
	if _, err := m.editEntry(ctx, scope, cwd, next, false); err != nil {
		return UpdateResult{}, err
	}
	m.collect(ctx, e.Identity)
	row, err := m.row(ctx, scope, cwd, e.Identity)
	if err != nil {
		return UpdateResult{}, err
	}
	return UpdateResult{Plugin: row, Updated: true, From: e.Commit, To: next.Commit, Warnings: warnings}, nil
}

// newServers are the warnings naming the MCP servers c adds or changes
// compared with old.
func newServers(old, c *config.PluginContents) []string {
	was := map[string]string{}
	if old != nil {
		for _, s := range old.MCPServers {
			was[s.Server] = s.Hash
		}
	}
	var out []string
	for _, s := range c.MCPServers {
		h, ok := was[s.Server]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("update adds MCP server %q (%s)", s.Server, Redact(s.Target)))
		case h != s.Hash:
			out = append(out, fmt.Sprintf("update changes MCP server %q (%s)", s.Server, Redact(s.Target)))
		}
	}
	return out
}

func isParamError(err error) bool {
	_, ok := err.(*coreerr.ParamError)
	return ok
}

// Uninstall answers plugin/uninstall: it removes the entry from the
// scope's settings and the scope from the identity's trust record; a
// record left with no scope is deleted (uninstalled from every scope
// revokes trust; project paths that no longer exist are dropped first).
// Cache folders no install references are collected. Idempotent: an
// unknown name answers false. Errors: as Set's (ambiguous names).
func (m *Manager) Uninstall(ctx context.Context, scope config.Scope, cwd, name string) (bool, error) {
	key, err := m.checkScope(ctx, scope, cwd)
	if err != nil {
		return false, err
	}
	e, found, err := m.resolve(ctx, scope, cwd, name, true)
	if err != nil || !found {
		return false, err
	}
	unlock, err := m.lockIdentity(ctx, e.Identity)
	if err != nil {
		return false, err
	}
	defer unlock()
	old, err := m.editEntry(ctx, scope, cwd, e, true)
	if err != nil {
		return false, err
	}
	if err := m.updateState(ctx, func(st *state) { st.setInstall(e.Identity, key, "") }); err != nil {
		return false, err
	}
	if ts := m.store.Trust(); ts != nil {
		err := ts.UpdatePluginTrusts(ctx, func(recs map[string]*config.PluginTrust) error {
			rec := recs[e.Identity]
			if rec == nil {
				return nil
			}
			rec.Scopes = slices.DeleteFunc(rec.Scopes, func(s string) bool { return s == key || goneProject(s) })
			if len(rec.Scopes) == 0 {
				recs[e.Identity] = nil
			}
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	m.collect(ctx, e.Identity)
	return old != nil, nil
}

// MCPServers returns the MCP servers of the plugins a new thread in cwd
// (or with no project, cwd "") loads, for the MCP runtime
// ([config.Store.PluginMCPServers]: runtime names <plugin>_<server>, the
// plugin root expanded, identity order; unapproved and clashing servers
// left out). Reads local state only.
func (m *Manager) MCPServers(ctx context.Context, cwd string) ([]config.PluginMCPServer, error) {
	return m.store.PluginMCPServers(ctx, cwd)
}
