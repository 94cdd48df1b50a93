package main

// End-to-end tests of the MCP runtime's HTTP transports and OAuth sign-in
// (issue 27; EXTENSIBILITY.md §2 "Transports", "OAuth sign-in"): go-sdk
// servers in the test process (streamable HTTP and legacy SSE, one behind
// a local authorization server, package mcpauth/authtest), the binary as
// the client, a scripted model calling their tools.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/mcp/mcpauth/authtest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// httpMCP is a go-sdk MCP server with the tool "echo", served over
// streamable HTTP and legacy SSE by one httptest server, that records the
// X-Api-Key header of every request and can lose a session once.
type httpMCP struct {
	srv *httptest.Server
	// expire makes the next request carrying an Mcp-Session-Id answer 404
	// (a lost session).
	expire atomic.Bool
	inits  atomic.Int32 // initialize requests over streamable HTTP

	mu   sync.Mutex
	keys []string
}

func newHTTPMCP(t *testing.T) *httpMCP {
	t.Helper()
	h := &httpMCP{}
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "web", Version: "1"}, nil)
	mcpsdk.AddTool(server, &mcpsdk.Tool{Name: "echo"}, func(_ context.Context, _ *mcpsdk.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	streamable := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil)
	sse := mcpsdk.NewSSEHandler(func(*http.Request) *mcpsdk.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") != "" && r.Method == http.MethodPost && h.expire.CompareAndSwap(true, false) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		if r.Header.Get("Mcp-Session-Id") == "" && r.Method == http.MethodPost {
			h.inits.Add(1)
		}
		streamable.ServeHTTP(w, r)
	}))
	mux.Handle("/sse", sse)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.keys = append(h.keys, r.URL.Path+"="+r.Header.Get("X-Api-Key"))
		h.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.srv.Close()
		// The session lost on purpose stays open on the server's side.
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	return h
}

// seen are the X-Api-Key headers received, as "<path>=<value>".
func (h *httpMCP) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.keys)
}

// startHTTPMCPServer starts the binary with scripts, the MCP servers
// entries as its global mcp.json and extra environment; it returns the
// server and its stderr.
func startHTTPMCPServer(t *testing.T, scripts map[string]string, entries map[string]any, extra ...string) (*diffServer, *rpctest.SyncBuffer) {
	t.Helper()
	env, home := testEnv(t)
	writeScripts(t, home, scripts)
	b, _ := json.Marshal(map[string]any{"mcpServers": entries})
	writeAgentFile(t, home, "mcp.json", b)
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(env, extra...)
	return serveDiff(t, cmd, home)
}

// TestE2EMCPHTTPTransports: a streamable HTTP server and a legacy SSE
// server, both with a header whose value comes from ${MCP_KEY}: the model
// calls both servers' tools; the header reaches them and its value is in
// no answer, notification or log line; a streamable session that is lost
// (HTTP 404) is reinitialized once and the call retried.
func TestE2EMCPHTTPTransports(t *testing.T) {
	t.Parallel()
	const secret = "hdr-s3cret-value"
	h := newHTTPMCP(t)
	hdr := map[string]any{"X-Api-Key": "${MCP_KEY}"}
	s, stderr := startHTTPMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__web__echo", map[string]any{"text": "a"}), call("c2", "mcp__old__echo", map[string]any{"text": "b"})),
		map[string]any{"text": "first"},
		toolReply(call("c3", "mcp__web__echo", map[string]any{"text": "c"})),
		map[string]any{"text": "second"},
	)}, map[string]any{
		"web": map[string]any{"url": h.srv.URL + "/mcp", "headers": hdr},
		"old": map[string]any{"type": "sse", "url": h.srv.URL + "/sse", "headers": hdr},
	}, "MCP_KEY="+secret)
	e := &mcpEnv{diffServer: s}
	var answers []string
	keep := func(v any) { b, _ := json.Marshal(v); answers = append(answers, string(b)) }
	listed := mustCall(t, s, protocol.McpList, protocol.McpListParams{})
	keep(listed)
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	keep(started)
	thread := started.Thread.ID
	keep(e.waitTools(t, thread, "mcp__web__echo", "mcp__old__echo"))

	outputs := func() map[string]string {
		from := s.mark()
		keep(mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"}))
		out := map[string]string{}
		for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
			if it.Output != nil {
				out[it.ID] = string(it.Status) + " " + *it.Output
			}
		}
		return out
	}
	got := outputs()
	if got["c1"] != "completed echo: a" || got["c2"] != "completed echo: b" {
		t.Errorf("first turn: %v", got)
	}
	inits := h.inits.Load()
	h.expire.Store(true)
	if got := outputs(); got["c3"] != "completed echo: c" {
		t.Errorf("the call after a lost session: %v", got)
	}
	if h.expire.Load() {
		t.Error("the lost session was never met")
	}
	if n := h.inits.Load(); n != inits+1 {
		t.Errorf("initialize requests after the lost session: %d, want %d", n, inits+1)
	}
	for _, path := range []string{"/mcp", "/sse"} {
		if !slices.Contains(h.seen(), path+"="+secret) {
			t.Errorf("no request to %s carried the header: %v", path, h.seen())
		}
	}
	for _, n := range s.since(0) {
		answers = append(answers, string(n.Params))
	}
	for _, a := range append(answers, stderr.String()) {
		if strings.Contains(a, secret) {
			t.Fatalf("the header's value leaked: %s", a)
		}
	}
}

