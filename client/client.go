package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Error is a server's error response: code, message and data exactly as sent
// (data is a json.RawMessage). errors.Is(err, &client.Error{Code: c}) and
// jsonrpc.IsCode compare codes.
type Error = jsonrpc.Error

// Client is one connection to an app-server. Its methods are safe for
// concurrent use.
type Client struct {
	conn *jsonrpc.Conn
	dlv  *deliverer

	mu       sync.Mutex
	onReq    func(ctx context.Context, method string, params json.RawMessage) (any, error)
	handlers map[string]func(ctx context.Context, params json.RawMessage) (any, error)

	cmd       *exec.Cmd  // Start only
	serveDone chan error // NewInProcess only
	closeOnce sync.Once
	closeErr  error
}

// Dial returns a client speaking over r (the server's output) and w (its
// input). Close closes w and waits for r to end.
func Dial(r io.Reader, w io.Writer) *Client {
	c := &Client{dlv: newDeliverer()}
	c.conn = jsonrpc.NewConn(r, w, jsonrpc.ConnOptions{Handlers: jsonrpc.PeerHandlers{
		Notification: c.dlv.push,
		Request:      c.answer,
	}})
	return c
}

// Start starts cmd (normally `knightcode app-server ...`) with its stdin and
// stdout connected to the client; cmd.Stderr is left as the caller set it.
// Close closes the server's stdin, waits for it to exit and returns
// cmd.Wait's error.
func Start(cmd *exec.Cmd) (*Client, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := Dial(stdout, stdin)
	c.cmd = cmd
	return c, nil
}

// NewInProcess connects a client to srv over an in-memory pipe; srv serves it
// as one more connection (jsonrpc.Server.ServeConn). Close ends the connection
// and waits until the server has drained it.
func NewInProcess(srv *jsonrpc.Server) *Client {
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	// The serving goroutine runs until the server drained the connection.
	go func() {
		err := srv.ServeConn(context.Background(), serverIn, serverOut)
		serverOut.Close()
		serverIn.Close()
		done <- err
	}()
	c := Dial(clientIn, clientOut)
	c.serveDone = done
	return c
}

// OnNotification sets the function that receives the server's notifications,
// in arrival order, on a goroutine of the client's own: it may call Request.
// Notifications arriving while none is set are dropped; set it before
// Initialize.
func (c *Client) OnNotification(f func(method string, params json.RawMessage)) {
	c.dlv.set(f)
}

// OnRequest sets the function that answers the server's requests (approvals,
// dialogs), each on its own goroutine; ctx ends when the server withdraws the
// request (serverRequest/cancelled). Its result is encoded as the reply; an
// error is sent as an *Error (others as internal). Without one, requests are
// answered methodNotFound.
func (c *Client) OnRequest(f func(ctx context.Context, method string, params json.RawMessage) (any, error)) {
	c.mu.Lock()
	c.onReq = f
	c.mu.Unlock()
}

// Answer sets f as the answer to every server request m (an approval, a
// dialog), typed by the method table: Answer(c,
// protocol.ItemToolCallRequestApproval, func(ctx, p) (R, error) {...}).
// f runs on its own goroutine per request; ctx ends when the server
// withdraws the request (serverRequest/cancelled) or the connection ends,
// and its result is then dropped by the server. Params that do not decode
// into P are answered invalidParams. Answer takes precedence over
// OnRequest's function for m.
func Answer[P, R any](c *Client, m protocol.ServerRequest[P, R], f func(ctx context.Context, p P) (R, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handlers == nil {
		c.handlers = map[string]func(context.Context, json.RawMessage) (any, error){}
	}
	c.handlers[m.Name] = func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, jsonrpc.InvalidParams("", "%s params: %v", m.Name, err)
		}
		return f(ctx, p)
	}
}

func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	f, h := c.onReq, c.handlers[method]
	c.mu.Unlock()
	if h != nil {
		return h(ctx, params)
	}
	if f == nil {
		return nil, jsonrpc.Errorf(protocol.CodeMethodNotFound, "this client answers no %s requests", method)
	}
	return f(ctx, method, params)
}

// Request sends method with params (nil params are left out) and waits for
// the response, decoding its result into result unless result is nil. A
// server error is returned as *Error with code, message and data as sent;
// jsonrpc.ErrConnClosed when the server went away; ctx.Err() when ctx ended first.
func (c *Client) Request(ctx context.Context, method string, params, result any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if u, ok := result.(json.Unmarshaler); ok {
		// raw is one JSON value the connection has checked: a result that
		// reads itself skips encoding/json's second scan of it (a 64 KiB
		// payload/read chunk; issue 24).
		err = u.UnmarshalJSON(raw)
	} else {
		err = json.Unmarshal(raw, result)
	}
	if err != nil {
		return fmt.Errorf("client: decode %s result: %w", method, err)
	}
	return nil
}

