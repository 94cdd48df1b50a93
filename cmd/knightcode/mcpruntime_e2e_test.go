package main

// End-to-end tests of the MCP runtime (issue 27, EXTENSIBILITY.md §2
// "Runtime"): threads of the binary connect to fixture MCP servers built
// from testdata/mcpserver, in the background; the scripted model calls
// their tools.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/mcp"
	"github.com/knightcode/knightcode/rpc/protocol"
)

var (
	mcpFixtureOnce sync.Once
	mcpFixturePath string
	mcpFixtureErr  error
)

// mcpFixture builds testdata/mcpserver once, beside the binary.
func mcpFixture(t *testing.T) string {
	t.Helper()
	mcpFixtureOnce.Do(func() {
		mcpFixturePath = filepath.Join(filepath.Dir(binary), "mcpserver")
		out, err := exec.Command("go", "build", "-o", mcpFixturePath, "../../testdata/mcpserver").CombinedOutput()
		if err != nil {
			mcpFixtureErr = err
			t.Logf("%s", out)
		}
	})
	if mcpFixtureErr != nil {
		t.Fatalf("building the fixture MCP server: %v", mcpFixtureErr)
	}
	return mcpFixturePath
}

// mcpEnv is a server whose global mcp.json runs fixture servers writing
// their records in dir.
type mcpEnv struct {
	*diffServer
	dir string
}

// fixtureEntry is an mcpServers entry running the fixture as name.
func fixtureEntry(t *testing.T, dir, name string, extra map[string]any, flags ...string) map[string]any {
	e := map[string]any{"command": mcpFixture(t), "args": append([]string{"-name", name, "-dir", dir}, flags...)}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// startMCPServer starts the binary with scripts and the MCP servers
// entries(dir) as its global mcp.json.
func startMCPServer(t *testing.T, scripts map[string]string, entries func(dir string) map[string]any) *mcpEnv {
	t.Helper()
	return startMCPServerMode(t, "", scripts, entries)
}

// startMCPServerMode is startMCPServer initializing with
// capabilities.mode mode (none when "").
func startMCPServerMode(t *testing.T, mode string, scripts map[string]string, entries func(dir string) map[string]any) *mcpEnv {
	t.Helper()
	return launchMCPMode(t, mode, func(home string) { writeScripts(t, home, scripts) }, entries, "SECRET_API_KEY=s3cret")
}

// launchMCP starts the binary with the models models writes into its
// home, the MCP servers entries(dir) as its global mcp.json and the
// environment entries env.
func launchMCP(t *testing.T, models func(home string), entries func(dir string) map[string]any, env ...string) *mcpEnv {
	t.Helper()
	return launchMCPMode(t, "", models, entries, env...)
}

// launchMCPMode is launchMCP initializing with capabilities.mode mode
// (none when "").
func launchMCPMode(t *testing.T, mode string, models func(home string), entries func(dir string) map[string]any, env ...string) *mcpEnv {
	t.Helper()
	base, home := testEnv(t)
	dir := t.TempDir()
	models(home)
	b, _ := json.Marshal(map[string]any{"mcpServers": entries(dir)})
	writeAgentFile(t, home, "mcp.json", b)
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(base, env...)
	s, _ := serveDiffMode(t, cmd, home, mode)
	return &mcpEnv{diffServer: s, dir: dir}
}

// waitTools waits until tool/list {threadId} has every tool of want as an
// mcp row and returns the rows ("name:source:server").
func (e *mcpEnv) waitTools(t *testing.T, thread string, want ...string) []string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tl := mustCall(t, e.diffServer, protocol.ToolList, protocol.ToolListParams{ThreadID: thread})
		var rows []string
		for _, r := range tl.Tools {
			rows = append(rows, r.Name+":"+r.Source+":"+r.Server)
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(rows, w+":mcp:"+strings.Split(w, "__")[1]) }) {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool/list {threadId} lacks %v: %v", want, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recorded waits for the fixture's record file name.
func (e *mcpEnv) recorded(t *testing.T, name string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(filepath.Join(e.dir, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture did not record %s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fixturePids are the pids the fixture servers named by prefix recorded
// (their grandchildren included).
func fixturePids(t *testing.T, dir, prefix string) []int {
	return proctest.PIDFiles(t, filepath.Join(dir, prefix+"*.pid"))
}

// waitGone waits up to limit until none of pids runs.
func waitGone(t *testing.T, what string, pids []int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		left := slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return !proctest.Running(p) })
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes %v still run after %v", what, left, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestE2EMCPToolCallAndStall: a thread whose servers are a working one and
// one that never answers initialize starts at once; the model calls the
// working server's tool and reads its result; the stalled one ends as a
// warning after its startupTimeoutSec and its processes are gone; the
// server's environment holds no API key; archiving the thread ends the
// working server (a SIGTERM-ignoring one with a grandchild).
func TestE2EMCPToolCallAndStall(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__fs__echo", map[string]any{"text": "hi"}), call("c2", "mcp__fs__fail", map[string]any{})),
		map[string]any{"text": "done"},
	)}, func(dir string) map[string]any {
		return map[string]any{
			"fs":    fixtureEntry(t, dir, "fs", nil, "-ignore-term", "-grandchild"),
			"stall": fixtureEntry(t, dir, "stall", map[string]any{"startupTimeoutSec": 2}, "-stall", "-grandchild"),
		}
	})
	repo := threadsRepo(t)
	begin := time.Now()
	started := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	if d := time.Since(begin); d > time.Second {
		t.Errorf("thread/start took %v with a stalled MCP server", d)
	}
	thread := started.Thread.ID
	e.waitTools(t, thread, "mcp__fs__echo", "mcp__fs__read_file")
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	items := map[string]protocol.Item{}
	for _, it := range completedItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		items[it.ID] = it
	}
	if it := items["c1"]; it.Status != protocol.ToolCompleted || it.Output == nil || *it.Output != "echo: hi" {
		t.Errorf("c1 ended %s with %v", it.Status, it.Output)
	}
	if it := items["c2"]; it.Status != protocol.ToolFailed {
		t.Errorf("c2 (isError) ended %s", it.Status)
	}

	mark := 0
	raw := e.waitNote(t, &mark, protocol.WarningNotification.Name, func(r json.RawMessage) bool {
		return strings.Contains(string(r), "stall: did not connect within 2s")
	})
	w := decode[protocol.WarningParams](t, raw)
	if w.ThreadID != thread || w.Source != protocol.WarningSourceExtension || !strings.HasSuffix(w.Path, "mcp.json") {
		t.Errorf("stall warning %+v", w)
	}
	waitGone(t, "the stalled server", fixturePids(t, e.dir, "stall-"), 5*time.Second)
	if b, _ := os.ReadFile(filepath.Join(e.dir, "fs-env")); strings.Contains(string(b), "s3cret") || strings.Contains(string(b), "KNIGHTCODE_") {
		t.Errorf("the MCP server got the app-server's environment:\n%s", b)
	}

	fs := fixturePids(t, e.dir, "fs-")
	if len(fs) != 2 {
		t.Fatalf("fs pids %v", fs)
	}
	mustCall(t, e.diffServer, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
	waitGone(t, "fs after thread/archive", fs, 6*time.Second)
}