// opener puts a recording xdg-open first on a PATH for the binary: it
// writes each argument on a line of its own to the returned file and
// exits. It returns the PATH entry and the record file.
func opener(t *testing.T) (pathEnv, record string) {
	t.Helper()
	dir := t.TempDir()
	record = filepath.Join(dir, "opened")
	sh := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + record + "'; done\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), record
}

// waitOpened waits for the opener's record and returns its lines.
func waitOpened(t *testing.T, record string) []string {
	t.Helper()
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for {
		if b, err := os.ReadFile(record); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		}
		if time.Now().After(deadline) {
			t.Fatal("the opener was never called")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStatus waits until the "mcp" status of thread holds want: in
// snapshot (the statuses of its start result), in a ui/state, or in the
// ui snapshot of a thread/resume (a status set between the start's
// snapshot and its subscription reaches no client).
func waitStatus(t *testing.T, s *diffServer, thread, want string, snapshot []protocol.UIStatus) {
	t.Helper()
	has := func(sts []protocol.UIStatus) bool {
		return slices.ContainsFunc(sts, func(st protocol.UIStatus) bool {
			return st.Key == "mcp" && strings.Contains(st.Text, want)
		})
	}
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for !has(snapshot) {
		for _, n := range s.since(0) {
			var p protocol.UIStateParams
			if n.Method == protocol.UIState.Name && json.Unmarshal(n.Params, &p) == nil && p.ThreadID == thread && has(p.Statuses) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mcp status of %s never held %q", thread, want)
		}
		time.Sleep(100 * time.Millisecond)
		snapshot = mustCall(t, s, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread}).UI.Statuses
	}
}

// TestE2EMCPSignIn: an OAuth-protected streamable server starts as "sign-in
// required" (a warning naming /mcp login docs) in two loaded threads;
// "/mcp login docs" in one answers handled, sends the authorization URL as
// ui/notify and passes it, as its one argument, to xdg-open; once the
// browser (the test) follows it, both threads connect without a reload
// and the model's next turn calls the server's tool. mcp-auth.json is
// 0600 and the log holds no token.
func TestE2EMCPSignIn(t *testing.T) {
	t.Parallel()
	as := authtest.NewAuthServer(t, "")
	endpoint := authtest.NewMCPServer(t, as)
	path, record := opener(t)
	s, stderr := startHTTPMCPServer(t, map[string]string{"m": script(
		toolReply(call("c1", "mcp__docs__whoami", map[string]any{})),
		map[string]any{"text": "done"},
	)}, map[string]any{"docs": map[string]any{"url": endpoint}}, path)
	e := &mcpEnv{diffServer: s}
	repo := threadsRepo(t)
	const hint = "docs: sign-in required: run /mcp login docs"
	var threads []string
	for range 2 {
		started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess",
			Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
		th := started.Thread.ID
		threads = append(threads, th)
		waitStatus(t, s, th, hint, started.UI.Statuses)
		// The thread was warned: a warning of its start result when the
		// 401 came while it loaded, else a warning notification, which
		// the threads layer drops when it comes between the load and the
		// start's subscription; its log line is always there.
		deadline := time.Now().Add(rpctest.DefaultTimeout)
		for !strings.Contains(stderr.String(), "thread="+th) || !slices.ContainsFunc(strings.Split(stderr.String(), "\n"), func(l string) bool {
			return strings.Contains(l, "thread="+th) && strings.Contains(l, hint)
		}) {
			if time.Now().After(deadline) {
				t.Fatalf("thread %s was not warned %q", th, hint)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	from := s.mark()
	res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: threads[0], Text: "/mcp login docs"})
	if res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /mcp login: %+v", res)
	}
	raw := s.waitNote(t, &from, protocol.UINotify.Name, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), "/authorize?")
	})
	n := decode[protocol.UINotifyParams](t, raw)
	authURL := n.Message[strings.Index(n.Message, "http"):]
	if n.ThreadID != threads[0] || n.Level != "info" || !strings.HasPrefix(authURL, as.URL()+"/authorize?") {
		t.Fatalf("ui/notify %+v", n)
	}
	if opened := waitOpened(t, record); len(opened) != 1 || opened[0] != authURL {
		t.Fatalf("xdg-open got %q, want the one argument %q", opened, authURL)
	}
	resp, err := http.Get(authURL) // the browser: to the authorization server, then the loopback redirect
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the sign-in page answered %s", resp.Status)
	}
	for _, th := range threads {
		e.waitTools(t, th, "mcp__docs__whoami")
	}
	from = s.mark()
	mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: threads[0], Text: "go"})
	items := completedItems(t, s.threadNotes(t, from, threads[0], protocol.TurnCompletedNotification.Name))
	if i := slices.IndexFunc(items, func(it protocol.Item) bool { return it.ID == "c1" }); i < 0 ||
		items[i].Status != protocol.ToolCompleted || items[i].Output == nil || *items[i].Output != "signed-in" {
		t.Errorf("the call after the sign-in: %+v", items)
	}
	st, err := os.Stat(filepath.Join(s.home, "agent", "mcp-auth.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mcp-auth.json: %v, mode %v", err, st.Mode())
	}
	for _, secret := range as.Secrets() {
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("the log holds a secret (%s…)", secret[:4])
		}
	}
}

