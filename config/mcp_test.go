package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func (e *settingsEnv) mcpList(t *testing.T, cwd string) *MCPList {
	t.Helper()
	l, err := e.store.MCPList(ctx, cwd)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func messages(ws []Warning) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.Message)
	}
	return out
}

func TestMCPListRowsAndTargets(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	// Entries pasted from Claude Code's documentation, and one of each kind.
	writeFile(t, e.store.MCPGlobalPath(), `{"other": 1, "mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/my dir", "it's"],
         "env": {"FS_TOKEN": "${FS_TOKEN}", "PLAIN": "hunter2"}},
  "docs": {"type": "http", "url": "https://user:pw@example.com/mcp", "headers": {"Authorization": "Bearer sekrit"},
           "description": "Team docs", "auth": {"clientId": "x"}},
  "old": {"type": "sse", "url": "https://legacy.example.com/sse", "enabled": false, "exposure": "search"},
  "stdio2": {"type": "stdio", "command": "/usr/bin/srv", "cwd": "/abs", "startupTimeoutSec": 30, "toolTimeoutSec": 600},
  "envurl": {"url": "${MCP_URL}"}
}}`)
	l := e.mcpList(t, "")
	g := e.store.MCPGlobalPath()
	want := []MCPServer{
		{Name: "docs", Scope: ScopeGlobal, Source: g, Transport: "http", Target: "https://user:xxxxx@example.com/mcp", Description: "Team docs", Enabled: true, Exposure: "direct"},
		{Name: "envurl", Scope: ScopeGlobal, Source: g, Transport: "http", Target: "${MCP_URL}", Enabled: true, Exposure: "direct"},
		{Name: "fs", Scope: ScopeGlobal, Source: g, Transport: "stdio",
			Target: `npx -y @modelcontextprotocol/server-filesystem '/tmp/my dir' "it's"`, Enabled: true, Exposure: "direct"},
		{Name: "old", Scope: ScopeGlobal, Source: g, Transport: "http", Target: "https://legacy.example.com/sse", Enabled: false, Exposure: "search"},
		{Name: "stdio2", Scope: ScopeGlobal, Source: g, Transport: "stdio", Target: "/usr/bin/srv", Enabled: true, Exposure: "direct"},
	}
	if diff := cmp.Diff(want, l.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if len(l.Errors) != 0 {
		t.Errorf("errors: %v", l.Errors)
	}
	b, _ := json.Marshal(l)
	for _, secret := range []string{"hunter2", "sekrit", ":pw@"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the list shows %q: %s", secret, b)
		}
	}
}

