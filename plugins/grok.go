package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/safefile"
)

// Grok Build's plugin state, read and never written (EXTENSIBILITY.md §4
// "importable", §5 "Known names"), under $GROK_HOME (default ~/.grok):
//   - config.toml: [[marketplace.sources]] {name, git (a URL) and branch,
//     or path (a folder, "~/" for home)}, the marketplaces Grok knows
//     (docs.x.ai "Skills, Plugins & Marketplaces"), and [plugins] enabled
//     and disabled, lists of plugin names (or "<scope>/<hash>/<name>");
//   - installed-plugins/registry.json: {"version": 1, "repos": {"<key>":
//     {"kind": {"type": "Git", "url", "commit"} | {"type": "Local",
//     "source_path"}, "path", "plugins": {"<name>": {"version"?,
//     "subdir"?}}, "marketplace"?: {"source_display_name",
//     "plugin_subdir"}}}}, what `grok plugin install` installed.
//
// The registry's layout is not documented by xAI; it is the one several
// independent tools that read Grok Build's state agree on. Grok's own
// catalog clones (marketplace-cache/<hash of the URL>/) are not read: how
// the folder is named is not established, so a Grok git marketplace is
// listed missing until plugin/marketplace/update fetches it.

// grokDir is Grok Build's home: GROK_HOME when set, else ~/.grok; "" when
// neither is known.
func (m *Manager) grokDir() string {
	if m.grokHome != "" {
		return m.grokHome
	}
	if m.home == "" {
		return ""
	}
	return filepath.Join(m.home, ".grok")
}

// grokConfig is what knightcode reads of Grok Build's config.toml.
type grokConfig struct {
	Marketplace struct {
		Sources []struct {
			Name   string `toml:"name"`
			Git    string `toml:"git"`
			Path   string `toml:"path"`
			Branch string `toml:"branch"`
		} `toml:"sources"`
	} `toml:"marketplace"`
	Plugins struct {
		Enabled  []string `toml:"enabled"`
		Disabled []string `toml:"disabled"`
	} `toml:"plugins"`
}

// readGrokConfig reads $GROK_HOME/config.toml; a missing file is an empty
// configuration, an unreadable one a diagnostic (also one that is not a
// regular file or is over safefile.ConfigLimit: safefile.ReadFile).
func (m *Manager) readGrokConfig() (grokConfig, string, []string) {
	var c grokConfig
	path := filepath.Join(m.grokDir(), "config.toml")
	data, err := safefile.ReadFile(path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return c, path, nil
	}
	if err == nil {
		_, err = toml.Decode(string(data), &c)
	}
	if err != nil {
		return grokConfig{}, path, []string{fmt.Sprintf("Grok Build's %s cannot be read: %v", path, err)}
	}
	return c, path, nil
}

// grokMarketplaces reads the marketplaces of Grok Build's config.toml; a
// source that is not a git URL or an absolute folder, or whose name breaks
// the naming rule, is a diagnostic.
func (m *Manager) grokMarketplaces() ([]*knownMarket, []string) {
	if m.grokDir() == "" {
		return nil, nil
	}
	c, path, diags := m.readGrokConfig()
	var out []*knownMarket
	for _, s := range c.Marketplace.Sources {
		var src Source
		var err error
		switch {
		case s.Git != "" && s.Path != "":
			err = errors.New("it has both git and path")
		case s.Git != "":
			src, err = ParseSource(s.Git, s.Branch, "", "", false)
			if err == nil && src.Kind != KindGit && src.Kind != KindGitHub {
				err = fmt.Errorf("%s is not a git URL", s.Git)
			}
		case s.Path != "":
			dir := s.Path
			if rest, ok := strings.CutPrefix(dir, "~/"); ok && m.home != "" {
				dir = filepath.Join(m.home, rest)
			}
			src, err = ParseSource(dir, "", "", "", false)
			if err == nil && src.Kind != KindPath {
				err = fmt.Errorf("%s is not an absolute folder", s.Path)
			}
		default:
			err = errors.New("it has neither git nor path")
		}
		if err == nil {
			err = config.CheckPluginName(s.Name)
		}
		if err != nil {
			diags = append(diags, fmt.Sprintf("Grok Build's marketplace %q (%s): %v", s.Name, path, Redact(err.Error())))
			continue
		}
		out = append(out, &knownMarket{Name: s.Name, Source: src, Ref: s.Branch, From: FromGrokBuild})
	}
	return out, diags
}