// TestE2EMCPApprovalsAndSearch: in ask mode a tool without readOnlyHint
// asks naming mcp__fs__write_file and a read-only one does not; through a
// search server's mcp tool, search does not ask, call asks as the real
// tool with its arguments, and a disabledTools tool answers unknown tool.
func TestE2EMCPApprovalsAndSearch(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__fs__write_file", map[string]any{"path": "a"}),
			call("c2", "mcp__fs__read_file", map[string]any{"path": "b"}),
			call("c3", "mcp", map[string]any{"action": "search", "query": "file"}),
			call("c4", "mcp", map[string]any{"action": "call", "server": "srch", "tool": "write_file", "arguments": map[string]any{"path": "c"}}),
			call("c5", "mcp", map[string]any{"action": "call", "server": "srch", "tool": "fail"})),
		map[string]any{"text": "done"},
	)}, func(dir string) map[string]any {
		return map[string]any{
			"fs":   fixtureEntry(t, dir, "fs", nil),
			"srch": fixtureEntry(t, dir, "srch", map[string]any{"exposure": "search", "disabledTools": []string{"fail"}}),
		}
	})
	var mu sync.Mutex
	var asked []string
	client.Answer(e.c, protocol.ItemToolCallRequestApproval, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		mu.Lock()
		asked = append(asked, p.ItemID+"="+p.Tool+" "+string(p.Input))
		mu.Unlock()
		return protocol.ItemToolCallRequestApprovalResult{Decision: protocol.DecisionAccept}, nil
	})
	repo := threadsRepo(t)
	started := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalAsk,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	thread := started.Thread.ID
	rows := e.waitTools(t, thread, "mcp__fs__write_file")
	for !slices.Contains(rows, "mcp:mcp:") {
		rows = e.waitTools(t, thread, "mcp__fs__write_file")
	}
	if slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "mcp__srch__") }) {
		t.Errorf("a search server's tools are model tools: %v", rows)
	}
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	items := map[string]protocol.Item{}
	for _, it := range completedItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		items[it.ID] = it
	}
	mu.Lock()
	slices.Sort(asked)
	want := []string{`c1=mcp__fs__write_file {"path":"a"}`, `c4=mcp__srch__write_file {"path":"c"}`}
	if !slices.Equal(asked, want) {
		t.Errorf("approvals asked %q, want %q", asked, want)
	}
	mu.Unlock()
	for id, out := range map[string]string{"c1": "wrote a", "c2": "contents of b", "c4": "wrote c"} {
		if it := items[id]; it.Status != protocol.ToolCompleted || it.Output == nil || *it.Output != out {
			t.Errorf("%s ended %s with %v, want %q", id, it.Status, it.Output, out)
		}
	}
	if it := items["c3"]; it.Output == nil || !strings.Contains(*it.Output, "server srch, tool read_file") {
		t.Errorf("search answered %v", it.Output)
	}
	if it := items["c5"]; it.Status != protocol.ToolFailed || it.Output == nil || !strings.Contains(*it.Output, "unknown tool") {
		t.Errorf("a call of a disabled tool ended %s with %v", it.Status, it.Output)
	}
}

