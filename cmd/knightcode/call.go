package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

const callUsage = `Usage: knightcode call [--follow] [--session-dir <dir>] <method> [<params-json>]

Sends one request of the app-server protocol to a server of its own, in this
process: initialize, the request, then a clean shutdown (its threads are
unloaded and their session files released). The result is printed as one line
of JSON on stdout; an error as one line of JSON ({"code", "message", "data"?})
on stderr, with exit code 2 for invalidParams and 1 for any other error.

A request of a thread this server has not loaded (threadNotFound) loads it
first with thread/resume, which owns the thread's session file: a thread that
another process (a desktop app's server) holds is refused with
threadLockedElsewhere.

Nobody answers the server's requests: an approval is declined and a dialog
cancelled. Give a scripted thread approvalMode fullAccess to run its tools.
A thread is saved with its first entry (a settings change, a turn): one that
thread/start made and nothing saved ends with the call.

Flags:
  --follow               with turn/start: after the result, print the thread's
                         notifications (and the server's requests) as JSON
                         lines {"method", "params"} until the turn ends
  --session-dir <dir>    store sessions here, as app-server's flag
  -h, --help             print this help

Examples:
  knightcode call thread/list '{"cwd":"/path/to/repo"}'
  knightcode call thread/handoff '{"threadId":"…","to":"local"}'
  knightcode call --follow turn/start '{"threadId":"…","text":"Fix the tests"}'
`

// callOptions are what `knightcode call` runs with.
type callOptions struct {
	// Method is the client request to send.
	Method string
	// Params are its params as given (a JSON object), nil when none.
	Params json.RawMessage
	// Follow streams the thread's notifications until the turn ends
	// (turn/start only).
	Follow bool
	// SessionDir is --session-dir, "" when not given.
	SessionDir string
}

// parseCallArgs parses the arguments after "call".
func parseCallArgs(args []string) (invocation, error) {
	const prog = "knightcode call"
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var o callOptions
	fs.BoolVar(&o.Follow, "follow", false, "follow the turn")
	fs.StringVar(&o.SessionDir, "session-dir", "", "session directory")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return invocation{action: actionHelp, help: callUsage}, nil
		}
		return invocation{}, &usageError{prog, err.Error()}
	}
	switch fs.NArg() {
	case 0:
		return invocation{}, &usageError{prog, "no method given"}
	case 1, 2:
	default:
		return invocation{}, &usageError{prog, fmt.Sprintf("unexpected argument %q", fs.Arg(2))}
	}
	o.Method = fs.Arg(0)
	m, ok := protocol.Lookup(o.Method)
	if !ok || m.Direction != protocol.ClientRequestDir {
		return invocation{}, &usageError{prog, fmt.Sprintf("%q is not a request a client sends", o.Method)}
	}
	if o.Method == protocol.Initialize.Name {
		return invocation{}, &usageError{prog, "call sends initialize itself"}
	}
	if fs.NArg() == 2 {
		p := bytes.TrimSpace([]byte(fs.Arg(1)))
		if !json.Valid(p) || len(p) == 0 || p[0] != '{' {
			return invocation{}, &usageError{prog, "params must be a JSON object"}
		}
		o.Params = p
	}
	if o.Follow && o.Method != protocol.TurnStart.Name {
		return invocation{}, &usageError{prog, "--follow follows the turn a turn/start starts"}
	}
	return invocation{action: actionCall, call: o}, nil
}

// runCall runs `knightcode call`: a server of its own in this process,
// one connection to it, initialize, the request (loading its thread first
// when the server answers threadNotFound), the turn's notifications with
// --follow, and a clean shutdown. It returns the exit code: 0 after a
// result, 2 for an invalidParams error, 1 for any other.
func runCall(ctx context.Context, o callOptions, stdout, stderr io.Writer) int {
	// The server's log would mix with the error on stderr: discarded.
	srv, err := newAppServer(options{SessionDir: o.SessionDir, Err: io.Discard}, slog.New(slog.DiscardHandler))
	if err != nil {
		return writeCallError(stderr, err)
	}
	// As app-server does; without it (an error) orphans of tool commands
	// are reaped by init instead, and nothing else changes.
	_ = tools.BecomeSubreaper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	served := make(chan struct{})
	// The serving goroutine runs until the server shut down (the client
	// closed its side, or ctx ended).
	go func() {
		defer close(served)
		_ = srv.Serve(ctx, serverIn, serverOut)
		killMCPServers(slog.New(slog.DiscardHandler))
		serverIn.Close()
		serverOut.Close()
	}()
	f := &follower{out: stdout, follow: o.Follow, done: make(chan struct{})}
	conn := jsonrpc.NewConn(clientIn, clientOut, jsonrpc.ConnOptions{Handlers: jsonrpc.PeerHandlers{
		Notification: f.note,
		Request:      f.request,
	}})
	res, err := sendCall(ctx, conn, f, o)
	if err == nil {
		f.start(res)
		if o.Follow && startedTurn(res) {
			select {
			case <-f.done:
			case <-ctx.Done():
				err = fmt.Errorf("interrupted: %w", context.Cause(ctx))
			}
		}
	}
	closeErr := conn.Close()
	<-served
	if err != nil {
		return writeCallError(stderr, err)
	}
	if closeErr != nil {
		return writeCallError(stderr, closeErr)
	}
	return 0
}

