package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// settingsEnv is an agent directory and a project with a trust store.
type settingsEnv struct {
	agent, project string
	trust          *TrustStore
	store          *Store
}

func newSettingsEnv(t *testing.T) *settingsEnv {
	t.Helper()
	e := &settingsEnv{agent: tempDir(t), project: tempDir(t)}
	e.trust = NewTrustStore(e.agent, nil)
	e.store = NewStore(e.agent, e.trust)
	return e
}

func (e *settingsEnv) setTrust(t *testing.T, trusted bool) {
	t.Helper()
	if _, err := e.trust.Set(ctx, e.project, trusted); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonOf round-trips v through JSON so that json.Number and []string
// compare as what a client receives.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadMergesTrustedProjectOverGlobal(t *testing.T) {
	e := newSettingsEnv(t)
	global := `{"theme": "dark", "compaction": {"enabled": true, "reserveTokens": 100}, "skills": ["a", "b"], "worktrees": {"keep": 3}}`
	project := `{"compaction": {"reserveTokens": 200}, "skills": ["c"], "worktrees": 5}`
	writeFile(t, e.store.GlobalPath(), global)
	writeFile(t, ProjectPath(e.project), project)

	tests := []struct {
		name    string
		cwd     string
		trusted *bool
		want    any
		origins map[string]Scope
		vers    Versions
		paths   Paths
	}{
		{
			name:    "no cwd: global only",
			want:    map[string]any{"theme": "dark", "compaction": map[string]any{"enabled": true, "reserveTokens": 100.0}, "skills": []any{"a", "b"}, "worktrees": map[string]any{"keep": 3.0}},
			origins: map[string]Scope{"theme": ScopeGlobal, "compaction.enabled": ScopeGlobal, "compaction.reserveTokens": ScopeGlobal, "skills": ScopeGlobal, "worktrees.keep": ScopeGlobal},
			vers:    Versions{Global: version([]byte(global))},
			paths:   Paths{Global: filepath.Join(e.agent, "settings.json")},
		},
		{
			name:    "undecided project is not read",
			cwd:     e.project,
			want:    map[string]any{"theme": "dark", "compaction": map[string]any{"enabled": true, "reserveTokens": 100.0}, "skills": []any{"a", "b"}, "worktrees": map[string]any{"keep": 3.0}},
			origins: map[string]Scope{"theme": ScopeGlobal, "compaction.enabled": ScopeGlobal, "compaction.reserveTokens": ScopeGlobal, "skills": ScopeGlobal, "worktrees.keep": ScopeGlobal},
			vers:    Versions{Global: version([]byte(global)), Project: VersionNone},
			paths:   Paths{Global: filepath.Join(e.agent, "settings.json"), Project: filepath.Join(e.project, ".knightcode", "settings.json")},
		},
		{
			name:    "distrusted project is not read",
			cwd:     e.project,
			trusted: ptr(false),
			want:    map[string]any{"theme": "dark", "compaction": map[string]any{"enabled": true, "reserveTokens": 100.0}, "skills": []any{"a", "b"}, "worktrees": map[string]any{"keep": 3.0}},
			origins: map[string]Scope{"theme": ScopeGlobal, "compaction.enabled": ScopeGlobal, "compaction.reserveTokens": ScopeGlobal, "skills": ScopeGlobal, "worktrees.keep": ScopeGlobal},
			vers:    Versions{Global: version([]byte(global)), Project: VersionNone},
			paths:   Paths{Global: filepath.Join(e.agent, "settings.json"), Project: filepath.Join(e.project, ".knightcode", "settings.json")},
		},
		{
			name:    "trusted project merges: objects recursively, arrays and scalars replaced",
			cwd:     e.project,
			trusted: ptr(true),
			want:    map[string]any{"theme": "dark", "compaction": map[string]any{"enabled": true, "reserveTokens": 200.0}, "skills": []any{"c"}, "worktrees": 5.0},
			origins: map[string]Scope{"theme": ScopeGlobal, "compaction.enabled": ScopeGlobal, "compaction.reserveTokens": ScopeProject, "skills": ScopeProject, "worktrees": ScopeProject},
			vers:    Versions{Global: version([]byte(global)), Project: version([]byte(project))},
			paths:   Paths{Global: filepath.Join(e.agent, "settings.json"), Project: filepath.Join(e.project, ".knightcode", "settings.json")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.trusted != nil {
				e.setTrust(t, *tt.trusted)
			}
			snap, err := e.store.Read(ctx, tt.cwd)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonOf(t, snap.Settings), tt.want); diff != "" {
				t.Errorf("settings (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(snap.Origins, tt.origins); diff != "" {
				t.Errorf("origins (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(snap.Versions, tt.vers); diff != "" {
				t.Errorf("versions (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(snap.Paths, tt.paths); diff != "" {
				t.Errorf("paths (-got +want):\n%s", diff)
			}
			if len(snap.Errors) != 0 {
				t.Errorf("errors = %v", snap.Errors)
			}
		})
	}
}

func TestReadAbsentFiles(t *testing.T) {
	e := newSettingsEnv(t)
	e.setTrust(t, true)
	snap, err := e.store.Read(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snap.Versions, Versions{Global: VersionNone, Project: VersionNone}); diff != "" {
		t.Errorf("versions (-got +want):\n%s", diff)
	}
	if len(snap.Settings) != 0 || len(snap.Origins) != 0 || len(snap.Errors) != 0 {
		t.Errorf("snapshot of absent files = %+v", snap)
	}
}

func TestReadParseErrorsKeepOtherScope(t *testing.T) {
	tests := []struct {
		name              string
		global, project   string
		wantSettings      any
		wantErrorPathOf   Scope
		wantLine, wantCol int
	}{
		{
			name:            "project missing comma",
			global:          `{"theme": "dark"}`,
			project:         "{\n  \"a\": 1\n  \"b\": 2\n}\n",
			wantSettings:    map[string]any{"theme": "dark"},
			wantErrorPathOf: ScopeProject, wantLine: 3, wantCol: 3,
		},
		{
			name:            "global truncated",
			global:          "{\n  \"theme\": ",
			project:         `{"a": 1}`,
			wantSettings:    map[string]any{"a": 1.0},
			wantErrorPathOf: ScopeGlobal, wantLine: 2, wantCol: 11, // the last byte read
		},
		{
			name:            "global not an object",
			global:          "[1, 2]",
			project:         `{"a": 1}`,
			wantSettings:    map[string]any{"a": 1.0},
			wantErrorPathOf: ScopeGlobal, wantLine: 1, wantCol: 1,
		},
		{
			name:            "multi-byte characters count once in the column",
			global:          `{"name": "é€", x}`,
			project:         `{}`,
			wantSettings:    map[string]any{},
			wantErrorPathOf: ScopeGlobal, wantLine: 1, wantCol: 16,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSettingsEnv(t)
			e.setTrust(t, true)
			writeFile(t, e.store.GlobalPath(), tt.global)
			writeFile(t, ProjectPath(e.project), tt.project)
			snap, err := e.store.Read(ctx, e.project)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(jsonOf(t, snap.Settings), tt.wantSettings); diff != "" {
				t.Errorf("settings (-got +want):\n%s", diff)
			}
			path := snap.Paths.Global
			if tt.wantErrorPathOf == ScopeProject {
				path = snap.Paths.Project
			}
			if len(snap.Errors) != 1 {
				t.Fatalf("errors = %+v, want one", snap.Errors)
			}
			w := snap.Errors[0]
			if w.Source != "settings" || w.Path != path || w.Line != tt.wantLine || w.Column != tt.wantCol {
				t.Errorf("warning = %+v, want settings warning at %s:%d:%d", w, path, tt.wantLine, tt.wantCol)
			}
			// The versions still hash the unparsable bytes as read.
			if snap.Versions.Global != version([]byte(tt.global)) || snap.Versions.Project != version([]byte(tt.project)) {
				t.Errorf("versions = %+v", snap.Versions)
			}
		})
	}
}

func TestReadMigratesLegacyRetryKeys(t *testing.T) {
	e := newSettingsEnv(t)
	writeFile(t, e.store.GlobalPath(), `{"retry": {"maxRetries": 7, "maxDelayMs": 5, "provider": {"maxRetryDelayMs": 9}}}`)
	snap, err := e.store.Read(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"retry": map[string]any{"provider": map[string]any{"maxRetries": 7.0, "maxRetryDelayMs": 9.0}}}
	if diff := cmp.Diff(jsonOf(t, snap.Settings), want); diff != "" {
		t.Errorf("settings (-got +want):\n%s", diff)
	}
}

func TestReadMissingCwd(t *testing.T) {
	e := newSettingsEnv(t)
	_, err := e.store.Read(ctx, filepath.Join(e.project, "nope"))
	if pe, ok := err.(*ParamError); !ok || pe.Field != "cwd" {
		t.Errorf("err = %v, want ParamError cwd", err)
	}
}

func TestValues(t *testing.T) {
	home := tempDir(t)
	t.Setenv("HOME", home)
	tests := []struct {
		name            string
		global, project string
		want            func(e *settingsEnv) Values
		wantWarnings    []string // messages
	}{
		{
			name:   "defaults",
			global: ``,
			want:   func(e *settingsEnv) Values { return defaultValues(e.agent) },
		},
		{
			name:    "set values, project over global, global-only keys from the global file",
			global:  `{"defaultModel": "m", "worktrees": {"root": "wt", "keep": 0}, "retry": {"provider": {"maxRetries": 1}}, "compaction": {"enabled": false}, "recovery": {"keep": 5, "maxAgeDays": 2}, "sessionDir": "~/s", "defaultTools": ["-bash", "+grep"]}`,
			project: `{"worktrees": {"root": "trees", "branchPrefix": "me/", "keep": 4}, "recovery": {"keep": 9}, "defaultThinkingLevel": "high"}`,
			want: func(e *settingsEnv) Values {
				v := defaultValues(e.agent)
				v.DefaultModel = "m"
				v.DefaultThinkingLevel = "high"
				v.Worktrees = WorktreeValues{Root: filepath.Join(e.agent, "wt"), Keep: 0, BranchPrefix: "me/"}
				v.Retry.MaxRetries = 1
				v.Compaction.Enabled = false
				v.Recovery = RecoveryValues{Keep: 5, MaxAgeDays: 2}
				v.SessionDir = "~/s"
				v.DefaultTools = []string{"read", "edit", "write", "grep"}
				return v
			},
			wantWarnings: []string{
				"worktrees.root is read from the global settings only; the project's value is ignored",
				"worktrees.keep is read from the global settings only; the project's value is ignored",
				"recovery.keep is read from the global settings only; the project's value is ignored",
			},
		},
		{
			name:   "global ~ root",
			global: `{"worktrees": {"root": "~/wt"}}`,
			want: func(e *settingsEnv) Values {
				v := defaultValues(e.agent)
				v.Worktrees.Root = filepath.Join(home, "wt")
				return v
			},
		},
		{
			name:    "git deadlines in seconds, a project's over the global ones",
			global:  `{"git": {"hookTimeoutSeconds": 30, "ghTimeoutSeconds": 5}}`,
			project: `{"git": {"hookTimeoutSeconds": 2}}`,
			want: func(e *settingsEnv) Values {
				v := defaultValues(e.agent)
				v.Git = GitValues{HookTimeout: 2 * time.Second, GhTimeout: 5 * time.Second}
				return v
			},
		},
		{
			name:   "git deadlines are at least one second",
			global: `{"git": {"hookTimeoutSeconds": 0, "ghTimeoutSeconds": "60"}}`,
			want:   func(e *settingsEnv) Values { return defaultValues(e.agent) },
			wantWarnings: []string{
				"malformed settings: git.hookTimeoutSeconds must be an integer from 1 to 86400, got 0; the default is used",
				`malformed settings: git.ghTimeoutSeconds must be an integer from 1 to 86400, got "60"; the default is used`,
			},
		},
		{
			name:   "recovery points are kept for at least one action and one day",
			global: `{"recovery": {"keep": 0, "maxAgeDays": -3}}`,
			want:   func(e *settingsEnv) Values { return defaultValues(e.agent) },
			wantWarnings: []string{
				"malformed settings: recovery.keep must be an integer from 1 to 100000, got 0; the default is used",
				"malformed settings: recovery.maxAgeDays must be an integer from 1 to 3650, got -3; the default is used",
			},
		},
		{
			name:    "malformed values fall back with warnings",
			global:  `{"worktrees": {"keep": -1, "root": ""}, "compaction": {"enabled": "yes", "reserveTokens": 1e308}, "retry": {"provider": {"maxRetries": 1.5, "maxRetryDelayMs": 3600001}}, "defaultTools": "read"}`,
			project: `{"defaultModel": 3, "sessionDir": "/elsewhere"}`,
			want:    func(e *settingsEnv) Values { return defaultValues(e.agent) },
			wantWarnings: []string{
				"malformed settings: defaultModel must be a string, got 3; the default is used",
				`malformed settings: worktrees.root must be a non-empty string naming a directory (absolute, "~/...", or relative to the settings file's folder), got ""; the default is used`,
				"malformed settings: worktrees.keep must be an integer from 0 to 1000, got -1; the default is used",
				"malformed settings: retry.provider.maxRetries must be an integer from 0 to 100, got 1.5; the default is used",
				"malformed settings: retry.provider.maxRetryDelayMs must be an integer from 0 to 3600000, got 3600001; the default is used",
				`malformed settings: compaction.enabled must be true or false, got "yes"; the default is used`,
				"malformed settings: compaction.reserveTokens must be an integer from 0 to 10000000, got 1e308; the default is used",
				"sessionDir is read from the global settings only; the project's value is ignored",
				`malformed settings: defaultTools must be an array of strings, got "read"; the default is used`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSettingsEnv(t)
			e.setTrust(t, true)
			writeFile(t, e.store.GlobalPath(), tt.global)
			if tt.project != "" {
				writeFile(t, ProjectPath(e.project), tt.project)
			}
			snap, err := e.store.Read(ctx, e.project)
			if err != nil {
				t.Fatal(err)
			}
			got, warnings := snap.Values()
			if diff := cmp.Diff(got, tt.want(e)); diff != "" {
				t.Errorf("values (-got +want):\n%s", diff)
			}
			var msgs []string
			for _, w := range warnings {
				msgs = append(msgs, w.Message)
			}
			if diff := cmp.Diff(msgs, tt.wantWarnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
		})
	}
}

func defaultValues(agent string) Values {
	return Values{
		DefaultThinkingLevel: "off",
		DefaultTools:         []string{"read", "bash", "edit", "write"},
		Worktrees:            WorktreeValues{Root: filepath.Join(agent, "worktrees"), Keep: 20, BranchPrefix: "knightcode/"},
		Retry:                RetryValues{MaxRetries: 3, MaxRetryDelayMs: 60000},
		Compaction:           CompactionValues{Enabled: true, ReserveTokens: 16384, KeepRecentTokens: 20000},
		Recovery:             RecoveryValues{Keep: 200, MaxAgeDays: 14},
		Git:                  GitValues{HookTimeout: 10 * time.Minute, GhTimeout: 2 * time.Minute},
	}
}

func TestResolveDefaultTools(t *testing.T) {
	tests := []struct {
		entries []string
		want    []string
	}{
		{nil, []string{"read", "bash", "edit", "write"}},
		{[]string{"-bash"}, []string{"read", "edit", "write"}},
		{[]string{"+grep", "-write", "+read"}, []string{"read", "bash", "edit", "grep"}},
		{[]string{"read", "grep"}, []string{"read", "grep"}},
		{[]string{"read", "-read"}, []string{}},
		{[]string{"+", "-"}, []string{"read", "bash", "edit", "write"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(ResolveDefaultTools(tt.entries, BuiltinTools), tt.want); diff != "" {
			t.Errorf("%q (-got +want):\n%s", tt.entries, diff)
		}
	}
}

func TestDefaultsCoverValues(t *testing.T) {
	// Every key Values decodes is documented in Defaults.
	d := jsonOf(t, Defaults("/agent")).(map[string]any)
	for _, key := range []string{
		"defaultProvider", "defaultModel", "defaultThinkingLevel", "defaultTools", "sessionDir",
		"worktrees.root", "worktrees.keep", "worktrees.branchPrefix",
		"retry.provider.maxRetries", "retry.provider.maxRetryDelayMs",
		"compaction.enabled", "compaction.reserveTokens", "compaction.keepRecentTokens",
		"recovery.keep", "recovery.maxAgeDays", "git.hookTimeoutSeconds", "git.ghTimeoutSeconds",
		"extensions", "skills", "prompts", "themes",
	} {
		if _, ok := lookup(d, key); !ok {
			t.Errorf("Defaults lacks %s", key)
		}
	}
}
