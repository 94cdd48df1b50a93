package main

// End-to-end tests of the MCP runtime's live tool set (issue 27,
// EXTENSIBILITY.md §2 "Startup never blocks"): the model is an
// OpenAI-compatible test server (chatServer) that records every request,
// so a test reads which tools each model request offered.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// chatCalls is a chat reply asking for tool calls, each {id, name,
// arguments as JSON}.
func chatCalls(calls ...[3]string) func(http.ResponseWriter) {
	var chunks []string
	for i, c := range calls {
		args, _ := json.Marshal(c[2])
		chunks = append(chunks, chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`,
			i, c[0], c[1], args), ""))
	}
	return sse(append(chunks, chunk(`{}`, "tool_calls"), usageChunk(10, 2))...)
}

// chatText is a chat reply of text.
func chatText(text string) func(http.ResponseWriter) {
	b, _ := json.Marshal(text)
	return sse(chunk(`{"role":"assistant","content":`+string(b)+`}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
}

// after is reply once gate is closed (at most 30 s later): the test
// decides when the model answers.
func after(gate <-chan struct{}, reply func(http.ResponseWriter)) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		select {
		case <-gate:
		case <-time.After(30 * time.Second):
		}
		reply(w)
	}
}

// offered are the tool names each model request offered, in request
// order; there must be n requests.
func (s *chatServer) offered(t *testing.T, n int) [][]string {
	t.Helper()
	s.mu.Lock()
	bodies := slices.Clone(s.bodies)
	s.mu.Unlock()
	var out [][]string
	for _, b := range bodies {
		var req struct {
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("chat request body: %v\n%s", err, b)
		}
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		out = append(out, names)
	}
	if len(out) != n {
		t.Fatalf("%d model requests, want %d", len(out), n)
	}
	return out
}

// wantJoined checks the two model requests chat received: the first
// (before) offered no tool named prefix*, the second (after) offered
// tool.
func wantJoined(t *testing.T, chat *chatServer, prefix, tool, before, after string) {
	t.Helper()
	offered := chat.offered(t, 2)
	if hasPrefixed(offered[0], prefix) {
		t.Errorf("the request %s offered %v", before, offered[0])
	}
	if !slices.Contains(offered[1], tool) {
		t.Errorf("the request %s offered %v, want %s", after, offered[1], tool)
	}
}

// hasPrefixed reports whether a name of names starts with prefix.
func hasPrefixed(names []string, prefix string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

// startMCPChat starts the binary with chat as its model (provider local,
// model m1) and the MCP servers entries(dir); env is added to its
// environment.
func startMCPChat(t *testing.T, chat *chatServer, entries func(dir string) map[string]any, env ...string) *mcpEnv {
	t.Helper()
	return launchMCP(t, func(home string) { writeLocalModels(t, home, chat) }, entries, append(env, "KC_E2E_KEY="+e2eEnvKey)...)
}

// chatThread starts a thread on chat's model in cwd with the approval
// mode.
func (e *mcpEnv) chatThread(t *testing.T, cwd, mode string) string {
	t.Helper()
	return mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: cwd, ApprovalMode: mode,
		Model: &protocol.ModelRef{Provider: "local", ID: "m1"}}).Thread.ID
}

// turnCalls runs a turn of thread and returns its toolCall items by id.
func (e *mcpEnv) turnCalls(t *testing.T, thread string, during func()) map[string]protocol.Item {
	t.Helper()
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	if during != nil {
		during()
	}
	_, calls := turnItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name))
	return calls
}