// TestE2EMCPSignInUnsafeAndExit: discovery naming a plain-http
// authorization endpoint away from loopback ends /mcp login before
// anything is opened, with the status "sign-in failed: unsafe
// authorization URL"; a later sign-in left pending in the browser does not
// delay the server's exit.
func TestE2EMCPSignInUnsafeAndExit(t *testing.T) {
	t.Parallel()
	as := authtest.NewAuthServer(t, "")
	endpoint := authtest.NewMCPServer(t, as)
	path, record := opener(t)
	as.SetEndpoint("authorization", "http://evil.example/a")
	s, _ := startHTTPMCPServer(t, map[string]string{"m": script()}, map[string]any{"docs": map[string]any{"url": endpoint}}, path)
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "m"}})
	thread := started.Thread.ID
	waitStatus(t, s, thread, "docs: sign-in required", started.UI.Statuses)
	from := s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/mcp login docs"}); res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /mcp login: %+v", res)
	}
	// The failure is said to the person who ran the command.
	s.waitNote(t, &from, protocol.UINotify.Name, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"error"`) && strings.Contains(string(raw), "sign-in to docs failed") && strings.Contains(string(raw), "unsafe URL")
	})
	waitStatus(t, s, thread, "docs: sign-in failed: unsafe authorization URL", nil)
	if _, err := os.Stat(record); !os.IsNotExist(err) {
		t.Fatalf("the opener was called for an unsafe URL (%v)", err)
	}

	as.SetEndpoint("authorization", "")
	from = s.mark()
	mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/mcp login docs"})
	s.waitNote(t, &from, protocol.UINotify.Name, func(raw json.RawMessage) bool { return strings.Contains(string(raw), "/authorize?") })
	waitOpened(t, record)
	begin := time.Now()
	if err := s.c.Close(); err != nil {
		t.Errorf("server exit: %v", err)
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("the server took %v to exit with a sign-in pending", d)
	}
}
