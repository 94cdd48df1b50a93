package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/safefile"
)

// SettingsFile is the settings file's name: <agentDir>/settings.json
// (global) and <project>/.knightcode/settings.json (project).
const SettingsFile = "settings.json"

// VersionNone is the version of a settings file that is absent, or that was
// not read because its project is not trusted (spec config/read).
const VersionNone = "none"

// Scope is where a setting lives: ScopeGlobal or ScopeProject.
type Scope string

// Settings scopes (config/read origins, config/write scope).
const (
	ScopeGlobal  Scope = "global"
	ScopeProject Scope = "project"
)

// WarningSourceSettings is the source of every warning this package makes
// (spec "Threads and turns": {message, source, path?, line?, column?}).
const WarningSourceSettings = "settings"

// Warning is a structured load warning in the wire shape of
// protocol.Warning, field for field (so a protocol.Warning(w) conversion
// works): Source is "settings", Path the file at fault, Line and Column
// one-based (Column in characters) and zero when unknown.
type Warning struct {
	Message string `json:"message"`
	Source  string `json:"source"`
	Path    string `json:"path,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// Paths names the settings files of a read: Global always, Project when the
// read had a cwd (whether or not the file exists or was read).
type Paths struct {
	Global  string `json:"global"`
	Project string `json:"project,omitempty"`
}

// Versions are the SHA-256 hashes (lowercase hex) of the settings files'
// raw bytes as read, or VersionNone for an absent file or an untrusted
// project's unread one. Project is "" when the read had no cwd.
type Versions struct {
	Global  string `json:"global"`
	Project string `json:"project,omitempty"`
}

// Snapshot is one read of the settings files (spec config/read): the merged
// settings, the origin of each dotted leaf key, the files' versions and
// paths, and the parse errors, all from the same read of each file.
type Snapshot struct {
	// Settings is the project settings merged over the global ones: objects
	// merged recursively, arrays and scalars replaced. Numbers are
	// json.Number. Never nil.
	Settings map[string]any
	// Origins maps each dotted leaf key of Settings ("retry.provider.maxRetries")
	// to the scope its value came from. A leaf is a value that is not a
	// non-empty object.
	Origins  map[string]Scope
	Versions Versions
	Paths    Paths
	// Errors are the files that could not be parsed, one warning each with
	// line and column; such a file contributes no settings and the other
	// scope still reads.
	Errors []Warning
	// Project is the directory the project settings belong to (cwd's
	// project as the trust store resolves it), "" without cwd.
	Project string
	// Trusted reports whether the project settings were read.
	Trusted bool

	agentDir string
	global   map[string]any // the global scope alone, after migrations
	project  map[string]any // the project scope alone (nil when unread)
}

// Store reads and writes the settings files of one agent directory. It is
// the one settings reader of the server (issue 8): every package that needs
// a setting gets it from a [Snapshot] or [Values]. Safe for concurrent use.
type Store struct {
	agentDir string
	trust    *TrustStore
}

// NewStore returns the settings of agentDir; trust decides whether a
// project's settings are read and written (nil: never, as if no project were
// trusted).
func NewStore(agentDir string, trust *TrustStore) *Store {
	return &Store{agentDir: agentDir, trust: trust}
}

// AgentDir is the agent directory the store was made for.
func (s *Store) AgentDir() string { return s.agentDir }

// GlobalPath is <agentDir>/settings.json.
func (s *Store) GlobalPath() string { return filepath.Join(s.agentDir, SettingsFile) }

// ProjectPath is <project>/.knightcode/settings.json.
func ProjectPath(project string) string {
	return filepath.Join(project, ProjectDir, SettingsFile)
}

// scopeRead is one settings file as read: its bytes' version, its settings
// after migrations (nil when absent, unread or unparsable) and its parse
// warning.
type scopeRead struct {
	version  string
	settings map[string]any
	warning  *Warning
}

// readScope reads one settings file. A missing file is VersionNone with no
// settings; a file that does not parse gives a warning (with line and
// column) and no settings; other read failures are errors.
func readScope(path string) (scopeRead, error) {
	data, obj, w, err := readObjectFile(path, "settings")
	if err != nil || data == nil {
		return scopeRead{version: VersionNone}, err
	}
	r := scopeRead{version: version(data), warning: w}
	if obj != nil {
		migrate(obj)
		r.settings = obj.plain()
	}
	return r, nil
}

// readObjectFile reads the JSON object file at path, what it holds named
// by what ("settings", "MCP servers"). A missing file is nil data and no
// object; a file that does not parse is its bytes, no object and its
// warning (line and column when known). Errors: other read failures,
// including safefile.ReadFile's refusals naming the file: not a regular file
// (a FIFO, a device, a symlink to one: refused at once, never a hang) or
// larger than safefile.ConfigLimit (16 MiB).
func readObjectFile(path, what string) (data []byte, obj *object, w *Warning, err error) {
	data, err = safefile.ReadFile(path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("config: read %s: %w", what, err)
	}
	if data == nil {
		data = []byte{}
	}
	if obj, err = parseObject(data); err != nil {
		w = parseWarning(path, data, err)
		w.Message = fmt.Sprintf("malformed %s (ignored): %v", what, err)
	}
	return data, obj, w, nil
}

// parseWarning is the structured warning of a settings file that does not
// parse.
func parseWarning(path string, data []byte, err error) *Warning {
	w := &Warning{Message: fmt.Sprintf("malformed settings (ignored): %v", err), Source: WarningSourceSettings, Path: path}
	var se *syntaxError
	if errors.As(err, &se) {
		w.Line, w.Column = lineColumn(data, se.offset)
	}
	return w
}

// version is the SHA-256 of a settings file's raw bytes, lowercase hex.
func version(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Read reads the settings a thread in cwd would use (spec config/read).
// Without cwd only the global file is read. With cwd, cwd's project is
// resolved through the trust store (for a managed worktree, the project it
// was made from) and <project>/.knightcode/settings.json is read only when
// the project is explicitly trusted; an untrusted project's file is not
// opened and its version is VersionNone. Each file is read once and its
// settings, version and parse error come from those bytes.
//
// Errors: the trust store's ([*ParamError] field "cwd" for a cwd that is not
// an existing directory); a settings file that exists but cannot be read
// (config/read answers internal). A file that does not parse is not an
// error: it is in Snapshot.Errors.
func (s *Store) Read(ctx context.Context, cwd string) (*Snapshot, error) {
	snap := &Snapshot{
		Origins:  map[string]Scope{},
		Paths:    Paths{Global: s.GlobalPath()},
		agentDir: s.agentDir,
	}
	var project scopeRead
	if cwd != "" {
		t, err := s.trustOf(ctx, cwd)
		if err != nil {
			return nil, err
		}
		snap.Project = t.Project
		snap.Paths.Project = ProjectPath(t.Project)
		snap.Trusted = t.Trusted != nil && *t.Trusted
		project = scopeRead{version: VersionNone}
		if snap.Trusted {
			if project, err = readScope(snap.Paths.Project); err != nil {
				return nil, err
			}
		}
		snap.Versions.Project = project.version
	}
	global, err := readScope(snap.Paths.Global)
	if err != nil {
		return nil, err
	}
	snap.Versions.Global = global.version
	for _, w := range []*Warning{global.warning, project.warning} {
		if w != nil {
			snap.Errors = append(snap.Errors, *w)
		}
	}
	snap.global = global.settings
	snap.project = project.settings
	snap.Settings = map[string]any{}
	merge(snap.Settings, global.settings)
	merge(snap.Settings, project.settings)
	leaves(snap.Settings, "", func(key string, _ any) {
		snap.Origins[key] = ScopeGlobal
		if _, ok := lookup(project.settings, key); ok {
			snap.Origins[key] = ScopeProject
		}
	})
	return snap, nil
}

// trustOf returns cwd's trust decision; without a trust store, cwd is its
// own undecided project.
func (s *Store) trustOf(ctx context.Context, cwd string) (Trust, error) {
	if s.trust != nil {
		return s.trust.Read(ctx, cwd)
	}
	dir, err := (&TrustStore{}).resolve(ctx, cwd)
	if err != nil {
		return Trust{}, err
	}
	return Trust{Project: dir}, nil
}

// merge copies src into dst: objects merged recursively (copied, never
// shared), arrays and scalars replaced.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			dv, ok := dst[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
				dst[k] = dv
			}
			merge(dv, sv)
			continue
		}
		dst[k] = v
	}
}

// leaves calls fn for every leaf of m (a value that is not a non-empty
// object) with its dotted key.
func leaves(m map[string]any, prefix string, fn func(key string, v any)) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			leaves(sub, key, fn)
			continue
		}
		fn(key, v)
	}
}

// lookup returns the value at a dotted key of m. A leaf of the merged
// settings is found in a scope only when that scope holds the same leaf:
// an object in the scope where the merged value is an empty object counts.
func lookup(m map[string]any, key string) (any, bool) {
	var cur any = m
	for seg := range strings.SplitSeq(key, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Defaults is [Defaults] of the store's agent directory: config/read's
// "defaults".
func (s *Store) Defaults() map[string]any { return Defaults(s.agentDir) }