// TestE2EMCPInterruptAndExit: turn/interrupt cancels a running MCP call
// (the server records notifications/cancelled), and when the app-server
// exits no server process is left (one ignoring SIGTERM, and its
// grandchild).
func TestE2EMCPInterruptAndExit(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__fs__slow", map[string]any{})),
		map[string]any{"text": "done"},
	)}, func(dir string) map[string]any {
		return map[string]any{"fs": fixtureEntry(t, dir, "fs", nil, "-ignore-term", "-grandchild")}
	})
	repo := threadsRepo(t)
	started := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	thread := started.Thread.ID
	e.waitTools(t, thread, "mcp__fs__slow")
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	e.recorded(t, "fs-started-slow", 10*time.Second)
	mustCall(t, e.diffServer, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: thread})
	e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	e.recorded(t, "fs-cancelled", 5*time.Second)

	pids := fixturePids(t, e.dir, "fs-")
	if len(pids) != 2 {
		t.Fatalf("fs pids %v", pids)
	}
	begin := time.Now()
	if err := e.c.Close(); err != nil {
		t.Errorf("server exit: %v", err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("the app-server took %v to exit", d)
	}
	waitGone(t, "the MCP server after the app-server's exit", pids, time.Second)
}

// TestE2EPluginMCPServers: a trusted plugin's MCP server (its .mcp.json)
// runs in a new thread under its runtime name <plugin>_<server>, its
// tools in tool/list {threadId}; an installed but untrusted plugin's
// server never starts; archiving the thread ends the plugin's server.
func TestE2EPluginMCPServers(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, nil, func(string) map[string]any { return map[string]any{} })
	plugin := func(name string) string {
		mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fx": map[string]any{
			"command": mcpFixture(t), "args": []string{"-name", name, "-dir", e.dir}}}})
		return pluginFolder(t, map[string]string{
			".claude-plugin/plugin.json": `{"name":"` + name + `","version":"1.0.0"}`,
			".mcp.json":                  string(mcpJSON),
		})
	}
	mustCall(t, e.diffServer, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: plugin("fxp"), Trust: true})
	mustCall(t, e.diffServer, protocol.PluginInstall, protocol.PluginInstallParams{Scope: "global", Source: plugin("fxu")})
	thread := e.startThread(t, threadsRepo(t), "")
	rows := e.waitTools(t, thread, "mcp__fxp_fx__echo")
	if slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, "fxu") }) {
		t.Errorf("an untrusted plugin's server has tools in the thread: %q", rows)
	}
	if pids := fixturePids(t, e.dir, "fxu"); len(pids) != 0 {
		t.Errorf("an untrusted plugin's server started: %v", pids)
	}
	pids := fixturePids(t, e.dir, "fxp")
	if len(pids) == 0 {
		t.Fatal("the trusted plugin's server wrote no pid file")
	}
	mustCall(t, e.diffServer, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
	waitGone(t, "after thread/archive", pids, 6*time.Second)
}