func TestMCPListBadEntriesAreErrors(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	writeFile(t, e.store.MCPGlobalPath(), `{"mcpServers": {
  "both": {"command": "a", "url": "https://x"},
  "neither": {"enabled": true},
  "badtype": {"type": "sse", "command": "a"},
  "ftp": {"url": "ftp://x/"},
  "rel": {"command": "a", "cwd": "rel"},
  "unknown": {"command": "a", "color": "red",
    "headersHelper": "print-headers"},
  "bad.name": {"command": "a"},
  "notobj": 3
}}`)
	l := e.mcpList(t, "")
	if got := len(l.Servers); got != 1 || l.Servers[0].Name != "unknown" {
		t.Fatalf("servers %v, want only unknown (loaded without its unknown keys)", l.Servers)
	}
	want := []string{
		"MCP server both: has both command and url: give one (server not loaded)",
		"MCP server neither: needs command or url (server not loaded)",
		`MCP server badtype: type "sse" does not take command (stdio does) (server not loaded)`,
		"MCP server ftp: url must be an http or https URL (server not loaded)",
		`MCP server rel: cwd must be an absolute path in the global file, got "rel" (server not loaded)`,
		"MCP server unknown: color is not a key of an mcpServers entry (ignored)",
		"MCP server unknown: headersHelper is not supported (a command that prints headers): set headers (ignored)",
		`MCP server "bad.name" (ignored): a name is a letter or digit, then up to 63 letters, digits, _ or -`,
		"MCP server notobj (ignored): the entry is not an object",
	}
	if diff := cmp.Diff(want, messages(l.Errors)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	// Each problem points at its key: "color" is on line 7, column 31.
	for _, w := range l.Errors {
		if strings.Contains(w.Message, "color") && (w.Line != 7 || w.Column != 31) {
			t.Errorf("color warning at %d:%d, want 7:31", w.Line, w.Column)
		}
		if w.Path != e.store.MCPGlobalPath() || w.Source != WarningSourceSettings {
			t.Errorf("warning %+v", w)
		}
	}
}

func TestMCPListMalformedFileIsAnError(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	writeFile(t, e.store.MCPGlobalPath(), "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}")
	l := e.mcpList(t, "")
	if len(l.Servers) != 0 || len(l.Errors) != 1 || l.Errors[0].Line != 2 {
		t.Fatalf("list %+v", l)
	}
	if !strings.HasPrefix(l.Errors[0].Message, "malformed MCP servers file (ignored)") {
		t.Errorf("message %q", l.Errors[0].Message)
	}
	// A write refuses the file and leaves it as it is.
	before, _ := os.ReadFile(e.store.MCPGlobalPath())
	_, err := e.store.MCPAdd(ctx, MCPAddRequest{Scope: ScopeGlobal, Name: "b", Config: json.RawMessage(`{"command":"y"}`)})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("err %v, want a CorruptError at line 2", err)
	}
	after, _ := os.ReadFile(e.store.MCPGlobalPath())
	if string(before) != string(after) {
		t.Errorf("the corrupt file was changed")
	}
}