// grokEnabled reports Grok Build's enabled setting of plugin name: listed
// in [plugins] enabled (by name or as ".../<name>") and not in disabled.
func grokEnabled(c grokConfig, name string) bool {
	match := func(n string) bool { return n == name || strings.HasSuffix(n, "/"+name) }
	return slices.ContainsFunc(c.Plugins.Enabled, match) && !slices.ContainsFunc(c.Plugins.Disabled, match)
}

// grokRegistry is installed-plugins/registry.json.
type grokRegistry struct {
	Version int                 `json:"version"`
	Repos   map[string]grokRepo `json:"repos"`
}

type grokRepo struct {
	Kind struct {
		Type       string `json:"type"`
		URL        string `json:"url"`
		SourcePath string `json:"source_path"`
	} `json:"kind"`
	Plugins map[string]struct {
		Subdir string `json:"subdir"`
	} `json:"plugins"`
	Marketplace *struct {
		SourceDisplayName string `json:"source_display_name"`
		PluginSubdir      string `json:"plugin_subdir"`
	} `json:"marketplace"`
}

// grokInstalled lists what Grok Build installed: a plugin from a
// marketplace knightcode knows by the same name (markets: name ->
// canonical source, shown) as name@marketplace with the marketplace's
// source, any other as its plugin name with the canonical source it was
// installed from (plugin/install takes it). Unreadable or unknown formats
// and entries, and config.toml's marketplaces that cannot be used, are
// diagnostics.
func (m *Manager) grokInstalled(markets map[string]string) ([]Importable, []config.Warning) {
	if m.grokDir() == "" {
		return nil, nil
	}
	var diags []config.Warning
	_, mdiags := m.grokMarketplaces() // config.toml's problems, once
	for _, d := range mdiags {
		diags = append(diags, diag(filepath.Join(m.grokDir(), "config.toml"), "%s", d))
	}
	path := filepath.Join(m.grokDir(), "installed-plugins", "registry.json")
	var reg grokRegistry
	ok, err := readJSON(path, &reg)
	if err != nil {
		return nil, append(diags, diag(path, "Grok Build's installed plugins cannot be read: %v", err))
	}
	if !ok {
		return nil, diags
	}
	if reg.Version != 1 {
		return nil, append(diags, diag(path, "Grok Build's installed plugins are in an unknown format (version %d); only version 1 is read", reg.Version))
	}
	c, _, _ := m.readGrokConfig()
	var out []Importable
	for _, key := range slices.Sorted(maps.Keys(reg.Repos)) {
		repo := reg.Repos[key]
		for _, name := range slices.Sorted(maps.Keys(repo.Plugins)) {
			imp, err := grokImportable(repo, name, markets)
			if err != nil {
				diags = append(diags, diag(path, "Grok Build's plugin %s (%s): %s; it is skipped", name, key, Redact(err.Error())))
				continue
			}
			imp.Enabled = grokEnabled(c, name)
			out = append(out, imp)
		}
	}
	return out, diags
}

// grokImportable is the importable row of plugin name of a Grok registry
// repository. Errors: a bad name, an unknown kind, a source that does not
// parse.
func grokImportable(repo grokRepo, name string, markets map[string]string) (Importable, error) {
	if err := config.CheckPluginName(name); err != nil {
		return Importable{}, err
	}
	sub := repo.Plugins[name].Subdir
	if mk := repo.Marketplace; mk != nil {
		if sub == "" {
			sub = mk.PluginSubdir
		}
		if source, ok := markets[mk.SourceDisplayName]; ok {
			return Importable{Name: name + "@" + mk.SourceDisplayName, From: FromGrokBuild, Source: source}, nil
		}
	}
	var src Source
	var err error
	switch repo.Kind.Type {
	case "Git":
		src, err = ParseSource(repo.Kind.URL, "", sub, "", false)
	case "Local":
		src, err = ParseSource(repo.Kind.SourcePath, "", sub, "", false)
		if err == nil && src.Kind != KindPath {
			err = fmt.Errorf("%s is not an absolute folder", repo.Kind.SourcePath)
		}
	default:
		err = fmt.Errorf("source kind %q is not supported", repo.Kind.Type)
	}
	if err != nil {
		return Importable{}, err
	}
	return Importable{Name: name, From: FromGrokBuild, Source: Redact(src.Canonical())}, nil
}
