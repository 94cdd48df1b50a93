package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/safefile"
)

// The plugins a thread loads (EXTENSIBILITY.md §4): the registry entries of
// each scope's settings ("plugins"), the server-owned trust records in
// trust.json, and the installed folders under <agentDir>/plugins/cache/.
// This file reads them; package plugins installs, updates and removes them.
// Config owns the reading because a thread's resources (skills, prompt
// templates) and the MCP configuration come from here.

// Settings keys of the plugin and marketplace registries.
const (
	// PluginsKey holds a scope's installed plugins: an array of
	// [PluginEntry].
	PluginsKey = "plugins"
	// MarketplacesKey holds a scope's added marketplaces: an array of
	// {name, source, ref?} (package plugins reads it).
	MarketplacesKey = "marketplaces"
)

// Resource origin of a plugin's skills and prompt templates
// (Resource.Origin); their Source is the plugin's identity.
const OriginPlugin = "plugin"

// ReasonPluginServer is the ParamError reason of mcp/update and mcp/remove
// naming a plugin's MCP server (EXTENSIBILITY.md §4: toggle the plugin
// instead); ReasonPluginResource that of resource/set naming a plugin's
// skill or template.
const (
	ReasonPluginServer   = coreerr.ReasonPluginServer
	ReasonPluginResource = coreerr.ReasonPluginResource
)

// PluginRootVars are the variables that expand to a plugin's installed
// folder in its MCP definitions (Claude Code's, Grok Build's and ours).
var PluginRootVars = []string{"CLAUDE_PLUGIN_ROOT", "GROK_PLUGIN_ROOT", "KNIGHTCODE_PLUGIN_ROOT"}

// PluginTrust is one plugin's record in the trust store (trust.json
// "plugins", keyed by identity): the canonical Source it was trusted
// from, when (RFC 3339), the Scopes this server installed it into
// ("global" or a project path), and Servers, the hash of each approved MCP
// server entry by runtime name ([PluginMCPServer.Hash]).
type PluginTrust struct {
	Source    string            `json:"source"`
	TrustedAt string            `json:"trustedAt,omitempty"`
	Scopes    []string          `json:"scopes,omitempty"`
	Servers   map[string]string `json:"servers,omitempty"`
}

// PluginTrusts returns a copy of the plugin trust records by identity.
// Errors: a corrupt or unreadable store.
func (s *TrustStore) PluginTrusts() (map[string]PluginTrust, error) {
	f, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make(map[string]PluginTrust, len(f.Plugins))
	for id, r := range f.Plugins {
		if r != nil {
			out[id] = *r
		}
	}
	return out, nil
}

// UpdatePluginTrusts edits the plugin trust records under the trust
// store's lock (the one project/trust/set takes) and writes them
// atomically; an error from edit writes nothing. A nil record is removed.
func (s *TrustStore) UpdatePluginTrusts(ctx context.Context, edit func(recs map[string]*PluginTrust) error) error {
	return s.update(ctx, func(f *trustFile) error {
		if err := edit(f.Plugins); err != nil {
			return err
		}
		for id, r := range f.Plugins {
			if r == nil {
				delete(f.Plugins, id)
			}
		}
		return nil
	})
}

// PluginEntry is one entry of a scope's "plugins" settings: the plugin's
// Identity (name@marketplace, or its canonical source), Name, canonical
// Source (github:owner/repo[#path], git:<url>[#path], path:/abs/dir), the
// Ref and Path it was installed with, the Commit installed (a commit id, or
// a folder's content hash), Enabled (absent means true), and Marketplace
// and MarketplaceSource for a marketplace install.
type PluginEntry struct {
	Identity          string `json:"identity"`
	Name              string `json:"name,omitempty"`
	Source            string `json:"source"`
	Ref               string `json:"ref,omitempty"`
	Path              string `json:"path,omitempty"`
	Commit            string `json:"commit"`
	Enabled           *bool  `json:"enabled,omitempty"`
	Marketplace       string `json:"marketplace,omitempty"`
	MarketplaceSource string `json:"marketplaceSource,omitempty"`
}