// waitNoTool waits until tool/list {threadId} no longer lists name.
func (e *mcpEnv) waitNoTool(t *testing.T, thread, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		tl := mustCall(t, e.diffServer, protocol.ToolList, protocol.ToolListParams{ThreadID: thread})
		if !slices.ContainsFunc(tl.Tools, func(r protocol.ToolInfo) bool { return r.Name == name }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool/list {threadId} still lists %s", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestE2EMCPLateServerJoinsTheTurn: a server that connects about 2 s after
// the thread loads is not in the turn's first model request; once it
// connected, the same turn's next request offers its tools and the
// model's call of one runs.
func TestE2EMCPLateServerJoinsTheTurn(t *testing.T) {
	t.Parallel()
	connected := make(chan struct{})
	chat := newChatServer(t,
		after(connected, chatCalls([3]string{"c1", "mcp__slow__echo", `{"text":"late"}`})),
		chatText("done"))
	e := startMCPChat(t, chat, func(dir string) map[string]any {
		return map[string]any{"slow": fixtureEntry(t, dir, "slow", nil, "-sleep", "2s")}
	})
	thread := e.chatThread(t, threadsRepo(t), protocol.ApprovalFullAccess)
	calls := e.turnCalls(t, thread, func() {
		e.waitTools(t, thread, "mcp__slow__echo")
		close(connected)
	})
	wantJoined(t, chat, "mcp__slow__", "mcp__slow__echo", "before the server connected", "after it connected")
	if it := calls["c1"]; it.Status != protocol.ToolCompleted || itemOutput(it) != "echo: late" {
		t.Errorf("c1 ended %s with %q", it.Status, itemOutput(it))
	}
}

// TestE2EMCPToolsChangeMidTurn: in one turn, a tool the server adds
// (tools/list_changed) is offered by the next model request and runs; a
// tool the server removes while its call waits for approval does not run
// and the model reads that it was withdrawn; the request after that no
// longer offers it.
func TestE2EMCPToolsChangeMidTurn(t *testing.T) {
	t.Parallel()
	added := make(chan struct{})
	chat := newChatServer(t,
		chatCalls([3]string{"c1", "mcp__fs__add_tool", `{}`}),
		after(added, chatCalls([3]string{"c2", "mcp__fs__late_tool", `{}`})),
		chatCalls([3]string{"c3", "mcp__fs__remove_tool", `{"text":"write_file"}`}, [3]string{"c4", "mcp__fs__write_file", `{"path":"x"}`}),
		chatText("done"))
	e := startMCPChat(t, chat, func(dir string) map[string]any {
		return map[string]any{"fs": fixtureEntry(t, dir, "fs", nil)}
	})
	thread := e.chatThread(t, threadsRepo(t), protocol.ApprovalAsk)
	e.waitTools(t, thread, "mcp__fs__write_file")
	asked := make(chan string, 4)
	client.Answer(e.c, protocol.ItemToolCallRequestApproval, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		asked <- p.ItemID + "=" + p.Tool
		if p.ItemID == "c4" {
			// Accepted only once the server withdrew the tool.
			e.waitNoTool(t, thread, "mcp__fs__write_file")
		}
		return protocol.ItemToolCallRequestApprovalResult{Decision: protocol.DecisionAccept}, nil
	})
	calls := e.turnCalls(t, thread, func() {
		e.waitTools(t, thread, "mcp__fs__late_tool")
		close(added)
	})
	offered := chat.offered(t, 4)
	if slices.Contains(offered[0], "mcp__fs__late_tool") {
		t.Errorf("the first request offered late_tool before it was added: %v", offered[0])
	}
	if !slices.Contains(offered[2], "mcp__fs__late_tool") || !slices.Contains(offered[2], "mcp__fs__write_file") {
		t.Errorf("the request after late_tool ran offered %v", offered[2])
	}
	if slices.Contains(offered[3], "mcp__fs__write_file") || !slices.Contains(offered[3], "mcp__fs__late_tool") {
		t.Errorf("the request after write_file was removed offered %v", offered[3])
	}
	if it := calls["c2"]; it.Status != protocol.ToolCompleted || itemOutput(it) != "late" {
		t.Errorf("c2 (late_tool) ended %s with %q", it.Status, itemOutput(it))
	}
	if it := calls["c4"]; it.Status != protocol.ToolFailed || !strings.Contains(itemOutput(it), `"mcp__fs__write_file" is no longer available`) {
		t.Errorf("c4 (withdrawn write_file) ended %s with %q", it.Status, itemOutput(it))
	}
	if _, err := os.Stat(filepath.Join(e.dir, "fs-wrote")); err == nil {
		t.Error("the withdrawn tool ran on the server")
	}
	if a := <-asked; a != "c4=mcp__fs__write_file" {
		t.Errorf("asked %s", a)
	}
}

// TestE2EMCPTrustAppliesToNewLoads: a thread loaded in an undecided
// project with a project MCP server does not connect it; after
// project/trust/set {trusted:true} that thread's next model request still
// has no mcp__proj__* (loaded runtimes are not rebuilt), and a thread
// started afterwards has them.
func TestE2EMCPTrustAppliesToNewLoads(t *testing.T) {
	t.Parallel()
	chat := newChatServer(t, chatText("old thread"), chatText("new thread"))
	e := startMCPChat(t, chat, func(string) map[string]any { return map[string]any{} })
	repo := threadsRepo(t)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"proj": fixtureEntry(t, e.dir, "proj", nil)}})
	writeFile(t, repo, ".knightcode/mcp.json", string(b))
	old := e.chatThread(t, repo, protocol.ApprovalFullAccess)
	e.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
	fresh := e.chatThread(t, repo, protocol.ApprovalFullAccess)
	e.waitTools(t, fresh, "mcp__proj__echo")
	// The new thread's server is connected: the old one's would be too
	// had it been started.
	if rows := e.waitTools(t, old); hasPrefixed(rows, "mcp__proj__") {
		t.Errorf("the thread loaded before the trust lists %v", rows)
	}
	e.turnCalls(t, old, nil)
	e.turnCalls(t, fresh, nil)
	wantJoined(t, chat, "mcp__proj__", "mcp__proj__echo", "of the thread loaded before the trust", "of the thread started after it")
}

