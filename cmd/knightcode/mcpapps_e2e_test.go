package main

// End-to-end tests of MCP Apps (issue 28, EXTENSIBILITY.md §3): threads of
// the binary connect to the counter app of testdata/mcpserver (-counter);
// the scripted model calls its tools; the client reads its resources and
// calls its tools with mcp/app/readResource and mcp/app/callTool.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// counterEntries are the servers of the MCP Apps tests: the counter app,
// the fixture fs, and a disabled counter off.
func counterEntries(t *testing.T) func(dir string) map[string]any {
	return func(dir string) map[string]any {
		return map[string]any{
			"counter": fixtureEntry(t, dir, "counter", nil, "-counter"),
			"fs":      fixtureEntry(t, dir, "fs", nil),
			"off":     fixtureEntry(t, dir, "off", map[string]any{"enabled": false}, "-counter"),
		}
	}
}

// appErr is an mcp/app error response: its code and data (raw JSON).
func appErr(t *testing.T, err error) (string, string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an error response: %v", err)
	}
	raw, _ := e.Data.(json.RawMessage)
	return e.Code, string(raw)
}

// TestE2EMCPAppsDesktop: a desktop-mode connection's thread advertises the
// UI extension; the model's calls of show_counter carry mcpApp live and
// read back alike (inline, with resultOmitted past 256 KiB, and as a
// payload reference); the app reads its HTML first and calls its tools
// with every refusal; a call during a turn answers at once.
func TestE2EMCPAppsDesktop(t *testing.T) {
	t.Parallel()
	e := startMCPServerMode(t, protocol.ClientModeDesktop, map[string]string{"m": script(
		toolReply(call("c1", "mcp__counter__show_counter", map[string]any{}),
			call("c2", "mcp__counter__show_counter", map[string]any{"pad": 300 << 10}),
			call("c3", "mcp__counter__show_counter", map[string]any{"pad": 100 << 10})),
		map[string]any{"text": "shown"},
		toolReply(call("c4", "mcp__counter__slow_peek", map[string]any{})),
		map[string]any{"text": "peeked"},
	)}, counterEntries(t))
	repo := threadsRepo(t)
	thread := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalAsk,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}}).Thread.ID
	rows := e.waitTools(t, thread, "mcp__counter__show_counter", "mcp__counter__peek", "mcp__fs__echo")
	if slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "mcp__counter__increment") }) {
		t.Errorf("tool/list has the app-only increment: %v", rows)
	}

	// The twenty-odd calls below share ctx (one call's timeout each would
	// do; a loaded machine took over 20 s for all of them).
	ctx, cancel := context.WithTimeout(context.Background(), 4*rpctest.DefaultTimeout)
	defer cancel()
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "show"})
	live := map[string]protocol.Item{}
	for _, it := range completedItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		live[it.ID] = it
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "counter-ui")); string(b) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("the counter heard the UI capability %q", b)
	}
	c1 := live["c1"]
	if a := c1.McpApp; a == nil || a.Server != "counter" || a.ResourceURI != "ui://counter/app.html" || a.ResultOmitted ||
		!strings.Contains(string(a.Result), `"structuredContent":{"count":0,"ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`) ||
		!strings.Contains(string(a.Result), `"_meta":{"counter/seen":true}`) || itemOutput(c1) != "count: 0" {
		t.Errorf("c1 live: %s", mustJSON(c1))
	}
	if a := live["c2"].McpApp; a == nil || !a.ResultOmitted || a.Result != nil || itemOutput(live["c2"]) != "count: 0" {
		t.Errorf("c2 (a 300 KiB result) live: %.500s", mustJSON(live["c2"]))
	}
	if live["c3"].Ref == nil {
		t.Errorf("c3 (a 100 KiB result, twice in the item) is not a reference: %.300s", mustJSON(live["c3"]))
	}
	read := e.readThread(t, thread)
	back := map[string]protocol.Item{}
	for _, it := range read.Turns[len(read.Turns)-1].Items {
		back[it.ID] = it
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		l, err := e.c.ResolveItem(ctx, live[id])
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.c.ResolveItem(ctx, back[id])
		if err != nil {
			t.Fatal(err)
		}
		l.Index, b.Index = nil, nil
		if l.McpApp == nil || !cmp.Equal(mustJSON(l), mustJSON(b)) {
			t.Errorf("%s live and read back differ:\nlive %.400s\nback %.400s", id, mustJSON(l), mustJSON(b))
		}
		if id == "c3" && (l.McpApp.ResultOmitted || !strings.Contains(string(l.McpApp.Result), `"pad":"xxx`)) {
			t.Errorf("c3 resolved lacks its result: %.300s", mustJSON(l.McpApp))
		}
	}

	// The app's resource, its HTML first; one over 4 MiB.
	res, err := client.Call(ctx, e.c, protocol.McpAppReadResource, protocol.McpAppReadResourceParams{ThreadID: thread, Server: "counter", URI: "ui://counter/app.html"})
	if err != nil || len(res.Contents) != 2 || !strings.Contains(string(res.Contents[0]), `"mimeType":"text/html;profile=mcp-app"`) {
		t.Errorf("readResource: %v %.300s", err, mustJSON(res))
	}
	e.wantErr(t, protocol.McpAppReadResource.Name, protocol.McpAppReadResourceParams{ThreadID: thread, Server: "counter", URI: "ui://counter/big"},
		wireErr{Code: protocol.CodeInvalidParams, Field: "uri"})
	// The server's own error responses: no such resource is the uri's
	// fault; any other is the server's failure, in its words (neither is
	// internal, which is the 60 s timeout's).
	e.wantErr(t, protocol.McpAppReadResource.Name, protocol.McpAppReadResourceParams{ThreadID: thread, Server: "counter", URI: "ui://counter/none"},
		wireErr{Code: protocol.CodeInvalidParams, Field: "uri"})
	_, err = client.Call(ctx, e.c, protocol.McpAppReadResource, protocol.McpAppReadResourceParams{ThreadID: thread, Server: "counter", URI: "ui://counter/broken"})
	var broken *client.Error
	if !errors.As(err, &broken) || broken.Code != protocol.CodeExternalFailure || !strings.Contains(broken.Message, "the counter's store is offline") ||
		!strings.Contains(mustJSON(broken.Data), `"reason":"toolFailed","tool":"mcp"`) {
		t.Errorf("readResource answered by the server's error: %v %s", err, mustJSON(broken))
	}

	// The app's calls.
	callTool := func(p protocol.McpAppCallToolParams) (protocol.McpAppCallToolResult, error) {
		p.ThreadID = thread
		return client.Call(ctx, e.c, protocol.McpAppCallTool, p)
	}
	_, err = callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "increment", Arguments: json.RawMessage(`{"by":2}`)})
	if code, data := appErr(t, err); code != protocol.CodeApprovalRequired || data != `{"server":"counter","tool":"increment"}` {
		t.Errorf("increment unconfirmed in ask mode: %s %s", code, data)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "counter-incremented")); err == nil {
		t.Error("the unconfirmed increment reached the server")
	}
	got, err := callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "increment", Arguments: json.RawMessage(`{"by":2}`), Confirmed: true})
	if err != nil || string(got.StructuredContent) != `{"count":2}` || len(got.Content) != 1 {
		t.Errorf("increment confirmed: %v %s", err, mustJSON(got))
	}
	if got, err := callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "peek"}); err != nil || string(got.StructuredContent) != `{"count":2}` {
		t.Errorf("peek (read-only) unconfirmed: %v %s", err, mustJSON(got))
	}
	// The server's own error responses to a call: invalid params is the
	// arguments' fault, any other the server's failure in its words.
	e.wantErr(t, protocol.McpAppCallTool.Name, protocol.McpAppCallToolParams{ThreadID: thread, Server: "counter", Name: "increment",
		Arguments: json.RawMessage(`{"by":-1}`), Confirmed: true}, wireErr{Code: protocol.CodeInvalidParams, Field: "arguments"})
	_, err = callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "increment", Arguments: json.RawMessage(`{"by":1001}`), Confirmed: true})
	if !errors.As(err, &broken) || broken.Code != protocol.CodeExternalFailure || !strings.Contains(broken.Message, "the counter is locked above 1000") ||
		!strings.Contains(mustJSON(broken.Data), `"reason":"toolFailed","tool":"mcp"`) {
		t.Errorf("callTool answered by the server's error: %v %s", err, mustJSON(broken))
	}
	big, err := callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "increment", Confirmed: true, Arguments: json.RawMessage(`{"pad":4194304}`)})
	if err != nil || len(big.Content) != 1 || !strings.Contains(string(big.Content[0]), "The tool ran; its result (4.0 MiB) is over 4 MiB and was left out.") ||
		string(big.Meta) != `{"knightcode/resultOmitted":true}` {
		t.Errorf("a result over 4 MiB: %v %.300s", err, mustJSON(big))
	}
	for _, tc := range []struct {
		p    protocol.McpAppCallToolParams
		want wireErr
	}{
		{protocol.McpAppCallToolParams{Server: "counter", Name: "secret"}, wireErr{Code: protocol.CodeInvalidParams, Field: "name", Reason: "notAppVisible"}},
		{protocol.McpAppCallToolParams{Server: "counter", Name: "nope"}, wireErr{Code: protocol.CodeInvalidParams, Field: "name", Reason: "unknownTool"}},
		{protocol.McpAppCallToolParams{Server: "counter", Name: "echo"}, wireErr{Code: protocol.CodeInvalidParams, Field: "name", Reason: "unknownTool"}},
		{protocol.McpAppCallToolParams{Server: "fs", Name: "increment", Confirmed: true}, wireErr{Code: protocol.CodeInvalidParams, Field: "name", Reason: "unknownTool"}},
		{protocol.McpAppCallToolParams{Server: "counter", Name: "peek", Arguments: json.RawMessage(`{"k":"` + strings.Repeat("a", 1<<20) + `"}`)},
			wireErr{Code: protocol.CodeInvalidParams, Field: "arguments"}},
		{protocol.McpAppCallToolParams{Server: "counter", Name: "peek", Arguments: json.RawMessage(`[1]`)}, wireErr{Code: protocol.CodeInvalidParams, Field: "arguments"}},
		{protocol.McpAppCallToolParams{Server: "counter", Name: ""}, wireErr{Code: protocol.CodeInvalidParams, Field: "name"}},
	} {
		tc.p.ThreadID = thread
		e.wantErr(t, protocol.McpAppCallTool.Name, tc.p, tc.want)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "counter-secret-called")); err == nil {
		t.Error("the refused secret reached the server")
	}
	_, err = callTool(protocol.McpAppCallToolParams{Server: "off", Name: "increment", Confirmed: true})
	if code, data := appErr(t, err); code != protocol.CodeMCPUnavailable || data != `{"server":"off","state":"disabled"}` {
		t.Errorf("a disabled server: %s %s", code, data)
	}
	_, err = callTool(protocol.McpAppCallToolParams{Server: "docs", Name: "x"})
	if code, data := appErr(t, err); code != protocol.CodeMCPUnavailable || data != `{"server":"docs","state":"notConfigured"}` {
		t.Errorf("an unknown server: %s %s", code, data)
	}
	e.wantErr(t, protocol.McpAppCallTool.Name, protocol.McpAppCallToolParams{ThreadID: "no-such-thread", Server: "counter", Name: "peek"},
		wireErr{Code: protocol.CodeThreadNotFound})

	// A server that exits is unavailable, failed.
	for _, pid := range fixturePids(t, e.dir, "fs-") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	mark := 0
	e.waitNote(t, &mark, protocol.WarningNotification.Name, func(r json.RawMessage) bool { return strings.Contains(string(r), "fs: the server exited") })
	_, err = callTool(protocol.McpAppCallToolParams{Server: "fs", Name: "echo"})
	if code, data := appErr(t, err); code != protocol.CodeMCPUnavailable || data != `{"server":"fs","state":"failed"}` {
		t.Errorf("a server that exited: %s %s", code, data)
	}

	// A call while a turn runs answers at once, and stays out of the
	// conversation.
	from = e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "peek slowly"})
	e.recorded(t, "counter-started-slow_peek", 10*time.Second)
	// The call over 4 MiB ran: 3.
	if got, err := callTool(protocol.McpAppCallToolParams{Server: "counter", Name: "peek"}); err != nil || string(got.StructuredContent) != `{"count":3}` {
		t.Errorf("peek during a turn: %v %s", err, mustJSON(got))
	}
	if n := e.count(protocol.TurnCompletedNotification.Name, thread); n != 1 {
		t.Errorf("the turn completed before the app's call answered (%d turn/completed)", n)
	}
	e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	read = e.readThread(t, thread)
	for _, turn := range read.Turns {
		for _, it := range turn.Items {
			if it.Type == protocol.ItemToolCall && !slices.Contains([]string{"c1", "c2", "c3", "c4"}, it.ID) {
				t.Errorf("an app's call is in the conversation: %s", mustJSON(it))
			}
		}
	}
}