// TrustSource is the canonical source a trust record must hold to trust
// the entry: Source, preceded for a marketplace install by the
// marketplace's source ("<marketplace source> <source>"), so a catalog or
// settings file reusing a trusted name@marketplace with another
// marketplace or plugin source gets no trust.
func (e PluginEntry) TrustSource() string {
	if e.MarketplaceSource != "" {
		return e.MarketplaceSource + " " + e.Source
	}
	return e.Source
}

// IsEnabled reports Enabled, true when absent.
func (e PluginEntry) IsEnabled() bool { return e.Enabled == nil || *e.Enabled }

// PluginName is the entry's name: Name, else the identity's part before
// "@", else the source's last path element.
func (e PluginEntry) PluginName() string {
	if e.Name != "" {
		return e.Name
	}
	if n, _, ok := strings.Cut(e.Identity, "@"); ok && !strings.Contains(n, ":") {
		return n
	}
	src, sub, _ := strings.Cut(e.Source, "#")
	if sub != "" {
		src = sub
	}
	return strings.TrimSuffix(filepath.Base(filepath.FromSlash(src)), ".git")
}

// ShortHash is the first 16 hex digits of the SHA-256 of s: the folder
// name of an identity's cache and of a marketplace's clone.
func ShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// PluginCacheDir is <agentDir>/plugins/cache/<ShortHash(identity)>: the
// folders of every installed commit of identity.
func PluginCacheDir(agentDir, identity string) string {
	return filepath.Join(agentDir, "plugins", "cache", ShortHash(identity))
}

// PluginDir is the immutable folder of identity at commit.
func PluginDir(agentDir, identity, commit string) string {
	return filepath.Join(PluginCacheDir(agentDir, identity), commit)
}

// PluginFile is a skill or command of a plugin: its namespaced Name
// ("<plugin>:<skill>") and file.
type PluginFile struct {
	Name string
	Path string
}

// PluginMCPServer is one MCP server a plugin defines: Server is its name
// in the plugin, Name its runtime name <plugin>_<server> (sanitized to
// [A-Za-z0-9_-], at most 64 characters); the entry's fields with the
// plugin-root variables expanded to the installed folder (other ${VAR}
// references stay for the runtime to expand at connect time); Target its
// command line or URL for messages; Hash the SHA-256 of its command, args
// and url, what approval covers.
type PluginMCPServer struct {
	Server, Name string
	Type         string
	Command      string
	Args         []string
	Env          map[string]string
	Cwd          string
	URL          string
	Headers      map[string]string
	Target       string
	Hash         string
}

// PluginContents is what a plugin folder holds (Claude Code's format):
// its manifest's name, version and description; skills, commands and MCP
// servers; the environment variables its MCP definitions read (plugin-root
// variables excepted), sorted; the parts knightcode does not support,
// sorted; and warnings (one per unsupported part, manifest problems).
type PluginContents struct {
	Name, Version, Description string
	Skills, Commands           []PluginFile
	MCPServers                 []PluginMCPServer
	Env                        []string
	Unsupported                []string
	Warnings                   []string
}

// pluginManifestDirs are the manifest folders, first found wins.
var pluginManifestDirs = []string{".knightcode-plugin", ".claude-plugin", ".grok-plugin"}

// PluginManifest returns the manifest file of the plugin folder root
// (".knightcode-plugin/plugin.json", then ".claude-plugin/", then
// ".grok-plugin/"), "" when it has none.
func PluginManifest(root string) string {
	for _, d := range pluginManifestDirs {
		if p := filepath.Join(root, d, "plugin.json"); isFile(p) {
			return p
		}
	}
	return ""
}

