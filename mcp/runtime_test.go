package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/threads/ext"
)

// fixture is the MCP server of testdata/mcpserver, built by TestMain.
var fixture string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixture = filepath.Join(dir, "mcpserver")
	build := exec.Command("go", "build", "-o", fixture, "../testdata/mcpserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the fixture MCP server:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// host is a thread as the tests' extensions see it: warnings, statuses and
// notices recorded, dialogs answered from answers in order.
type host struct {
	cwd   string
	noUI  bool
	idle  bool
	apps  bool   // DrawsApps
	mode  string // ApprovalMode
	mu    sync.Mutex
	warns []ext.Warning
	stat  string
	notes []string
	dlgs  []ext.Dialog
	ans   []ext.DialogAnswer
}

func (h *host) ThreadID() string                            { return "t1" }
func (h *host) Cwd() string                                 { return h.cwd }
func (h *host) HasUI() bool                                 { return !h.noUI }
func (h *host) UI() ext.UI                                  { return h }
func (h *host) SendMessage(ext.Message, ext.Delivery) error { return nil }
func (h *host) AppendEntry(string, json.RawMessage) error   { return nil }
func (h *host) Abort()                                      {}
func (h *host) IsIdle() bool                                { return h.idle }
func (h *host) DrawsApps() bool                             { return h.apps }
func (h *host) SetWidget(string, *ext.Widget)               {}
func (h *host) SetTitle(string)                             {}
func (h *host) SetWorkingMessage(string)                    {}
func (h *host) SetWorkingVisible(bool)                      {}
func (h *host) OnViewEvent(ext.ViewEventHandler) func()     { return func() {} }
func (h *host) TerminalOnly(string)                         {}
func (h *host) Questions(context.Context, string, []ext.Question) (map[string]ext.Answer, error) {
	return nil, ext.ErrDismissed
}

func (h *host) ApprovalMode() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mode
}

func (h *host) Warn(w ext.Warning) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.warns = append(h.warns, w)
}

func (h *host) Notify(level, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notes = append(h.notes, message)
}

func (h *host) SetStatus(key, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if key == "mcp" {
		h.stat = text
	}
}

func (h *host) Dialog(_ context.Context, d ext.Dialog) (ext.DialogAnswer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dlgs = append(h.dlgs, d)
	if len(h.ans) == 0 {
		return ext.DialogAnswer{Cancelled: true}, nil
	}
	a := h.ans[0]
	h.ans = h.ans[1:]
	return a, nil
}

func (h *host) warnings() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, w := range h.warns {
		out = append(out, w.Path+": "+w.Message)
	}
	return strings.Join(out, "\n")
}

func (h *host) status() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stat
}

// env is one test's agent directory, record directory and thread.
type env struct {
	t       *testing.T
	dir     string // the fixture's records
	agent   string
	h       *host
	r       *ext.Runner
	apps    *Apps
	loadErr []ext.Warning
}

// server is an mcpServers entry running the fixture as name with flags.
func (e *env) server(name string, extra map[string]any, flags ...string) map[string]any {
	entry := map[string]any{"command": fixture, "args": append([]string{"-name", name, "-dir", e.dir}, flags...)}
	for k, v := range extra {
		entry[k] = v
	}
	return entry
}

// newEnv writes servers (name -> entry, in the order of names) as the
// global mcp.json and loads the MCP extension in a thread; a cleanup
// disposes it.
func newEnv(t *testing.T, names []string, servers func(e *env) map[string]map[string]any) *env {
	t.Helper()
	return newEnvHost(t, &host{cwd: t.TempDir()}, names, servers)
}

// newEnvHost is newEnv in the thread h, its MCP runtime registered in the
// env's Apps.
func newEnvHost(t *testing.T, h *host, names []string, servers func(e *env) map[string]map[string]any) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), agent: t.TempDir(), h: h, apps: NewApps()}
	entries := servers(e)
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		v, _ := json.Marshal(entries[n])
		fmt.Fprintf(&b, "%q:%s", n, v)
	}
	b.WriteString("}}")
	if err := os.WriteFile(filepath.Join(e.agent, config.MCPFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	store := config.NewStore(e.agent, nil)
	x := Extension(Options{Store: store, Apps: e.apps, Environ: func() []string { return append(os.Environ(), "SECRET_API_KEY=s3cret") }})
	e.r = ext.New(ext.Config{Host: e.h, Extensions: []ext.Extension{x}})
	start := time.Now()
	e.loadErr = e.r.Load()
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Load took %v: it must not wait for the servers", d)
	}
	t.Cleanup(e.r.Dispose)
	return e
}

