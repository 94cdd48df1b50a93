package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/safefile"
)

// Marketplace origins (MarketRow.From) for the marketplaces other tools
// know.
const (
	FromClaudeCode = "claudeCode"
	FromGrokBuild  = "grokBuild"
)

// marketEntry is one entry of a scope's "marketplaces" settings: the
// catalog's name, the canonical source and the ref it follows.
type marketEntry struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Ref    string `json:"ref,omitempty"`
}

// MarketPlugin is one plugin of a marketplace's catalog as
// plugin/marketplace/list shows it: Installed (an entry name@marketplace
// in the global or the project's settings) and Update (installed, and the
// catalog's sha, else version, differs from the installed commit or
// version).
type MarketPlugin struct {
	Name, Description, Version, Author string
	Installed, Update                  bool
}

// MarketRow is one marketplace of plugin/marketplace/list: From is set
// for Claude Code's ("claudeCode") and Grok Build's ("grokBuild") when it
// is not added; Scope when added;
// UpdatedAt (RFC 3339) when knightcode fetched it; Missing when its local
// catalog is absent (Plugins is then empty).
type MarketRow struct {
	Name, Source, Ref, From string
	Added                   bool
	Scope                   config.Scope
	UpdatedAt               string
	Missing                 bool
	Plugins                 []MarketPlugin
	Diagnostics             []string
}

// catalogPlugin is one valid catalog entry.
type catalogPlugin struct {
	Name, Description, Version, Author string
	Source                             Source
	SHA                                string
}

// catalog is a parsed marketplace.json.
type catalog struct {
	Name        string
	Plugins     []catalogPlugin
	Diagnostics []string
}

// catalogFiles are the catalog files, first found wins.
var catalogFiles = []string{".knightcode-plugin/marketplace.json", ".claude-plugin/marketplace.json", ".grok-plugin/marketplace.json"}

