package config

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMCPServersEffectiveEntries(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	g, pp := e.store.MCPGlobalPath(), MCPProjectPath(e.project)
	writeFile(t, g, `{"mcpServers": {
  "zeta": {"command": "z", "args": ["-a", "${A:-x}"], "env": {"T": "${TOK}"}, "cwd": "/abs", "startupTimeoutSec": 2, "toolTimeoutSec": 5,
           "enabledTools": ["a"]},
  "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS}"},
           "oauth": {"clientId": "c", "callbackPort": 8123, "scopes": "read write"}},
  "old": {"type": "sse", "url": "https://legacy.example.com/sse", "auth": {"clientId": "o", "clientSecret": "${S}", "scopes": ["r"], "redirectPort": 0}},
  "fs": {"command": "global-fs"}
}}`)
	writeFile(t, pp, `{"mcpServers": {
  "docs": {"enabled": false, "exposure": "search", "disabledTools": ["x"]},
  "local": {"url": "http://127.0.0.1:9/mcp", "type": "streamable-http"},
  "fs": {"command": "project-fs", "cwd": "sub", "auth": {"clientId": "c"}}
}}`)
	d := DefaultMCPStartupTimeout
	tt := DefaultMCPToolTimeout
	global := []MCPServerConfig{
		{Name: "zeta", Scope: ScopeGlobal, Path: g, Enabled: true, Exposure: "direct", Type: "stdio", Command: "z", Args: []string{"-a", "${A:-x}"},
			Env: map[string]string{"T": "${TOK}"}, Cwd: "/abs", StartupTimeout: 2 * time.Second, ToolTimeout: 5 * time.Second, EnabledTools: []string{"a"}},
		{Name: "docs", Scope: ScopeGlobal, Path: g, Enabled: true, Exposure: "direct", Type: "http", URL: "https://example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${DOCS}"}, StartupTimeout: d, ToolTimeout: tt,
			Auth: &MCPAuth{ClientID: "c", RedirectPort: 8123, Scopes: []string{"read", "write"}}},
		{Name: "old", Scope: ScopeGlobal, Path: g, Enabled: true, Exposure: "direct", Type: "sse", URL: "https://legacy.example.com/sse",
			StartupTimeout: d, ToolTimeout: tt, Auth: &MCPAuth{ClientID: "o", ClientSecret: "${S}", Scopes: []string{"r"}}},
		{Name: "fs", Scope: ScopeGlobal, Path: g, Enabled: true, Exposure: "direct", Type: "stdio", Command: "global-fs", StartupTimeout: d, ToolTimeout: tt},
	}
	got, _, err := e.store.MCPServers(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(global, got); diff != "" {
		t.Errorf("untrusted project (-want +got):\n%s", diff)
	}

	// Trusted: the override applies in place, a project server replacing a
	// global one comes at the project's place (its auth dropped, its cwd
	// resolved), project servers in file order after the global ones.
	e.setTrust(t, true)
	got, _, err = e.store.MCPServers(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(e.project)
	docs := global[1]
	docs.Enabled, docs.Exposure, docs.DisabledTools, docs.Override = false, "search", []string{"x"}, MCPProjectPath(root)
	want := []MCPServerConfig{global[0], docs, global[2],
		{Name: "local", Scope: ScopeProject, Path: MCPProjectPath(root), Enabled: true, Exposure: "direct", Type: "http", URL: "http://127.0.0.1:9/mcp", StartupTimeout: d, ToolTimeout: tt},
		{Name: "fs", Scope: ScopeProject, Path: MCPProjectPath(root), Enabled: true, Exposure: "direct", Type: "stdio", Command: "project-fs",
			Cwd: filepath.Join(root, "sub"), StartupTimeout: d, ToolTimeout: tt},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trusted project (-want +got):\n%s", diff)
	}
}

func TestExpandMCPVars(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"A": "1", "EMPTY": ""}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	cases := []struct{ in, want, err string }{
		{"plain $A and $", "plain $A and $", ""},
		{"${A}-${A}", "1-1", ""},
		{"${B:-def}", "def", ""},
		{"${EMPTY:-def}", "def", ""},
		{"${EMPTY}", "", ""},
		{"${B:-}", "", ""},
		{"x${B}", "", "the environment variable B is not set"},
		{"${A", "", `an unclosed ${ in "${A"`},
		{"${1A}", "", "${1A} is not a variable name"},
	}
	for _, c := range cases {
		got, err := ExpandMCPVars(c.in, lookup)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("ExpandMCPVars(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ExpandMCPVars(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
