package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestReadPluginDirLinksOutside: a plugin's skill, command or .mcp.json
// that is a symbolic link leading out of the plugin folder (to
// /etc/passwd, the user's home, ...) is never read: it is left out with a
// warning naming it; a link inside the folder is the plugin's own file; a
// manifest linking outside refuses the plugin.
func TestReadPluginDirLinksOutside(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("---\ndescription: TOP SECRET\n---\nsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"commands", "skills/s", "skills/in", "docs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "ok.md"), []byte("Fine.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"commands/leak.md":   outside,
		"commands/alias.md":  "../docs/ok.md",
		"skills/s/SKILL.md":  outside,
		"skills/in/SKILL.md": "../../docs/ok.md",
		".mcp.json":          outside,
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := ReadPluginDir(root, "lp")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range append(c.Commands, c.Skills...) {
		names = append(names, f.Name)
	}
	if diff := cmp.Diff([]string{"lp:alias", "lp:in"}, names); diff != "" {
		t.Errorf("commands and skills (-want +got):\n%s", diff)
	}
	for _, w := range []string{"command commands/leak.md links outside the plugin folder; it is ignored",
		"skill skills/s/SKILL.md links outside the plugin folder; it is ignored",
		".mcp.json links outside the plugin folder; its MCP servers are ignored"} {
		if !slices.Contains(c.Warnings, w) {
			t.Errorf("warnings %q lack %q", c.Warnings, w)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".claude-plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".claude-plugin", "plugin.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPluginDir(root, "lp"); err == nil || !strings.Contains(err.Error(), "links outside the plugin folder") {
		t.Errorf("a manifest linking outside: %v", err)
	}
}