// TestE2EMCPUnloadLeavesNoServer: a thread that loads and unloads at once
// (thread/resume with a bad cursor on a server that had not loaded it)
// leaves no MCP server process behind, nor does the first server's exit.
func TestE2EMCPUnloadLeavesNoServer(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, map[string]string{"m": script(map[string]any{"text": "hi"})}, func(dir string) map[string]any {
		return map[string]any{"fs": fixtureEntry(t, dir, "fs", nil, "-grandchild")}
	})
	started := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	thread := started.Thread.ID
	e.waitTools(t, thread, "mcp__fs__echo")
	if turn, _ := e.runTurn(t, thread, "hello"); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %s", turn.Status)
	}
	first := fixturePids(t, e.dir, "fs-")
	if err := e.c.Close(); err != nil {
		t.Errorf("server exit: %v", err)
	}
	waitGone(t, "the first server's MCP server after its exit", first, time.Second)

	b := startIn(t, e.home)
	if err := b.call(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread, Cursor: "bogus"}, nil); err == nil {
		t.Fatal("thread/resume with a bad cursor succeeded")
	}
	// The load started the server; the unload must end it, however far
	// its start got.
	time.Sleep(2 * time.Second)
	all := fixturePids(t, e.dir, "fs-")
	t.Logf("the unloaded thread's load started %d processes", len(all)-len(first))
	waitGone(t, "the MCP server after the thread unloaded", all, 5*time.Second)
}