// TestE2EMCPAppsNotDesktop: a terminal-mode connection's thread and a
// mode-less connection's do not advertise the UI extension and their
// toolCall items carry no mcpApp.
func TestE2EMCPAppsNotDesktop(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{protocol.ClientModeTerminal, ""} {
		e := startMCPServerMode(t, mode, map[string]string{"m": script(
			toolReply(call("c1", "mcp__counter__show_counter", map[string]any{})),
			map[string]any{"text": "shown"},
		)}, counterEntries(t))
		thread := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: protocol.ApprovalFullAccess,
			Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}}).Thread.ID
		e.waitTools(t, thread, "mcp__counter__show_counter")
		from := e.mark()
		mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "show"})
		for _, it := range completedItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
			if it.ID == "c1" && (it.McpApp != nil || itemOutput(it) != "count: 0") {
				t.Errorf("mode %q: c1 %s", mode, mustJSON(it))
			}
		}
		if b, _ := os.ReadFile(filepath.Join(e.dir, "counter-ui")); string(b) != "null" {
			t.Errorf("mode %q: the counter heard the UI capability %q", mode, b)
		}
	}
}

// TestE2EMCPAppsModelTools: the app-only increment is never in a model
// request's tool list; show_counter and peek are.
func TestE2EMCPAppsModelTools(t *testing.T) {
	t.Parallel()
	chat := newChatServer(t, sse(chunk(`{"role":"assistant","content":"ok"}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2)))
	home := t.TempDir()
	writeLocalModel(t, home, chat)
	dir := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": counterEntries(t)(dir)})
	writeAgentFile(t, home, "mcp.json", b)
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(serverEnv(home), "KC_E2E_KEY="+e2eEnvKey)
	s, _ := serveDiffMode(t, cmd, home, protocol.ClientModeDesktop)
	e := &mcpEnv{diffServer: s, dir: dir}
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "local", ID: "m1"}}).Thread.ID
	e.waitTools(t, thread, "mcp__counter__show_counter", "mcp__counter__peek")
	_, from := s.startTurn(t, thread, "hello")
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %+v", turn)
	}
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(chat.onlyRequest(t), &req); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	if slices.Contains(names, "mcp__counter__increment") || !slices.Contains(names, "mcp__counter__show_counter") ||
		!slices.Contains(names, "mcp__counter__peek") || !slices.Contains(names, "mcp__counter__secret") {
		t.Errorf("the model request's tools: %v", names)
	}
}

// basicAppServer is the published MCP Apps example server
// @modelcontextprotocol/server-basic-vanillajs, as .ci/run installs it
// from testdata/mcp-apps-basic's lockfile (npm ci).
const basicAppServer = "../../testdata/mcp-apps-basic/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"

// TestE2EMCPAppsPublishedExample runs the published example app (its
// get-time tool and ui://get-time/mcp-app.html) through a desktop-mode
// thread: the model's call carries its mcpApp and result, the app reads
// its HTML and calls get-time. It skips when the example is not installed.
func TestE2EMCPAppsPublishedExample(t *testing.T) {
	t.Parallel()
	entry, err := filepath.Abs(basicAppServer)
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(entry); err != nil || nodeErr != nil {
		t.Skipf("the MCP Apps example server is not installed (npm ci --prefix testdata/mcp-apps-basic, and node on PATH): %v %v", err, nodeErr)
	}
	e := startMCPServerMode(t, protocol.ClientModeDesktop, map[string]string{"m": script(
		toolReply(call("c1", "mcp__basic__get-time", map[string]any{})),
		map[string]any{"text": "done"},
	)}, func(string) map[string]any {
		return map[string]any{"basic": map[string]any{"command": node, "args": []string{entry, "--stdio"}}}
	})
	thread := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}}).Thread.ID
	e.waitTools(t, thread, "mcp__basic__get-time")
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "time"})
	var c1 protocol.Item
	for _, it := range completedItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		if it.ID == "c1" {
			c1 = it
		}
	}
	var result struct {
		StructuredContent struct{ Time string } `json:"structuredContent"`
	}
	if a := c1.McpApp; a == nil || a.Server != "basic" || a.ResourceURI != "ui://get-time/mcp-app.html" ||
		json.Unmarshal(a.Result, &result) != nil || result.StructuredContent.Time == "" || !strings.Contains(itemOutput(c1), result.StructuredContent.Time) {
		t.Errorf("the example's toolCall item: %s", mustJSON(c1))
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	res, err := client.Call(ctx, e.c, protocol.McpAppReadResource, protocol.McpAppReadResourceParams{ThreadID: thread, Server: "basic", URI: "ui://get-time/mcp-app.html"})
	var html struct{ MIMEType, Text string }
	if err != nil || len(res.Contents) == 0 || json.Unmarshal(res.Contents[0], &html) != nil ||
		html.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(strings.ToLower(html.Text), "<html") {
		t.Errorf("the example's HTML: %v %.300s", err, mustJSON(res))
	}
	got, err := client.Call(ctx, e.c, protocol.McpAppCallTool, protocol.McpAppCallToolParams{ThreadID: thread, Server: "basic", Name: "get-time"})
	if err != nil || !strings.Contains(string(got.StructuredContent), `"time":"`) {
		t.Errorf("the app's get-time: %v %s", err, mustJSON(got))
	}
}