func TestMCPProjectOverridesAndTrust(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	writeFile(t, e.store.MCPGlobalPath(), `{"mcpServers": {
  "docs": {"url": "https://example.com/mcp", "description": "global docs"},
  "fs": {"command": "global-fs"}
}}`)
	pp := MCPProjectPath(e.project)
	writeFile(t, pp, `{"mcpServers": {
  "docs": {"enabled": false, "exposure": "search", "disabledTools": ["x"]},
  "fs": {"command": "project-fs", "cwd": "sub", "auth": {"clientId": "c"}},
  "ghost": {"enabled": true},
  "local": {"url": "http://127.0.0.1:9/mcp"}
}}`)
	g := e.store.MCPGlobalPath()

	// Undecided: the project file is not read.
	l := e.mcpList(t, e.project)
	if len(l.Servers) != 2 || l.Servers[0].Override != "" || l.Servers[1].Target != "global-fs" || len(l.Errors) != 0 {
		t.Fatalf("untrusted list %+v", l)
	}
	if l.Paths != (Paths{Global: g, Project: pp}) {
		t.Errorf("paths %+v", l.Paths)
	}

	e.setTrust(t, true)
	l = e.mcpList(t, e.project)
	want := []MCPServer{
		{Name: "docs", Scope: ScopeGlobal, Source: g, Override: pp, Transport: "http", Target: "https://example.com/mcp",
			Description: "global docs", Enabled: false, Exposure: "search"},
		{Name: "fs", Scope: ScopeProject, Source: pp, Transport: "stdio", Target: "project-fs", Enabled: true, Exposure: "direct"},
		{Name: "local", Scope: ScopeProject, Source: pp, Transport: "http", Target: "http://127.0.0.1:9/mcp", Enabled: true, Exposure: "direct"},
	}
	if diff := cmp.Diff(want, l.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	wantErrs := []string{"MCP server fs: auth is read only from the global file (ignored)", "override for unknown server ghost"}
	if diff := cmp.Diff(wantErrs, messages(l.Errors)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestMCPAddRefusals(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	e.setTrust(t, true)
	other := newSettingsEnv(t) // an undecided project
	cases := []struct {
		scope        Scope
		cwd, name    string
		config       string
		field, reson string
	}{
		{ScopeGlobal, "", "a", `{"command": "x", "colour": 1}`, "config.colour", ""},
		{ScopeGlobal, "", "a", `{"command": "x", "headersHelper": "h"}`, "config.headersHelper", ReasonUnsupported},
		{ScopeGlobal, "", "a", `{"command": "x", "args": "-y"}`, "config.args", ""},
		{ScopeGlobal, "", "a", `{"command": "x", "env": {"A": 1}}`, "config.env", ""},
		{ScopeGlobal, "", "a", `{"command": "x", "cwd": "rel"}`, "config.cwd", ""},
		{ScopeGlobal, "", "a", `{"command": ""}`, "config.command", ""},
		{ScopeGlobal, "", "a", `{"url": "file:///etc/passwd"}`, "config.url", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "headers": ["a"]}`, "config.headers", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "type": "stdio"}`, "config.type", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "enabled": "yes"}`, "config.enabled", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "exposure": "all"}`, "config.exposure", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "startupTimeoutSec": 0}`, "config.startupTimeoutSec", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "description": 3}`, "config.description", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "command": "y"}`, "config", ""},
		{ScopeGlobal, "", "a", `{"enabled": false}`, "config", ReasonIncomplete},
		{ScopeGlobal, "", "a", `{}`, "config", ReasonIncomplete},
		{ScopeGlobal, "", "a", `[1]`, "config", ""},
		{ScopeGlobal, "", "a", `"x"`, "config", ""},
		{ScopeGlobal, "", "a.b", `{"command": "x"}`, "name", ""},
		{ScopeGlobal, "", "", `{"command": "x"}`, "name", ""},
		{ScopeGlobal, "", strings.Repeat("a", 65), `{"command": "x"}`, "name", ""},
		{ScopeGlobal, "", "a", `{"command": "x", "env": {"A=B": "1"}}`, "config.env", ""},
		{ScopeGlobal, "", "a", `{"command": "x", "args": ["a\u0000b"]}`, "config.args", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "headers": {"X Y": "1"}}`, "config.headers", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "headers": {"X": "1\r\nEvil: 2"}}`, "config.headers", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "auth": {"clientId": "c", "redirectPort": 70000}}`, "config.auth.redirectPort", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "auth": {"clientID": "c"}}`, "config.auth.clientID", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "oauth": {"authServerMetadataUrl": "http://x/meta"}}`, "config.oauth.authServerMetadataUrl", ""},
		{ScopeGlobal, "", "a", `{"url": "https://x", "auth": "token"}`, "config.auth", ""},
		{"both", "", "a", `{"command": "x"}`, "scope", ""},
		{ScopeProject, "", "a", `{"command": "x"}`, "cwd", ""},
		{ScopeProject, e.project, "a", `{"url": "https://x", "auth": {"clientId": "c"}}`, "config.auth", ReasonProjectAuth},
		{ScopeProject, e.project, "a", `{"url": "https://x", "oauth": {"clientId": "c"}}`, "config.oauth", ReasonProjectAuth},
		{ScopeProject, e.project, "nosuch", `{"enabled": false}`, "config", ReasonIncomplete},
		{ScopeProject, other.project, "a", `{"command": "x"}`, "", ReasonUntrusted},
	}
	for _, c := range cases {
		_, err := e.store.MCPAdd(ctx, MCPAddRequest{Scope: c.scope, Cwd: c.cwd, Name: c.name, Config: json.RawMessage(c.config)})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Field != c.field || pe.Reason != c.reson {
			t.Errorf("add %s %s %s: err %#v, want field %q reason %q", c.scope, c.name, c.config, err, c.field, c.reson)
		}
		if err != nil && strings.Contains(err.Error(), "Evil") {
			t.Errorf("the refusal quotes a header value: %v", err)
		}
	}
	for _, p := range []string{e.store.MCPGlobalPath(), MCPProjectPath(e.project), MCPProjectPath(other.project)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written (%v)", p, err)
		}
	}
}