// pluginNameRE is the naming rule for plugin and marketplace names
// (oh-my-pi's, EXTENSIBILITY.md §4), at most 64 characters.
var pluginNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)

// CheckPluginName reports whether name follows the naming rule: lower-case
// letters, digits, ".", "_" and "-", starting and ending with a letter or
// digit, at most 64 characters.
func CheckPluginName(name string) error {
	if len(name) > 64 || !pluginNameRE.MatchString(name) {
		return fmt.Errorf("%q is not a valid name: lower-case letters, digits, '.', '_' and '-', starting and ending with a letter or digit, at most 64 characters", name)
	}
	return nil
}

type pluginManifest struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Description  string          `json:"description"`
	Commands     json.RawMessage `json:"commands"`
	Skills       json.RawMessage `json:"skills"`
	MCPServers   json.RawMessage `json:"mcpServers"`
	Hooks        json.RawMessage `json:"hooks"`
	Agents       json.RawMessage `json:"agents"`
	LSPServers   json.RawMessage `json:"lspServers"`
	OutputStyles json.RawMessage `json:"outputStyles"`
	Monitors     json.RawMessage `json:"monitors"`
}

// insideFolder returns a check that a path, all its symbolic links
// followed, is in the folder root (itself resolved): a plugin's files are
// read only when they are its own, never through a link to /etc/passwd or
// the user's home. A path that cannot be resolved is not inside.
func insideFolder(root string) func(p string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	return func(p string) bool {
		if err != nil {
			return false
		}
		real, perr := filepath.EvalSymlinks(p)
		return perr == nil && within(realRoot, real)
	}
}

