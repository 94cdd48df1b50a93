package main

// End-to-end tests of the MCP server configuration methods over the built
// binary (spec: Method reference, "mcp/list, mcp/update, mcp/add and
// mcp/remove"; EXTENSIBILITY.md §2).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func TestE2EMCPConfig(t *testing.T) {
	env, home := testEnv(t)
	cmd := exec.Command(binary, "app-server")
	// ${TOKEN} is never expanded: its value must not show anywhere.
	cmd.Env = append(env, "TOKEN=token-value-never-shown")
	s, stderr := serveDiff(t, cmd, home)
	global := filepath.Join(home, "agent", "mcp.json")
	secrets := []string{"token-value-never-shown", "Bearer", "env-value-never-shown"}
	var answers []string // every raw answer, checked for secrets at the end
	call := func(method string, params any) (json.RawMessage, error) {
		t.Helper()
		var raw json.RawMessage
		err := s.call(t, method, params, &raw)
		answers = append(answers, string(raw))
		if err != nil {
			answers = append(answers, err.Error())
		}
		return raw, err
	}
	must := func(method string, params any, result any) {
		t.Helper()
		raw, err := call(method, params)
		if err != nil {
			t.Fatalf("%s %s: %v", method, mustJSON(params), err)
		}
		if result != nil {
			if err := json.Unmarshal(raw, result); err != nil {
				t.Fatal(err)
			}
		}
	}
	wantErr := func(method string, params any, want wireErr) {
		t.Helper()
		_, err := call(method, params)
		if diff := cmp.Diff(want, toWireErr(t, err)); diff != "" {
			t.Errorf("%s %s: error (-want +got):\n%s", method, mustJSON(params), diff)
		}
	}
	list := func(cwd string) protocol.McpListResult {
		t.Helper()
		var l protocol.McpListResult
		must(protocol.McpList.Name, protocol.McpListParams{Cwd: cwd}, &l)
		return l
	}
	add := func(scope, cwd, name, config string) bool {
		t.Helper()
		var r protocol.McpAddResult
		must(protocol.McpAdd.Name, protocol.McpAddParams{Scope: scope, Cwd: cwd, Name: name, Config: json.RawMessage(config)}, &r)
		return r.Replaced
	}

	// Nothing configured.
	l := list("")
	if mustJSON(l) != `{"servers":[],"errors":[],"paths":{"global":"`+global+`"}}` {
		t.Errorf("mcp/list of nothing: %s", mustJSON(l))
	}

	// Entries pasted from Claude Code's documentation, unchanged.
	if add("global", "", "fs", `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}`) {
		t.Error("a new server replaced one")
	}
	add("global", "", "docs", `{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`)
	add("global", "", "keyed", `{"command":"srv","env":{"API_KEY":"env-value-never-shown","OTHER":"${TOKEN}"},"description":"With a key"}`)
	if !add("global", "", "keyed", `{"command":"srv","args":["--port","8 0"],"env":{"API_KEY":"env-value-never-shown"},"description":"With a key"}`) {
		t.Error("replacing keyed did not say so")
	}
	l = list("")
	want := []protocol.McpServer{
		{Name: "docs", Scope: "global", Source: global, Transport: "http", Target: "https://example.com/mcp", Enabled: true, Exposure: "direct"},
		{Name: "fs", Scope: "global", Source: global, Transport: "stdio", Target: "npx -y @modelcontextprotocol/server-filesystem /tmp", Enabled: true, Exposure: "direct"},
		{Name: "keyed", Scope: "global", Source: global, Transport: "stdio", Target: "srv --port '8 0'", Description: "With a key", Enabled: true, Exposure: "direct"},
	}
	if diff := cmp.Diff(want, l.Servers); diff != "" || len(l.Errors) != 0 {
		t.Errorf("mcp/list (-want +got):\n%s\nerrors %v", diff, l.Errors)
	}
	// The file keeps ${TOKEN} as written, and is private to the user.
	if got := readText(t, global); !strings.Contains(got, `"Bearer ${TOKEN}"`) {
		t.Errorf("global file:\n%s", got)
	}
	if st, err := os.Stat(global); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("global file mode: %v %v", st, err)
	}

	// Refusals name the field.
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "global", Name: "a", Config: json.RawMessage(`{"command":"x","colour":"red"}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "config.colour"})
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "global", Name: "a", Config: json.RawMessage(`{"url":"https://x","headersHelper":"h"}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "config.headersHelper", Reason: "unsupported"})
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "global", Name: "a", Config: json.RawMessage(`{"enabled":false}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "config", Reason: "incomplete"})
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "global", Name: "a.b", Config: json.RawMessage(`{"command":"x"}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "name"})
	wantErr(protocol.McpAdd.Name, map[string]any{"scope": "global", "name": "a", "config": map[string]any{"command": "x"}, "extra": 1},
		wireErr{Code: protocol.CodeInvalidParams, Field: "extra"})
	wantErr(protocol.McpAdd.Name, map[string]any{"scope": "", "name": "a", "config": map[string]any{"command": "x"}},
		wireErr{Code: protocol.CodeInvalidParams, Field: "scope"})
	wantErr(protocol.McpRemove.Name, map[string]any{"scope": "global", "name": ""},
		wireErr{Code: protocol.CodeInvalidParams, Field: "name"})
	wantErr(protocol.McpUpdate.Name, map[string]any{"name": "fs", "exposure": ""},
		wireErr{Code: protocol.CodeInvalidParams, Field: "exposure"})
	wantErr(protocol.McpUpdate.Name, map[string]any{"name": "fs"},
		wireErr{Code: protocol.CodeInvalidParams})
	wantErr(protocol.McpUpdate.Name, map[string]any{"name": "nosuch", "enabled": true},
		wireErr{Code: protocol.CodeInvalidParams, Field: "name"})

	// An untrusted project: its file is neither read nor written.
	proj := plainDir(t)
	projFile := filepath.Join(proj, ".knightcode", "mcp.json")
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "project", Cwd: proj, Name: "local", Config: json.RawMessage(`{"url":"http://127.0.0.1:9/mcp"}`)},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "untrusted"})
	wantErr(protocol.McpRemove.Name, protocol.McpRemoveParams{Scope: "project", Cwd: proj, Name: "local"},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "untrusted"})
	if _, err := os.Stat(projFile); !os.IsNotExist(err) {
		t.Errorf("the untrusted project's file was written: %v", err)
	}
	writeFile(t, proj, ".knightcode/mcp.json", `{"mcpServers": {"sneaky": {"command": "evil"}}}`)
	if l = list(proj); len(l.Servers) != 3 || l.Paths.Project != projFile {
		t.Errorf("mcp/list of an untrusted project: %s", mustJSON(l))
	}

	// Trusted: a project server, a project override of a global one, and
	// auth refused in the project file.
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: proj, Trusted: true}, nil)
	add("project", proj, "local", `{"url":"http://127.0.0.1:9/mcp"}`)
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "project", Cwd: proj, Name: "signin", Config: json.RawMessage(`{"url":"https://x","auth":{"clientId":"c"}}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "config.auth", Reason: "projectAuth"})
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "project", Cwd: proj, Name: "nosuch", Config: json.RawMessage(`{"enabled":false}`)},
		wireErr{Code: protocol.CodeInvalidParams, Field: "config", Reason: "incomplete"})
	add("project", proj, "docs", `{"enabled":false}`)
	l = list(proj)
	wantDocs := protocol.McpServer{Name: "docs", Scope: "global", Source: global, Override: projFile, Transport: "http",
		Target: "https://example.com/mcp", Enabled: false, Exposure: "direct"}
	if len(l.Servers) != 5 || l.Servers[0] != wantDocs || l.Servers[3].Name != "local" || l.Servers[3].Scope != "project" || l.Servers[4].Name != "sneaky" {
		t.Errorf("mcp/list of the trusted project: %s", mustJSON(l))
	}
	// The update writes only the project override.
	globalBefore := readText(t, global)
	var up protocol.McpUpdateResult
	must(protocol.McpUpdate.Name, protocol.McpUpdateParams{Cwd: proj, Name: "docs", Enabled: new(true), Exposure: "search"}, &up)
	wantDocs.Enabled, wantDocs.Exposure = true, "search"
	if up.Server != wantDocs {
		t.Errorf("mcp/update: %s", mustJSON(up))
	}
	if readText(t, global) != globalBefore {
		t.Errorf("mcp/update of an override changed the global file")
	}
	if got := readText(t, projFile); !strings.Contains(got, `"docs": {`+"\n"+`      "enabled": true,`+"\n"+`      "exposure": "search"`) {
		t.Errorf("project file:\n%s", got)
	}
	// Without cwd, the global server updates in the global file.
	must(protocol.McpUpdate.Name, protocol.McpUpdateParams{Name: "fs", Enabled: new(false)}, &up)
	if up.Server.Enabled || up.Server.Source != global || !strings.Contains(readText(t, global), `"enabled": false`) {
		t.Errorf("mcp/update of fs: %s", mustJSON(up))
	}

	// Remove: idempotent.
	var rm protocol.McpRemoveResult
	for i, want := range []bool{true, false} {
		must(protocol.McpRemove.Name, protocol.McpRemoveParams{Scope: "project", Cwd: proj, Name: "local"}, &rm)
		if rm.Removed != want {
			t.Errorf("mcp/remove #%d: %v", i, rm.Removed)
		}
	}

	// A malformed file is an error of mcp/list, not a failed call, and a
	// write refuses it without touching it.
	corrupt := "{\"mcpServers\": {\n  \"x\": {\"command\": \"a\",}\n}}\n"
	writeFile(t, proj, ".knightcode/mcp.json", corrupt)
	l = list(proj)
	if len(l.Servers) != 3 || len(l.Errors) != 1 || l.Errors[0].Path != projFile || l.Errors[0].Line != 2 || l.Errors[0].Source != "settings" {
		t.Errorf("mcp/list with a malformed project file: %s", mustJSON(l))
	}
	wantErr(protocol.McpAdd.Name, protocol.McpAddParams{Scope: "project", Cwd: proj, Name: "y", Config: json.RawMessage(`{"command":"b"}`)},
		wireErr{Code: protocol.CodeInternal})
	if readText(t, projFile) != corrupt {
		t.Errorf("the malformed file was changed")
	}

	// No secret in any answer or in the log.
	for _, secret := range secrets {
		for _, a := range answers {
			if strings.Contains(a, secret) {
				t.Errorf("an answer shows %q: %s", secret, a)
			}
		}
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
}
