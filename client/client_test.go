package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestInProcess(t *testing.T) {
	t.Setenv("HOME", "/home/test")
	srv := jsonrpc.NewServer(jsonrpc.Config{Version: "1.2.3"})
	c := client.NewInProcess(srv)
	defer func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	ctx := context.Background()

	err := c.Request(ctx, protocol.ServerDiagnostics.Name, nil, nil)
	if !jsonrpc.IsCode(err, protocol.CodeNotInitialized) {
		t.Errorf("request before initialize: %v, want notInitialized", err)
	}
	res, err := c.Initialize(ctx, protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "test", Version: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.ServerInfo, protocol.ServerInfo{Name: "knightcode", Version: "1.2.3"}); diff != "" {
		t.Errorf("serverInfo (-got +want):\n%s", diff)
	}
	if res.Platform.HomeDir != "/home/test" {
		t.Errorf("homeDir %q", res.Platform.HomeDir)
	}
	var diag protocol.ServerDiagnosticsResult
	if err := c.Request(ctx, protocol.ServerDiagnostics.Name, protocol.ServerDiagnosticsParams{}, &diag); err != nil {
		t.Fatal(err)
	}
	if diag.RSSBytes <= 0 || diag.HeapBytes <= 0 {
		t.Errorf("diagnostics: %+v", diag)
	}
	err = c.Request(ctx, "no/such", nil, nil)
	if !errors.Is(err, &client.Error{Code: protocol.CodeMethodNotFound}) {
		t.Errorf("unknown method: %v", err)
	}
}

// TestErrorPreservedExactly checks that code, message and data of a server
// error reach the caller as sent.
func TestErrorPreservedExactly(t *testing.T) {
	srv := jsonrpc.NewServer(jsonrpc.Config{})
	c := client.NewInProcess(srv)
	defer c.Close()
	names := make([]string, protocol.MaxOptOutNotifications+1)
	for i := range names {
		names[i] = "n"
	}
	_, err := c.Initialize(context.Background(), protocol.InitializeParams{Capabilities: &protocol.ClientCapabilities{OptOutNotifications: names}})
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("Initialize: %v, want *client.Error", err)
	}
	want := &client.Error{Code: "invalidParams", Message: "capabilities.optOutNotifications: at most 256 method names, got 257",
		Data: json.RawMessage(`{"field":"capabilities.optOutNotifications"}`)}
	if diff := cmp.Diff(e, want); diff != "" {
		t.Errorf("error (-got +want):\n%s", diff)
	}
}

// fakeServer connects a client to a raw peer playing the server.
func fakeServer(t *testing.T) (*client.Client, *rpctest.Peer) {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	c := client.Dial(clientIn, clientOut)
	p := rpctest.NewPeer(t, serverOut, serverIn)
	return c, p
}

// closeBoth closes the client while the fake server acknowledges.
func closeBoth(t *testing.T, c *client.Client, p *rpctest.Peer) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	p.ExpectEOF()
	p.CloseInput()
	if err := <-done; err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestNotificationsInOrder(t *testing.T) {
	c, p := fakeServer(t)
	var mu sync.Mutex
	var got []string
	all := make(chan struct{})
	c.OnNotification(func(method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, method+" "+string(params))
		if len(got) == 100 {
			close(all)
		}
	})
	var want []string
	for i := range 100 {
		p.Send(fmt.Sprintf(`{"method":"n/%d","params":{"i":%d}}`, i, i))
		want = append(want, fmt.Sprintf(`n/%d {"i":%d}`, i, i))
	}
	<-all
	mu.Lock()
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("notifications (-got +want):\n%s", diff)
	}
	mu.Unlock()
	closeBoth(t, c, p)
}

// TestRequestFromCallback checks that a notification callback may make a
// request: delivery does not hold up responses.
func TestRequestFromCallback(t *testing.T) {
	c, p := fakeServer(t)
	result := make(chan string, 1)
	c.OnNotification(func(method string, params json.RawMessage) {
		var s string
		if err := c.Request(context.Background(), "ask", nil, &s); err != nil {
			t.Errorf("Request: %v", err)
		}
		result <- s
	})
	p.Send(`{"method":"poke"}`)
	p.Expect(`{"id":1,"method":"ask"}`)
	p.Send(`{"id":1,"result":"answer"}`)
	if got := <-result; got != "answer" {
		t.Errorf("result %q", got)
	}
	closeBoth(t, c, p)
}