// Call sends the client request m with params p and waits for its result,
// typed by the method table: Call(ctx, c, protocol.ThreadDiffRead,
// protocol.ThreadDiffReadParams{...}) returns a ThreadDiffReadResult.
// Errors as for Request.
func Call[P, R any](ctx context.Context, c *Client, m protocol.ClientRequest[P, R], p P) (R, error) {
	var res R
	err := c.Request(ctx, m.Name, p, &res)
	return res, err
}

// Subscribe calls f with the decoded params of every notification n the
// server sends, in arrival order with the other notifications, on the
// client's delivery goroutine (it may call Request or Call). Params that do
// not decode into P are dropped (the server sends the table's types). Subscribe before Initialize to miss nothing; subscriptions
// add to OnNotification's function, they do not replace it.
func Subscribe[P any](c *Client, n protocol.ServerNotification[P], f func(P)) {
	c.dlv.subscribe(n.Name, func(raw json.RawMessage) {
		var p P
		if json.Unmarshal(raw, &p) == nil {
			f(p)
		}
	})
}

// Notify sends a notification (the client's only one is initialized).
func (c *Client) Notify(method string, params any) error {
	return c.conn.Notify(method, params)
}

// Initialize runs the handshake: initialize with p, then the initialized
// notification once its result arrived (spec: Handshake). The server reads
// initialized before any later request of this client; a broadcast the
// server sends before it has read initialized does not reach this client.
func (c *Client) Initialize(ctx context.Context, p protocol.InitializeParams) (protocol.InitializeResult, error) {
	res, err := Call(ctx, c, protocol.Initialize, p)
	if err != nil {
		return res, err
	}
	return res, c.Notify(protocol.Initialized.Name, protocol.InitializedParams{})
}

// Done returns a channel closed when the server's output ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Close ends the connection: it closes the server's input, waits until the
// server closed its output and every notification was delivered, then (Start)
// waits for the process and returns cmd.Wait's error, or (NewInProcess) the
// server's ServeConn error. Close is idempotent.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		err := c.conn.Close()
		c.dlv.close()
		switch {
		case c.cmd != nil:
			err = errors.Join(err, c.cmd.Wait())
		case c.serveDone != nil:
			err = errors.Join(err, <-c.serveDone)
		}
		c.closeErr = err
	})
	return c.closeErr
}

// deliverer hands notifications to the callback in order on its own
// goroutine, so a slow callback never holds up responses. Its queue is
// unbounded: the server bounds what it sends (64 MiB pending output).
type deliverer struct {
	mu     sync.Mutex
	cond   *sync.Cond
	f      func(string, json.RawMessage)
	subs   map[string][]func(json.RawMessage) // Subscribe's, by method
	queue  []note
	closed bool
	done   chan struct{}
}

type note struct {
	method string
	params json.RawMessage
}

func newDeliverer() *deliverer {
	d := &deliverer{done: make(chan struct{})}
	d.cond = sync.NewCond(&d.mu)
	go d.run()
	return d
}

func (d *deliverer) set(f func(string, json.RawMessage)) {
	d.mu.Lock()
	d.f = f
	d.mu.Unlock()
}

func (d *deliverer) subscribe(method string, f func(json.RawMessage)) {
	d.mu.Lock()
	if d.subs == nil {
		d.subs = map[string][]func(json.RawMessage){}
	}
	d.subs[method] = append(d.subs[method], f)
	d.mu.Unlock()
}

func (d *deliverer) push(method string, params json.RawMessage) {
	d.mu.Lock()
	if (d.f != nil || len(d.subs[method]) > 0) && !d.closed {
		d.queue = append(d.queue, note{method, params})
		d.cond.Signal()
	}
	d.mu.Unlock()
}

// close delivers what is queued, then stops the goroutine and waits for it.
func (d *deliverer) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cond.Broadcast()
	<-d.done
}

// run is the delivery goroutine, started by newDeliverer and stopped by
// close once the queue is empty.
func (d *deliverer) run() {
	defer close(d.done)
	for {
		d.mu.Lock()
		for len(d.queue) == 0 && !d.closed {
			d.cond.Wait()
		}
		if len(d.queue) == 0 {
			d.mu.Unlock()
			return
		}
		n := d.queue[0]
		d.queue[0] = note{}
		d.queue = d.queue[1:]
		f, subs := d.f, d.subs[n.method]
		d.mu.Unlock()
		if f != nil {
			f(n.method, n.params)
		}
		for _, sub := range subs {
			sub(n.params)
		}
	}
}