// tool waits for the registered tool name and returns it.
func (e *env) tool(name string) ext.Tool {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, t := range e.r.Tools() {
			if t.Name == name {
				return t
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("tool %s was not registered; tools %v; warnings:\n%s", name, e.names(), e.h.warnings())
	return ext.Tool{}
}

func (e *env) names() []string {
	var out []string
	for _, t := range e.r.Tools() {
		out = append(out, t.Name)
	}
	return out
}

// run calls t with input.
func (e *env) run(ctx context.Context, t ext.Tool, input string) ext.ToolResult {
	return e.r.Execute(ctx, t, ext.ToolCall{ID: "c1", Name: t.Name, Input: json.RawMessage(input)})
}

func text(r ext.ToolResult) string {
	var out []string
	for _, b := range r.Content {
		out = append(out, b.Text)
	}
	return strings.Join(out, "|")
}

// waitFor polls cond for up to limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestToolsCallsAndResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"fs"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"fs": e.server("fs", map[string]any{"disabledTools": []string{"fail"}})}
	})
	echo := e.tool("mcp__fs__echo")
	if echo.Source != ext.SourceMCP || echo.Server != "fs" || !echo.Approve(nil).ReadOnly {
		t.Errorf("echo: source %q server %q approve %+v", echo.Source, echo.Server, echo.Approve(nil))
	}
	if w := e.tool("mcp__fs__write_file"); w.Approve(nil).ReadOnly {
		t.Error("write_file is approved read-only")
	}
	for _, hidden := range []string{"mcp__fs__fail", "mcp__fs__app_panel"} {
		if slices.Contains(e.names(), hidden) {
			t.Errorf("%s is a model tool: %v", hidden, e.names())
		}
	}
	res := e.run(context.Background(), echo, `{"text":"hi"}`)
	if text(res) != "echo: hi" || res.IsError || string(res.Details) != `{"structuredContent":{"echoed":"hi"}}` {
		t.Errorf("echo result %+v details %s", res, res.Details)
	}
	img := e.run(context.Background(), e.tool("mcp__fs__image"), `{}`)
	if len(img.Content) != 2 || img.Content[1].MimeType != "image/png" || img.Content[0].Text != "a pixel" {
		t.Errorf("image result %+v", img)
	}
	waitFor(t, 5*time.Second, "the status", func() bool { return e.h.status() == "MCP 1/1" })

	// tools/list_changed after a call: late_tool joins.
	e.run(context.Background(), e.tool("mcp__fs__add_tool"), `{}`)
	e.tool("mcp__fs__late_tool")

	// The server's environment is the base and its env: no API key.
	b, _ := os.ReadFile(filepath.Join(e.dir, "fs-env"))
	if strings.Contains(string(b), "s3cret") || !strings.Contains(string(b), "PATH=") {
		t.Errorf("the server's environment:\n%s", b)
	}
}

func TestFailedResultAndCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"fs"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"fs": e.server("fs", map[string]any{"toolTimeoutSec": 1}, "-progress-steps", "8")}
	})
	if res := e.run(context.Background(), e.tool("mcp__fs__fail"), `{}`); !res.IsError || text(res) != "it failed" {
		t.Errorf("fail result %+v", res)
	}
	// Progress every 200 ms keeps a 1.6 s call alive past its 1 s timeout.
	if res := e.run(context.Background(), e.tool("mcp__fs__progress"), `{}`); res.IsError || text(res) != "progress done" {
		t.Errorf("progress result %+v", res)
	}
	// A call without progress ends at its timeout, cancelled.
	start := time.Now()
	res := e.run(context.Background(), e.tool("mcp__fs__slow"), `{}`)
	if !res.IsError || !strings.Contains(text(res), "toolTimeoutSec") || time.Since(start) > 3*time.Second {
		t.Errorf("slow result after %v: %+v", time.Since(start), res)
	}
	waitFor(t, 5*time.Second, "the fixture's record of notifications/cancelled", func() bool {
		_, err := os.Stat(filepath.Join(e.dir, "fs-cancelled"))
		return err == nil
	})
	os.Remove(filepath.Join(e.dir, "fs-cancelled"))
	os.Remove(filepath.Join(e.dir, "fs-started-slow"))
	// An interrupt (ctx) cancels the call: the server hears of it.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, 5*time.Second, "slow to start", func() bool {
			_, err := os.Stat(filepath.Join(e.dir, "fs-started-slow"))
			return err == nil
		})
		cancel()
	}()
	if res := e.run(ctx, e.tool("mcp__fs__slow"), `{}`); !res.IsError {
		t.Errorf("interrupted slow result %+v", res)
	}
	waitFor(t, 5*time.Second, "notifications/cancelled after the interrupt", func() bool {
		_, err := os.Stat(filepath.Join(e.dir, "fs-cancelled"))
		return err == nil
	})
}