// TestE2EMCPToolNamesAndCollision: a tool whose model name would pass 64
// characters is named at exactly 64, keeping its readable tail, and the
// model calls it by that name; two servers whose tools map to one model
// name (a's b__echo and a__b's echo: mcp__a__b__echo) give it to the
// server first in mcp.json, never by connect order, and the other's tool
// is refused with a warning naming both.
func TestE2EMCPToolNamesAndCollision(t *testing.T) {
	t.Parallel()
	long := mcp.ToolName("a", strings.Repeat("x", 60)+"_long_tail")
	e := startMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__a__b__echo", map[string]any{}), call("c2", long, map[string]any{})),
		map[string]any{"text": "done"},
	)}, func(dir string) map[string]any {
		return map[string]any{
			"a":    fixtureEntry(t, dir, "a", nil, "-extra", "b__echo", "-long", "-sleep", "500ms"),
			"a__b": fixtureEntry(t, dir, "a__b", nil),
		}
	})
	if len(long) != mcp.MaxToolName || !strings.HasSuffix(long, "_long_tail") || !strings.HasPrefix(long, "mcp__a__") {
		t.Errorf("the long tool's model name %q (%d characters)", long, len(long))
	}
	from := e.mark()
	started := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	thread := started.Thread.ID
	// waitTools reads the server from the name: a's tools (a's
	// registration goes tool by tool), then a__b's.
	rows := e.waitTools(t, thread, "mcp__a__b__echo", "mcp__a__read_file", long)
	if !slices.Contains(rows, "mcp__a__b__read_file:mcp:a__b") {
		t.Errorf("tool/list {threadId} lacks a__b's read_file: %q", rows)
	}
	if n := len(slices.DeleteFunc(rows, func(r string) bool { return !strings.HasPrefix(r, "mcp__a__b__echo:") })); n != 1 {
		t.Errorf("mcp__a__b__echo listed %d times", n)
	}
	collision := func(msg string) bool {
		return strings.Contains(msg, "a__b: tool echo is not given to the model") && strings.Contains(msg, "tool b__echo of MCP server a")
	}
	warned := slices.ContainsFunc(started.Warnings, func(w protocol.Warning) bool { return collision(w.Message) })
	turnFrom := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	items := map[string]protocol.Item{}
	for _, it := range completedItems(t, e.threadNotes(t, turnFrom, thread, protocol.TurnCompletedNotification.Name)) {
		items[it.ID] = it
	}
	for id, want := range map[string]string{"c1": "extra", "c2": "long"} {
		if it := items[id]; it.Status != protocol.ToolCompleted || it.Output == nil || *it.Output != want {
			t.Errorf("%s ended %s with %v, want %q", id, it.Status, it.Output, want)
		}
	}
	for _, n := range e.notesFrom(from, thread) {
		if n.Method == protocol.WarningNotification.Name && collision(decode[protocol.WarningParams](t, n.Params).Message) {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning named both colliding tools")
	}
}

// TestE2EMCPServerEndsWhenItsThreadCannotUnload: an extension's input
// handler that never settles keeps its thread from unloading before the
// shutdown deadline; the thread's stdio MCP server (deaf to EOF and
// SIGTERM) is still killed as the app-server exits, not left running.
func TestE2EMCPServerEndsWhenItsThreadCannotUnload(t *testing.T) {
	t.Parallel()
	env, home := testEnv(t)
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": fixtureEntry(t, dir, "fs", nil, "-ignore-eof", "-ignore-term")}})
	writeAgentFile(t, home, "mcp.json", b)
	hang := filepath.Join(t.TempDir(), "hang.ts")
	if err := os.WriteFile(hang, []byte(`export default function (pi: any) { pi.on("input", () => new Promise(() => {})); }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "app-server", "-e", hang)
	cmd.Env = env
	c, stderr := launch(t, cmd)
	initialize(t, c)
	s := record(c, home)
	thread := s.startThread(t, threadsRepo(t), "")
	(&mcpEnv{diffServer: s, dir: dir}).waitTools(t, thread, "mcp__fs__echo")
	pids := fixturePids(t, dir, "fs")
	go func() { // never answered: its input handler never settles
		_ = s.call(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "hello"}, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Errorf("server exit: %v", err)
	}
	waitGone(t, "after the app-server exited", pids, 3*time.Second)
	if !strings.Contains(stderr.String(), "MCP servers of threads that did not unload were killed") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
