package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestServer returns a server logging to the test's output (and to log
// when it is not nil).
func newTestServer(t *testing.T, cfg Config, log io.Writer) *Server {
	t.Helper()
	var w io.Writer = t.Output()
	if log != nil {
		w = io.MultiWriter(w, log)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	return NewServer(cfg)
}

// handleTest installs a handler for a test method that is not in the
// product's method table.
func handleTest[P, R any](s *Server, name string, rule protocol.Serialization, h func(context.Context, *Conn, P) (R, error)) {
	s.handlers[name] = newHandlerEntry(protocol.Method{
		Name: name, Direction: protocol.ClientRequestDir, Serialization: rule,
		Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R](),
	}, h)
}

// served is a connection served by ServeConn over in-memory pipes.
type served struct {
	*rpctest.Peer
	in   *io.PipeWriter // the server's input
	done chan error     // ServeConn's result
}

// connect serves one more connection of srv and returns its raw peer.
func connect(t *testing.T, srv *Server) *served {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	s := &served{in: clientOut, done: make(chan error, 1)}
	go func() { s.done <- srv.ServeConn(context.Background(), serverIn, serverOut) }()
	t.Cleanup(func() {
		clientOut.Close()
		if err := <-s.done; err != nil && !errors.Is(err, ErrShuttingDown) {
			t.Logf("ServeConn: %v", err)
		}
	})
	s.Peer = rpctest.NewPeer(t, clientOut, clientIn)
	return s
}

// sendIgnoringErrors writes a line to a connection whose input may already be
// closed.
func (s *served) sendIgnoringErrors(line string) {
	_, _ = s.in.Write([]byte(line + "\n"))
}