func TestCollisionByConfigurationOrder(t *testing.T) {
	t.Parallel()
	// "a" comes first in the file but connects later: "a__b"'s echo has
	// the same model name as a's b__echo and is withdrawn once a connects.
	e := newEnv(t, []string{"a", "a__b"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{
			"a":    e.server("a", nil, "-extra", "b__echo", "-sleep", "700ms"),
			"a__b": e.server("a__b", nil),
		}
	})
	e.tool("mcp__a__b__read_file")
	waitFor(t, 10*time.Second, "a's tools", func() bool { return slices.Contains(e.names(), "mcp__a__read_file") })
	tool := e.tool("mcp__a__b__echo")
	if res := e.run(context.Background(), tool, `{}`); text(res) != "extra" {
		t.Errorf("mcp__a__b__echo answered %q: it is not a's b__echo", text(res))
	}
	waitFor(t, 5*time.Second, "the collision warning", func() bool {
		w := e.h.warnings()
		return strings.Contains(w, "a__b: tool echo is not given to the model") && strings.Contains(w, "tool b__echo of MCP server a")
	})
}

func TestSearchExposure(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"fs"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"fs": e.server("fs", map[string]any{"exposure": "search", "disabledTools": []string{"write_file"}})}
	})
	m := e.tool(SearchToolName)
	if slices.ContainsFunc(e.names(), func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Errorf("a search server's tools are model tools: %v", e.names())
	}
	for _, in := range []string{`{"action":"search","query":"file"}`, `{"action":"describe","server":"fs","tool":"echo"}`} {
		if as := m.Approve(json.RawMessage(in)); !as.ReadOnly || as.Tool != "" {
			t.Errorf("%s is approved as %+v", in, as)
		}
	}
	found := text(e.run(context.Background(), m, `{"action":"search","query":"file"}`))
	if !strings.Contains(found, "tool read_file") || strings.Contains(found, "write_file") || strings.Contains(found, "app_panel") {
		t.Errorf("search answered %q", found)
	}
	as := m.Approve(json.RawMessage(`{"action":"call","server":"fs","tool":"ask","arguments":{"x":1}}`))
	if as.Tool != "mcp__fs__ask" || as.ReadOnly || string(as.Input) != `{"x":1}` {
		t.Errorf("call of ask approved as %+v", as)
	}
	if as := m.Approve(json.RawMessage(`{"action":"call","server":"fs","tool":"read_file"}`)); as.Tool != "mcp__fs__read_file" || !as.ReadOnly {
		t.Errorf("call of read_file approved as %+v", as)
	}
	res := e.run(context.Background(), m, `{"action":"call","server":"fs","tool":"echo","arguments":{"text":"x"}}`)
	if text(res) != "echo: x" {
		t.Errorf("call of echo answered %+v", res)
	}
	for _, hidden := range []string{"write_file", "app_panel", "nope"} {
		in := `{"action":"call","server":"fs","tool":"` + hidden + `"}`
		res := e.run(context.Background(), m, in)
		if !res.IsError || !strings.Contains(text(res), "unknown tool") {
			t.Errorf("call of %s answered %+v", hidden, res)
		}
		if d := text(e.run(context.Background(), m, `{"action":"describe","server":"fs","tool":"`+hidden+`"}`)); !strings.Contains(d, "unknown tool") {
			t.Errorf("describe of %s answered %q", hidden, d)
		}
	}
	for _, f := range []string{"fs-wrote", "fs-app-called"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err == nil {
			t.Errorf("a hidden tool reached the server (%s)", f)
		}
	}
}

func TestStallAndStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"stall", "hard"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{
			"stall": e.server("stall", map[string]any{"startupTimeoutSec": 1}, "-stall", "-grandchild"),
			"hard":  e.server("hard", nil, "-ignore-term", "-grandchild"),
		}
	})
	e.tool("mcp__hard__echo")
	waitFor(t, 5*time.Second, "the stall's failure", func() bool {
		return strings.Contains(e.h.warnings(), "stall: did not connect within 1s (startupTimeoutSec): abandoned")
	})
	if s := e.h.status(); s != "MCP 1/2 · stall: failed" {
		t.Errorf("status %q", s)
	}
	all := proctest.PIDFiles(t, filepath.Join(e.dir, "*.pid"))
	if len(all) != 4 {
		t.Fatalf("pid files: %v", all)
	}
	waitFor(t, 3*time.Second, "the stalled server's processes to end", func() bool {
		n := 0
		for _, p := range all {
			if proctest.Running(p) {
				n++
			}
		}
		return n == 2 // hard and its grandchild
	})
	start := time.Now()
	e.r.Dispose()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("dispose took %v", d)
	}
	for _, p := range all {
		if proctest.Running(p) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			t.Errorf("process %d survived the dispose: %s", p, b)
		}
	}
}

