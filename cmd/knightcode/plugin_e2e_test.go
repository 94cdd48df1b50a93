package main

// End-to-end tests of the plugin and marketplace methods over the built
// binary (spec: Method reference, "plugin/*"; EXTENSIBILITY.md §4 and §5
// "Tests"). Every source is a local folder or a local bare repository:
// GitHub owner/repo sources reach one through url.<base>.insteadOf in the
// server's HOME/.gitconfig, so nothing touches the network.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// pluginFiles are the files of the review-tools plugin: a manifest, a
// skill, a command, an MCP server reading ACME_TOKEN, and hooks and agents
// (unsupported).
func pluginFiles(version, skillBody string) map[string]string {
	return map[string]string{
		".claude-plugin/plugin.json": `{"name":"review-tools","version":"` + version + `","description":"Review helpers"}`,
		"skills/review/SKILL.md":     "---\nname: review\ndescription: Review a change.\n---\n" + skillBody,
		"commands/check.md":          "---\ndescription: Check the diff\n---\nCheck $1.\n",
		".mcp.json":                  `{"mcpServers":{"linter":{"command":"${CLAUDE_PLUGIN_ROOT}/lint","args":["--token","${ACME_TOKEN}"]}}}`,
		"hooks/hooks.json":           `{"hooks":{}}`,
		"agents/helper.md":           "an agent\n",
	}
}

// writeFiles writes files under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		writeFile(t, dir, p, c)
	}
}

// pluginFolder writes files into a new folder and returns it.
func pluginFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, files)
	return dir
}

// bareRepo commits files (under sub, when set) in a new work repository
// and pushes it to a new bare repository at bare; it returns the work
// repository, for later pushes (pushFiles).
func bareRepo(t *testing.T, bare, sub string, files map[string]string) string {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, work, "init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, filepath.Dir(bare), "init", "-q", "--bare", "-b", "main", bare)
	fixtureGit(t, work, "remote", "add", "origin", bare)
	pushFiles(t, work, sub, files)
	return work
}

// pushFiles commits files (under sub) in work and pushes main.
func pushFiles(t *testing.T, work, sub string, files map[string]string) {
	t.Helper()
	writeFiles(t, filepath.Join(work, filepath.FromSlash(sub)), files)
	fixtureGit(t, work, "add", "-A")
	fixtureGit(t, work, "commit", "-q", "-m", "change")
	fixtureGit(t, work, "push", "-q", "origin", "HEAD:main")
}

// errorData is an error response's code and data.
type errorData struct {
	Code       string
	Field      string   `json:"field"`
	Reason     string   `json:"reason"`
	Candidates []string `json:"candidates"`
	Existing   string   `json:"existing"`
	Tool       string   `json:"tool"`
	Output     string   `json:"output"`
	Message    string
}

func pluginErrData(t *testing.T, err error) errorData {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an error response: %v", err)
	}
	d := errorData{}
	if raw, ok := e.Data.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("error data %s: %v", raw, err)
		}
	}
	d.Code, d.Message = e.Code, e.Message
	return d
}

// callErr sends a request that must fail and returns its error's data.
func callErr[P, R any](t *testing.T, s *diffServer, m protocol.ClientRequest[P, R], p P) errorData {
	t.Helper()
	var res json.RawMessage
	err := s.call(t, m.Name, p, &res)
	if err == nil {
		t.Fatalf("%s %s succeeded with %s, want an error", m.Name, mustJSON(p), res)
	}
	return pluginErrData(t, err)
}

func rowOf(t *testing.T, s *diffServer, cwd, identity, scope string) protocol.Plugin {
	t.Helper()
	l := mustCall(t, s, protocol.PluginList, protocol.PluginListParams{Cwd: cwd})
	for _, p := range l.Plugins {
		if p.Identity == identity && p.Scope == scope {
			return p
		}
	}
	t.Fatalf("plugin/list %s has no %s row of %s: %+v", cwd, scope, identity, l.Plugins)
	return protocol.Plugin{}
}

func hasWarning(ws []string, part string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, part) })
}

// treeSum is every file under dir (relative path -> bytes) and every
// folder (path -> "/"), to compare a tree before and after.
func treeSum(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			out[p] = "/"
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// githubServer starts a server whose git fetches https://github.com/<path>
// from file://<base>/<path> (url.<base>.insteadOf in its HOME/.gitconfig),
// and returns it with base.
func githubServer(t *testing.T) (*diffServer, string) {
	t.Helper()
	s := startDiffServer(t, nil)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, s.home, ".gitconfig", "[url \"file://"+base+"/\"]\n\tinsteadOf = https://github.com/\n")
	return s, base
}

