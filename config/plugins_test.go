package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ReadPluginDir reads Claude Code's plugin format: the manifest's name
// and extra command paths, skills named from their front matter, MCP
// servers with the plugin root expanded and the other variables kept,
// the variables they read, and the unsupported parts, one warning each.
func TestReadPluginDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for p, c := range map[string]string{
		".claude-plugin/plugin.json": `{"name":"acme","version":"1.2.0","commands":["./extra/more.md","../outside.md"],` +
			`"mcpServers":{"srv.one":{"command":"${CLAUDE_PLUGIN_ROOT}/bin/run","args":["--root=${GROK_PLUGIN_ROOT}","${TOKEN}"],"env":{"K":"${KNIGHTCODE_PLUGIN_ROOT}/k"}},` +
			`"web":{"url":"https://example.com/${PATH_PART:-x}","headers":{"A":"${AUTH}"}},"bad":{}},"lspServers":{"go":{}}}`,
		"skills/one/SKILL.md": "---\nname: first\ndescription: d\n---\nbody\n",
		"commands/check.md":   "Check.\n",
		"extra/more.md":       "More.\n",
		"bin/tool":            "#!/bin/sh\n",
		"hooks/hooks.json":    "{}",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ReadPluginDir(root, "fallback")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "acme" || c.Version != "1.2.0" {
		t.Errorf("name %q version %q", c.Name, c.Version)
	}
	if diff := cmp.Diff([]PluginFile{{Name: "acme:first", Path: filepath.Join(root, "skills/one/SKILL.md")}}, c.Skills); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]PluginFile{{Name: "acme:check", Path: filepath.Join(root, "commands/check.md")}, {Name: "acme:more", Path: filepath.Join(root, "extra/more.md")}}, c.Commands); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if len(c.MCPServers) != 2 {
		t.Fatalf("MCP servers %+v", c.MCPServers)
	}
	one := c.MCPServers[0]
	if one.Name != "acme_srv_one" || one.Command != root+"/bin/run" || !cmp.Equal(one.Args, []string{"--root=" + root, "${TOKEN}"}) || one.Env["K"] != root+"/k" ||
		one.Target != "'${CLAUDE_PLUGIN_ROOT}/bin/run' '--root=${GROK_PLUGIN_ROOT}' '${TOKEN}'" || len(one.Hash) != 64 {
		t.Errorf("server srv.one: %+v", one)
	}
	if web := c.MCPServers[1]; web.Name != "acme_web" || web.URL != "https://example.com/${PATH_PART:-x}" || web.Headers["A"] != "${AUTH}" {
		t.Errorf("server web: %+v", web)
	}
	if diff := cmp.Diff([]string{"AUTH", "PATH_PART", "TOKEN"}, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bin", "hooks", "lspServers"}, c.Unsupported); diff != "" {
		t.Errorf("unsupported (-want +got):\n%s", diff)
	}
	want := []string{
		`manifest commands path "../outside.md" leaves the plugin folder; it is ignored`,
		`MCP server "bad" needs exactly one of command and url; it is ignored`,
		"bin are not supported and are ignored", "hooks are not supported and are ignored", "lspServers are not supported and are ignored",
	}
	if diff := cmp.Diff(want, c.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if _, err := ReadPluginDir(t.TempDir(), "Not Valid"); err == nil {
		t.Error("a plugin named against the naming rule was read")
	}
}