func TestElicitation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"fs"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"fs": e.server("fs", nil)}
	})
	e.h.ans = []ext.DialogAnswer{{Value: "blue"}, {Value: "9"}, {Value: "3"}}
	res := e.run(context.Background(), e.tool("mcp__fs__ask"), `{}`)
	if text(res) != `{"action":"accept","content":{"color":"blue","count":3}}` {
		t.Errorf("ask answered %q", text(res))
	}
	if len(e.h.dlgs) != 3 || e.h.dlgs[0].Kind != ext.DialogSelect || !slices.Equal(e.h.dlgs[0].Options, []string{"red", "blue"}) ||
		!strings.HasPrefix(e.h.dlgs[0].Title, "fs: Pick") || e.h.dlgs[1].Kind != ext.DialogInput || !strings.Contains(e.h.dlgs[2].Placeholder, "more than 5") {
		t.Errorf("dialogs %+v", e.h.dlgs)
	}
	// Cancelling answers cancel; no turn running declines with a warning.
	e.h.ans = nil
	if got := text(e.run(context.Background(), e.tool("mcp__fs__ask"), `{}`)); got != `{"action":"cancel"}` {
		t.Errorf("cancelled ask answered %q", got)
	}
	e.h.idle = true
	if got := text(e.run(context.Background(), e.tool("mcp__fs__ask"), `{}`)); got != `{"action":"decline"}` || !strings.Contains(e.h.warnings(), "no turn is running") {
		t.Errorf("idle ask answered %q, warnings %s", got, e.h.warnings())
	}
}

func TestCommandAndLoadWarnings(t *testing.T) {
	t.Setenv("H27_UNSET_FOR_TEST", "")
	os.Unsetenv("H27_UNSET_FOR_TEST")
	e := newEnv(t, []string{"fs", "bad", "off"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{
			"fs":  e.server("fs", nil),
			"bad": {"command": "${H27_UNSET_FOR_TEST}"},
			"off": e.server("off", map[string]any{"enabled": false}),
		}
	})
	if len(e.loadErr) != 1 || e.loadErr[0].Message != "bad: command: the environment variable H27_UNSET_FOR_TEST is not set" ||
		e.loadErr[0].Path != filepath.Join(e.agent, config.MCPFile) {
		t.Errorf("load warnings %+v", e.loadErr)
	}
	e.tool("mcp__fs__echo")
	if !e.r.RunCommand(context.Background(), "/mcp") {
		t.Fatal("/mcp is not a command")
	}
	want := "MCP servers:\nfs: connected, 10 tools\nbad: failed: command: the environment variable H27_UNSET_FOR_TEST is not set\noff: disabled"
	if got := e.h.notes[len(e.h.notes)-1]; got != want {
		t.Errorf("/mcp shows\n%s\nwant\n%s", got, want)
	}
	t.Setenv("H27_UNSET_FOR_TEST", fixture)
	e.r.RunCommand(context.Background(), "/mcp retry bad")
	waitFor(t, 10*time.Second, "bad to connect", func() bool { return e.h.status() == "MCP 2/2" })
	// A mistake in the command is said to the person, not warned about.
	e.r.RunCommand(context.Background(), "/mcp login fs")
	if got := e.h.notes[len(e.h.notes)-1]; !strings.Contains(got, "/mcp: ") || !strings.Contains(got, "runs a command: it has no sign-in") {
		t.Errorf("/mcp login of a stdio server notified %q", got)
	}
	if w := e.h.warnings(); strings.Contains(w, "no sign-in") {
		t.Errorf("a mistake in /mcp is a warning: %s", w)
	}
}

// TestStopWithinFourSeconds: a server that keeps running when its stdin
// closes and ignores SIGTERM, with a grandchild that SIGTERM ends (a
// zombie until something reaps it), is stopped within 4 s (the stop
// sequence: close stdin, 2 s, SIGTERM, SIGKILL) and nothing of it runs
// afterwards.
func TestStopWithinFourSeconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"hard"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"hard": e.server("hard", nil, "-ignore-eof", "-ignore-term", "-grandchild")}
	})
	e.tool("mcp__hard__echo")
	all := proctest.PIDFiles(t, filepath.Join(e.dir, "*.pid"))
	if len(all) != 2 {
		t.Fatalf("pid files: %v", all)
	}
	start := time.Now()
	e.r.Dispose()
	d := time.Since(start)
	if d > 4*time.Second {
		t.Errorf("the stop took %v, want at most 4s", d)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "hard-eof")); err != nil {
		t.Errorf("the server did not see its stdin close: %v", err)
	}
	for _, p := range all {
		if proctest.Running(p) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			t.Errorf("process %d survived the stop: %s", p, b)
		}
	}
	t.Logf("stopped in %v", d)
}