func wantPlatform(t *testing.T) string {
	t.Helper()
	goos := runtime.GOOS
	if goos == "windows" {
		goos = "win32"
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	b, _ := json.Marshal(map[string]string{"os": goos, "arch": nodeArch(runtime.GOARCH), "homeDir": home})
	return string(b)
}

// TestHandshakeScripts plays protocol scripts against a fresh connection each.
func TestHandshakeScripts(t *testing.T) {
	platform := wantPlatform(t)
	initResult := `{"id":1,"result":{"serverInfo":{"name":"knightcode","version":"test"},"platform":` + platform + `}}`
	initialize := `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"}}}`
	initialized := `{"method":"initialized","params":{}}`
	tooMany := make([]string, protocol.MaxOptOutNotifications+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("m%d", i)
	}
	tooManyJSON, _ := json.Marshal(tooMany)
	exactly := tooManyJSON[:0]
	exactly, _ = json.Marshal(tooMany[:protocol.MaxOptOutNotifications])

	tests := []struct {
		name  string
		steps []rpctest.Step
	}{
		{"handshake order", []rpctest.Step{
			{Send: `{"id":"a","method":"server/nothing"}`},
			{Expect: `{"id":"a","error":{"code":"notInitialized","message":"server/nothing before the handshake finished: send initialize, wait for its result, then send initialized"}}`},
			{Send: initialize},
			{Expect: initResult},
			{Send: `{"id":2,"method":"server/diagnostics","params":{}}`},
			{Expect: `{"id":2,"error":{"code":"notInitialized","message":"server/diagnostics before the handshake finished: send initialize, wait for its result, then send initialized"}}`},
			{Send: initialized},
			{Send: `{"id":3,"method":"no/such"}`},
			{Expect: `{"id":3,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
			{Send: `{"id":4,"method":"error","params":{}}`},
			{Expect: `{"id":4,"error":{"code":"methodNotFound","message":"error is not a client request"}}`},
		}},
		{"second initialize refused", []rpctest.Step{
			{Send: initialize},
			{Expect: initResult},
			{Send: `{"id":"again","method":"initialize","params":{}}`},
			{Expect: `{"id":"again","error":{"code":"invalidParams","message":"the connection is already initialized; initialize is sent once"}}`},
			{Send: initialized},
			{Send: `{"id":"again2","method":"initialize","params":{}}`},
			{Expect: `{"id":"again2","error":{"code":"invalidParams","message":"the connection is already initialized; initialize is sent once"}}`},
		}},
		{"invalid initialize params", []rpctest.Step{
			{Send: `{"id":1,"method":"initialize","params":[]}`},
			{Expect: `{"id":1,"error":{"code":"invalidParams","message":"params must be a JSON object, got array"}}`},
			{Send: `{"id":2,"method":"initialize","params":{"capabilities":{"optOutNotifications":"error"}}}`},
			{Expect: `{"id":2,"error":{"code":"invalidParams","message":"capabilities.optOutNotifications: expected array, got string","data":{"field":"capabilities.optOutNotifications"}}}`},
			{Send: `{"id":3,"method":"initialize","params":{"capabilities":{"optOutNotifications":` + string(tooManyJSON) + `}}}`},
			{Expect: `{"id":3,"error":{"code":"invalidParams","message":"capabilities.optOutNotifications: at most 256 method names, got 257","data":{"field":"capabilities.optOutNotifications"}}}`},
			// clientInfo.name is required, its version is not.
			{Send: `{"id":4,"method":"initialize","params":{"clientInfo":{"version":"1"}}}`},
			{Expect: `{"id":4,"error":{"code":"invalidParams","message":"clientInfo.name: required","data":{"field":"clientInfo.name"}}}`},
			// Unknown members are refused at any depth (issue 8: client and
			// server ship together); unknown opt-out names are tolerated.
			{Send: `{"id":5,"method":"initialize","params":{"future":true}}`},
			{Expect: `{"id":5,"error":{"code":"invalidParams","message":"future: unknown field; expected clientInfo, capabilities","data":{"field":"future"}}}`},
			{Send: `{"id":6,"method":"initialize","params":{"capabilities":{"experimentalApi":true}}}`},
			{Expect: `{"id":6,"error":{"code":"invalidParams","message":"capabilities.experimentalApi: unknown field; expected optOutNotifications, mode","data":{"field":"capabilities.experimentalApi"}}}`},
			// capabilities.mode is desktop or terminal (issue 11).
			{Send: `{"id":7,"method":"initialize","params":{"capabilities":{"mode":"web"}}}`},
			{Expect: `{"id":7,"error":{"code":"invalidParams","message":"capabilities.mode: must be \"desktop\" or \"terminal\", got \"web\"","data":{"field":"capabilities.mode"}}}`},
			// Refusals leave the connection uninitialized: a valid initialize
			// with exactly 256 names, unknown ones among them, still works.
			{Send: `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t","version":"1"},"capabilities":{"optOutNotifications":` + string(exactly) + `}}}`},
			{Expect: initResult},
		}},
		{"ids echoed exactly", []rpctest.Step{
			{Send: `{"id":1.50,"method":"no/such"}`},
			{ExpectRaw: `{"id":1.50,"error":{"code":"notInitialized","message":"no/such before the handshake finished: send initialize, wait for its result, then send initialized"}}`},
			{Send: `{"id":"\u0041b","method":"initialize","params":{}}`},
			{Expect: strings.Replace(initResult, `"id":1`, `"id":"Ab"`, 1)},
			{Send: initialized},
			{Send: `{"jsonrpc":"2.0","id":-0,"method":"no/such"}`},
			{ExpectRaw: `{"id":-0,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
			{Send: `{"id" : 1e3 ,"method":"no/such"}`},
			{ExpectRaw: `{"id":1e3,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
			{Send: `{"id":"\u0041b","method":"no/such"}`},
			{ExpectRaw: `{"id":"\u0041b","error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
			{Send: `{"id":12345678901234567890123,"method":"no/such"}`},
			{ExpectRaw: `{"id":12345678901234567890123,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
		}},
		{"garbage lines", []rpctest.Step{
			{Send: `not json`},
			{Expect: `{"method":"error","params":{"code":"parseError","message":"invalid JSON: invalid character 'o' in literal null (expecting 'u')"}}`},
			{Send: `{"id":"cut","method":"initialize","params":{`},
			{Expect: `{"id":"cut","error":{"code":"parseError","message":"invalid JSON: unexpected end of JSON input"}}`},
			{Send: `{"id":5,"method":7}`},
			{Expect: `{"id":5,"error":{"code":"parseError","message":"not a JSON-RPC message: json: cannot unmarshal number into Go struct field message.method of type string"}}`},
			{Send: `[]`},
			{Expect: `{"method":"error","params":{"code":"parseError","message":"not a JSON-RPC message: json: cannot unmarshal array into Go value of type jsonrpc.message"}}`},
			{Send: `{"id":{"a":1},"method":"x"}`},
			{Expect: `{"method":"error","params":{"code":"parseError","message":"id must be a JSON string or number, got {\"a\":1}"}}`},
			{Send: `   `},
			{Send: initialize},
			{Expect: initResult},
		}},
		{"initialized before initialize", []rpctest.Step{
			{Send: initialized},
			{Expect: `{"method":"error","params":{"code":"notInitialized","message":"initialized before the initialize response: send initialize first"}}`},
			{Send: initialize},
			{Expect: initResult},
		}},
		{"client notifications and stray replies ignored", []rpctest.Step{
			{Send: initialize},
			{Expect: initResult},
			{Send: initialized},
			{Send: `{"method":"some/notification","params":{}}`},
			{Send: `{"id":99,"result":{}}`},
			{Send: `{"id":"x","error":{"code":"internal","message":"m"}}`},
			{Send: `{"id":5,"method":"no/such"}`},
			{Expect: `{"id":5,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
		}},
		{"stdin EOF ends the connection", []rpctest.Step{
			{Send: initialize},
			{Expect: initResult},
			{CloseInput: true},
			{ExpectEOF: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, Config{}, nil)
			rpctest.Run(t, connect(t, srv).Peer, tt.steps)
		})
	}
}

func TestNodeArch(t *testing.T) {
	t.Parallel()
	for goarch, want := range map[string]string{"amd64": "x64", "386": "ia32", "arm64": "arm64", "arm": "arm", "ppc64le": "ppc64", "s390x": "s390x", "riscv64": "riscv64"} {
		if got := nodeArch(goarch); got != want {
			t.Errorf("nodeArch(%s) = %s, want %s", goarch, got, want)
		}
	}
}

// handshake initializes a connection, opting out of optOut.
func handshake(t *testing.T, s *served, optOut ...string) {
	t.Helper()
	b, _ := json.Marshal(optOut)
	s.Send(`{"id":"init","method":"initialize","params":{"capabilities":{"optOutNotifications":` + string(b) + `}}}`)
	if line := s.Next(); !bytes.HasPrefix(line, []byte(`{"id":"init","result":`)) {
		t.Fatalf("initialize: %s", line)
	}
	s.Send(`{"method":"initialized","params":{}}`)
}

// TestOptOutFiltersNotifications checks that opt-outs filter notifications of
// their connection only, and never responses or server requests.
func TestOptOutFiltersNotifications(t *testing.T) {
	srv := newTestServer(t, Config{MaxLineBytes: 200}, nil)
	handleTest(srv, "test/ask", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (json.RawMessage, error) {
		return c.call(ctx, "test/question", nil)
	})
	handleTest(srv, "test/broadcast", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		return "sent", Broadcast(srv, protocol.ErrorNotification, protocol.ErrorParams{Message: "to all"})
	})
	quiet, loud, fresh := connect(t, srv), connect(t, srv), connect(t, srv)
	handshake(t, quiet, "error", "test/question", "unknown/name")
	handshake(t, loud)

	// A garbage line makes an error notification: quiet gets only the
	// response that follows it.
	for _, s := range []*served{quiet, loud} {
		s.Send(`garbage`)
		s.Send(`{"id":1,"method":"no/such"}`)
	}
	loud.Expect(`{"method":"error","params":{"code":"parseError","message":"invalid JSON: invalid character 'g' looking for beginning of value"}}`)
	for _, s := range []*served{quiet, loud} {
		s.Expect(`{"id":1,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`)
	}
	// An oversized line too.
	quiet.Send(`{"id":"big","x":"` + strings.Repeat("x", 300) + `"}`)
	quiet.Send(`{"id":2,"method":"no/such"}`)
	quiet.Expect(`{"id":2,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`)

	// Broadcast reaches initialized connections that did not opt out.
	loud.Send(`{"id":3,"method":"test/broadcast"}`)
	first := loud.Next()
	second := loud.Next()
	got := []string{string(first), string(second)}
	if !(strings.Contains(got[0], "to all") || strings.Contains(got[1], "to all")) || !strings.Contains(strings.Join(got, ""), `"result":"sent"`) {
		t.Errorf("loud after broadcast: %q", got)
	}
	quiet.Send(`{"id":4,"method":"no/such"}`)
	quiet.Expect(`{"id":4,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`)
	fresh.Send(`{"id":5,"method":"no/such"}`)
	fresh.Expect(`{"id":5,"error":{"code":"notInitialized","message":"no/such before the handshake finished: send initialize, wait for its result, then send initialized"}}`)

	// A server request is never filtered, even when its method is opted out.
	quiet.Send(`{"id":6,"method":"test/ask"}`)
	quiet.Expect(`{"id":1,"method":"test/question"}`)
	quiet.Send(`{"id":1,"result":{"yes":true}}`)
	quiet.Expect(`{"id":6,"result":{"yes":true}}`)
}

// TestOversizedLine checks that a line over the limit is dropped with an
// error notification carrying its id, and the connection goes on.
func TestOversizedLine(t *testing.T) {
	srv := newTestServer(t, Config{MaxLineBytes: 100}, nil)
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":"big","method":"no/such","params":"` + strings.Repeat("a", 200) + `"}`)
	s.Expect(`{"method":"error","params":{"code":"parseError","message":"line of 243 bytes exceeds the 100-byte limit; dropped","id":"big"}}`)
	s.Send(`{"id":2,"method":"no/such"}`)
	s.Expect(`{"id":2,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`)
}

type threadReq struct {
	ThreadID string `json:"threadId,omitempty"`
	N        int    `json:"n"`
}

func (p threadReq) ThreadKey() string { return p.ThreadID }

// TestPerThreadSerialization checks that requests of one thread run one
// after another in arrival order while other threads run concurrently.
func TestPerThreadSerialization(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	release := make(chan struct{})
	started := make(chan string, 10)
	handleTest(srv, "test/thread", protocol.PerThread, func(ctx context.Context, c *Conn, p threadReq) (string, error) {
		id := fmt.Sprintf("%s/%d", p.ThreadID, p.N)
		started <- id
		if id == "t1/1" {
			<-release
		}
		return id, nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":1,"method":"test/thread","params":{"threadId":"t1","n":1}}`)
	s.Send(`{"id":2,"method":"test/thread","params":{"threadId":"t1","n":2}}`)
	s.Send(`{"id":3,"method":"test/thread","params":{"threadId":"t2","n":1}}`)
	s.Send(`{"id":4,"method":"test/thread","params":{"n":9}}`)
	// t2 and the thread-less request complete while t1/1 is blocked.
	got := map[string]bool{string(s.Next()): true, string(s.Next()): true}
	want := map[string]bool{`{"id":3,"result":"t2/1"}`: true, `{"id":4,"result":"/9"}`: true}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("responses while t1 is blocked (-got +want):\n%s", diff)
	}
	var order []string
	for range 3 {
		order = append(order, <-started)
	}
	if order[0] != "t1/1" && !strings.Contains(strings.Join(order, ","), "t1/1") {
		t.Errorf("t1/1 did not start: %v", order)
	}
	for _, id := range order {
		if id == "t1/2" {
			t.Fatalf("t1/2 started before t1/1 finished: %v", order)
		}
	}
	close(release)
	s.Expect(`{"id":1,"result":"t1/1"}`)
	s.Expect(`{"id":2,"result":"t1/2"}`)
	if got := <-started; got != "t1/2" {
		t.Errorf("last start %s, want t1/2", got)
	}
}

// TestConcurrentAndInline checks that concurrent handlers run in parallel and
// an inline handler completes before the next line is read.
func TestConcurrentAndInline(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	meet := make(chan struct{})
	handleTest(srv, "test/wait", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		<-meet
		return "met", nil
	})
	handleTest(srv, "test/meet", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		close(meet)
		return "closed", nil
	})
	var mu sync.Mutex
	value := ""
	handleTest(srv, "test/set", protocol.Inline, func(ctx context.Context, c *Conn, p struct{ V string }) (struct{}, error) {
		mu.Lock()
		defer mu.Unlock()
		value = p.V
		return struct{}{}, nil
	})
	handleTest(srv, "test/get", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return value, nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":1,"method":"test/wait"}`)
	s.Send(`{"id":2,"method":"test/meet"}`)
	got := map[string]bool{string(s.Next()): true, string(s.Next()): true}
	want := map[string]bool{`{"id":1,"result":"met"}`: true, `{"id":2,"result":"closed"}`: true}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	for i := range 20 {
		s.Send(fmt.Sprintf(`{"id":"s%d","method":"test/set","params":{"V":"v%d"}}`, i, i))
		s.Send(fmt.Sprintf(`{"id":"g%d","method":"test/get"}`, i))
		s.Expect(fmt.Sprintf(`{"id":"s%d","result":{}}`, i))
		s.Expect(fmt.Sprintf(`{"id":"g%d","result":"v%d"}`, i, i))
	}
}

// TestInFlightLimitWaits checks backpressure (issue 15: 2,000 pipelined
// requests got 426 "too many requests in flight"): past MaxInFlight running
// requests the next one waits instead of being refused, starts when one
// finishes, and turn/interrupt and inline requests are still handled
// meanwhile.
func TestInFlightLimitWaits(t *testing.T) {
	srv := newTestServer(t, Config{MaxInFlight: 2}, nil)
	release := make(chan struct{})
	handleTest(srv, "test/block", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{ N int }) (int, error) {
		<-release
		return p.N, nil
	})
	handleTest(srv, "test/inline", protocol.Inline, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		return "inline", nil
	})
	handleTest(srv, protocol.TurnInterrupt.Name, protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		return "interrupted", nil
	})
	s := connect(t, srv)
	handshake(t, s)
	for n := 1; n <= 4; n++ {
		s.Send(fmt.Sprintf(`{"id":%d,"method":"test/block","params":{"N":%d}}`, n, n))
	}
	s.Send(`{"id":"i","method":"test/inline"}`)
	s.Expect(`{"id":"i","result":"inline"}`)
	s.Send(`{"id":"t","method":"turn/interrupt"}`)
	s.Expect(`{"id":"t","result":"interrupted"}`)
	got := map[string]bool{}
	for range 4 {
		release <- struct{}{}
		got[string(s.Next())] = true
	}
	want := map[string]bool{}
	for n := 1; n <= 4; n++ {
		want[fmt.Sprintf(`{"id":%d,"result":%d}`, n, n)] = true
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// TestQueuedInputPausesReading checks that once waiting requests hold more
// than MaxQueuedInput bytes the connection stops reading input until they
// drain, then goes on in order.
func TestQueuedInputPausesReading(t *testing.T) {
	srv := newTestServer(t, Config{MaxInFlight: 1, MaxQueuedInput: 10}, nil)
	release := make(chan struct{})
	handleTest(srv, "test/block", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{ N int }) (int, error) {
		<-release
		return p.N, nil
	})
	handleTest(srv, "test/inline", protocol.Inline, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		return "inline", nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":1,"method":"test/block","params":{"N":1}}`)
	s.Send(`{"id":2,"method":"test/block","params":{"N":2}}`) // waits, and its 48 bytes pass the 10
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		s.Send(`{"id":"i","method":"test/inline"}`)
	}()
	select {
	case <-sent:
		t.Fatal("the server read on while waiting requests held more than MaxQueuedInput bytes")
	case <-time.After(200 * time.Millisecond):
	}
	release <- struct{}{}
	s.Expect(`{"id":1,"result":1}`)
	s.Expect(`{"id":"i","result":"inline"}`) // read once request 2 started
	<-sent
	release <- struct{}{}
	s.Expect(`{"id":2,"result":2}`)
}

var errMissing = errors.New("thread gone")

// TestHandlerErrors checks error mapping, logging of unmapped causes, and
// panics.
func TestHandlerErrors(t *testing.T) {
	var log rpctest.SyncBuffer
	srv := newTestServer(t, Config{ErrorMappers: []ErrorMapper{MapSentinel(errMissing, protocol.CodeThreadNotFound)}}, &log)
	handleTest(srv, "test/fail", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{ Kind string }) (string, error) {
		switch p.Kind {
		case "mapped":
			return "", fmt.Errorf("load t1: %w", errMissing)
		case "wire":
			return "", &Error{Code: protocol.CodeGitConflict, Message: "changed", Data: map[string]any{"reason": "diffChanged", "paths": []string{"a"}}}
		case "panic":
			panic("boom")
		}
		return "", errors.New("disk on fire")
	})
	s := connect(t, srv)
	handshake(t, s)
	rpctest.Run(t, s.Peer, []rpctest.Step{
		{Send: `{"id":1,"method":"test/fail","params":{"Kind":"mapped"}}`},
		{Expect: `{"id":1,"error":{"code":"threadNotFound","message":"load t1: thread gone"}}`},
		{Send: `{"id":2,"method":"test/fail","params":{"Kind":"wire"}}`},
		{Expect: `{"id":2,"error":{"code":"gitConflict","message":"changed","data":{"reason":"diffChanged","paths":["a"]}}}`},
		{Send: `{"id":3,"method":"test/fail","params":{"Kind":"other"}}`},
		{Expect: `{"id":3,"error":{"code":"internal","message":"internal error"}}`},
		{Send: `{"id":4,"method":"test/fail","params":{"Kind":"panic"}}`},
		{Expect: `{"id":4,"error":{"code":"internal","message":"internal error"}}`},
		{Send: `{"id":5,"method":"no/such"}`},
		{Expect: `{"id":5,"error":{"code":"methodNotFound","message":"unknown method no/such"}}`},
	})
	for _, want := range []string{`msg="request failed" conn=1 method=test/fail err="disk on fire"`, `msg="handler panicked" conn=1 method=test/fail panic=boom`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

type fakeCounters struct{}

func (fakeCounters) ThreadCounters() protocol.ThreadCounters {
	return protocol.ThreadCounters{LoadedThreads: 3, LoadingThreads: 1, PayloadFiles: 2, PayloadBytes: 2048,
		InactiveFactories: 5, ListingFilesOpened: 7, ListingBytesScanned: 9000}
}

func TestDiagnostics(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	s := connect(t, srv)
	handshake(t, s)
	read := func(id int) protocol.ServerDiagnosticsResult {
		t.Helper()
		s.Send(fmt.Sprintf(`{"id":%d,"method":"server/diagnostics","params":{}}`, id))
		var res struct {
			Result protocol.ServerDiagnosticsResult `json:"result"`
		}
		if err := json.Unmarshal(s.Next(), &res); err != nil {
			t.Fatal(err)
		}
		return res.Result
	}
	before := read(1)
	if before.RSSBytes <= 0 || before.HeapBytes <= 0 || before.UptimeMs < 0 {
		t.Errorf("process counters not set: %+v", before)
	}
	if diff := cmp.Diff(before.ThreadCounters, protocol.ThreadCounters{}); diff != "" {
		t.Errorf("thread counters without a source (-got +want):\n%s", diff)
	}
	srv.SetDiagnosticsSource(fakeCounters{})
	after := read(2)
	if diff := cmp.Diff(after.ThreadCounters, fakeCounters{}.ThreadCounters()); diff != "" {
		t.Errorf("thread counters (-got +want):\n%s", diff)
	}
	if after.UptimeMs < before.UptimeMs {
		t.Errorf("uptime went back: %d then %d", before.UptimeMs, after.UptimeMs)
	}
}

// TestCall checks server requests: the reply is routed by id, a cancelled
// call sends serverRequest/cancelled and drops the late reply, and a call
// pending when input ends fails.
func TestCall(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	cancelNow := make(chan struct{})
	handleTest(srv, "test/ask", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{ Q string }) (string, error) {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if p.Q == "cancel" {
			go func() {
				<-cancelNow
				cancel()
			}()
		}
		raw, err := c.call(cctx, "test/question", map[string]string{"q": p.Q})
		switch {
		case errors.Is(err, context.Canceled):
			return "cancelled", nil
		case errors.Is(err, ErrConnClosed):
			return "closed", nil
		case err != nil:
			return "", err
		}
		return string(raw), nil
	})
	handleTest(srv, "test/checks", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) ([]string, error) {
		_, errCall := c.Call(ctx, "test/question", nil)
		errNotify := c.Notify("test/note", nil)
		return []string{errCall.Error(), errNotify.Error()}, nil
	})
	s := connect(t, srv)
	handshake(t, s)
	rpctest.Run(t, s.Peer, []rpctest.Step{
		{Send: `{"id":"a","method":"test/ask","params":{"Q":"one"}}`},
		{Expect: `{"id":1,"method":"test/question","params":{"q":"one"}}`},
		{Send: `{"id":1,"result":{"answer":42}}`},
		{Expect: `{"id":"a","result":"{\"answer\":42}"}`},
		{Send: `{"id":"b","method":"test/ask","params":{"Q":"two"}}`},
		{Expect: `{"id":2,"method":"test/question","params":{"q":"two"}}`},
		{Send: `{"id":2,"error":{"code":"invalidParams","message":"no","data":{"x":[1]}}}`},
		{Expect: `{"id":"b","error":{"code":"invalidParams","message":"no","data":{"x":[1]}}}`},
		{Send: `{"id":"c","method":"test/ask","params":{"Q":"cancel"}}`},
		{Expect: `{"id":3,"method":"test/question","params":{"q":"cancel"}}`},
	})
	close(cancelNow)
	s.Expect(`{"method":"serverRequest/cancelled","params":{"requestId":3}}`)
	s.Expect(`{"id":"c","result":"cancelled"}`)
	rpctest.Run(t, s.Peer, []rpctest.Step{
		{Send: `{"id":3,"result":{"late":true}}`},
		{Send: `{"id":"d","method":"test/checks"}`},
		{Expect: `{"id":"d","result":["jsonrpc: \"test/question\" is not a serverRequest of the method table","jsonrpc: \"test/note\" is not a serverNotification of the method table"]}`},
		{Send: `{"id":"e","method":"test/ask","params":{"Q":"last"}}`},
		{Expect: `{"id":4,"method":"test/question","params":{"q":"last"}}`},
		{CloseInput: true},
		{Expect: `{"id":"e","result":"closed"}`},
		{ExpectEOF: true},
	})
}

// TestShutdownAnswersAcceptedRequests checks that shutdown stops input at
// once, lets accepted requests finish and answers them before the shutdown
// hooks run (threads unload there: QA E1), delivers what the hooks send,
// runs the close hooks, and ends the connection.
func TestShutdownAnswersAcceptedRequests(t *testing.T) {
	srv := newTestServer(t, Config{ShutdownGrace: time.Minute, ShutdownLimit: time.Minute}, nil)
	release, started := make(chan struct{}), make(chan struct{})
	var answered atomic.Bool
	handleTest(srv, "test/slow", protocol.PerThread, func(ctx context.Context, c *Conn, p threadReq) (string, error) {
		close(started)
		<-release
		answered.Store(true)
		return "finished", nil
	})
	srv.OnShutdown(func(ctx context.Context) {
		if !answered.Load() {
			t.Errorf("shutdown hook ran while an accepted request was running")
		}
		if err := Broadcast(srv, protocol.ErrorNotification, protocol.ErrorParams{Message: "unloading"}); err != nil {
			t.Errorf("Broadcast: %v", err)
		}
	})
	closed := make(chan *Conn, 1)
	srv.OnConnClose(func(c *Conn) {
		select {
		case <-c.Done():
		default:
			t.Errorf("OnConnClose before Done")
		}
		closed <- c
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":1,"method":"test/slow","params":{"threadId":"t","n":1}}`)
	<-started
	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(context.Background()) }()
	<-srv.ShuttingDown()
	s.sendIgnoringErrors(`{"id":2,"method":"no/such"}`) // input stopped: never answered
	close(release)
	s.Expect(`{"id":1,"result":"finished"}`)
	s.Expect(`{"method":"error","params":{"message":"unloading"}}`)
	s.ExpectEOF()
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if c := <-closed; c.ID() != 1 {
		t.Errorf("closed conn %d, want 1", c.ID())
	}
	if err := <-s.done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	s.done <- nil // for the cleanup
	if err := srv.ServeConn(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("ServeConn after shutdown: %v, want ErrShuttingDown", err)
	}
}

// TestShutdownGraceAnswersShuttingDown checks that at the grace deadline an
// unfinished request is answered shuttingDown, its handler's context is
// cancelled with ErrShuttingDown, and its late result publishes nothing.
func TestShutdownGraceAnswersShuttingDown(t *testing.T) {
	var log rpctest.SyncBuffer
	srv := newTestServer(t, Config{ShutdownGrace: 50 * time.Millisecond, ShutdownLimit: time.Minute}, &log)
	started := make(chan struct{})
	cause := make(chan error, 1)
	handleTest(srv, "test/stuck", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return "too late", nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":"slow","method":"test/stuck"}`)
	<-started
	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(context.Background()) }()
	s.Expect(`{"id":"slow","error":{"code":"shuttingDown","message":"the server is shutting down"}}`)
	s.ExpectEOF()
	if err := <-cause; !errors.Is(err, ErrShuttingDown) {
		t.Errorf("handler context cause %v, want ErrShuttingDown", err)
	}
	if err := <-shutdown; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if !strings.Contains(log.String(), "late result dropped") {
		t.Errorf("log does not mention the dropped late result")
	}
}

// blockingWriter blocks every write until it is closed, like stdout of a
// client that stopped reading.
type blockingWriter struct {
	once   sync.Once
	closed chan struct{}
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	<-w.closed
	return 0, io.ErrClosedPipe
}

func (w *blockingWriter) Close() error {
	w.once.Do(func() { close(w.closed) })
	return nil
}

// TestShutdownLimitWithClientNotReading checks that Serve returns by the
// shutdown limit when the client never reads, and reports it.
func TestShutdownLimitWithClientNotReading(t *testing.T) {
	srv := newTestServer(t, Config{ShutdownGrace: 20 * time.Millisecond, ShutdownLimit: 100 * time.Millisecond}, nil)
	in, inW := io.Pipe()
	out := &blockingWriter{closed: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), in, out) }()
	go func() {
		inW.Write([]byte(`{"id":1,"method":"initialize","params":{}}` + "\n"))
		inW.Close()
	}()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "output not drained") {
		t.Errorf("Serve: %v, want an output-not-drained error", err)
	}
}

// TestOutputOverflowAborts checks that more pending output than the limit
// aborts the connection.
func TestOutputOverflowAborts(t *testing.T) {
	srv := newTestServer(t, Config{MaxPendingOutput: 4096}, nil)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeConn(context.Background(), serverIn, serverOut) }()
	// Read the handshake's response, then stop reading.
	go func() {
		clientOut.Write([]byte(`{"id":1,"method":"initialize","params":{}}` + "\n" + `{"method":"initialized"}` + "\n"))
	}()
	buf := make([]byte, 4096)
	if _, err := clientIn.Read(buf); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("no overflow after 1000 broadcasts")
		}
		if err := Broadcast(srv, protocol.ErrorNotification, protocol.ErrorParams{Message: strings.Repeat("x", 100)}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if !errors.Is(err, ErrOutputOverflow) {
				t.Errorf("ServeConn: %v, want ErrOutputOverflow", err)
			}
			clientOut.Close()
			clientIn.Close()
			return
		default:
		}
		if i > 100 {
			time.Sleep(time.Millisecond) // let the abort land
		}
	}
}

// TestServeEndsOnContext checks that cancelling Serve's context (a signal)
// shuts the server down and Serve returns nil.
func TestServeEndsOnContext(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	ran := make(chan struct{})
	srv.OnShutdown(func(context.Context) { close(ran) })
	ctx, cancel := context.WithCancel(context.Background())
	in, inW := io.Pipe()
	outR, out := io.Pipe()
	go io.Copy(io.Discard, outR)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, in, out) }()
	inW.Write([]byte(`{"id":1,"method":"initialize","params":{}}` + "\n"))
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	<-ran
	inW.Close()
}

func TestHandleRefusesWiringBugs(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	h := func(context.Context, *Conn, protocol.ServerDiagnosticsParams) (protocol.ServerDiagnosticsResult, error) {
		return protocol.ServerDiagnosticsResult{}, nil
	}
	mustPanic("installed twice", func() { Handle(srv, protocol.ServerDiagnostics, h) })
	mustPanic("not in the table", func() {
		Handle(srv, protocol.ClientRequest[protocol.ServerDiagnosticsParams, protocol.ServerDiagnosticsResult]{Name: "no/such"}, h)
	})
	mustPanic("types differ", func() {
		Handle(srv, protocol.ClientRequest[struct{}, protocol.ServerDiagnosticsResult]{Name: "server/diagnostics"},
			func(context.Context, *Conn, struct{}) (protocol.ServerDiagnosticsResult, error) {
				return protocol.ServerDiagnosticsResult{}, nil
			})
	})
	before := srv.MissingHandlers()
	delete(srv.handlers, protocol.ServerDiagnostics.Name)
	// The table also holds the methods of the threads layer, which a bare
	// server does not handle: only server/diagnostics must be added.
	want := slices.Sorted(slices.Values(append(before, "server/diagnostics")))
	if diff := cmp.Diff(srv.MissingHandlers(), want); diff != "" {
		t.Errorf("MissingHandlers (-got +want):\n%s", diff)
	}
	srv.serving.Store(true)
	mustPanic("after serving", func() { Handle(srv, protocol.ServerDiagnostics, h) })
}

// TestBuiltinsComplete checks that a bare server handles every method of the
// table that rpc itself owns.
func TestBuiltinsComplete(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	for _, name := range srv.MissingHandlers() {
		if name == protocol.Initialize.Name || name == protocol.ServerDiagnostics.Name || name == protocol.Initialized.Name {
			t.Errorf("built-in %s has no handler", name)
		}
	}
}

// TestErrorNotificationCodeFromCause checks that an error notification with
// a Cause and no Code gets the code the server's error table gives the cause
// (as a response would), that a Code given is kept, and that Cause is never
// sent.
func TestErrorNotificationCodeFromCause(t *testing.T) {
	t.Parallel()
	errBusy := errors.New("busy")
	srv := NewServer(Config{ErrorMappers: []ErrorMapper{MapSentinel(errBusy, protocol.CodeTurnInProgress)}})
	tests := []struct {
		name string
		in   protocol.ErrorParams
		want string
	}{
		{"mapped cause", protocol.ErrorParams{Message: "m", Cause: fmt.Errorf("queued: %w", errBusy)}, `{"code":"turnInProgress","message":"m"}`},
		{"unmapped cause", protocol.ErrorParams{Message: "m", Cause: errors.New("disk")}, `{"code":"internal","message":"m"}`},
		{"code kept", protocol.ErrorParams{Code: protocol.CodeParseError, Message: "m", Cause: errBusy}, `{"code":"parseError","message":"m"}`},
		{"no cause", protocol.ErrorParams{Message: "m"}, `{"message":"m"}`},
	}
	for _, tt := range tests {
		n := srv.withErrorCode(protocol.ErrorNotification.With(tt.in))
		got, err := json.Marshal(n.Params())
		if err != nil || string(got) != tt.want || n.Method() != protocol.ErrorNotification.Name {
			t.Errorf("%s: %s %s, %v; want %s", tt.name, n.Method(), got, err, tt.want)
		}
	}
	other := protocol.ThreadArchived.With(protocol.ThreadArchivedParams{ThreadID: "t"})
	if got := srv.withErrorCode(other); got != other {
		t.Errorf("withErrorCode changed a %s notification", other.Method())
	}
}

// TestInvalidUTF8Refused checks that a message with bytes that are not UTF-8
// is refused instead of decoded with U+FFFD in their place (issue 15: a
// Latin-1 file/write path created a file named with U+FFFD): invalidParams
// naming the member when the id is readable, else the parseError
// notification; the handler never runs.
func TestInvalidUTF8Refused(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	var ran atomic.Int32
	handleTest(srv, "test/path", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct {
		Path  string   `json:"path"`
		Items []string `json:"items,omitempty"`
	}) (string, error) {
		ran.Add(1)
		return p.Path, nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.SendBytes([]byte("{\"id\":1,\"method\":\"test/path\",\"params\":{\"path\":\"caf\xe9.txt\"}}\n"))
	s.Expect(`{"id":1,"error":{"code":"invalidParams","message":"path: not valid UTF-8 (byte 50 of the message): send text as UTF-8","data":{"field":"path"}}}`)
	s.SendBytes([]byte("{\"id\":2,\"method\":\"test/path\",\"params\":{\"path\":\"a\",\"items\":[\"ok\",\"\xff\"]}}\n"))
	s.Expect(`{"id":2,"error":{"code":"invalidParams","message":"items[1]: not valid UTF-8 (byte 65 of the message): send text as UTF-8","data":{"field":"items[1]"}}}`)
	s.SendBytes([]byte("{\"id\":\"\xff\",\"method\":\"test/path\",\"params\":{\"path\":\"a\"}}\n"))
	s.Expect(`{"method":"error","params":{"code":"parseError","message":"the message is not valid UTF-8 (byte 7)"}}`)
	s.SendBytes([]byte("{\"method\":\"test/\xffpath\"}\n"))
	s.Expect(`{"method":"error","params":{"code":"parseError","message":"the message is not valid UTF-8 (byte 16)"}}`)
	s.Send(`{"id":3,"method":"test/path","params":{"path":"café.txt"}}`)
	s.Expect(`{"id":3,"result":"café.txt"}`)
	if n := ran.Load(); n != 1 {
		t.Errorf("handler ran %d times, want 1 (only the valid request)", n)
	}
}

// TestPathParamsBounded checks that a path member over
// protocol.MaxPathBytes is invalidParams naming it, in a string and in an
// array of paths (issue 15: a 9 MiB path answered internal and landed whole
// in the log), and that an unknown member's huge name is cut in the answer.
func TestPathParamsBounded(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	handleTest(srv, "test/path", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct {
		Path      string   `json:"path"`
		Paths     []string `json:"paths,omitempty"`
		SourceCwd string   `json:"sourceCwd,omitempty"`
	}) (string, error) {
		return "ok", nil
	})
	s := connect(t, srv)
	handshake(t, s)
	long := strings.Repeat("a", protocol.MaxPathBytes+1)
	s.Send(`{"id":1,"method":"test/path","params":{"path":"` + long + `"}}`)
	s.Expect(`{"id":1,"error":{"code":"invalidParams","message":"path: 4097 bytes long; at most 4096","data":{"field":"path"}}}`)
	s.Send(`{"id":2,"method":"test/path","params":{"path":"a","paths":["b","` + long + `"]}}`)
	s.Expect(`{"id":2,"error":{"code":"invalidParams","message":"paths[1]: 4097 bytes long; at most 4096","data":{"field":"paths[1]"}}}`)
	s.Send(`{"id":3,"method":"test/path","params":{"path":"a","sourceCwd":"` + long + `"}}`)
	s.Expect(`{"id":3,"error":{"code":"invalidParams","message":"sourceCwd: 4097 bytes long; at most 4096","data":{"field":"sourceCwd"}}}`)
	s.Send(`{"id":4,"method":"test/path","params":{"path":"` + long[:protocol.MaxPathBytes] + `"}}`)
	s.Expect(`{"id":4,"result":"ok"}`)
	s.Send(`{"id":5,"method":"test/path","params":{"path":"a","` + long + `":1}}`)
	line := s.Next()
	if len(line) > 1024 || !bytes.Contains(line, []byte(`"code":"invalidParams"`)) {
		t.Errorf("unknown huge member answered with %d bytes: %.300s", len(line), line)
	}
}

// TestCallSettledByAnyReply checks that every response carrying a pending
// call's id settles that call, as an error unless it holds a result
// (issue 22: a JSON-RPC 2.0 error with a numeric code and a bare {"id":N}
// were logged as bad lines and the approval waited until interrupted).
// An id no call waits for is still answered parseError.
func TestCallSettledByAnyReply(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	handleTest(srv, "test/ask", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		raw, err := c.call(ctx, "test/question", nil)
		if e, ok := errors.AsType[*Error](err); ok {
			return "error " + e.Code + ": " + e.Message, nil
		}
		if err != nil {
			return "", err
		}
		return "result " + string(raw), nil
	})
	s := connect(t, srv)
	handshake(t, s)
	steps := []rpctest.Step{}
	for i, tt := range []struct{ reply, want string }{
		{`{"id":%d,"error":{"code":-32000,"message":"no"}}`, `error -32000: no`},
		{`{"id":%d}`, `error parseError: the reply has neither a result nor an error`},
		{`{"id":%d,"error":null}`, `error parseError: the reply has neither a result nor an error`},
		{`{"id":%d,"error":"no"}`, `error parseError: the reply's error is not an error object: \"no\"`},
		{`{"id":%d,"error":{"message":"no code"}}`, `error parseError: the reply's error has no code: {\"message\":\"no code\"}`},
		{`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":{"m":1},"data":[1]}}`, `error -32601: {\"m\":1}`},
		{`{"id":%d,"result":{"decision":"accept"},"error":null}`, `result {\"decision\":\"accept\"}`},
	} {
		n := i + 1
		steps = append(steps,
			rpctest.Step{Send: fmt.Sprintf(`{"id":"q%d","method":"test/ask"}`, n)},
			rpctest.Step{Expect: fmt.Sprintf(`{"id":%d,"method":"test/question"}`, n)},
			rpctest.Step{Send: fmt.Sprintf(tt.reply, n)},
			rpctest.Step{Expect: fmt.Sprintf(`{"id":"q%d","result":"%s"}`, n, tt.want)},
		)
	}
	// A bare id no call waits for is a bad line, answered parseError.
	steps = append(steps,
		rpctest.Step{Send: `{"id":99}`},
		rpctest.Step{Expect: `{"id":99,"error":{"code":"parseError","message":"message has an id but neither method, result nor error"}}`},
	)
	rpctest.Run(t, s.Peer, steps)
}

// TestLeaveLane checks that a perThread handler that leaves its lane lets
// the thread's later requests run while it goes on (issue 22: a git/commit
// whose hook sleeps held every later request of its thread), that the lane
// keeps arrival order after the hand-over, and that LeaveLane does nothing
// outside a lane.
func TestLeaveLane(t *testing.T) {
	srv := newTestServer(t, Config{}, nil)
	release := make(chan struct{})
	left := make(chan struct{})
	handleTest(srv, "test/thread", protocol.PerThread, func(ctx context.Context, c *Conn, p threadReq) (string, error) {
		id := fmt.Sprintf("%s/%d", p.ThreadID, p.N)
		if p.N == 1 {
			LeaveLane(ctx)
			LeaveLane(ctx) // a second call does nothing
			close(left)
			<-release
		}
		if p.N == 2 {
			<-left
		}
		return id, nil
	})
	handleTest(srv, "test/free", protocol.Concurrent, func(ctx context.Context, c *Conn, p struct{}) (string, error) {
		LeaveLane(ctx)
		return "free", nil
	})
	s := connect(t, srv)
	handshake(t, s)
	s.Send(`{"id":1,"method":"test/thread","params":{"threadId":"t1","n":1}}`)
	s.Send(`{"id":2,"method":"test/thread","params":{"threadId":"t1","n":2}}`)
	s.Send(`{"id":3,"method":"test/thread","params":{"threadId":"t1","n":3}}`)
	s.Expect(`{"id":2,"result":"t1/2"}`)
	s.Expect(`{"id":3,"result":"t1/3"}`)
	s.Send(`{"id":4,"method":"test/free"}`)
	s.Expect(`{"id":4,"result":"free"}`)
	s.Send(`{"id":5,"method":"test/thread","params":{"threadId":"t1","n":5}}`)
	s.Expect(`{"id":5,"result":"t1/5"}`)
	close(release)
	s.Expect(`{"id":1,"result":"t1/1"}`)
}
