package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/safefile"
)

// Claude Code's plugin state, read and never written (EXTENSIBILITY.md §4
// "importable"): ~/.claude/plugins/installed_plugins.json (version 2:
// {"version": 2, "plugins": {"name@marketplace": [{scope, installPath,
// version, gitCommitSha, ...}]}}), ~/.claude/plugins/known_marketplaces.json
// ({"<name>": {"source": {"source": "github", "repo"} | {"source": "git" |
// "url", "url"} | {"source": "directory", "path"}, "installLocation",
// "lastUpdated"}}) and ~/.claude/settings.json's enabledPlugins. Grok
// Build's equivalent is read in grok.go.

func (m *Manager) claudeDir() string { return filepath.Join(m.home, ".claude", "plugins") }

// readJSON reads a JSON file into v; a missing file is (false, nil). It
// reads through safefile.ReadFile: a FIFO, a device or a symlink to one is
// an error saying so at once, and so is a file over safefile.ConfigLimit.
func readJSON(path string, v any) (bool, error) {
	data, err := safefile.ReadFile(path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, errors.New(plainJSON(err))
	}
	return true, nil
}

// plainJSON says in words what a JSON decoding error found, without Go
// type names: `"source.repo" is a JSON number where a string is expected`
// for a type mismatch (the whole value is "it"), else the error's text.
func plainJSON(err error) string {
	te, ok := errors.AsType[*json.UnmarshalTypeError](err)
	if !ok {
		return err.Error()
	}
	where := "it"
	if te.Field != "" {
		where = `"` + te.Field + `"`
	}
	want := "another kind of value"
	switch te.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		want = "a number"
	}
	return fmt.Sprintf("%s is a JSON %s where %s is expected", where, te.Value, want)
}

func diag(path, format string, args ...any) config.Warning {
	return config.Warning{Message: fmt.Sprintf(format, args...), Source: config.WarningSourceSettings, Path: path}
}

// claudeMarketplaces reads Claude Code's known marketplaces; unreadable or
// unknown entries are diagnostics.
func (m *Manager) claudeMarketplaces() ([]*knownMarket, []string) {
	if m.home == "" {
		return nil, nil
	}
	path := filepath.Join(m.claudeDir(), "known_marketplaces.json")
	var raw map[string]json.RawMessage
	if ok, err := readJSON(path, &raw); err != nil {
		return nil, []string{fmt.Sprintf("Claude Code's %s cannot be read: %v", path, err)}
	} else if !ok {
		return nil, nil
	}
	var out []*knownMarket
	var diags []string
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		// One entry at a time: a bad one is skipped, not the whole file.
		var e struct {
			Source struct {
				Source string `json:"source"`
				Repo   string `json:"repo"`
				URL    string `json:"url"`
				Path   string `json:"path"`
				Ref    string `json:"ref"`
			} `json:"source"`
			InstallLocation string `json:"installLocation"`
		}
		if err := json.Unmarshal(raw[name], &e); err != nil {
			diags = append(diags, fmt.Sprintf("Claude Code's marketplace %s (%s): %s; it is skipped", name, path, plainJSON(err)))
			continue
		}
		var src Source
		var err error
		switch e.Source.Source {
		case "github":
			src, err = ParseSource("github:"+e.Source.Repo, e.Source.Ref, "", "", false)
		case "git", "url":
			src, err = ParseSource(e.Source.URL, e.Source.Ref, "", "", false)
		case "directory":
			src, err = ParseSource(e.Source.Path, "", "", "", false)
			if err == nil && src.Kind != KindPath {
				err = fmt.Errorf("%s is not an absolute folder", e.Source.Path)
			}
		default:
			err = fmt.Errorf("source type %q is not supported", e.Source.Source)
		}
		if err == nil {
			err = config.CheckPluginName(name)
		}
		if err != nil {
			diags = append(diags, fmt.Sprintf("Claude Code's marketplace %s (%s): %v", name, path, err))
			continue
		}
		loc := e.InstallLocation
		if loc == "" {
			loc = filepath.Join(m.claudeDir(), "marketplaces", name)
		}
		out = append(out, &knownMarket{Name: name, Source: src, Ref: e.Source.Ref, From: FromClaudeCode, Location: loc})
	}
	return out, diags
}

// claudeInstalled lists what Claude Code installed, with the marketplace's
// source and Claude Code's enabled setting; unreadable or unknown formats
// are diagnostics.
func (m *Manager) claudeInstalled() ([]Importable, []config.Warning) {
	if m.home == "" {
		return nil, nil
	}
	path := filepath.Join(m.claudeDir(), "installed_plugins.json")
	var raw struct {
		Version int                        `json:"version"`
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	ok, err := readJSON(path, &raw)
	if err != nil {
		return nil, []config.Warning{diag(path, "Claude Code's installed plugins cannot be read: %v", err)}
	}
	if !ok {
		return nil, nil
	}
	if raw.Version != 2 {
		return nil, []config.Warning{diag(path, "Claude Code's installed plugins are in an unknown format (version %d); only version 2 is read", raw.Version)}
	}
	var diags []config.Warning
	sources := map[string]string{}
	markets, mdiags := m.claudeMarketplaces()
	for _, d := range mdiags {
		diags = append(diags, diag(filepath.Join(m.claudeDir(), "known_marketplaces.json"), "%s", d))
	}
	for _, k := range markets {
		sources[k.Name] = Redact(k.Source.Canonical())
	}
	// A built-in name is known without Claude Code listing it, and wins
	// over Claude Code's entry of that name (EXTENSIBILITY.md §5, "Known
	// names").
	for _, b := range builtinMarketplaces {
		sources[b.Name] = b.Source
	}
	settingsPath := filepath.Join(m.home, ".claude", "settings.json")
	var settings struct {
		EnabledPlugins map[string]bool `json:"enabledPlugins"`
	}
	if _, err := readJSON(settingsPath, &settings); err != nil {
		diags = append(diags, diag(settingsPath, "Claude Code's settings cannot be read: %v", err))
	}
	var out []Importable
	for _, name := range slices.Sorted(maps.Keys(raw.Plugins)) {
		var installs []json.RawMessage
		if err := json.Unmarshal(raw.Plugins[name], &installs); err != nil {
			diags = append(diags, diag(path, "Claude Code's entry %s is not an array of installs; it is skipped", name))
			continue
		}
		plugin, market, found := strings.Cut(name, "@")
		if !found || config.CheckPluginName(plugin) != nil || config.CheckPluginName(market) != nil {
			diags = append(diags, diag(path, "Claude Code's entry %s is not name@marketplace; it is skipped", name))
			continue
		}
		out = append(out, Importable{Name: name, From: FromClaudeCode, Source: sources[market], Enabled: settings.EnabledPlugins[name]})
	}
	return out, diags
}