// readCatalog reads the catalog of the marketplace folder dir, whose
// plugins' relative sources resolve against src (EXTENSIBILITY.md §5
// "Catalog file"). An invalid entry is skipped with a diagnostic; npm
// sources are not supported. Errors: no catalog file; invalid top-level
// fields (name, owner.name, plugins) or a name breaking the naming rules.
func readCatalog(dir string, src Source) (*catalog, error) {
	var file string
	for _, f := range catalogFiles {
		if p := filepath.Join(dir, filepath.FromSlash(f)); isRegular(p) {
			file = p
			break
		}
	}
	if file == "" {
		return nil, fmt.Errorf("no marketplace catalog (.claude-plugin/marketplace.json) in %s", Redact(src.Canonical()))
	}
	data, err := safefile.ReadFile(file, safefile.ConfigLimit)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Name  string `json:"name"`
		Owner *struct {
			Name string `json:"name"`
		} `json:"owner"`
		Metadata struct {
			PluginRoot string `json:"pluginRoot"`
		} `json:"metadata"`
		Plugins []json.RawMessage `json:"plugins"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s is not a valid catalog: %v", filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), err)
	}
	switch {
	case raw.Name == "":
		return nil, fmt.Errorf("the catalog has no name")
	case raw.Owner == nil || raw.Owner.Name == "":
		return nil, fmt.Errorf("the catalog has no owner.name")
	case raw.Plugins == nil:
		return nil, fmt.Errorf("the catalog has no plugins array")
	}
	if err := config.CheckPluginName(raw.Name); err != nil {
		return nil, fmt.Errorf("catalog name: %v", err)
	}
	c := &catalog{Name: raw.Name}
	for i, item := range raw.Plugins {
		p, err := catalogEntry(item, src, raw.Metadata.PluginRoot)
		if err != nil {
			c.Diagnostics = append(c.Diagnostics, fmt.Sprintf("plugins[%d]: %v; it is skipped", i, err))
			continue
		}
		if slices.ContainsFunc(c.Plugins, func(q catalogPlugin) bool { return q.Name == p.Name }) {
			c.Diagnostics = append(c.Diagnostics, fmt.Sprintf("plugins[%d]: %s is listed twice; the first is used", i, p.Name))
			continue
		}
		c.Plugins = append(c.Plugins, p)
	}
	return c, nil
}

// relativeSource is the subfolder of a catalog's relative plugin source
// rel ("./plugins/x", or "./" for the marketplace's root) under the
// catalog's pluginRoot; "" is the root. Errors: a path leaving the
// marketplace, or a URL.
func relativeSource(pluginRoot, rel string) (string, error) {
	var parts []string
	for _, p := range []string{pluginRoot, rel} {
		c := strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if c == "" || c == "." {
			continue
		}
		if strings.Contains(p, "://") {
			return "", fmt.Errorf("source %q is not a relative folder of the marketplace", rel)
		}
		clean, err := cleanSubPath(c)
		if err != nil {
			return "", fmt.Errorf("source %q is not a relative folder of the marketplace", rel)
		}
		parts = append(parts, clean)
	}
	return path.Join(parts...), nil
}

// catalogEntry parses one catalog plugin entry. Its source is a relative
// folder of the marketplace ("./plugins/x", or xAI's object form
// {"type": "local", "path": "./external_plugins/x"}), or a github, url,
// git or git-subdir object.
func catalogEntry(item json.RawMessage, mk Source, pluginRoot string) (catalogPlugin, error) {
	var e struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Version     string          `json:"version"`
		Author      json.RawMessage `json:"author"`
		Source      json.RawMessage `json:"source"`
	}
	if err := json.Unmarshal(item, &e); err != nil {
		return catalogPlugin{}, err
	}
	if err := config.CheckPluginName(e.Name); err != nil {
		return catalogPlugin{}, err
	}
	p := catalogPlugin{Name: e.Name, Description: e.Description, Version: e.Version}
	var author struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(e.Author, &author) == nil {
		p.Author = author.Name
	} else {
		_ = json.Unmarshal(e.Author, &p.Author)
	}
	relative := func(rel string) (catalogPlugin, error) {
		sub, err := relativeSource(pluginRoot, rel)
		if err != nil {
			return catalogPlugin{}, err
		}
		p.Source = mk
		p.Source.Path = path.Join(mk.Path, sub)
		return p, nil
	}
	var rel string
	if json.Unmarshal(e.Source, &rel) == nil {
		return relative(rel)
	}
	var s struct {
		Source string `json:"source"`
		Type   string `json:"type"`
		Repo   string `json:"repo"`
		URL    string `json:"url"`
		Path   string `json:"path"`
		Ref    string `json:"ref"`
		SHA    string `json:"sha"`
	}
	if err := json.Unmarshal(e.Source, &s); err != nil {
		return catalogPlugin{}, fmt.Errorf("source is neither a path nor an object")
	}
	if s.Source == "" && s.Type == "local" {
		if s.Path == "" {
			return catalogPlugin{}, fmt.Errorf("a local source needs a path")
		}
		return relative(s.Path)
	}
	ref := s.Ref
	if s.SHA != "" {
		ref = s.SHA
	}
	var err error
	switch s.Source {
	case "github":
		p.Source, err = ParseSource("github:"+s.Repo, ref, s.Path, "", false)
	case "url", "git":
		p.Source, err = ParseSource(s.URL, ref, s.Path, "", false)
	case "git-subdir":
		u := s.URL
		if ownerRepoRE.MatchString(u) {
			u = "github:" + u
		}
		if s.Path == "" {
			return catalogPlugin{}, fmt.Errorf("a git-subdir source needs a path")
		}
		p.Source, err = ParseSource(u, ref, s.Path, "", false)
	case "npm":
		return catalogPlugin{}, fmt.Errorf("npm sources are not supported")
	default:
		return catalogPlugin{}, fmt.Errorf("source type %q is not supported", s.Source)
	}
	if err == nil && p.Source.Kind != KindGitHub && p.Source.Kind != KindGit {
		err = fmt.Errorf("%s is not a git source", s.URL)
	}
	if err != nil {
		return catalogPlugin{}, fmt.Errorf("source: %v", err)
	}
	p.SHA = s.SHA
	return p, nil
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// marketDir is where knightcode keeps the fetched catalog of a source:
// <agentDir>/plugins/marketplaces/<ShortHash(canonical)> (a folder
// source's catalog is read in place).
func (m *Manager) marketDir(canonical string) string {
	return filepath.Join(m.agentDir, "plugins", "marketplaces", config.ShortHash(canonical))
}

// catalogDir is the folder holding a marketplace's local catalog: a
// folder source itself, else knightcode's fetched copy, else (fallback)
// another tool's clone; "" when there is none.
func (m *Manager) catalogDir(src Source, fallback string) string {
	if src.Kind == KindPath {
		dir := src.Dir
		if src.Path != "" {
			dir = filepath.Join(dir, filepath.FromSlash(src.Path))
		}
		return dir
	}
	if d := m.marketDir(src.Canonical()); isDirPath(d) {
		return d
	}
	if fallback != "" && isDirPath(fallback) {
		return fallback
	}
	return ""
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// refresh fetches the catalog of src (a folder source is only read) into
// a temporary folder, validates it and swaps it into place by renames, and
// records updatedAt in state.json. A failure keeps the previous catalog.
// Errors: [*FetchError]; the catalog's (a bad catalog).
func (m *Manager) refresh(ctx context.Context, src Source) (*catalog, error) {
	if src.Kind == KindPath {
		dir := m.catalogDir(src, "")
		if !isDirPath(dir) {
			return nil, &FetchError{Source: src.Canonical(), Output: dir + " is not an existing folder"}
		}
		c, err := readCatalog(dir, src)
		if err != nil {
			return nil, err
		}
		return c, m.stamp(ctx, src, c.Name)
	}
	f, err := m.fetch(ctx, src)
	if err != nil {
		return nil, err
	}
	defer f.cleanup()
	c, err := readCatalog(f.dir, src)
	if err != nil {
		return nil, err
	}
	dst := m.marketDir(src.Canonical())
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	old := filepath.Join(f.tmp, "previous")
	hadOld := os.Rename(dst, old) == nil
	if err := os.Rename(f.dir, dst); err != nil {
		if hadOld {
			_ = os.Rename(old, dst)
		}
		return nil, err
	}
	return c, m.stamp(ctx, src, c.Name)
}

func (m *Manager) stamp(ctx context.Context, src Source, name string) error {
	return m.updateState(ctx, func(st *state) {
		st.Marketplaces[src.Canonical()] = marketFetched{Name: name, UpdatedAt: time.Now().UTC().Format(time.RFC3339)}
	})
}

// knownMarket is a marketplace the server can find by name: added (Scope
// set), built in, or Claude Code's or Grok Build's (From; Location is
// Claude Code's clone).
type knownMarket struct {
	Name     string
	Source   Source
	Ref      string
	Scope    config.Scope
	From     string
	Location string
	builtin  bool
}

// markets returns every marketplace of cwd by name, in listing order:
// built in, added (project, then global), then Claude Code's and Grok
// Build's; a name keeps
// its first group, with the added entry's source and scope when added. A
// project marketplace whose name is already another source's does not get
// the name (diagnostic on the winner).
func (m *Manager) markets(ctx context.Context, snap *config.Snapshot) (list []*knownMarket, diags map[string][]string) {
	diags = map[string][]string{}
	byName := map[string]*knownMarket{}
	add := func(k *knownMarket) {
		if cur, ok := byName[k.Name]; ok {
			if k.Scope != "" && cur.Scope == "" && (cur.Source.Canonical() == k.Source.Canonical() || cur.builtin || k.Scope == config.ScopeGlobal) {
				if cur.Source.Canonical() != k.Source.Canonical() {
					diags[k.Name] = append(diags[k.Name], fmt.Sprintf("added from %s, not the built-in %s", Redact(k.Source.Canonical()), Redact(cur.Source.Canonical())))
				}
				cur.Source, cur.Ref, cur.Scope = k.Source, k.Ref, k.Scope
				return
			}
			if cur.Source.Canonical() != k.Source.Canonical() {
				what := k.From
				if k.Scope != "" {
					what = string(k.Scope)
				}
				diags[k.Name] = append(diags[k.Name], fmt.Sprintf("%s marketplace %s: name conflicts with %s", what, Redact(k.Source.Canonical()), Redact(cur.Source.Canonical())))
			}
			return
		}
		byName[k.Name] = k
		list = append(list, k)
	}
	for _, b := range builtinMarketplaces {
		src, _ := ParseCanonical(b.Source)
		add(&knownMarket{Name: b.Name, Source: src, builtin: true})
	}
	var added []*knownMarket
	for _, scope := range []config.Scope{config.ScopeGlobal, config.ScopeProject} {
		if scope == config.ScopeProject && !snap.Trusted {
			continue
		}
		var entries []marketEntry
		if w := snap.ScopeEntries(scope, config.MarketplacesKey, &entries); w != nil {
			diags[""] = append(diags[""], w.Message)
			continue
		}
		for _, e := range entries {
			src, err := ParseCanonical(e.Source)
			if err != nil {
				diags[""] = append(diags[""], fmt.Sprintf("marketplaces entry %s: %v", e.Name, err))
				continue
			}
			src.Ref = e.Ref
			added = append(added, &knownMarket{Name: e.Name, Source: src, Ref: e.Ref, Scope: scope})
		}
	}
	claude, cdiags := m.claudeMarketplaces()
	grok, gdiags := m.grokMarketplaces()
	diags[""] = append(append(diags[""], cdiags...), gdiags...)
	// Built-in names first (an added one takes its row), then added
	// global before project (a project entry never takes a global name),
	// then the other tools'.
	for _, k := range added {
		if k.Scope == config.ScopeGlobal {
			add(k)
		}
	}
	for _, k := range added {
		if k.Scope == config.ScopeProject {
			add(k)
		}
	}
	for _, k := range append(claude, grok...) {
		add(k)
	}
	return list, diags
}

// marketplaceEntry finds plugin in marketplace name's catalog for an
// install or update in scope: the catalog is refreshed first (a failure
// keeps the local one, with the warning "catalog not refreshed: ..."), and
// for an install (addMissing) a known marketplace that is not added is
// added to the scope. Errors ([*coreerr.ParamError] "source"): an unknown
// marketplace or plugin; a catalog that is absent and cannot be fetched
// ([*FetchError]).
func (m *Manager) marketplaceEntry(ctx context.Context, scope config.Scope, cwd, name, plugin string, addMissing bool) (knownMarket, catalogPlugin, []string, error) {
	snap, err := m.store.Read(ctx, cwd)
	if err != nil {
		return knownMarket{}, catalogPlugin{}, nil, err
	}
	list, _ := m.markets(ctx, snap)
	i := slices.IndexFunc(list, func(k *knownMarket) bool { return k.Name == name })
	if i < 0 {
		return knownMarket{}, catalogPlugin{}, nil, coreerr.Param("source", "no marketplace %s is added or known (plugin/marketplace/list lists them)", name)
	}
	k := *list[i]
	var warnings []string
	c, err := m.refresh(ctx, k.Source)
	if err != nil {
		dir := m.catalogDir(k.Source, k.Location)
		var rerr error
		if dir != "" {
			c, rerr = readCatalog(dir, k.Source)
		}
		if dir == "" || rerr != nil {
			return knownMarket{}, catalogPlugin{}, nil, err
		}
		warnings = append(warnings, "catalog not refreshed: "+Redact(err.Error()))
	}
	if addMissing && k.Scope == "" {
		if err := m.addEntry(ctx, scope, cwd, marketEntry{Name: k.Name, Source: k.Source.Canonical(), Ref: k.Ref}); err != nil {
			return knownMarket{}, catalogPlugin{}, nil, err
		}
		warnings = append(warnings, fmt.Sprintf("marketplace %s (%s) was added to the %s settings", k.Name, Redact(k.Source.Canonical()), scope))
	}
	j := slices.IndexFunc(c.Plugins, func(p catalogPlugin) bool { return p.Name == plugin })
	if j < 0 {
		return knownMarket{}, catalogPlugin{}, warnings, coreerr.Param("source", "marketplace %s lists no plugin %s", name, plugin)
	}
	return knownMarket{Name: k.Name, Source: k.Source}, c.Plugins[j], warnings, nil
}

// addEntry adds (or replaces by name) a marketplaces entry of scope.
func (m *Manager) addEntry(ctx context.Context, scope config.Scope, cwd string, e marketEntry) error {
	return m.editMarkets(ctx, scope, cwd, func(list []marketEntry) ([]marketEntry, bool) {
		list = slices.DeleteFunc(list, func(x marketEntry) bool { return x.Name == e.Name })
		return append(list, e), true
	})
}

func (m *Manager) editMarkets(ctx context.Context, scope config.Scope, cwd string, edit func([]marketEntry) ([]marketEntry, bool)) error {
	return m.store.EditSettingsList(ctx, scope, cwd, config.MarketplacesKey, func(raw json.RawMessage) (json.RawMessage, bool, error) {
		var list []marketEntry
		if raw != nil {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, false, fmt.Errorf("plugins: the %s settings' marketplaces is malformed: %w", scope, err)
			}
		}
		list, changed := edit(list)
		if !changed {
			return nil, false, nil
		}
		if len(list) == 0 {
			return nil, true, nil
		}
		b, err := json.Marshal(list)
		return b, true, err
	})
}

// MarketplaceList answers plugin/marketplace/list {cwd}: every marketplace
// with its whole local catalog, from local state only.
func (m *Manager) MarketplaceList(ctx context.Context, cwd string) ([]MarketRow, error) {
	snap, err := m.store.Read(ctx, cwd)
	if err != nil {
		return nil, err
	}
	st, err := m.readState()
	if err != nil {
		return nil, err
	}
	set, err := m.store.Plugins(ctx, cwd)
	if err != nil {
		return nil, err
	}
	installed := map[string]config.PluginRow{}
	for _, r := range set.Rows {
		if _, ok := installed[r.Entry.Identity]; !ok {
			installed[r.Entry.Identity] = r
		}
	}
	list, diags := m.markets(ctx, snap)
	out := []MarketRow{}
	for _, k := range list {
		row := MarketRow{Name: k.Name, Source: Redact(k.Source.Canonical()), Ref: k.Ref, Added: k.Scope != "", Scope: k.Scope,
			Plugins: []MarketPlugin{}, Diagnostics: append([]string{}, diags[k.Name]...)}
		if !row.Added {
			row.From = k.From
		}
		if f, ok := st.Marketplaces[k.Source.Canonical()]; ok {
			row.UpdatedAt = f.UpdatedAt
		}
		dir := m.catalogDir(k.Source, k.Location)
		if dir == "" || !isDirPath(dir) {
			row.Missing = true
			out = append(out, row)
			continue
		}
		c, err := readCatalog(dir, k.Source)
		if err != nil {
			row.Missing = true
			row.Diagnostics = append(row.Diagnostics, Redact(err.Error()))
			out = append(out, row)
			continue
		}
		row.Diagnostics = append(row.Diagnostics, c.Diagnostics...)
		for _, p := range c.Plugins {
			mp := MarketPlugin{Name: p.Name, Description: p.Description, Version: p.Version, Author: p.Author}
			if r, ok := installed[p.Name+"@"+k.Name]; ok {
				mp.Installed = true
				switch {
				case p.SHA != "":
					mp.Update = p.SHA != r.Entry.Commit
				case p.Version != "" && r.Contents != nil:
					mp.Update = p.Version != r.Contents.Version
				}
			}
			row.Plugins = append(row.Plugins, mp)
		}
		out = append(out, row)
	}
	return out, nil
}

// MarketplaceError is one marketplace that plugin/marketplace/update could
// not refresh.
type MarketplaceError struct {
	Name, Message string
}

// MarketplaceUpdate answers plugin/marketplace/update {cwd, name?}: it
// fetches the named marketplace's catalog (added or known, without adding
// it; a folder's is only read), or every added one's, into knightcode's
// own storage; each failure keeps the previous catalog and is reported in
// errors. Errors: [*coreerr.ParamError] "name" for an unknown name.
func (m *Manager) MarketplaceUpdate(ctx context.Context, cwd, name string) (updated []string, errs []MarketplaceError, err error) {
	snap, err := m.store.Read(ctx, cwd)
	if err != nil {
		return nil, nil, err
	}
	list, _ := m.markets(ctx, snap)
	var todo []*knownMarket
	for _, k := range list {
		if (name == "" && k.Scope != "") || k.Name == name {
			todo = append(todo, k)
		}
	}
	if name != "" && len(todo) == 0 {
		return nil, nil, coreerr.Param("name", "no marketplace %s is added or known (plugin/marketplace/list lists them)", name)
	}
	updated, errs = []string{}, []MarketplaceError{}
	for _, k := range todo {
		if _, err := m.refresh(ctx, k.Source); err != nil {
			errs = append(errs, MarketplaceError{Name: k.Name, Message: Redact(err.Error())})
			continue
		}
		updated = append(updated, k.Name)
	}
	return updated, errs, nil
}

// MarketplaceAdd answers plugin/marketplace/add {scope, cwd, source, ref}:
// source is a source or a known marketplace's name. It fetches the
// catalog (validated before it replaces anything) and records
// {name, source, ref} in the scope's settings. It installs nothing.
// Errors ([*coreerr.ParamError]): as Install for the scope and source;
// the catalog's name used by another source (field source, reason
// nameConflict, Existing); a bad catalog (reason badCatalog);
// [*FetchError].
func (m *Manager) MarketplaceAdd(ctx context.Context, scope config.Scope, cwd, source, ref string) (MarketRow, bool, error) {
	if _, err := m.checkScope(ctx, scope, cwd); err != nil {
		return MarketRow{}, false, err
	}
	snap, err := m.store.Read(ctx, cwd)
	if err != nil {
		return MarketRow{}, false, err
	}
	list, _ := m.markets(ctx, snap)
	var src Source
	if i := slices.IndexFunc(list, func(k *knownMarket) bool { return k.Name == source }); i >= 0 && config.CheckPluginName(source) == nil && !strings.Contains(source, "/") {
		src = list[i].Source
		if ref != "" {
			src.Ref = ref
		}
	} else if src, err = ParseSource(source, ref, "", cwd, false); err != nil {
		return MarketRow{}, false, err
	}
	canonical := src.Canonical()
	c, err := m.refresh(ctx, src)
	if err != nil {
		if _, ok := err.(*FetchError); ok {
			return MarketRow{}, false, err
		}
		return MarketRow{}, false, coreerr.ParamReason("source", coreerr.ReasonBadCatalog, "%s: %s", Redact(canonical), Redact(err.Error()))
	}
	for _, k := range list {
		if k.Name != c.Name {
			continue
		}
		if k.Source.Canonical() != canonical && (k.Scope != "" || k.builtin) {
			return MarketRow{}, false, &coreerr.ParamError{Field: "source", Reason: coreerr.ReasonNameConflict, Existing: Redact(k.Source.Canonical()),
				Message: fmt.Sprintf("marketplace %s is already added from %s", c.Name, Redact(k.Source.Canonical()))}
		}
		if k.Scope == scope && k.Source.Canonical() == canonical && k.Ref == src.Ref {
			rows, err := m.MarketplaceList(ctx, cwd)
			return pick(rows, c.Name), true, err
		}
	}
	if err := m.addEntry(ctx, scope, cwd, marketEntry{Name: c.Name, Source: canonical, Ref: src.Ref}); err != nil {
		return MarketRow{}, false, err
	}
	rows, err := m.MarketplaceList(ctx, cwd)
	return pick(rows, c.Name), false, err
}

func pick(rows []MarketRow, name string) MarketRow {
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	return MarketRow{Name: name}
}

// MarketplaceRemove answers plugin/marketplace/remove: it removes the
// scope's entry of name and reports whether there was one; the plugins
// installed from it stay installed and update from their recorded source.
// Errors: as Install for the scope.
func (m *Manager) MarketplaceRemove(ctx context.Context, scope config.Scope, cwd, name string) (bool, error) {
	if _, err := m.checkScope(ctx, scope, cwd); err != nil {
		return false, err
	}
	if name == "" {
		return false, coreerr.Param("name", "is required")
	}
	removed := false
	err := m.editMarkets(ctx, scope, cwd, func(list []marketEntry) ([]marketEntry, bool) {
		n := len(list)
		list = slices.DeleteFunc(list, func(x marketEntry) bool { return x.Name == name })
		removed = len(list) != n
		return list, removed
	})
	return removed, err
}