func TestMCPAddUpdateRemove(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	e.setTrust(t, true)
	g, pp := e.store.MCPGlobalPath(), MCPProjectPath(e.project)
	writeFile(t, g, "{\"keep\": [1, 2], \"mcpServers\": {\"z\": {\"command\": \"z\"}}}\n")
	add := func(scope Scope, cwd, name, cfg string) bool {
		t.Helper()
		replaced, err := e.store.MCPAdd(ctx, MCPAddRequest{Scope: scope, Cwd: cwd, Name: name, Config: json.RawMessage(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		return replaced
	}
	if add(ScopeGlobal, "", "docs", `{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`) {
		t.Error("a new entry replaced one")
	}
	// Claude Code's oauth spelling, and auth, in the global file.
	add(ScopeGlobal, "", "signin", `{"type":"http","url":"https://s.example/mcp","oauth":{"clientId":"c","callbackPort":8080,"scopes":"read write","authServerMetadataUrl":"https://s.example/.well-known/oauth-authorization-server"}}`)
	add(ScopeGlobal, "", "signin2", `{"url":"https://s.example/mcp","auth":{"clientId":"c","clientSecret":"${S}","scopes":["read"],"redirectPort":0}}`)
	for _, n := range []string{"signin", "signin2"} {
		if removed, err := e.store.MCPRemove(ctx, ScopeGlobal, "", n); err != nil || !removed {
			t.Fatalf("remove %s: %v %v", n, removed, err)
		}
	}
	if !add(ScopeGlobal, "", "z", `{"command":"z2","args":["a"]}`) {
		t.Error("replacing z did not say so")
	}
	got, _ := os.ReadFile(g)
	want := `{
  "keep": [
    1,
    2
  ],
  "mcpServers": {
    "z": {
      "command": "z2",
      "args": [
        "a"
      ]
    },
    "docs": {
      "type": "http",
      "url": "https://example.com/mcp",
      "headers": {
        "Authorization": "Bearer ${TOKEN}"
      }
    }
  }
}
`
	if string(got) != want {
		t.Errorf("global file:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(g); st.Mode().Perm() != 0o600 {
		t.Errorf("global file mode %v, want 0600", st.Mode().Perm())
	}

	// An update of a global server without an override writes the global file.
	r, err := e.store.MCPUpdate(ctx, MCPUpdateRequest{Cwd: e.project, Name: "docs", Enabled: new(false)})
	if err != nil || r.Enabled || r.Scope != ScopeGlobal || r.Override != "" {
		t.Fatalf("update: %+v %v", r, err)
	}
	if _, err := os.Stat(pp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the update made a project file")
	}
	// A project override, then an update writes only the project file.
	if add(ScopeProject, e.project, "docs", `{"enabled": true}`) {
		t.Error("a new override replaced one")
	}
	globalBefore, _ := os.ReadFile(g)
	r, err = e.store.MCPUpdate(ctx, MCPUpdateRequest{Cwd: e.project, Name: "docs", Exposure: new(MCPExposureSearch)})
	if err != nil {
		t.Fatal(err)
	}
	wantRow := MCPServer{Name: "docs", Scope: ScopeGlobal, Source: g, Override: pp, Transport: "http", Target: "https://example.com/mcp",
		Enabled: true, Exposure: "search"}
	if diff := cmp.Diff(wantRow, r); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
	if globalAfter, _ := os.ReadFile(g); string(globalAfter) != string(globalBefore) {
		t.Errorf("the override's update changed the global file")
	}
	if p, _ := os.ReadFile(pp); string(p) != "{\n  \"mcpServers\": {\n    \"docs\": {\n      \"enabled\": true,\n      \"exposure\": \"search\"\n    }\n  }\n}\n" {
		t.Errorf("project file:\n%s", p)
	}
	// Update refusals.
	for _, c := range []struct {
		req   MCPUpdateRequest
		field string
	}{
		{MCPUpdateRequest{Name: "docs"}, ""},
		{MCPUpdateRequest{Name: "nosuch", Enabled: new(true)}, "name"},
		{MCPUpdateRequest{Name: "docs", Exposure: new("all")}, "exposure"},
	} {
		var pe *ParamError
		if _, err := e.store.MCPUpdate(ctx, c.req); !errors.As(err, &pe) || pe.Field != c.field {
			t.Errorf("update %+v: %v, want field %q", c.req, err, c.field)
		}
	}

	// Removing the global server leaves the override, now an orphan.
	for i, want := range []bool{true, false} {
		removed, err := e.store.MCPRemove(ctx, ScopeGlobal, "", "docs")
		if err != nil || removed != want {
			t.Fatalf("remove #%d: %v %v", i, removed, err)
		}
	}
	l := e.mcpList(t, e.project)
	if len(l.Servers) != 1 || l.Servers[0].Name != "z" {
		t.Errorf("servers %+v", l.Servers)
	}
	if diff := cmp.Diff([]string{"override for unknown server docs"}, messages(l.Errors)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	removed, err := e.store.MCPRemove(ctx, ScopeProject, e.project, "docs")
	if err != nil || !removed {
		t.Fatalf("remove override: %v %v", removed, err)
	}
	// Removing from an absent file creates nothing.
	fresh := newSettingsEnv(t)
	if removed, err := fresh.store.MCPRemove(ctx, ScopeGlobal, "", "a"); err != nil || removed {
		t.Fatalf("remove from no file: %v %v", removed, err)
	}
	if _, err := os.Stat(fresh.store.MCPGlobalPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("remove made a file")
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for argv, want := range map[string]string{
		"npx\x00-y\x00@scope/pkg@1.2":   "npx -y @scope/pkg@1.2",
		"a b\x00":                       "'a b' ''",
		"echo\x00${TOKEN}\x00$(rm -rf)": `echo '${TOKEN}' '$(rm -rf)'`,
		"it's":                          `"it's"`,
		"k=v,x:y%z+1":                   "'k=v,x:y%z+1'",
	} {
		if got := shellQuote(strings.Split(argv, "\x00")); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", argv, got, want)
		}
	}
}

func TestMCPServersNotAnObject(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	content := `{"mcpServers": ["fs"]}`
	writeFile(t, e.store.MCPGlobalPath(), content)
	l := e.mcpList(t, "")
	if len(l.Servers) != 0 || len(l.Errors) != 1 || !strings.Contains(l.Errors[0].Message, `"mcpServers" is not an object`) {
		t.Fatalf("list %+v", l)
	}
	for _, write := range []func() error{
		func() error {
			_, err := e.store.MCPAdd(ctx, MCPAddRequest{Scope: ScopeGlobal, Name: "a", Config: json.RawMessage(`{"command":"x"}`)})
			return err
		},
		func() error { _, err := e.store.MCPRemove(ctx, ScopeGlobal, "", "fs"); return err },
	} {
		var ce *CorruptError
		if err := write(); !errors.As(err, &ce) {
			t.Errorf("write: %v, want a CorruptError", err)
		}
	}
	if got, _ := os.ReadFile(e.store.MCPGlobalPath()); string(got) != content {
		t.Errorf("the file was changed: %s", got)
	}
}

func TestMCPConcurrentAddsKeepEveryEntry(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			// Two stores of one agent directory, as two managers would be.
			s := e.store
			if i%2 == 1 {
				s = NewStore(e.agent, e.trust)
			}
			if _, err := s.MCPAdd(ctx, MCPAddRequest{Scope: ScopeGlobal, Name: fmt.Sprintf("s%d", i), Config: json.RawMessage(`{"command":"x"}`)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if l := e.mcpList(t, ""); len(l.Servers) != 12 {
		t.Errorf("%d servers after 12 concurrent adds: %+v", len(l.Servers), l.Servers)
	}
}