// sendCall runs the handshake and sends the request, loading its thread with
// thread/resume and sending it again when the server answers
// threadNotFound for a thread it has not loaded.
func sendCall(ctx context.Context, conn *jsonrpc.Conn, f *follower, o callOptions) (json.RawMessage, error) {
	if _, err := conn.Call(ctx, protocol.Initialize.Name, protocol.InitializeParams{
		ClientInfo: &protocol.ClientInfo{Name: "knightcode call", Version: serverVersion()},
	}); err != nil {
		return nil, err
	}
	if err := conn.Notify(protocol.Initialized.Name, protocol.InitializedParams{}); err != nil {
		return nil, err
	}
	params, threadID, err := callParams(o, f)
	if err != nil {
		return nil, err
	}
	res, err := conn.Call(ctx, o.Method, params)
	if threadID == "" || o.Method == protocol.ThreadResume.Name || !jsonrpc.IsCode(err, protocol.CodeThreadNotFound) {
		return res, err
	}
	// Not loaded here: load it (owning its session file), then again.
	if _, rerr := conn.Call(ctx, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: threadID}); rerr != nil {
		return nil, rerr
	}
	return conn.Call(ctx, o.Method, params)
}

// callParams returns the request's params and its threadId ("" when it has
// none). A followed turn/start gets a requestId when it has none, so its
// turn/started can be told from others.
func callParams(o callOptions, f *follower) (json.RawMessage, string, error) {
	if o.Params == nil {
		return nil, "", nil
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(o.Params, &p); err != nil {
		return nil, "", err
	}
	var threadID, requestID string
	if raw, ok := p["threadId"]; ok {
		_ = json.Unmarshal(raw, &threadID) // not a string: the server refuses it
	}
	params := o.Params
	if raw, ok := p["requestId"]; ok {
		_ = json.Unmarshal(raw, &requestID)
	} else if o.Follow {
		requestID = "knightcode-call-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		p["requestId"], _ = json.Marshal(requestID)
		b, err := json.Marshal(p)
		if err != nil {
			return nil, "", err
		}
		params = b
	}
	f.mu.Lock()
	f.threadID, f.requestID = threadID, requestID
	f.mu.Unlock()
	return params, threadID, nil
}

// startedTurn reports whether a turn/start result says a turn started.
func startedTurn(res json.RawMessage) bool {
	var r protocol.TurnStartResult
	return json.Unmarshal(res, &r) == nil && r.Status == protocol.TurnStartStarted
}

// follower prints the result and, with --follow, the followed thread's
// notifications and server requests as JSON lines on out, in arrival
// order after the result; done is closed when the followed turn ends.
type follower struct {
	out    io.Writer
	follow bool
	done   chan struct{}

	mu        sync.Mutex
	threadID  string   // the request's threadId, set before it is sent
	requestID string   // of the followed turn/start, set before it is sent
	started   bool     // the result is printed; lines go out directly
	pending   [][]byte // lines that arrived before the result
	turnID    string   // the followed turn, once turn/started named it
	doneOnce  sync.Once
}

// start prints the result, then the lines that arrived before it.
func (f *follower) start(res json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(append(bytes.Clone(res), '\n'))
	for _, l := range f.pending {
		f.out.Write(l)
	}
	f.pending, f.started = nil, true
}

// note receives a notification (on the connection's reader goroutine).
func (f *follower) note(method string, params json.RawMessage) {
	if !f.follow {
		return
	}
	var p struct {
		ThreadID  string         `json:"threadId"`
		RequestID string         `json:"requestId"`
		Turn      *protocol.Turn `json:"turn"`
	}
	if json.Unmarshal(params, &p) != nil || !f.line(method, p.ThreadID, params) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case method == protocol.TurnStarted.Name && p.RequestID == f.requestID && p.Turn != nil:
		f.turnID = p.Turn.ID
	case method == protocol.TurnCompletedNotification.Name && p.Turn != nil && p.Turn.ID == f.turnID && f.turnID != "":
		f.doneOnce.Do(func() { close(f.done) })
	}
}

// request receives a server request: it is printed when followed, and
// answered methodNotFound, which the server takes as a decline (an
// approval) or a cancel (a dialog): nobody is there to answer.
func (f *follower) request(_ context.Context, method string, params json.RawMessage) (any, error) {
	if f.follow {
		var p struct {
			ThreadID string `json:"threadId"`
		}
		if json.Unmarshal(params, &p) == nil {
			f.line(method, p.ThreadID, params)
		}
	}
	return nil, jsonrpc.Errorf(protocol.CodeMethodNotFound, "knightcode call answers no %s: nobody is attached to answer it", method)
}

// line prints {"method", "params"} of a message about threadID when it is
// the followed thread, or keeps it until the result is out; it reports
// whether it was the followed thread's.
func (f *follower) line(method, threadID string, params json.RawMessage) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if threadID == "" || threadID != f.threadID {
		return false
	}
	b, err := json.Marshal(struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}{method, params})
	if err != nil {
		return false
	}
	b = append(b, '\n')
	if f.started {
		f.out.Write(b)
	} else {
		f.pending = append(f.pending, b)
	}
	return true
}

// writeCallError prints err as one line of JSON on w ({"code", "message",
// "data"?}; an error that is not the server's is internal) and returns the
// exit code: 2 for invalidParams, 1 otherwise.
func writeCallError(w io.Writer, err error) int {
	e, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		e = &jsonrpc.Error{Code: protocol.CodeInternal, Message: err.Error()}
	}
	b, merr := json.Marshal(e)
	if merr != nil {
		b, _ = json.Marshal(&jsonrpc.Error{Code: e.Code, Message: e.Message})
	}
	w.Write(append(b, '\n'))
	if e.Code == protocol.CodeInvalidParams {
		return 2
	}
	return 1
}
