package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/internal/safefile"
)

// ToolsFile is the tools file's name in the agent directory.
const ToolsFile = "tools.json"

// KnownTool is a tool a thread can register (spec tool/settings/*: "known
// tool names are the registered tools") and whether it is on when tools.json
// does not say.
type KnownTool struct {
	Name           string
	DefaultEnabled bool
}

// ToolState is one tool as tool/settings/read reports it: Enabled as
// tools.json sets it (else the tool's default) and its own settings, the
// values of keys ending in "Key" masked ([MaskSecret]).
type ToolState struct {
	Name     string            `json:"name"`
	Enabled  bool              `json:"enabled"`
	Settings map[string]string `json:"settings"`
}

// Tools is <agentDir>/tools.json, the per-tool state /tools manages:
//
//	{"tools": {"websearch": {"enabled": true, "provider": "brave", "braveApiKey": "..."}}}
//
// enabled is a boolean, every other key a string. The file is written 0600
// (it can hold API keys), atomically, under a gofrs/flock on
// tools.json.lock, keeping unknown keys and their order. Safe for
// concurrent use.
type Tools struct {
	path string
}

// NewTools returns the tools file of agentDir.
func NewTools(agentDir string) *Tools {
	return &Tools{path: filepath.Join(agentDir, ToolsFile)}
}

// Path is the tools file's path.
func (t *Tools) Path() string { return t.path }

// toolKey is the shape of a tool setting's key.
var toolKey = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// toolEntries reads tools.json: each tool's raw settings. A missing or blank
// file has none. Errors: [*CorruptError] when it does not parse or is not
// shaped {"tools": {name: {key: value}}}; read failures (safefile.ReadFile:
// not a regular file, or over safefile.ConfigLimit).
func (t *Tools) toolEntries() (map[string]map[string]any, error) {
	data, err := safefile.ReadFile(t.path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: read tools: %w", err)
	}
	o, err := parseObject(data)
	if err != nil {
		ce := &CorruptError{Path: t.path, Err: err}
		var se *syntaxError
		if errors.As(err, &se) {
			ce.Line, ce.Column = lineColumn(data, se.offset)
		}
		return nil, ce
	}
	out := map[string]map[string]any{}
	raw, ok := o.plain()["tools"]
	if !ok || raw == nil {
		return out, nil
	}
	tools, ok := raw.(map[string]any)
	if !ok {
		return nil, &CorruptError{Path: t.path, Err: errors.New(`"tools" is not an object`)}
	}
	for name, v := range tools {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &CorruptError{Path: t.path, Err: fmt.Errorf("tools.%s is not an object", name)}
		}
		out[name] = m
	}
	return out, nil
}

// Read returns the state of each known tool, in known's order (spec
// tool/settings/read). A setting that is not a string (or an enabled that
// is not a boolean) is left out. Errors: as toolEntries (tool/settings/read
// answers internal).
func (t *Tools) Read(known []KnownTool) ([]ToolState, error) {
	entries, err := t.toolEntries()
	if err != nil {
		return nil, err
	}
	out := make([]ToolState, 0, len(known))
	for _, k := range known {
		st := ToolState{Name: k.Name, Enabled: k.DefaultEnabled, Settings: map[string]string{}}
		for key, v := range entries[k.Name] {
			if key == "enabled" {
				if b, ok := v.(bool); ok {
					st.Enabled = b
				}
				continue
			}
			if s, ok := v.(string); ok {
				if strings.HasSuffix(key, "Key") {
					s = MaskSecret(s)
				}
				st.Settings[key] = s
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// Disabled returns the names tools.json turns off ("enabled": false). A file
// that cannot be read or parsed gives a warning (source "settings") and no
// names, so a thread still starts.
func (t *Tools) Disabled() (map[string]bool, []Warning) {
	entries, err := t.toolEntries()
	if err != nil {
		w := Warning{Message: err.Error(), Source: WarningSourceSettings, Path: t.path}
		var ce *CorruptError
		if errors.As(err, &ce) {
			w.Line, w.Column = ce.Line, ce.Column
		}
		return nil, []Warning{w}
	}
	off := map[string]bool{}
	for name, m := range entries {
		if b, ok := m["enabled"].(bool); ok && !b {
			off[name] = true
		}
	}
	return off, nil
}

// MaskSecret shows only the last four characters of a secret:
// "sk-abcdef1234" becomes "****1234"; four characters or fewer are masked
// entirely ("****").
func MaskSecret(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	return "****" + string(r[len(r)-4:])
}

// Write sets one setting of a known tool (spec tool/settings/write): key
// "enabled" takes a JSON boolean, any other key a JSON string, and JSON null
// (or no value) deletes the key. Errors: [*ParamError] for a name not in
// known ("name"), a malformed key ("key": a letter then up to 63 letters,
// digits, _ or -; never __proto__, constructor or prototype) and a value of
// the wrong type ("value"); [*CorruptError] when tools.json does not parse
// (it is left as it is); lock, read and write failures.
func (t *Tools) Write(ctx context.Context, known []KnownTool, name, key string, value json.RawMessage) error {
	if !slices.ContainsFunc(known, func(k KnownTool) bool { return k.Name == name }) {
		return &ParamError{Field: "name", Message: fmt.Sprintf("%q is not a known tool", name)}
	}
	if !toolKey.MatchString(key) || forbiddenSegments[key] {
		return &ParamError{Field: "key", Message: fmt.Sprintf("%q is not a tool setting key", key)}
	}
	value = bytes.TrimSpace(value)
	del := len(value) == 0 || string(value) == "null"
	if !del {
		var v any
		if err := json.Unmarshal(value, &v); err != nil {
			return &ParamError{Field: "value", Message: "is not valid JSON"}
		}
		switch v.(type) {
		case bool:
			if key != "enabled" {
				return &ParamError{Field: "value", Message: fmt.Sprintf("%s takes a string", key)}
			}
		case string:
			if key == "enabled" {
				return &ParamError{Field: "value", Message: "enabled takes a boolean"}
			}
		default:
			if key == "enabled" {
				return &ParamError{Field: "value", Message: "enabled takes a boolean"}
			}
			return &ParamError{Field: "value", Message: fmt.Sprintf("%s takes a string", key)}
		}
	}
	path := []string{"tools", name, key}
	// 0600: tools.json can hold API keys.
	_, err := updateFile(ctx, t.path, t.path+".lock", 0o600, nil, nil, func(o *object) (bool, error) {
		if err := checkToolsShape(o, name); err != nil {
			return false, &CorruptError{Path: t.path, Err: err}
		}
		if del {
			return o.deleteAt(path), nil
		}
		return true, o.setAt(path, json.RawMessage(value))
	})
	return err
}

// checkToolsShape refuses to edit a tools.json whose "tools" or tools.name
// is there but not an object.
func checkToolsShape(o *object, name string) error {
	v, ok := o.get("tools")
	if !ok {
		return nil
	}
	tools, ok := v.(*object)
	if !ok {
		return errors.New(`"tools" is not an object`)
	}
	if e, ok := tools.get(name); ok {
		if _, ok := e.(*object); !ok {
			return fmt.Errorf("tools.%s is not an object", name)
		}
	}
	return nil
}

// ResolveTools returns the tools a thread registers: defaultTools (already
// resolved, [Values].DefaultTools) without those tools.json disables, in
// defaultTools' order (issue 13: "tools.json enabled: false removes a tool
// even when defaultTools names it").
func ResolveTools(defaultTools []string, disabled map[string]bool) []string {
	out := []string{}
	for _, n := range defaultTools {
		if !disabled[n] {
			out = append(out, n)
		}
	}
	return out
}