func TestOnRequest(t *testing.T) {
	c, p := fakeServer(t)
	cancelled := make(chan error, 1)
	c.OnRequest(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "item/toolCall/requestApproval":
			return map[string]string{"decision": "accept", "echo": string(params)}, nil
		case "ui/dialog":
			<-ctx.Done()
			cancelled <- ctx.Err()
			return map[string]any{}, nil
		}
		return nil, jsonrpc.InvalidParams("kind", "unknown %s", method)
	})
	rpctest.Run(t, p, []rpctest.Step{
		{Send: `{"id":"s1","method":"item/toolCall/requestApproval","params":{"tool":"bash"}}`},
		{Expect: `{"id":"s1","result":{"decision":"accept","echo":"{\"tool\":\"bash\"}"}}`},
		{Send: `{"id":7,"method":"other"}`},
		{Expect: `{"id":7,"error":{"code":"invalidParams","message":"kind: unknown other","data":{"field":"kind"}}}`},
		{Send: `{"id":8,"method":"ui/dialog","params":{}}`},
		{Send: `{"method":"serverRequest/cancelled","params":{"id":8}}`},
		{Expect: `{"id":8,"result":{}}`},
	})
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("dialog ctx: %v", err)
	}
	closeBoth(t, c, p)
}

func TestRequestWithoutOnRequest(t *testing.T) {
	c, p := fakeServer(t)
	p.Send(`{"id":1,"method":"ui/dialog"}`)
	p.Expect(`{"id":1,"error":{"code":"methodNotFound","message":"this client answers no ui/dialog requests"}}`)
	closeBoth(t, c, p)
}

// TestPendingRequestFails checks that a request dropped by the server for
// being oversized fails with the error notification naming its id, and that
// the server going away fails pending requests.
func TestPendingRequestFails(t *testing.T) {
	c, p := fakeServer(t)
	errs := make(chan error, 2)
	go func() { errs <- c.Request(context.Background(), "big", strings.Repeat("x", 10), nil) }()
	p.Expect(`{"id":1,"method":"big","params":"xxxxxxxxxx"}`)
	p.Send(`{"method":"error","params":{"code":"parseError","message":"line too long","id":1}}`)
	err := <-errs
	if diff := cmp.Diff(err, error(&client.Error{Code: "parseError", Message: "line too long"})); diff != "" {
		t.Errorf("dropped request (-got +want):\n%s", diff)
	}
	go func() { errs <- c.Request(context.Background(), "slow", nil, nil) }()
	p.Expect(`{"id":2,"method":"slow"}`)
	p.CloseInput() // the server exits
	if err := <-errs; !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("request when the server went away: %v", err)
	}
	<-c.Done()
	if err := c.Request(context.Background(), "after", nil, nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("request after the server went away: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	p.ExpectEOF()
	if err := <-done; err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestRequestContext(t *testing.T) {
	c, p := fakeServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := c.Request(ctx, "never", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Request: %v", err)
	}
	p.Expect(`{"id":1,"method":"never"}`)
	p.Send(`{"id":1,"result":"late"}`) // dropped
	closeBoth(t, c, p)
}

// TestCallAndSubscribe checks the typed ends: Call decodes the table's
// result type, and Subscribe hands a notification's params decoded, in
// order with OnNotification's deliveries.
func TestCallAndSubscribe(t *testing.T) {
	c, p := fakeServer(t)
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	c.OnNotification(func(method string, _ json.RawMessage) {
		mu.Lock()
		got = append(got, "any "+method)
		mu.Unlock()
	})
	client.Subscribe(c, protocol.TurnQueueUpdated, func(q protocol.TurnQueueUpdatedParams) {
		mu.Lock()
		got = append(got, fmt.Sprintf("typed %s %v", q.ThreadID, q.Steering))
		mu.Unlock()
	})
	client.Subscribe(c, protocol.ThreadArchived, func(a protocol.ThreadArchivedParams) {
		mu.Lock()
		got = append(got, "typed archived "+a.ThreadID)
		mu.Unlock()
		close(done)
	})
	type callResult struct {
		res protocol.TurnQueueRemoveResult
		err error
	}
	calls := make(chan callResult, 1)
	go func() {
		res, err := client.Call(context.Background(), c, protocol.TurnQueueRemove, protocol.TurnQueueRemoveParams{ThreadID: "t", QueueID: "q"})
		calls <- callResult{res, err}
	}()
	p.Expect(`{"id":1,"method":"turn/queue/remove","params":{"threadId":"t","queueId":"q"}}`)
	p.Send(`{"method":"turn/queue/updated","params":{"threadId":"t","steering":["s"],"followUp":[]}}`)
	p.Send(`{"method":"thread/archived","params":{"threadId":"t"}}`)
	p.Send(`{"id":1,"result":{"removed":true}}`)
	if r := <-calls; r.err != nil || !r.res.Removed {
		t.Errorf("Call = %+v, %v; want removed", r.res, r.err)
	}
	<-done
	mu.Lock()
	want := []string{"any turn/queue/updated", "typed t [s]", "any thread/archived", "typed archived t"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("deliveries (-got +want):\n%s", diff)
	}
	mu.Unlock()
	closeBoth(t, c, p)
}