// TestE2EPluginTrust covers EXTENSIBILITY.md §4 tests 1-4, 7-9 and 11: an
// installed plugin runs nothing until trusted; trust comes only from the
// server's trust store, is never revoked by plugin/set and is revoked by
// uninstalling from every scope; what it brings reaches command/list,
// resource/list and the model's system prompt only when active; its MCP
// server is no mcp/list row; refusals are structured.
func TestE2EPluginTrust(t *testing.T) {
	t.Parallel()
	text := func(s string) func(w http.ResponseWriter) {
		return sse(chunk(`{"role":"assistant","content":`+strconvQuote(s)+`}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
	}
	chat := newChatServer(t, text("one"), text("two"))
	s, _ := startProviderServer(t, chat)
	repo := threadsRepo(t)
	plugin := pluginFolder(t, pluginFiles("1.0.0", "Read the diff.\n"))
	identity := "path:" + plugin

	// 1. Installed, not trusted: listed with what it would bring, nothing
	// of it loads.
	inst := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: plugin})
	p := inst.Plugin
	want := protocol.Plugin{Identity: identity, Name: "review-tools", Scope: "global", Source: identity, Commit: p.Commit, Version: "1.0.0",
		Enabled: true, Skills: []string{"review-tools:review"}, Commands: []string{"review-tools:check"},
		McpServers: []string{"review-tools_linter"}, Env: []string{"ACME_TOKEN"}, Unsupported: []string{"agents", "hooks"}, Warnings: p.Warnings}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("plugin/install row (-want +got):\n%s", diff)
	}
	if inst.Replaced || len(p.Commit) != 64 {
		t.Errorf("replaced %v, commit %q: want a new install with a content hash", inst.Replaced, p.Commit)
	}
	for _, w := range []string{"not trusted: nothing of it runs", "ACME_TOKEN is not set", "hooks are not supported and are ignored", "agents are not supported"} {
		if !hasWarning(p.Warnings, w) {
			t.Errorf("warnings %q lack %q", p.Warnings, w)
		}
	}
	if got := commandNames(t, s, protocol.CommandListParams{Cwd: repo}); slices.Contains(got, "review-tools:check") || slices.Contains(got, "skill:review-tools:review") {
		t.Errorf("command/list of an untrusted plugin = %q", got)
	}
	ask := func() string {
		t.Helper()
		thread := s.startThread(t, repo, "")
		mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "local", ID: "m1"}})
		_, from := s.startTurn(t, thread, "hello")
		if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
			t.Fatalf("turn: %q %+v", turn.Status, turn.Error)
		}
		chat.mu.Lock()
		defer chat.mu.Unlock()
		return chatMessages(t, chat.bodies[len(chat.bodies)-1])[0][1]
	}
	if sys := ask(); strings.Contains(sys, "review-tools") {
		t.Errorf("the system prompt of an untrusted plugin's thread names it:\n%s", sys)
	}

	// 2. Trusted: active, and its command and skill are offered.
	p = mustCall(t, s, protocol.PluginSet, protocol.PluginSetParams{Scope: "global", Name: "review-tools", Trust: new(true)}).Plugin
	if !p.Trusted || !p.Active {
		t.Fatalf("after plugin/set trust: %+v", p)
	}
	if got := commandNames(t, s, protocol.CommandListParams{Cwd: repo}); !slices.Contains(got, "review-tools:check") || !slices.Contains(got, "skill:review-tools:review") {
		t.Errorf("command/list of a trusted plugin = %q", got)
	}
	if sys := ask(); !strings.Contains(sys, "<name>review-tools:review</name>") {
		t.Errorf("the system prompt does not list the trusted plugin's skill:\n%s", sys)
	}
	res := mustCall(t, s, protocol.ResourceList, protocol.ResourceListParams{Cwd: repo})
	var skill protocol.ResourceInfo
	for _, r := range res.Resources {
		if r.Name == "review-tools:review" {
			skill = r
		}
	}
	if skill.Origin != "plugin" || skill.Source != identity || !skill.Enabled {
		t.Errorf("resource/list row of the plugin's skill = %+v", skill)
	}
	if e := callErr(t, s, protocol.ResourceSet, protocol.ResourceSetParams{Type: "skills", Path: skill.Path, Enabled: false}); e.Reason != "pluginResource" {
		t.Errorf("resource/set of a plugin's skill: %+v", e)
	}

	// 11. Its MCP server is the plugin's, not an mcp.json row.
	for _, srv := range mustCall(t, s, protocol.McpList, protocol.McpListParams{}).Servers {
		if srv.Name == "review-tools_linter" {
			t.Errorf("mcp/list lists the plugin's server: %+v", srv)
		}
	}
	on := true
	if e := callErr(t, s, protocol.McpUpdate, protocol.McpUpdateParams{Name: "review-tools_linter", Enabled: &on}); e.Code != "invalidParams" || e.Reason != "pluginServer" || e.Field != "name" {
		t.Errorf("mcp/update of a plugin's server: %+v", e)
	}
	if e := callErr(t, s, protocol.McpRemove, protocol.McpRemoveParams{Scope: "global", Name: "review-tools_linter"}); e.Reason != "pluginServer" {
		t.Errorf("mcp/remove of a plugin's server: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(s.home, "agent", "mcp.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("mcp.json was written: %v", err)
	}

	// 3. plugin/set {trust: false} never revokes; uninstalling from every
	// scope does.
	p = mustCall(t, s, protocol.PluginSet, protocol.PluginSetParams{Scope: "global", Name: identity, Trust: new(false)}).Plugin
	if !p.Trusted {
		t.Errorf("plugin/set {trust: false} revoked trust: %+v", p)
	}
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	proj := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "project", Cwd: repo, Source: plugin})
	if !proj.Plugin.Trusted || proj.Replaced {
		t.Errorf("project install of a trusted plugin: %+v", proj)
	}
	if r := rowOf(t, s, repo, identity, "global"); r.Active || !hasWarning(r.Warnings, "also installed in the project settings") {
		t.Errorf("global row shadowed by the project's: %+v", r)
	}
	if rm := mustCall(t, s, protocol.PluginUninstall, protocol.PluginUninstallParams{Scope: "global", Name: "review-tools"}); !rm.Removed {
		t.Error("plugin/uninstall global: removed false")
	}
	if r := rowOf(t, s, repo, identity, "project"); !r.Trusted || !r.Active {
		t.Errorf("after the global uninstall the project's row: %+v", r)
	}
	mustCall(t, s, protocol.PluginUninstall, protocol.PluginUninstallParams{Scope: "project", Cwd: repo, Name: identity})
	if rm := mustCall(t, s, protocol.PluginUninstall, protocol.PluginUninstallParams{Scope: "project", Cwd: repo, Name: identity}); rm.Removed {
		t.Error("a second plugin/uninstall removed something")
	}
	if p := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: plugin}).Plugin; p.Trusted || p.Active {
		t.Errorf("reinstalled after uninstalling from every scope: %+v, want untrusted", p)
	}
	if again := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: plugin}); !again.Replaced {
		t.Error("a reinstall in the same scope: replaced false")
	}

	// 4. A project settings file claiming trust is ignored.
	other := pluginFolder(t, map[string]string{"skills/x/SKILL.md": "---\ndescription: X.\n---\nx\n"})
	writeFile(t, repo, ".knightcode/settings.json", `{"plugins":[{"identity":"path:`+other+`","source":"path:`+other+`","commit":"`+p.Commit+`","enabled":true,"trusted":true}]}`)
	if r := rowOf(t, s, repo, "path:"+other, "project"); r.Trusted || r.Active || !hasWarning(r.Warnings, "not installed on this machine") {
		t.Errorf("a hand-written project entry claiming trust: %+v", r)
	}

	// 7. A name two installs share is ambiguous.
	twin := pluginFolder(t, pluginFiles("9.9.9", "Twin.\n"))
	mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: twin})
	e := callErr(t, s, protocol.PluginSet, protocol.PluginSetParams{Scope: "global", Name: "review-tools", Enabled: new(false)})
	if wantC := []string{"path:" + plugin, "path:" + twin}; e.Reason != "ambiguous" || e.Field != "name" || !cmp.Equal(e.Candidates, wantC) {
		t.Errorf("ambiguous name: %+v, want candidates %q", e, wantC)
	}

	// 8. Project writes need a trusted project; sources are checked.
	untrusted := threadsRepo(t)
	if e := callErr(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "project", Cwd: untrusted, Source: plugin}); e.Reason != "untrusted" {
		t.Errorf("project install in an untrusted project: %+v", e)
	}
	for _, c := range []struct{ source, reason string }{
		{"./plugins/x", "relativePath"}, {"~/x", "relativePath"}, {"a/b/c", "relativePath"},
		{"https://user:token@example.com/x.git", "credentialsInUrl"},
	} {
		e := callErr(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: c.source})
		if e.Reason != c.reason || e.Field != "source" || strings.Contains(e.Message, "token") {
			t.Errorf("source %q: %+v, want reason %s", c.source, e, c.reason)
		}
	}
	writeFile(t, repo, "acme/tools/x.txt", "a folder that looks like owner/repo\n")
	e = callErr(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Cwd: repo, Source: "acme/tools"})
	if wantC := []string{"github:acme/tools", filepath.Join(repo, "acme/tools")}; e.Reason != "relativePath" || !cmp.Equal(e.Candidates, wantC) {
		t.Errorf("owner/repo that is a folder of cwd: %+v", e)
	}
	var raw json.RawMessage
	if err := s.call(t, "plugin/install", map[string]any{"scope": "global", "source": plugin, "bogus": 1}, &raw); err == nil || pluginErrData(t, err).Code != "invalidParams" {
		t.Errorf("an unknown param: %v", err)
	}
}

// TestE2EPluginUpdate covers §4 tests 5 and 6 and the install race: a
// GitHub owner/repo source (a local bare repository through insteadOf)
// with a path; two installs at once end in one install; an update with an
// unchanged version but a new commit serves the new files, collects the
// old folder and names the MCP server it adds, which does not run until
// approved; an update while the repository is gone fails and leaves the
// install byte-identical.
func TestE2EPluginUpdate(t *testing.T) {
	t.Parallel()
	s, base := githubServer(t)
	bare := filepath.Join(base, "acme", "review-tools.git")
	files := pluginFiles("2.1.0", "Version one.\n")
	delete(files, ".mcp.json")
	work := bareRepo(t, bare, "plugins/review", files)
	repo := threadsRepo(t)

	req := protocol.PluginInstallParams{Scope: "global", Source: "acme/review-tools", Path: "plugins/review", Trust: true}
	var wg sync.WaitGroup
	results := make([]protocol.PluginInstallResult, 2)
	for i := range results {
		wg.Go(func() { results[i] = mustCall(t, s, protocol.PluginInstall, req) })
	}
	wg.Wait()
	if results[0].Replaced == results[1].Replaced {
		t.Errorf("two installs at once: replaced %v and %v, want one of each", results[0].Replaced, results[1].Replaced)
	}
	identity := "github:acme/review-tools#plugins/review"
	var settings struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(s.home, "agent"), "settings.json")), &settings); err != nil || len(settings.Plugins) != 1 {
		t.Fatalf("settings after two installs: %+v (%v)", settings, err)
	}
	cache := filepath.Join(s.home, "agent", "plugins", "cache")
	folders := func() []string {
		t.Helper()
		var out []string
		ids, _ := os.ReadDir(cache)
		for _, id := range ids {
			commits, _ := os.ReadDir(filepath.Join(cache, id.Name()))
			for _, c := range commits {
				out = append(out, filepath.Join(cache, id.Name(), c.Name()))
			}
		}
		return out
	}
	old := results[0].Plugin
	if f := folders(); len(f) != 1 || filepath.Base(f[0]) != old.Commit || !old.Active || old.Identity != identity {
		t.Fatalf("cache folders %q for %+v", f, old)
	}
	skillOf := func() string {
		t.Helper()
		for _, r := range mustCall(t, s, protocol.ResourceList, protocol.ResourceListParams{Cwd: repo}).Resources {
			if r.Name == "review-tools:review" {
				return readFile(t, filepath.Dir(r.Path), "SKILL.md")
			}
		}
		t.Fatal("resource/list has no review-tools:review")
		return ""
	}
	if got := skillOf(); !strings.Contains(got, "Version one.") {
		t.Fatalf("served skill = %q", got)
	}
	if up := mustCall(t, s, protocol.PluginUpdate, protocol.PluginUpdateParams{Scope: "global", Name: "review-tools"}); up.Updated {
		t.Errorf("update with nothing new: %+v", up)
	}

	// 5. Same version string, new commit, a new MCP server.
	pushFiles(t, work, "plugins/review", map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: Review a change.\n---\nVersion two.\n",
		".mcp.json":              `{"mcpServers":{"deploy":{"command":"npx","args":["deploy-mcp"]}}}`,
	})
	up := mustCall(t, s, protocol.PluginUpdate, protocol.PluginUpdateParams{Scope: "global", Name: identity})
	if !up.Updated || up.From != old.Commit || up.To == old.Commit || up.Plugin.Version != "2.1.0" {
		t.Fatalf("update to a new commit: %+v", up)
	}
	if !hasWarning(up.Warnings, `update adds MCP server "deploy" (npx deploy-mcp)`) {
		t.Errorf("update warnings %q do not name the new server", up.Warnings)
	}
	if !up.Plugin.Active || !hasWarning(up.Plugin.Warnings, "plugin/set {trust: true} to run it") {
		t.Errorf("row after the update: %+v", up.Plugin)
	}
	if got := skillOf(); !strings.Contains(got, "Version two.") {
		t.Errorf("served skill after the update = %q", got)
	}
	if f := folders(); len(f) != 1 || filepath.Base(f[0]) != up.To {
		t.Errorf("cache folders after the update: %q, want only %s", f, up.To)
	}
	p := mustCall(t, s, protocol.PluginSet, protocol.PluginSetParams{Scope: "global", Name: "review-tools", Trust: new(true)}).Plugin
	if hasWarning(p.Warnings, "to run it") {
		t.Errorf("after approving, warnings %q", p.Warnings)
	}

	// 6. Offline: the old install stays, byte for byte.
	before := treeSum(t, cache)
	if err := os.Rename(bare, bare+".gone"); err != nil {
		t.Fatal(err)
	}
	e := callErr(t, s, protocol.PluginUpdate, protocol.PluginUpdateParams{Scope: "global", Name: "review-tools"})
	if e.Code != "externalFailure" || e.Tool != "git" || !strings.Contains(e.Message, identity) || e.Output == "" {
		t.Errorf("update while offline: %+v", e)
	}
	if after := treeSum(t, cache); !cmp.Equal(after, before) {
		t.Error("a failed update changed the cache")
	}
	if r := rowOf(t, s, repo, identity, "global"); !r.Active || r.Commit != up.To {
		t.Errorf("row after a failed update: %+v", r)
	}

	// §5 test 4: name@<built-in marketplace> adds it first (its GitHub
	// repository is a local bare one here, through insteadOf).
	bareRepo(t, filepath.Join(base, "anthropics", "claude-plugins-official.git"), "", map[string]string{
		".claude-plugin/marketplace.json": `{"name":"claude-plugins-official","owner":{"name":"Anthropic"},"plugins":[{"name":"hello","source":"./hello"}]}`,
		"hello/commands/hi.md":            "Say hi.\n",
	})
	hello := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: "hello@claude-plugins-official"})
	if hello.Plugin.Identity != "hello@claude-plugins-official" || !slices.Contains(hello.Plugin.Commands, "hello:hi") {
		t.Errorf("install from the built-in marketplace: %+v", hello)
	}
	ml := mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{}).Marketplaces
	if len(ml) == 0 || ml[0].Name != "claude-plugins-official" || !ml[0].Added || ml[0].Scope != "global" || ml[0].Source != "github:anthropics/claude-plugins-official" {
		t.Errorf("the built-in marketplace after the install: %+v", ml)
	}
}

// TestE2EPluginMarketplaces covers §5 tests 1-3, 5 and 7 and §4 test 12.
func TestE2EPluginMarketplaces(t *testing.T) {
	t.Parallel()
	s := startDiffServer(t, nil)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lintBare := filepath.Join(base, "lint.git")
	bareRepo(t, lintBare, "", map[string]string{"commands/lint.md": "Lint it.\n"})
	catalog := func(extra string) string {
		return `{"name":"acme","owner":{"name":"Acme"},"plugins":[` +
			`{"name":"review-tools","source":"./plugins/review","description":"Reviews","version":"2.1.0","author":{"name":"Acme"}},` +
			`{"name":"npm-thing","source":{"source":"npm","package":"x"}},` +
			`{"name":"lint-tools","source":{"source":"url","url":"file://` + lintBare + `"}}` + extra + `]}`
	}
	mkFiles := map[string]string{".claude-plugin/marketplace.json": catalog("")}
	for p, c := range pluginFiles("2.1.0", "Catalog skill.\n") {
		mkFiles["plugins/review/"+p] = c
	}
	acme := filepath.Join(base, "acme.git")
	mkWork := bareRepo(t, acme, "", mkFiles)
	acmeURL := "file://" + acme

	// 1. add, add again, another source under the same name.
	add := mustCall(t, s, protocol.PluginMarketplaceAdd, protocol.PluginMarketplaceAddParams{Scope: "global", Source: acmeURL})
	m := add.Marketplace
	if add.AlreadyAdded || !m.Added || m.Scope != "global" || m.UpdatedAt == "" || m.Source != "git:"+acmeURL {
		t.Errorf("plugin/marketplace/add: %+v", add)
	}
	// 2. One invalid entry of three.
	if len(m.Plugins) != 2 || len(m.Diagnostics) != 1 || !strings.Contains(m.Diagnostics[0], "npm sources are not supported") {
		t.Errorf("catalog with an npm entry: plugins %+v, diagnostics %q", m.Plugins, m.Diagnostics)
	}
	if again := mustCall(t, s, protocol.PluginMarketplaceAdd, protocol.PluginMarketplaceAddParams{Scope: "global", Source: acmeURL}); !again.AlreadyAdded {
		t.Error("adding the same marketplace again: alreadyAdded false")
	}
	acme2 := filepath.Join(base, "acme2.git")
	bareRepo(t, acme2, "", mkFiles)
	e := callErr(t, s, protocol.PluginMarketplaceAdd, protocol.PluginMarketplaceAddParams{Scope: "global", Source: "file://" + acme2})
	if e.Reason != "nameConflict" || e.Existing != "git:"+acmeURL {
		t.Errorf("same name, other source: %+v", e)
	}
	bad := filepath.Join(base, "bad.git")
	bareRepo(t, bad, "", map[string]string{".claude-plugin/marketplace.json": `{"name":"Bad Name","owner":{"name":"x"},"plugins":[]}`})
	if e := callErr(t, s, protocol.PluginMarketplaceAdd, protocol.PluginMarketplaceAddParams{Scope: "global", Source: "file://" + bad}); e.Reason != "badCatalog" {
		t.Errorf("a catalog breaking the naming rules: %+v", e)
	}

	inst := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: "review-tools@acme", Trust: true})
	if p := inst.Plugin; p.Identity != "review-tools@acme" || p.Marketplace != "acme" || p.Source != "git:"+acmeURL+"#plugins/review" || !p.Active {
		t.Fatalf("install from the marketplace: %+v", inst)
	}
	globalFolder := filepath.Join(s.home, "agent", "plugins", "cache")
	globalSum := treeSum(t, globalFolder)

	// 3. update after a push lists the new plugin; after the repository
	// is gone, errors and the previous catalog.
	mkFiles[".claude-plugin/marketplace.json"] = catalog(`,{"name":"fresh","source":"./plugins/review"}`)
	pushFiles(t, mkWork, "", mkFiles)
	if u := mustCall(t, s, protocol.PluginMarketplaceUpdate, protocol.PluginMarketplaceUpdateParams{Name: "acme"}); !cmp.Equal(u.Updated, []string{"acme"}) || len(u.Errors) != 0 {
		t.Errorf("marketplace update: %+v", u)
	}
	names := func() []string {
		t.Helper()
		for _, m := range mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{}).Marketplaces {
			if m.Name == "acme" {
				var out []string
				for _, p := range m.Plugins {
					out = append(out, p.Name)
				}
				return out
			}
		}
		return nil
	}
	if got := names(); !cmp.Equal(got, []string{"review-tools", "lint-tools", "fresh"}) {
		t.Errorf("catalog after the update: %q", got)
	}
	if err := os.Rename(acme, acme+".gone"); err != nil {
		t.Fatal(err)
	}
	if u := mustCall(t, s, protocol.PluginMarketplaceUpdate, protocol.PluginMarketplaceUpdateParams{}); len(u.Updated) != 0 || len(u.Errors) != 1 || u.Errors[0].Name != "acme" {
		t.Errorf("marketplace update with the repository gone: %+v", u)
	}
	if got := names(); len(got) != 3 {
		t.Errorf("catalog after a failed update: %q", got)
	}
	if err := os.Rename(acme+".gone", acme); err != nil {
		t.Fatal(err)
	}

	// 12. A trusted project reusing the trusted name with another source
	// gets no trust, and changes nothing of the global install.
	repo := threadsRepo(t)
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	writeFile(t, repo, ".knightcode/settings.json", `{"marketplaces":[{"name":"acme","source":"git:file://`+acme2+`"}],`+
		`"plugins":[{"identity":"review-tools@acme","name":"review-tools","source":"git:file://`+acme2+`#plugins/review",`+
		`"marketplace":"acme","marketplaceSource":"git:file://`+acme2+`","commit":"`+inst.Plugin.Commit+`"}]}`)
	if r := rowOf(t, s, repo, "review-tools@acme", "project"); r.Trusted || r.Active || !hasWarning(r.Warnings, "source differs from the trusted one") {
		t.Errorf("the project's row reusing a trusted name: %+v", r)
	}
	if got := treeSum(t, globalFolder); !cmp.Equal(got, globalSum) {
		t.Error("the project's entry changed the global install's folder")
	}
	pushFiles(t, mkWork, "plugins/review", map[string]string{"commands/more.md": "More.\n"})
	up := mustCall(t, s, protocol.PluginUpdate, protocol.PluginUpdateParams{Scope: "global", Cwd: repo, Name: "review-tools@acme"})
	if !up.Updated || up.Plugin.Source != "git:"+acmeURL+"#plugins/review" || !slices.Contains(up.Plugin.Commands, "review-tools:more") {
		t.Errorf("global update with a project entry of another source: %+v", up)
	}

	// 5. remove keeps the plugin installed, active and updatable.
	if rm := mustCall(t, s, protocol.PluginMarketplaceRemove, protocol.PluginMarketplaceRemoveParams{Scope: "global", Name: "acme"}); !rm.Removed {
		t.Error("marketplace remove: removed false")
	}
	r := rowOf(t, s, "", "review-tools@acme", "global")
	if !r.Active || !hasWarning(r.Warnings, "marketplace acme was removed") {
		t.Errorf("after removing the marketplace: %+v", r)
	}
	pushFiles(t, mkWork, "plugins/review", map[string]string{"commands/last.md": "Last.\n"})
	if up := mustCall(t, s, protocol.PluginUpdate, protocol.PluginUpdateParams{Scope: "global", Name: "review-tools"}); !up.Updated || !slices.Contains(up.Plugin.Commands, "review-tools:last") {
		t.Errorf("update after removing the marketplace: %+v", up)
	}

	// 7. Lists read local state only: a marketplace, and a plugin from it,
	// whose remote is a listener that records every connection (and
	// closes it) is listed missing, and nothing connects. How fast a list
	// answers is BenchmarkMarketplaceList's and BenchmarkPluginList's
	// (package plugins).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var connections atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connections.Add(1)
			_ = c.Close()
		}
	}()
	far := "git:http://" + ln.Addr().String() + "/far.git"
	writeFile(t, filepath.Join(s.home, "agent"), "settings.json", `{"marketplaces":[{"name":"far","source":"`+far+`"}],`+
		`"plugins":[{"identity":"x@far","name":"x","marketplace":"far","marketplaceSource":"`+far+`","source":"`+far+`#x","commit":"`+strings.Repeat("a", 40)+`"}]}`)
	l := mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{})
	if i := slices.IndexFunc(l.Marketplaces, func(m protocol.PluginMarketplace) bool { return m.Name == "far" }); i < 0 || !l.Marketplaces[i].Missing || !l.Marketplaces[i].Added {
		t.Errorf("an added marketplace never fetched: %+v", l.Marketplaces)
	}
	if r := rowOf(t, s, "", "x@far", "global"); r.Active || !hasWarning(r.Warnings, "not installed on this machine") {
		t.Errorf("a plugin of the unreachable marketplace, never fetched: %+v", r)
	}
	if n := connections.Load(); n != 0 {
		t.Errorf("plugin/marketplace/list and plugin/list connected to the remote %d times", n)
	}
	// The listener is what a fetch would reach: an update connects.
	if u := mustCall(t, s, protocol.PluginMarketplaceUpdate, protocol.PluginMarketplaceUpdateParams{Name: "far"}); len(u.Errors) != 1 || connections.Load() == 0 {
		t.Errorf("plugin/marketplace/update of far: %+v, %d connections", u, connections.Load())
	}
}

// TestE2EPluginImportable covers §4 test 10 and §5 tests 6 and 8: Claude
// Code's installed plugins and known marketplaces in a fake HOME.
func TestE2EPluginImportable(t *testing.T) {
	t.Parallel()
	s := startDiffServer(t, nil)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkFiles := map[string]string{".claude-plugin/marketplace.json": `{"name":"acme","owner":{"name":"Acme"},"plugins":[{"name":"review-tools","source":"./plugins/review"}]}`}
	for p, c := range pluginFiles("1.0.0", "From Claude.\n") {
		mkFiles["plugins/review/"+p] = c
	}
	acme := filepath.Join(base, "acme.git")
	bareRepo(t, acme, "", mkFiles)
	claude := filepath.Join(s.home, ".claude", "plugins")
	clone := filepath.Join(claude, "marketplaces", "acme")
	writeFiles(t, clone, mkFiles)
	writeFile(t, claude, "known_marketplaces.json", `{"acme":{"source":{"source":"git","url":"file://`+acme+`"},"installLocation":"`+clone+`","lastUpdated":"2026-01-01T00:00:00Z"}}`)
	// lint comes from the built-in claude-plugins-official, which Claude
	// Code's known_marketplaces.json need not list: its source is the
	// built-in's.
	writeFile(t, claude, "installed_plugins.json", `{"version":2,"plugins":{"review-tools@acme":[{"scope":"user","installPath":"/x","version":"1.0.0","gitCommitSha":"abc"}],`+
		`"lint@claude-plugins-official":[{"scope":"user","installPath":"/y","version":"2.0.0","gitCommitSha":"def"}]}}`)
	writeFile(t, s.home, ".claude/settings.json", `{"enabledPlugins":{"review-tools@acme":true}}`)

	l := mustCall(t, s, protocol.PluginList, protocol.PluginListParams{})
	lint := protocol.PluginImportable{Name: "lint@claude-plugins-official", From: "claudeCode", Source: "github:anthropics/claude-plugins-official"}
	want := []protocol.PluginImportable{lint, {Name: "review-tools@acme", From: "claudeCode", Source: "git:file://" + acme, Enabled: true}}
	if diff := cmp.Diff(want, l.Importable); diff != "" || len(l.Diagnostics) != 0 {
		t.Errorf("importable (-want +got):\n%s\ndiagnostics %+v", diff, l.Diagnostics)
	}
	market := func() protocol.PluginMarketplace {
		t.Helper()
		for _, m := range mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{}).Marketplaces {
			if m.Name == "acme" {
				return m
			}
		}
		t.Fatal("no marketplace acme listed")
		return protocol.PluginMarketplace{}
	}
	if m := market(); m.From != "claudeCode" || m.Added || m.Missing || len(m.Plugins) != 1 {
		t.Errorf("Claude Code's marketplace: %+v", m)
	}
	if err := os.RemoveAll(clone); err != nil {
		t.Fatal(err)
	}
	if m := market(); !m.Missing || len(m.Plugins) != 0 {
		t.Errorf("Claude Code's marketplace with its clone deleted: %+v", m)
	}

	inst := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: "review-tools@acme"})
	if inst.Plugin.Identity != "review-tools@acme" || inst.Plugin.Trusted || !hasWarning(inst.Warnings, "marketplace acme") {
		t.Errorf("install of an importable plugin: %+v", inst)
	}
	if m := market(); !m.Added || m.Scope != "global" || m.From != "" || len(m.Plugins) != 1 || !m.Plugins[0].Installed {
		t.Errorf("the marketplace after the install: %+v", m)
	}
	if l := mustCall(t, s, protocol.PluginList, protocol.PluginListParams{}); !cmp.Equal(l.Importable, []protocol.PluginImportable{lint}) {
		t.Errorf("importable after installing review-tools: %+v", l.Importable)
	}
	if claudeSum := readFile(t, claude, "installed_plugins.json"); !strings.Contains(claudeSum, `"abc"`) {
		t.Error("Claude Code's file changed")
	}

	writeFile(t, claude, "installed_plugins.json", `{"version":2,`)
	l = mustCall(t, s, protocol.PluginList, protocol.PluginListParams{})
	if len(l.Diagnostics) != 1 || !strings.Contains(l.Diagnostics[0].Message, "cannot be read") || l.Diagnostics[0].Path == "" {
		t.Errorf("a corrupt installed_plugins.json: diagnostics %+v", l.Diagnostics)
	}
}

// TestE2EPluginXAIMarketplace covers the second built-in marketplace of
// EXTENSIBILITY.md §5 "Known names": xAI's catalog xai-official from
// xai-org/plugin-marketplace (a local bare repository here, through
// insteadOf), laid out like the real one: its catalog at
// .grok-plugin/marketplace.json (third in the lookup order), first-party
// plugins under plugins/, vendored third-party ones under
// external_plugins/ (named by a string source, with or without "./", or
// by {"type": "local", "path"}), and remote plugins as url sources pinned
// to a sha, with and without a path.
func TestE2EPluginXAIMarketplace(t *testing.T) {
	t.Parallel()
	s, base := githubServer(t)
	remote := filepath.Join(base, "remote.git")
	remoteWork := bareRepo(t, remote, "", map[string]string{
		"commands/top.md":                      "Top.\n",
		"plugins/sub/.grok-plugin/plugin.json": `{"name":"remote-sub"}`,
		"plugins/sub/commands/deep.md":         "Deep.\n",
	})
	sha := strings.TrimSpace(fixtureGit(t, remoteWork, "rev-parse", "HEAD"))
	catalog := `{"name":"xai-official","description":"Official xAI plugin marketplace","owner":{"name":"xAI"},"plugins":[` +
		`{"name":"first","description":"First party","category":"development","source":"./plugins/first","keywords":["first"]},` +
		`{"name":"neon","category":"database","source":{"type":"local","path":"./external_plugins/neon"},"homepage":"https://example.com","domains":["example.com"]},` +
		`{"name":"vendored","source":"external_plugins/vendored"},` +
		`{"name":"remote","source":{"source":"url","url":"https://github.com/remote.git","sha":"` + sha + `"}},` +
		`{"name":"remote-sub","source":{"source":"url","url":"https://github.com/remote.git","sha":"` + sha + `","path":"plugins/sub"}}]}`
	bareRepo(t, filepath.Join(base, "xai-org", "plugin-marketplace.git"), "", map[string]string{
		".grok-plugin/marketplace.json":                        catalog,
		".grok-plugin/plugin-index.json":                       `{}`,
		"plugins/first/.grok-plugin/plugin.json":               `{"name":"first"}`,
		"plugins/first/commands/one.md":                        "One.\n",
		"external_plugins/neon/.grok-plugin/plugin.json":       `{"name":"neon"}`,
		"external_plugins/neon/skills/neon/SKILL.md":           "---\nname: neon\ndescription: Neon.\n---\nUse Neon.\n",
		"external_plugins/vendored/.claude-plugin/plugin.json": `{"name":"vendored"}`,
		"external_plugins/vendored/commands/v.md":              "V.\n",
	})

	for _, c := range []struct {
		source, command string
	}{
		{"neon@xai-official", "skill:neon:neon"}, {"first@xai-official", "first:one"}, {"vendored@xai-official", "vendored:v"},
		{"remote@xai-official", "remote:top"}, {"remote-sub@xai-official", "remote-sub:deep"},
	} {
		inst := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: c.source, Trust: true})
		if inst.Plugin.Identity != c.source || !inst.Plugin.Active {
			t.Errorf("install %s: %+v", c.source, inst)
		}
		if c.source == "remote@xai-official" && inst.Plugin.Commit != sha {
			t.Errorf("install %s: commit %s, want the catalog's sha %s", c.source, inst.Plugin.Commit, sha)
		}
	}
	got := commandNames(t, s, protocol.CommandListParams{Cwd: threadsRepo(t)})
	for _, want := range []string{"skill:neon:neon", "first:one", "vendored:v", "remote:top", "remote-sub:deep"} {
		if !slices.Contains(got, want) {
			t.Errorf("command/list lacks %s: %q", want, got)
		}
	}
	ml := mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{}).Marketplaces
	i := slices.IndexFunc(ml, func(m protocol.PluginMarketplace) bool { return m.Name == "xai-official" })
	if i < 0 {
		t.Fatalf("no xai-official marketplace: %+v", ml)
	}
	m := ml[i]
	var names []string
	for _, p := range m.Plugins {
		names = append(names, p.Name)
	}
	if !m.Added || m.Source != "github:xai-org/plugin-marketplace" || len(m.Diagnostics) != 0 || !cmp.Equal(names, []string{"first", "neon", "vendored", "remote", "remote-sub"}) {
		t.Errorf("xai-official after the installs: %+v", m)
	}
}

// TestE2EPluginSourceAndNames covers refusals that must say what went
// wrong in the user's terms (EXTENSIBILITY.md §4 "source forms"): an
// owner/repo-shaped source is GitHub's, and when no such repository can be
// fetched the error says how it was read and how to name a folder; a
// broken manifest is reported at the folder the user gave, never at the
// server's temporary copy. And §4 "names": two active plugins never bring
// the same names, so of two trusted plugins that share a name one loads
// and the other is inactive with a warning naming both.
func TestE2EPluginSourceAndNames(t *testing.T) {
	t.Parallel()
	s, _ := githubServer(t)
	repo := threadsRepo(t)

	e := callErr(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: "plug/good"})
	if e.Code != "externalFailure" || !strings.Contains(e.Message, `"plug/good" was read as the GitHub repository plug/good`) || !strings.Contains(e.Message, "absolute path") {
		t.Errorf("a relative folder read as owner/repo: %+v", e)
	}

	broken := pluginFolder(t, map[string]string{".claude-plugin/plugin.json": `{"name": "broken",`, "commands/x.md": "X.\n"})
	e = callErr(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: broken})
	if e.Code != "invalidParams" || e.Field != "source" || !strings.Contains(e.Message, broken+"/ is not a valid plugin: .claude-plugin/plugin.json is not a valid plugin manifest") || strings.Contains(e.Message, filepath.Join("plugins", "tmp")) {
		t.Errorf("a broken manifest: %+v, want it named at %s", e, broken)
	}

	one := pluginFolder(t, pluginFiles("1.0.0", "One.\n"))
	two := pluginFolder(t, pluginFiles("2.0.0", "Two.\n"))
	for _, dir := range []string{one, two} {
		mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: dir, Trust: true})
	}
	first, second := rowOf(t, s, repo, "path:"+one, "global"), rowOf(t, s, repo, "path:"+two, "global")
	if first.Identity > second.Identity {
		first, second = second, first
	}
	if !first.Active || second.Active || !hasWarning(second.Warnings, first.Identity) || !hasWarning(first.Warnings, second.Identity) {
		t.Errorf("two trusted plugins named review-tools: %+v\n%+v\nwant the first active and the second not, each warning naming the other", first, second)
	}
	n := 0
	for _, c := range commandNames(t, s, protocol.CommandListParams{Cwd: repo}) {
		if c == "review-tools:check" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("command/list has review-tools:check %d times", n)
	}
}

// TestE2EPluginGrokBuild covers Grok Build's side of §4 "importable" and
// §5 "Known names", from a fake GROK_HOME: the marketplaces of its
// config.toml ([[marketplace.sources]], a git one and a folder one) are
// listed from:"grokBuild", and what its installed-plugins/registry.json
// lists is importable, enabled as its [plugins] lists say: a plugin from
// a known marketplace as name@marketplace (which installs it, adding the
// marketplace from Grok's recorded source), one installed from a folder as
// that folder's source. Entries and files knightcode cannot read are
// diagnostics; Grok's files are never written.
func TestE2EPluginGrokBuild(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	grok := filepath.Join(base, "grok-home")
	s := startEnvServer(t, "GROK_HOME="+grok)
	mkFiles := map[string]string{".grok-plugin/marketplace.json": `{"name":"team","owner":{"name":"Team"},"plugins":[{"name":"review-tools","source":{"type":"local","path":"./plugins/review"}}]}`}
	for p, c := range pluginFiles("1.0.0", "From Grok.\n") {
		mkFiles["plugins/review/"+p] = c
	}
	team := filepath.Join(base, "team.git")
	bareRepo(t, team, "", mkFiles)
	local := pluginFolder(t, map[string]string{".grok-plugin/marketplace.json": `{"name":"local-team","owner":{"name":"Me"},"plugins":[{"name":"notes","source":"./notes"}]}`,
		"notes/commands/n.md": "Note.\n"})
	lint := pluginFolder(t, map[string]string{".grok-plugin/plugin.json": `{"name":"lint-tools"}`, "commands/lint.md": "Lint.\n"})
	writeFile(t, grok, "config.toml", "[plugins]\nenabled = [\"user/0a1b/review-tools\", \"lint-tools\"]\ndisabled = [\"lint-tools\"]\n\n"+
		"[[marketplace.sources]]\nname = \"team\"\ngit = \"file://"+team+"\"\nbranch = \"main\"\n\n"+
		"[[marketplace.sources]]\nname = \"local-team\"\npath = \""+local+"\"\n\n"+
		"[[marketplace.sources]]\nname = \"Team Tools\"\npath = \""+local+"\"\n")
	registry := `{"version":1,"repos":{` +
		`"review-0a1b":{"kind":{"type":"Git","url":"file://` + team + `","commit":"deadbeef"},"path":"/x","plugins":{"review-tools":{"version":"1.0.0"}},` +
		`"marketplace":{"source_display_name":"team","plugin_subdir":"plugins/review"}},` +
		`"lint":{"kind":{"type":"Local","source_path":"` + lint + `"},"path":"/y","plugins":{"lint-tools":{}}},` +
		`"odd":{"kind":{"type":"Zip"},"path":"/z","plugins":{"odd":{}}}}}`
	writeFile(t, grok, "installed-plugins/registry.json", registry)

	l := mustCall(t, s, protocol.PluginList, protocol.PluginListParams{})
	want := []protocol.PluginImportable{
		{Name: "lint-tools", From: "grokBuild", Source: "path:" + lint},
		{Name: "review-tools@team", From: "grokBuild", Source: "git:file://" + team, Enabled: true},
	}
	if diff := cmp.Diff(want, l.Importable); diff != "" {
		t.Errorf("importable (-want +got):\n%s", diff)
	}
	if len(l.Diagnostics) != 2 || !strings.Contains(l.Diagnostics[0].Message, `Grok Build's marketplace "Team Tools"`) ||
		l.Diagnostics[0].Path != filepath.Join(grok, "config.toml") || !strings.Contains(l.Diagnostics[1].Message, `source kind "Zip" is not supported`) {
		t.Errorf("diagnostics %+v, want the Team Tools marketplace's and the Zip entry's", l.Diagnostics)
	}
	markets := map[string]protocol.PluginMarketplace{}
	for _, m := range mustCall(t, s, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{}).Marketplaces {
		markets[m.Name] = m
	}
	if m := markets["team"]; m.From != "grokBuild" || m.Added || !m.Missing || m.Source != "git:file://"+team || m.Ref != "main" {
		t.Errorf("Grok's git marketplace, never fetched here: %+v", m)
	}
	if m := markets["local-team"]; m.From != "grokBuild" || m.Missing || len(m.Plugins) != 1 || m.Plugins[0].Name != "notes" {
		t.Errorf("Grok's folder marketplace: %+v", m)
	}
	if m, ok := markets["Team Tools"]; ok {
		t.Errorf("a Grok marketplace whose name breaks the naming rule is listed: %+v", m)
	}

	inst := mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: "review-tools@team"})
	if inst.Plugin.Identity != "review-tools@team" || inst.Plugin.Source != "git:file://"+team+"#plugins/review" || !hasWarning(inst.Warnings, "marketplace team") {
		t.Errorf("install of Grok's plugin: %+v", inst)
	}
	// The row's source as plugin/list shows it ("path:/abs/dir") installs.
	mustCall(t, s, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: want[0].Source})
	if l := mustCall(t, s, protocol.PluginList, protocol.PluginListParams{}); len(l.Importable) != 0 {
		t.Errorf("importable after installing both: %+v", l.Importable)
	}
	if got := readFile(t, filepath.Join(grok, "installed-plugins"), "registry.json"); got != registry {
		t.Error("Grok Build's registry changed")
	}

	writeFile(t, grok, "installed-plugins/registry.json", `{"version":1,`)
	writeFile(t, grok, "config.toml", "[plugins\n")
	l = mustCall(t, s, protocol.PluginList, protocol.PluginListParams{})
	if len(l.Diagnostics) != 2 || !strings.Contains(l.Diagnostics[0].Message, "Grok Build's "+filepath.Join(grok, "config.toml")+" cannot be read") ||
		!strings.Contains(l.Diagnostics[1].Message, "Grok Build's installed plugins cannot be read") || l.Diagnostics[1].Path != filepath.Join(grok, "installed-plugins", "registry.json") {
		t.Errorf("a corrupt config.toml and registry.json: diagnostics %+v", l.Diagnostics)
	}
	writeFile(t, grok, "config.toml", "")
	writeFile(t, grok, "installed-plugins/registry.json", `{"version":2,"repos":{}}`)
	l = mustCall(t, s, protocol.PluginList, protocol.PluginListParams{})
	if len(l.Diagnostics) != 1 || !strings.Contains(l.Diagnostics[0].Message, "unknown format (version 2)") {
		t.Errorf("an unknown registry version: diagnostics %+v", l.Diagnostics)
	}
}