// rel is p relative to root, /-separated, for messages.
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// ReadPluginDir reads the plugin folder root: its manifest (or none, when
// the name is fallback), skills (skills/<n>/SKILL.md and the manifest's
// "skills" paths), commands (commands/*.md and the manifest's "commands"
// paths), MCP servers (.mcp.json, {"mcpServers": {...}} or a bare map, or
// the manifest's "mcpServers", inline or a path), and the unsupported
// parts: agents/ or "agents", hooks/hooks.json or "hooks", "lspServers",
// "outputStyles", "monitors", bin/. Errors: a manifest that cannot be read
// or parsed, or whose name breaks [CheckPluginName]; a manifest that links
// outside root. Errors name files relative to root (the caller knows
// where root came from: an install's temporary copy is not a path to
// show). A skill, command or MCP file that links outside root is left
// out with a warning (insideFolder).
func ReadPluginDir(root, fallback string) (*PluginContents, error) {
	var m pluginManifest
	inside := insideFolder(root)
	if p := PluginManifest(root); p != "" {
		if !inside(p) {
			return nil, fmt.Errorf("%s links outside the plugin folder", rel(root, p))
		}
		data, err := safefile.ReadFile(p, safefile.ConfigLimit)
		if err != nil {
			if pe, ok := errors.AsType[*fs.PathError](err); ok {
				err = pe.Err
			}
			return nil, fmt.Errorf("read %s: %w", rel(root, p), err)
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s is not a valid plugin manifest: %v", rel(root, p), err)
		}
	}
	c := &PluginContents{Name: m.Name, Version: m.Version, Description: m.Description}
	if c.Name == "" {
		c.Name = fallback
	}
	if err := CheckPluginName(c.Name); err != nil {
		return nil, fmt.Errorf("plugin name: %v", err)
	}
	paths := func(raw json.RawMessage, what string) []string {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &one) == nil:
			many = []string{one}
		case json.Unmarshal(raw, &many) == nil:
		default:
			c.Warnings = append(c.Warnings, fmt.Sprintf("manifest %s must be a path or an array of paths; it is ignored", what))
			return nil
		}
		var out []string
		for _, p := range many {
			abs := filepath.Join(root, filepath.FromSlash(p))
			if !within(root, abs) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("manifest %s path %q leaves the plugin folder; it is ignored", what, p))
				continue
			}
			out = append(out, abs)
		}
		return out
	}
	seen := map[string]bool{}
	for _, dir := range append([]string{filepath.Join(root, "skills")}, paths(m.Skills, "skills")...) {
		for _, f := range collect(ResourceSkills, dir) {
			if seen[f] {
				continue
			}
			seen[f] = true
			if !inside(f) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("skill %s links outside the plugin folder; it is ignored", rel(root, f)))
				continue
			}
			name := resourceName(ResourceSkills, f)
			if data, err := safefile.ReadFile(f, safefile.ConfigLimit); err == nil {
				if fm, _, err := frontMatter(data); err == nil && fm.Name != "" {
					name = fm.Name
				}
			}
			c.Skills = append(c.Skills, PluginFile{Name: c.Name + ":" + name, Path: f})
		}
	}
	for _, p := range append([]string{filepath.Join(root, "commands")}, paths(m.Commands, "commands")...) {
		files := []string{p}
		if isDir(p) {
			files = collect(ResourcePrompts, p)
		} else if !isFile(p) || !strings.HasSuffix(p, ".md") {
			continue
		}
		for _, f := range files {
			if seen[f] {
				continue
			}
			seen[f] = true
			if !inside(f) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("command %s links outside the plugin folder; it is ignored", rel(root, f)))
				continue
			}
			c.Commands = append(c.Commands, PluginFile{Name: c.Name + ":" + resourceName(ResourcePrompts, f), Path: f})
		}
	}
	c.readMCP(root, m.MCPServers)
	unsupported := map[string]bool{
		"agents":       len(m.Agents) > 0 || isDir(filepath.Join(root, "agents")),
		"hooks":        len(m.Hooks) > 0 || isFile(filepath.Join(root, "hooks", "hooks.json")),
		"lspServers":   len(m.LSPServers) > 0 || isFile(filepath.Join(root, ".lsp.json")),
		"outputStyles": len(m.OutputStyles) > 0 || isDir(filepath.Join(root, "output-styles")),
		"monitors":     len(m.Monitors) > 0,
		"bin":          isDir(filepath.Join(root, "bin")),
	}
	for _, k := range slices.Sorted(maps.Keys(unsupported)) {
		if unsupported[k] {
			c.Unsupported = append(c.Unsupported, k)
			c.Warnings = append(c.Warnings, k+" are not supported and are ignored")
		}
	}
	return c, nil
}