// TestE2EMCPElicitationAndStatus: the mcp status reaches the client as
// ui/state; a server's elicitation during a tool call reaches it as
// ui/dialog (one per field) while the thread reports waitingOn
// ["dialog"], and the answers reach the server.
func TestE2EMCPElicitationAndStatus(t *testing.T) {
	t.Parallel()
	e := startMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__fs__ask", map[string]any{})),
		map[string]any{"text": "done"},
	)}, func(dir string) map[string]any {
		return map[string]any{"fs": fixtureEntry(t, dir, "fs", nil)}
	})
	dialogs := make(chan protocol.UIDialogParams)
	answers := make(chan string)
	client.Answer(e.c, protocol.UIDialog, func(_ context.Context, p protocol.UIDialogParams) (protocol.UIDialogResult, error) {
		dialogs <- p
		v := <-answers
		return protocol.UIDialogResult{Value: &v}, nil
	})
	mark := 0
	thread := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}}).Thread.ID
	e.waitNote(t, &mark, protocol.UIState.Name, func(r json.RawMessage) bool {
		p := decode[protocol.UIStateParams](t, r)
		return p.ThreadID == thread && slices.Contains(p.Statuses, protocol.UIStatus{Key: "mcp", Text: "MCP 1/1"})
	})
	e.waitTools(t, thread, "mcp__fs__ask")
	from := e.mark()
	mustCall(t, e.diffServer, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	for i, want := range []struct{ kind, answer string }{{"select", "blue"}, {"input", "3"}} {
		var d protocol.UIDialogParams
		select {
		case d = <-dialogs:
		case <-time.After(15 * time.Second):
			t.Fatalf("no ui/dialog %d", i+1)
		}
		if d.ThreadID != thread || d.Kind != want.kind || !strings.Contains(d.Title, "fs") {
			t.Errorf("dialog %d: %+v", i+1, d)
		}
		if i == 0 && !slices.Equal(d.Options, []string{"red", "blue"}) {
			t.Errorf("the select's options %q", d.Options)
		}
		e.waitNote(t, &mark, protocol.ThreadStatusChanged.Name, func(r json.RawMessage) bool {
			p := decode[protocol.ThreadStatusChangedParams](t, r)
			return p.ThreadID == thread && slices.Equal(p.Status.WaitingOn, []string{protocol.WaitingOnDialog})
		})
		answers <- want.answer
	}
	_, calls := turnItems(t, e.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name))
	var got struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(itemOutput(calls["c1"])), &got); err != nil || got.Action != "accept" ||
		got.Content["color"] != "blue" || got.Content["count"] != float64(3) {
		t.Errorf("the server got %q (%v)", itemOutput(calls["c1"]), err)
	}
}