// commitRE is an installed commit: a commit id (SHA-1 or SHA-256) or a
// folder's content hash, lower-case hex.
var commitRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// envRefRE finds ${VAR} and ${VAR:-default} references.
var envRefRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// readMCP reads the plugin's MCP servers: the manifest's mcpServers
// (inline object, or a path to a file), else .mcp.json.
func (c *PluginContents) readMCP(root string, manifest json.RawMessage) {
	var raw json.RawMessage
	file := filepath.Join(root, ".mcp.json")
	var path string
	if len(manifest) > 0 && string(manifest) != "null" {
		if json.Unmarshal(manifest, &path) == nil {
			file = filepath.Join(root, filepath.FromSlash(path))
			if !within(root, file) {
				c.Warnings = append(c.Warnings, fmt.Sprintf("manifest mcpServers path %q leaves the plugin folder; it is ignored", path))
				return
			}
		} else {
			raw, file = manifest, ""
		}
	}
	if file != "" {
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			return
		}
		if !insideFolder(root)(file) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s links outside the plugin folder; its MCP servers are ignored", rel(root, file)))
			return
		}
		data, err := safefile.ReadFile(file, safefile.ConfigLimit)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("cannot read %s: %v", file, err))
			return
		}
		raw = data
	}
	var servers map[string]json.RawMessage
	var wrapped struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped.MCPServers != nil {
		servers = wrapped.MCPServers
	} else if err := json.Unmarshal(raw, &servers); err != nil {
		c.Warnings = append(c.Warnings, fmt.Sprintf("MCP servers of the plugin are not a JSON object: %v", err))
		return
	}
	expand := func(s string) string {
		for _, v := range PluginRootVars {
			s = strings.ReplaceAll(s, "${"+v+"}", root)
		}
		return s
	}
	env := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		var e struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			Cwd     string            `json:"cwd"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}
		if err := json.Unmarshal(servers[name], &e); err != nil || (e.Command == "") == (e.URL == "") {
			c.Warnings = append(c.Warnings, fmt.Sprintf("MCP server %q needs exactly one of command and url; it is ignored", name))
			continue
		}
		for _, s := range slices.Concat([]string{e.Command, e.URL, e.Cwd}, e.Args, slices.Collect(maps.Values(e.Env)), slices.Collect(maps.Values(e.Headers))) {
			for _, m := range envRefRE.FindAllStringSubmatch(s, -1) {
				if !slices.Contains(PluginRootVars, m[1]) {
					env[m[1]] = true
				}
			}
		}
		srv := PluginMCPServer{Server: name, Name: pluginServerName(c.Name, name), Type: e.Type,
			Command: expand(e.Command), URL: expand(e.URL), Cwd: expand(e.Cwd), Env: map[string]string{}, Headers: map[string]string{}}
		for _, a := range e.Args {
			srv.Args = append(srv.Args, expand(a))
		}
		for k, v := range e.Env {
			srv.Env[k] = expand(v)
		}
		for k, v := range e.Headers {
			srv.Headers[k] = expand(v)
		}
		srv.Target = e.URL
		if e.Command != "" {
			srv.Target = shellQuote(append([]string{e.Command}, e.Args...))
		}
		h, _ := json.Marshal([]any{e.Command, e.Args, e.URL})
		sum := sha256.Sum256(h)
		srv.Hash = hex.EncodeToString(sum[:])
		c.MCPServers = append(c.MCPServers, srv)
	}
	c.Env = slices.Sorted(maps.Keys(env))
}

// pluginServerName is <plugin>_<server> with every character outside
// [A-Za-z0-9_-] replaced by "_", cut to 64 characters.
func pluginServerName(plugin, server string) string {
	b := []byte(plugin + "_" + server)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}

// PluginRow is one registry entry as a thread in a cwd sees it: the
// Entry, its Scope, the installed folder (Dir, "" when it is not in the
// local cache) and what it holds (Contents, nil then); Trusted (a trust
// record with its identity and canonical source), Active (enabled,
// trusted, installed, not shadowed: a new thread loads it), the MCP
// servers that run (ActiveServers: approved, not clashing with an
// mcp.json server) and Warnings.
type PluginRow struct {
	Entry         PluginEntry
	Scope         Scope
	Dir           string
	Contents      *PluginContents
	Trusted       bool
	Active        bool
	ActiveServers []PluginMCPServer
	Warnings      []string
}

// PluginSet is the plugins of a cwd (see [Store.Plugins]).
type PluginSet struct {
	// Rows in identity order, the project's row before the global one.
	Rows []PluginRow
	// Diagnostics: malformed registries and plugin folders.
	Diagnostics []Warning
	// Project is cwd's project ("" without cwd) and Trusted whether its
	// settings were read.
	Project string
	Trusted bool
	// Settings is the read the set was built from.
	Settings *Snapshot
}

// ScopeEntries returns the "plugins" entries of one scope of snap (the
// project's only when it was read), with a warning when the value is
// malformed (it is then ignored).
func (snap *Snapshot) ScopeEntries(scope Scope, key string, into any) *Warning {
	settings, file := snap.global, snap.Paths.Global
	if scope == ScopeProject {
		settings, file = snap.project, snap.Paths.Project
	}
	v, ok := settings[key]
	if !ok || v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, into)
	}
	if err != nil {
		return &Warning{Message: fmt.Sprintf("malformed %s (ignored): %v", key, err), Source: WarningSourceSettings, Path: file}
	}
	return nil
}

// Plugins reads the plugins a thread in cwd (or with no project, cwd "")
// would load (EXTENSIBILITY.md §4): the entries of the global settings
// and, for an explicitly trusted project, the project's. Trust is read from
// the trust store only, never from a settings file: an entry is trusted
// when a record has its identity and its canonical source. An entry is
// active when enabled, trusted and installed, unless the same identity is
// also installed in the project (which is used) or an active plugin that
// comes first (the project's, then by identity) has its name
// (oneActivePerName). Reads local state only.
// Errors: those of [Store.Read] and a corrupt trust store.
func (s *Store) Plugins(ctx context.Context, cwd string) (*PluginSet, error) {
	snap, err := s.Read(ctx, cwd)
	if err != nil {
		return nil, err
	}
	var recs map[string]PluginTrust
	if s.trust != nil {
		if recs, err = s.trust.PluginTrusts(); err != nil {
			return nil, err
		}
	}
	set := &PluginSet{Project: snap.Project, Trusted: snap.Trusted, Settings: snap}
	mcpNames := map[string]string{}
	if l, err := s.MCPList(ctx, cwd); err == nil {
		for _, r := range l.Servers {
			mcpNames[r.Name] = r.Source
		}
	}
	scopes := []Scope{ScopeGlobal}
	if snap.Trusted {
		scopes = []Scope{ScopeProject, ScopeGlobal}
	}
	activeIDs := map[string]Scope{}
	for _, scope := range scopes {
		var entries []PluginEntry
		if w := snap.ScopeEntries(scope, PluginsKey, &entries); w != nil {
			set.Diagnostics = append(set.Diagnostics, *w)
			continue
		}
		for _, e := range entries {
			if e.Identity == "" || e.Source == "" {
				file := snap.Paths.Global
				if scope == ScopeProject {
					file = snap.Paths.Project
				}
				set.Diagnostics = append(set.Diagnostics, Warning{Message: fmt.Sprintf("plugins entry %q has no identity or source; it is ignored", e.Identity),
					Source: WarningSourceSettings, Path: file})
				continue
			}
			row := s.pluginRow(e, scope, recs)
			if row.Active {
				if other, ok := activeIDs[e.Identity]; ok {
					row.Active, row.ActiveServers = false, nil
					row.Warnings = append(row.Warnings, fmt.Sprintf("also installed in the %s settings, which is used", other))
				} else {
					activeIDs[e.Identity] = scope
				}
			}
			var servers []PluginMCPServer
			for _, srv := range row.ActiveServers {
				if file, ok := mcpNames[srv.Name]; ok {
					row.Warnings = append(row.Warnings, fmt.Sprintf("MCP server %s has the name of a server of %s, which is used; the plugin's is not started", srv.Name, file))
					continue
				}
				servers = append(servers, srv)
			}
			row.ActiveServers = servers
			set.Rows = append(set.Rows, row)
		}
	}
	// Rows are in scope order (the project's first); by identity within.
	slices.SortStableFunc(set.Rows, func(a, b PluginRow) int {
		if a.Scope != b.Scope {
			return boolCompare(a.Scope == ScopeProject, b.Scope == ScopeProject)
		}
		return strings.Compare(a.Entry.Identity, b.Entry.Identity)
	})
	oneActivePerName(set.Rows)
	slices.SortStableFunc(set.Rows, func(a, b PluginRow) int { return strings.Compare(a.Entry.Identity, b.Entry.Identity) })
	return set, nil
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// oneActivePerName keeps one active plugin per name (EXTENSIBILITY.md §4
// "names": a plugin's commands, skills and MCP servers are named after
// it, and never collide): of active rows sharing a name, the first (rows
// in precedence order) stays active and each other one is made inactive,
// both warned with the other's identity.
func oneActivePerName(rows []PluginRow) {
	first := map[string]int{}
	for i := range rows {
		r := &rows[i]
		if !r.Active || r.Contents == nil {
			continue
		}
		j, taken := first[r.Contents.Name]
		if !taken {
			first[r.Contents.Name] = i
			continue
		}
		w := &rows[j]
		r.Active, r.ActiveServers = false, nil
		r.Warnings = append(r.Warnings, fmt.Sprintf("plugin %s (%s settings) is also named %s and is used: disable or uninstall one of them", w.Entry.Identity, w.Scope, r.Contents.Name))
		w.Warnings = append(w.Warnings, fmt.Sprintf("plugin %s (%s settings) is also named %s and is not loaded", r.Entry.Identity, r.Scope, r.Contents.Name))
	}
}

// pluginRow builds one entry's row (before shadowing and MCP name clashes).
func (s *Store) pluginRow(e PluginEntry, scope Scope, recs map[string]PluginTrust) PluginRow {
	row := PluginRow{Entry: e, Scope: scope}
	rec, hasRec := recs[e.Identity]
	row.Trusted = hasRec && rec.Source == e.TrustSource()
	switch {
	case hasRec && !row.Trusted:
		row.Warnings = append(row.Warnings, fmt.Sprintf("source differs from the trusted one (%s): plugin/set {trust: true} to trust it", rec.Source))
	case !row.Trusted:
		row.Warnings = append(row.Warnings, "not trusted: nothing of it runs")
	}
	dir := PluginDir(s.agentDir, e.Identity, e.Commit)
	if !commitRE.MatchString(e.Commit) || !isDir(dir) {
		row.Warnings = append(row.Warnings, "not installed on this machine: plugin/install it")
		return row
	}
	row.Dir = dir
	c, err := ReadPluginDir(dir, e.PluginName())
	if err != nil {
		row.Warnings = append(row.Warnings, err.Error())
		return row
	}
	row.Contents = c
	for _, v := range c.Env {
		if _, ok := os.LookupEnv(v); !ok {
			row.Warnings = append(row.Warnings, v+" is not set")
		}
	}
	row.Warnings = append(row.Warnings, c.Warnings...)
	row.Active = row.Trusted && e.IsEnabled()
	if !row.Trusted {
		return row
	}
	for _, srv := range c.MCPServers {
		approved, known := rec.Servers[srv.Name]
		switch {
		case approved == srv.Hash:
			if row.Active {
				row.ActiveServers = append(row.ActiveServers, srv)
			}
		case known:
			row.Warnings = append(row.Warnings, fmt.Sprintf("update changes MCP server %q (%s): plugin/set {trust: true} to run it", srv.Server, srv.Target))
		default:
			row.Warnings = append(row.Warnings, fmt.Sprintf("update adds MCP server %q (%s): plugin/set {trust: true} to run it", srv.Server, srv.Target))
		}
	}
	return row
}

// PluginMCPServers returns the MCP servers of the active plugins a thread
// in cwd (or with no project, cwd "") would start, in plugin identity
// order then server name order: each under its runtime name
// <plugin>_<server>, with command, args, env, cwd, url and headers as the
// plugin defines them and ${CLAUDE_PLUGIN_ROOT} (and its siblings,
// [PluginRootVars]) expanded to the installed folder; other ${VAR}
// references are left for the runtime to expand at connect time. Servers
// an update added or changed and the user has not approved
// (plugin/set {trust: true}) are left out, and so is one whose runtime
// name is an mcp.json server's. Reads local state only. Errors: those of
// [Store.Plugins].
func (s *Store) PluginMCPServers(ctx context.Context, cwd string) ([]PluginMCPServer, error) {
	set, err := s.Plugins(ctx, cwd)
	if err != nil {
		return nil, err
	}
	var out []PluginMCPServer
	for _, r := range set.Rows {
		out = append(out, r.ActiveServers...)
	}
	return out, nil
}

// checkNotPluginServer refuses an mcp/update or mcp/remove naming a
// plugin's MCP server ([ReasonPluginServer]).
func (s *Store) checkNotPluginServer(ctx context.Context, cwd, name string) error {
	set, err := s.Plugins(ctx, cwd)
	if err != nil {
		return err
	}
	for _, r := range set.Rows {
		if r.Contents == nil {
			continue
		}
		for _, srv := range r.Contents.MCPServers {
			if srv.Name == name {
				return &ParamError{Field: "name", Reason: ReasonPluginServer,
					Message: fmt.Sprintf("%s is an MCP server of plugin %s: turn the plugin on or off with plugin/set", name, r.Entry.Identity)}
			}
		}
	}
	return nil
}

// addPluginResources adds the skills and prompt templates of the active
// plugins of cwd to set: names "<plugin>:<skill>" and "<plugin>:<command>",
// Origin [OriginPlugin], Source the identity, always enabled (a plugin is
// turned on and off with plugin/set).
func (s *Store) addPluginResources(ctx context.Context, cwd string, set *ResourceSet) error {
	plugins, err := s.Plugins(ctx, cwd)
	if err != nil {
		return err
	}
	for _, typ := range []string{ResourceSkills, ResourcePrompts} {
		for _, row := range plugins.Rows {
			if !row.Active {
				continue
			}
			files := row.Contents.Skills
			if typ == ResourcePrompts {
				files = row.Contents.Commands
			}
			for _, f := range files {
				r := Resource{Type: typ, Path: f.Path, Name: f.Name, Enabled: true, Scope: row.Scope, Origin: OriginPlugin, Source: row.Entry.Identity}
				set.loadAs(&r, row.Contents.Name+":")
				set.Resources = append(set.Resources, r)
			}
		}
	}
	return nil
}

// EditSettingsList edits the array under the top-level key of scope's
// settings file (the project's for cwd, which must be trusted) the way
// config/write does: under the file's per-file queue and lock, read, edit,
// atomic rename, every other key kept in its order. edit gets the current
// value (nil when absent) and returns the new one (nil deletes the key)
// and whether it changed. Errors: as [Store.Write] for scope, cwd and
// trust ([*ParamError], Reason [ReasonUntrusted]); [*CorruptError]; a
// value under key that is not an array; edit's error; lock, read and
// write failures.
func (s *Store) EditSettingsList(ctx context.Context, scope Scope, cwd, key string, edit func(old json.RawMessage) (json.RawMessage, bool, error)) error {
	path, lockPath, err := s.writeTarget(ctx, scope, cwd, SettingsFile)
	if err != nil {
		return err
	}
	_, err = updateFile(ctx, path, lockPath, 0, nil, migrate, func(o *object) (bool, error) {
		var old json.RawMessage
		if v, ok := o.get(key); ok {
			raw, isRaw := v.(json.RawMessage)
			if !isRaw || len(raw) == 0 || raw[0] != '[' {
				return false, fmt.Errorf("config: %s in %s is not an array; it was left as it is", key, path)
			}
			old = raw
		}
		val, changed, err := edit(old)
		if err != nil || !changed {
			return false, err
		}
		if val == nil {
			return o.deleteAt([]string{key}), nil
		}
		o.set(key, val)
		return true, nil
	})
	return err
}

// Project returns cwd's project as the trust store resolves it (a managed
// worktree's project) and whether it is explicitly trusted. Errors: the
// trust store's ([*ParamError] "cwd").
func (s *Store) Project(ctx context.Context, cwd string) (string, bool, error) {
	t, err := s.trustOf(ctx, cwd)
	if err != nil {
		return "", false, err
	}
	return t.Project, t.Trusted != nil && *t.Trusted, nil
}

// Trust is the store's trust store (nil when it has none).
func (s *Store) Trust() *TrustStore { return s.trust }