// everythingServer is the reference MCP server's entry point, installed
// by .ci/run (npm ci --prefix testdata/mcp-everything).
const everythingServer = "../../testdata/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// TestE2EMCPReferenceServer runs @modelcontextprotocol/server-everything
// (over stdio, with node) in an ask-mode thread: its read-only tools run
// without asking and their results reach the thread (text, an image
// block, structuredContent), its environment holds none of the
// app-server's provider keys, a tool without readOnlyHint asks naming
// mcp__everything__<tool>, and get-roots-list answers the thread's cwd.
func TestE2EMCPReferenceServer(t *testing.T) {
	t.Parallel()
	entry, err := filepath.Abs(everythingServer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Skipf("the reference MCP server is not installed (run npm ci --prefix testdata/mcp-everything, as .ci/run does): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %v", err)
	}
	const openaiKey, anthropicKey = "sk-openai-e2e-never-shared-5151", "sk-ant-e2e-never-shared-6262"
	e := launchMCP(t, func(home string) {
		writeScripts(t, home, map[string]string{"m": script(
			toolReply(
				call("c1", "mcp__everything__echo", map[string]any{"message": "hello"}),
				call("c2", "mcp__everything__get-sum", map[string]any{"a": 2, "b": 40}),
				call("c3", "mcp__everything__get-tiny-image", map[string]any{}),
				call("c4", "mcp__everything__get-structured-content", map[string]any{"location": "Chicago"}),
				call("c5", "mcp__everything__get-env", map[string]any{}),
				call("c6", "mcp__everything__toggle-simulated-logging", map[string]any{}),
				call("c7", "mcp__everything__get-roots-list", map[string]any{})),
			map[string]any{"text": "done"},
		)})
	}, func(string) map[string]any {
		return map[string]any{"everything": map[string]any{"command": node, "args": []string{entry, "stdio"}}}
	}, "OPENAI_API_KEY="+openaiKey, "ANTHROPIC_API_KEY="+anthropicKey)
	asked := make(chan string, 8)
	client.Answer(e.c, protocol.ItemToolCallRequestApproval, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		asked <- p.ItemID + "=" + p.Tool
		return protocol.ItemToolCallRequestApprovalResult{Decision: protocol.DecisionAccept}, nil
	})
	repo := threadsRepo(t)
	thread := mustCall(t, e.diffServer, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalAsk,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}}).Thread.ID
	// get-roots-list is registered once the server knows the client
	// offers roots (tools/list_changed after initialize).
	e.waitTools(t, thread, "mcp__everything__echo", "mcp__everything__get-roots-list")
	calls := e.turnCalls(t, thread, nil)
	close(asked)
	var got []string
	for a := range asked {
		got = append(got, a)
	}
	if want := []string{"c6=mcp__everything__toggle-simulated-logging"}; !slices.Equal(got, want) {
		t.Errorf("approvals asked %q, want %q", got, want)
	}
	for id, want := range map[string]string{"c1": "Echo: hello", "c2": "The sum of 2 and 40 is 42."} {
		if it := calls[id]; it.Status != protocol.ToolCompleted || itemOutput(it) != want {
			t.Errorf("%s ended %s with %q, want %q", id, it.Status, itemOutput(it), want)
		}
	}
	// The toolCall item has the text; the toolResult message the model
	// reads (the session file) keeps the image block and the
	// structuredContent.
	if it := calls["c3"]; it.Status != protocol.ToolCompleted || !strings.HasPrefix(itemOutput(it), "Here's the image you requested:") {
		t.Errorf("get-tiny-image ended %s with %q", it.Status, itemOutput(it))
	}
	if it := calls["c4"]; it.Status != protocol.ToolCompleted || !strings.Contains(itemOutput(it), `"conditions"`) {
		t.Errorf("get-structured-content ended %s with %q", it.Status, itemOutput(it))
	}
	results := map[string]struct {
		Content []struct{ Type, MimeType, Data string }
		Details struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
	}{}
	file := e.readThread(t, thread).Thread.SessionFile
	for _, line := range strings.Split(readFile(t, filepath.Dir(file), filepath.Base(file)), "\n") {
		var entry struct {
			Message struct {
				Role, ToolCallID string
			}
		}
		if json.Unmarshal([]byte(line), &entry) != nil || entry.Message.Role != "toolResult" {
			continue
		}
		var full struct {
			Message struct {
				Content []struct{ Type, MimeType, Data string }
				Details struct {
					StructuredContent map[string]any `json:"structuredContent"`
				}
			}
		}
		_ = json.Unmarshal([]byte(line), &full)
		results[entry.Message.ToolCallID] = full.Message
	}
	if c := results["c3"].Content; !slices.ContainsFunc(c, func(b struct{ Type, MimeType, Data string }) bool {
		return b.Type == "image" && b.MimeType == "image/png" && len(b.Data) > 100
	}) {
		t.Errorf("the get-tiny-image result kept no PNG image block: %+v", c)
	}
	if sc := results["c4"].Details.StructuredContent; sc["conditions"] == nil || sc["temperature"] == nil {
		t.Errorf("the get-structured-content result kept no structuredContent: %v", sc)
	}
	env := itemOutput(calls["c5"])
	if calls["c5"].Status != protocol.ToolCompleted || !strings.Contains(env, `"PATH"`) {
		t.Errorf("get-env ended %s with %.300q", calls["c5"].Status, env)
	}
	for _, key := range []string{openaiKey, anthropicKey, "OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		if strings.Contains(env, key) {
			t.Errorf("the MCP server's environment holds %s", key)
		}
	}
	if it := calls["c6"]; it.Status != protocol.ToolCompleted {
		t.Errorf("c6 ended %s with %q", it.Status, itemOutput(it))
	}
	root := "file://" + repo
	if it := calls["c7"]; it.Status != protocol.ToolCompleted || !strings.Contains(itemOutput(it), "URI: "+root+"\n") && !strings.HasSuffix(itemOutput(it), "URI: "+root) {
		t.Errorf("get-roots-list ended %s with %q, want the root %s", it.Status, itemOutput(it), root)
	}
}
