package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// Handshake states of a server connection (spec: Handshake).
const (
	stateNew              int32 = iota // initialize not answered yet
	stateAwaitInitialized              // initialize answered, initialized not received
	stateReady                         // initialized received: other requests accepted
)

// Conn is one two-way JSON-RPC connection over an NDJSON byte stream:
// requests go both ways, so approvals and dialogs are calls the server makes
// (Call) while the client's requests are dispatched to handlers.
//
// A server connection is made by Server.ServeConn or Server.Serve; a client
// connection by NewConn. Each has two long-lived goroutines: the reader
// (started with the connection, stops at end of input, when input is stopped
// by shutdown, or on abort) and the writer (started with the connection,
// stops once its queue is flushed after close, or at the first write error
// or overflow).
type Conn struct {
	id   uint64
	log  *slog.Logger
	srv  *Server      // nil on a client connection
	peer PeerHandlers // client connection only

	lr  *lineReader
	r   io.Reader
	w   io.Writer
	out *outQueue

	maxInFlight    int
	maxQueuedBytes int

	initState atomic.Int32
	optOut    atomic.Pointer[map[string]bool]
	terminal  atomic.Bool // capabilities.mode is terminal
	desktop   atomic.Bool // capabilities.mode is desktop, sent explicitly

	stopped    atomic.Bool   // input stopped: lines read from now on are dropped
	inputEnded chan struct{} // closed when the reader goroutine returns
	readErr    error         // why the reader returned; read after inputEnded
	aborted    chan struct{} // closed by abort
	abortFlag  atomic.Bool
	abortErr   error // written before aborted is closed
	done       chan struct{}
	doneOnce   sync.Once

	cancelHandlers context.CancelCauseFunc
	handlers       sync.WaitGroup // handler and per-thread queue goroutines

	mu          sync.Mutex
	inflight    map[*inflight]struct{}
	running     int        // admitted requests started (running or queued behind their thread)
	backlog     []waiting  // admitted requests waiting for running to drop below maxInFlight
	backlogSize int        // bytes of the lines in backlog
	room        *sync.Cond // on mu: broadcast when backlog shrinks, on drain and on abort
	draining    bool
	idle        chan struct{} // made when draining starts; closed once inflight is empty
	idleClosed  bool
	threads     map[string]*threadQueue
	calls       map[string]chan callReply
	callsClosed bool
	nextCall    int64
	incoming    map[string]context.CancelFunc // client connection: server requests being answered
}

// inflight is an accepted request that has not been answered yet. Exactly one
// response is written for it: the first of the handler's result and the
// shutdown answer wins.
type inflight struct {
	id       json.RawMessage
	method   string
	answered atomic.Bool
}

// waiting is an admitted request held back because maxInFlight requests
// already run (backpressure, issue 15): it starts, in arrival order, when one
// of them finishes.
type waiting struct {
	inf       *inflight
	threadKey string
	job       requestJob
	size      int
}

// requestJob runs an admitted request. leave, not nil for a request queued
// behind its thread, lets the requests queued behind it start (LeaveLane).
type requestJob func(inf *inflight, leave func())

// threadQueue holds the jobs of one params.threadId (a thread's lane), run in
// arrival order by one goroutine that exits when the queue is empty. A job
// that leaves the lane (LeaveLane) hands the rest of the queue to a new
// goroutine and goes on beside it.
type threadQueue struct{ jobs []func(leave func()) }

// laneKey is the context key of a lane's leave function (LeaveLane).
type laneKey struct{}

// LeaveLane lets the requests queued behind the calling handler on its
// thread's lane (protocol.PerThread: a connection's requests for one
// threadId run one after another) start now, while the handler goes on. A
// handler of long work calls it once it was admitted (issue 22: a git/commit
// whose pre-commit hook runs for minutes, a gh that does not exit), so the
// thread's reads answer meanwhile; refusing the thread's other writes while
// it runs is the caller's business. ctx is the handler's context (or one
// derived from it). It does nothing for a handler that is not on a lane,
// and after the first call.
func LeaveLane(ctx context.Context) {
	if leave, _ := ctx.Value(laneKey{}).(func()); leave != nil {
		leave()
	}
}

type callReply struct {
	result json.RawMessage
	err    error
}

// PeerHandlers receive what the server sends on a client connection.
type PeerHandlers struct {
	// Notification is called on the connection's reader goroutine, in arrival
	// order; it must not wait for a response on the same connection.
	Notification func(method string, params json.RawMessage)
	// Request answers a server request (an approval, a dialog) on its own
	// goroutine. ctx is cancelled when the server withdraws the request
	// (serverRequest/cancelled) or the connection ends. A nil Request answers
	// methodNotFound.
	Request func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// ConnOptions configure a client connection (NewConn).
type ConnOptions struct {
	// MaxLineBytes bounds an input line (default DefaultMaxLineBytes).
	MaxLineBytes int
	// MaxPendingOutput bounds unwritten output (default DefaultMaxPendingOutput).
	MaxPendingOutput int
	// Logger receives the connection's log (default: discard).
	Logger   *slog.Logger
	Handlers PeerHandlers
}

func newConn(id uint64, r io.Reader, w io.Writer, maxLine, maxOut int, log *slog.Logger) *Conn {
	c := &Conn{
		id:         id,
		log:        log,
		lr:         newLineReader(r, maxLine),
		r:          r,
		w:          w,
		inputEnded: make(chan struct{}),
		aborted:    make(chan struct{}),
		done:       make(chan struct{}),
		inflight:   map[*inflight]struct{}{},
		threads:    map[string]*threadQueue{},
		calls:      map[string]chan callReply{},
		incoming:   map[string]context.CancelFunc{},
	}
	c.room = sync.NewCond(&c.mu)
	c.maxQueuedBytes = DefaultMaxQueuedInput
	c.out = newOutQueue(w, maxOut, c.abort)
	return c
}

// NewConn starts a client connection reading the server's messages from r
// and writing to w (a subprocess's stdout and stdin, or an in-memory pipe).
// Close it with Close.
func NewConn(r io.Reader, w io.Writer, opts ConnOptions) *Conn {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := newConn(0, r, w, orDefault(opts.MaxLineBytes, DefaultMaxLineBytes),
		orDefault(opts.MaxPendingOutput, DefaultMaxPendingOutput), log)
	c.peer = opts.Handlers
	c.start(context.Background())
	return c
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// start launches the reader and writer goroutines. Handler contexts derive
// from ctx without its cancellation: they end at the shutdown grace deadline
// or on abort, not when ctx ends.
func (c *Conn) start(ctx context.Context) {
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c.cancelHandlers = cancel
	go c.out.run()
	go c.readLoop(hctx)
}

// ID returns the connection's id, unique within its server (0 on a client
// connection).
func (c *Conn) ID() uint64 { return c.id }

// Done returns a channel closed when the connection has ended: a server
// connection once it drained or aborted (before Server.OnConnClose hooks
// run); a client connection when its input ended (the server went away) or
// Close returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) markDone() { c.doneOnce.Do(func() { close(c.done) }) }

// readLoop is the reader goroutine: it reads lines and handles each before
// reading the next (inline handlers run here).
func (c *Conn) readLoop(ctx context.Context) {
	defer func() {
		c.failCalls()
		close(c.inputEnded)
		if c.srv == nil {
			c.markDone()
		}
	}()
	for {
		line, err := c.lr.next()
		if c.stopped.Load() {
			c.readErr = io.EOF
			return
		}
		if err != nil {
			var tl *lineTooLongError
			if errors.As(err, &tl) {
				c.log.Warn("input line dropped", "bytes", tl.size, "limit", tl.limit)
				c.sendError(protocol.ErrorParams{Code: protocol.CodeParseError, Message: tl.Error(), ID: protocol.RequestID(recoverID(tl.prefix))})
				continue
			}
			c.readErr = err
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c.handleLine(ctx, line)
	}
}

// handleLine decodes and routes one input line.
func (c *Conn) handleLine(ctx context.Context, line []byte) {
	m, kind, err := decodeLine(line)
	if err != nil {
		bl := err.(*badLineError)
		if bl.reply && c.pendingCall(bl.id) {
			// {"id":7} answering a request of ours: a reply of the wrong
			// shape, which settles the call as a failure (issue 22).
			c.log.Warn("reply without a result or an error: taken as an error", "id", truncate(string(bl.id), 64))
			c.routeReply(&message{ID: bl.id, Error: Errorf(protocol.CodeParseError, "the reply has neither a result nor an error")})
			return
		}
		c.log.Warn("bad input line", "reason", bl.reason)
		if bl.id != nil {
			c.writeResponse(bl.id, nil, Errorf(protocol.CodeParseError, "%s", bl.reason))
		} else {
			c.sendError(protocol.ErrorParams{Code: protocol.CodeParseError, Message: bl.reason})
		}
		return
	}
	if !m.IJSON { // an I-JSON line is UTF-8
		if bad := firstInvalidUTF8(line); bad >= 0 {
			c.refuseInvalidUTF8(m, kind, line, bad)
			return
		}
	}
	switch {
	case kind == kindResponse:
		c.routeReply(m)
	case c.srv != nil && kind == kindRequest:
		c.srv.dispatch(ctx, c, m, len(line))
	case c.srv != nil:
		c.srv.handleNotification(c, m)
	case kind == kindRequest:
		c.peerRequest(ctx, m)
	default:
		c.peerNotification(m)
	}
}

// refuseInvalidUTF8 answers a message whose line holds bytes that are not
// UTF-8 at offset bad instead of handling it (encoding/json would replace
// them with U+FFFD, so a Latin-1 file name would silently name another
// file; issue 15). A request with a readable id is answered invalidParams
// naming the member; a reply to a server request becomes a parseError reply
// (a decline or a cancel, never consent); anything else gets the parseError
// error notification.
func (c *Conn) refuseInvalidUTF8(m *message, kind msgKind, line []byte, bad int) {
	field := invalidUTF8Field(line, bad)
	c.log.Warn("message refused: not valid UTF-8", "offset", bad, "field", field)
	switch {
	case kind == kindResponse:
		m.Result, m.Error = nil, Errorf(protocol.CodeParseError, "the reply is not valid UTF-8 (byte %d)", bad)
		c.routeReply(m)
	case kind == kindRequest && field != "id" && firstInvalidUTF8(m.ID) < 0:
		c.writeResponse(m.ID, nil, InvalidParams(field, "not valid UTF-8 (byte %d of the message): send text as UTF-8", bad))
	default:
		c.sendError(protocol.ErrorParams{Code: protocol.CodeParseError, Message: fmt.Sprintf("the message is not valid UTF-8 (byte %d)", bad)})
	}
}

// writeResponse queues the response to request id: e if it is non-nil, else
// result (a JSONAppender writes itself into the line).
func (c *Conn) writeResponse(id json.RawMessage, result any, e *Error) {
	var line []byte
	if e != nil {
		line = errorLine(id, e)
	} else if a, ok := result.(JSONAppender); ok {
		line = appendedResponseLine(id, a)
	} else if raw, err := encodeJSON(result); err != nil {
		c.log.Error("result does not encode", "err", err)
		line = errorLine(id, Errorf(protocol.CodeInternal, "internal error"))
	} else {
		line = responseLine(id, raw)
	}
	if err := c.out.put(line); err != nil {
		c.log.Debug("response not sent", "id", string(id), "err", err)
	}
}

// sendError sends the error notification; like every notification it
// honours the connection's opt-outs.
func (c *Conn) sendError(p protocol.ErrorParams) {
	if err := c.sendNote(protocol.ErrorNotification.With(p)); err != nil {
		c.log.Debug("error notification not sent", "err", err)
	}
}

// admit accepts a request for a handler that runs off the reader goroutine:
// on its own goroutine, or queued behind earlier requests of threadKey when
// it is not "". size is the bytes of its input line.
//
// Backpressure instead of refusal (issue 15): while maxInFlight admitted
// requests have started and not finished, a new one waits in the backlog and
// starts in arrival order as they finish; urgent requests (turn/interrupt)
// never wait. Replies to server requests and notifications do not pass
// through here, so they keep flowing. When the backlog holds more than
// maxQueuedBytes of input, the reader stops reading until it drains
// (waitForRoom). It refuses only with shuttingDown once the connection
// drains.
func (c *Conn) admit(id json.RawMessage, method, threadKey string, size int, urgent bool, job requestJob) *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.draining {
		return ErrShuttingDown
	}
	inf := &inflight{id: id, method: method}
	c.inflight[inf] = struct{}{}
	if !urgent && c.running >= c.maxInFlight {
		if len(c.backlog) == 0 {
			c.log.Info("requests wait: in-flight limit reached", "method", method, "limit", c.maxInFlight)
		}
		c.backlog = append(c.backlog, waiting{inf: inf, threadKey: threadKey, job: job, size: size})
		c.backlogSize += size
		return nil
	}
	c.startLocked(inf, threadKey, job)
	return nil
}

// startLocked starts an admitted request; c.mu is held.
func (c *Conn) startLocked(inf *inflight, threadKey string, job requestJob) {
	c.running++
	run := func(leave func()) {
		defer c.finished()
		job(inf, leave)
	}
	if threadKey == "" {
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			run(nil)
		}()
		return
	}
	q := c.threads[threadKey]
	if q == nil {
		q = &threadQueue{}
		c.threads[threadKey] = q
		c.handlers.Add(1)
		go c.runThread(threadKey, q)
	}
	q.jobs = append(q.jobs, run)
}

// finished is called when a started request's job returns: it starts waiting
// requests while fewer than maxInFlight run, skipping those answered
// meanwhile (shuttingDown at the grace deadline), and wakes the reader when
// the backlog shrank.
func (c *Conn) finished() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running--
	shrank := false
	for c.running < c.maxInFlight && len(c.backlog) > 0 {
		w := c.backlog[0]
		c.backlog[0] = waiting{}
		c.backlog = c.backlog[1:]
		c.backlogSize -= w.size
		shrank = true
		if w.inf.answered.Load() {
			continue
		}
		c.startLocked(w.inf, w.threadKey, w.job)
	}
	if shrank {
		c.room.Broadcast()
	}
}

// waitForRoom blocks the reader while the backlog holds more than
// maxQueuedBytes of input, until it drains below that, the connection
// drains (shutdown) or aborts.
func (c *Conn) waitForRoom() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.backlogSize > c.maxQueuedBytes {
		c.log.Warn("input paused: waiting requests hold too many bytes", "bytes", c.backlogSize, "limit", c.maxQueuedBytes)
	}
	for c.backlogSize > c.maxQueuedBytes && !c.draining && !c.abortFlag.Load() {
		c.room.Wait()
	}
}

// runThread is a per-thread queue goroutine: admit starts it for the first
// request of a threadId; it runs that thread's requests one after another
// and exits when the queue is empty, or after a request that left the lane
// (LeaveLane; handOver started the next runner).
func (c *Conn) runThread(key string, q *threadQueue) {
	defer c.handlers.Done()
	for {
		c.mu.Lock()
		if len(q.jobs) == 0 {
			delete(c.threads, key)
			c.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs[0] = nil
		q.jobs = q.jobs[1:]
		c.mu.Unlock()
		var left atomic.Bool
		job(func() {
			if !left.Swap(true) {
				c.handOver(key, q)
			}
		})
		if left.Load() {
			return
		}
	}
}

// handOver gives the lane q of key to a new runner goroutine: its running
// request left it. With nothing queued the lane ends here, and the next
// request of key starts a new one.
func (c *Conn) handOver(key string, q *threadQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(q.jobs) == 0 {
		delete(c.threads, key)
		return
	}
	c.handlers.Add(1)
	go c.runThread(key, q)
}

// settle writes the one response of inf and reports whether it did: false
// means inf was answered already (a result arriving after the shutdown
// answer is dropped).
func (c *Conn) settle(inf *inflight, result any, e *Error) bool {
	if !inf.answered.CompareAndSwap(false, true) {
		return false
	}
	c.writeResponse(inf.id, result, e)
	c.mu.Lock()
	delete(c.inflight, inf)
	c.checkIdleLocked()
	c.mu.Unlock()
	return true
}

func (c *Conn) checkIdleLocked() {
	if c.draining && !c.idleClosed && len(c.inflight) == 0 {
		c.idleClosed = true
		close(c.idle)
	}
}

// beginDrain stops admitting requests and returns a channel closed once
// every accepted request is answered.
func (c *Conn) beginDrain() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.draining {
		c.draining = true
		c.idle = make(chan struct{})
		c.checkIdleLocked()
		c.room.Broadcast()
	}
	return c.idle
}

// answerAll answers every unanswered request with e.
func (c *Conn) answerAll(e *Error) {
	c.mu.Lock()
	pending := make([]*inflight, 0, len(c.inflight))
	for inf := range c.inflight {
		pending = append(pending, inf)
	}
	c.mu.Unlock()
	for _, inf := range pending {
		if c.settle(inf, nil, e) {
			c.log.Warn("request answered shuttingDown", "method", inf.method, "id", string(inf.id))
		}
	}
}

// stopInput makes the reader drop everything it reads from now on, and fails
// pending calls: no reply can arrive any more.
func (c *Conn) stopInput() {
	c.stopped.Store(true)
	c.failCalls()
}

// Notify sends the server notification n with params p on c, unless c opted
// out of it at initialize; see Conn.Send. The server side sends every
// notification through Notify, Send or Broadcast, never by a method name.
func Notify[P any](c *Conn, n protocol.ServerNotification[P], p P) error {
	return c.Send(n.With(p))
}

// Send sends the server notification n (made by protocol.ServerNotification's
// With) unless this connection opted out of it at initialize, in which case
// it returns nil without sending. Errors as for Notify, and an error for the
// zero Notification.
func (c *Conn) Send(n protocol.Notification) error {
	if err := checkDirection(n.Method(), protocol.ServerNotificationDir); err != nil {
		return err
	}
	if c.srv != nil {
		n = c.srv.withErrorCode(n)
	}
	return c.sendNote(n)
}

// sendNote sends n without checking its direction (the frame's own error
// and serverRequest/cancelled notifications).
func (c *Conn) sendNote(n protocol.Notification) error {
	return c.notify(n.Method(), n.Params())
}

// Notify sends the notification method with params (encoded as JSON; nil
// params are left out), unless this connection opted out of method at
// initialize, in which case it returns nil without sending. It does not wait
// for the peer to read it. It is the client side's (the initialized
// notification); on a server connection method must be a server notification
// of the method table, and server code uses the typed Notify or Send.
//
// Errors: ErrConnClosed once the connection is closing; ErrOutputOverflow when
// this notification would put more than 64 MiB of unread output in the queue
// (the connection is aborted); an encoding error of params.
func (c *Conn) Notify(method string, params any) error {
	if c.srv != nil {
		if err := checkDirection(method, protocol.ServerNotificationDir); err != nil {
			return err
		}
	}
	return c.notify(method, params)
}

func (c *Conn) notify(method string, params any) error {
	if c.optedOut(method) {
		return nil
	}
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = encodeJSON(params); err != nil {
			return fmt.Errorf("jsonrpc: encode %s params: %w", method, err)
		}
	}
	return c.out.put(requestLine(nil, method, raw))
}

func (c *Conn) optedOut(method string) bool {
	m := c.optOut.Load()
	return m != nil && (*m)[method]
}

func checkDirection(method string, want protocol.Direction) error {
	row, ok := protocol.Lookup(method)
	if !ok || row.Direction != want {
		return fmt.Errorf("jsonrpc: %q is not a %s of the method table", method, want)
	}
	return nil
}

// Call sends a request to the peer with a connection-chosen numeric id and
// waits for its reply: the raw result, or the peer's error as an *Error with
// its code, message and data exactly as sent (an error of another shape, such
// as JSON-RPC 2.0's numeric codes, as replyError reads it, and a reply with
// neither result nor error, or whose result gives a member twice in one
// object at any depth, as parseError). On a server connection method
// must be a server request of the method table (approvals, dialogs); params
// nil are left out.
//
// When ctx ends before the reply, a server connection sends
// serverRequest/cancelled {id} so the client withdraws its prompt, and Call
// returns ctx.Err(); a reply arriving later is dropped. A call pending when
// the connection's input ends or it closes returns ErrConnClosed.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if c.srv != nil {
		if err := checkDirection(method, protocol.ServerRequestDir); err != nil {
			return nil, err
		}
	}
	return c.call(ctx, method, params)
}

func (c *Conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = encodeJSON(params); err != nil {
			return nil, fmt.Errorf("jsonrpc: encode %s params: %w", method, err)
		}
	}
	ch := make(chan callReply, 1)
	c.mu.Lock()
	if c.callsClosed {
		c.mu.Unlock()
		return nil, ErrConnClosed
	}
	c.nextCall++
	id := strconv.AppendInt(nil, c.nextCall, 10)
	key := string(id)
	c.calls[key] = ch
	c.mu.Unlock()

	if err := c.out.put(requestLine(id, method, raw)); err != nil {
		c.forgetCall(key)
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
	}
	if c.forgetCall(key) && c.srv != nil {
		if err := c.sendNote(protocol.ServerRequestCancelled.With(protocol.ServerRequestCancelledParams{RequestID: id})); err != nil {
			c.log.Debug("serverRequest/cancelled not sent", "err", err)
		}
	}
	select {
	case r := <-ch: // the reply won the race
		return r.result, r.err
	default:
		return nil, ctx.Err()
	}
}

// forgetCall removes a pending call and reports whether it was still pending.
func (c *Conn) forgetCall(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.calls[key]
	delete(c.calls, key)
	return ok
}

// failCalls fails every pending call with ErrConnClosed and refuses new ones.
func (c *Conn) failCalls() {
	c.mu.Lock()
	calls := c.calls
	c.calls = map[string]chan callReply{}
	c.callsClosed = true
	c.mu.Unlock()
	for _, ch := range calls {
		ch <- callReply{err: ErrConnClosed}
	}
}

// pendingCall reports whether id is the id of a call waiting for its reply.
func (c *Conn) pendingCall(id json.RawMessage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.calls[string(id)]
	return ok
}

// routeReply hands a response to the Call waiting for its id.
func (c *Conn) routeReply(m *message) {
	c.mu.Lock()
	ch, ok := c.calls[string(m.ID)]
	delete(c.calls, string(m.ID))
	c.mu.Unlock()
	if !ok {
		c.dropReply(m)
		return
	}
	switch {
	case m.Error != nil:
		ch <- callReply{err: m.Error}
	case m.Result == nil:
		ch <- callReply{result: json.RawMessage("null")}
	default:
		// A member given twice has no one meaning (encoding/json keeps
		// the last: {"decision":"decline","decision":"accept"} would
		// consent), so the reply is malformed, as request params with one
		// are (issue 22 QA, L6): an error, which the caller of a server
		// request takes as a decline or a cancel. An I-JSON line has none.
		if !m.IJSON {
			if name, dup := duplicateMemberDeep(m.Result); dup {
				c.log.Warn("reply refused: a member is given more than once", "id", truncate(string(m.ID), 64), "member", name)
				ch <- callReply{err: Errorf(protocol.CodeParseError, "the reply's result gives %s more than once", name)}
				return
			}
		}
		ch <- callReply{result: m.Result}
	}
}

// dropReply logs a reply no call waits for: at debug level when it answers
// a call this connection made and withdrew (or failed at input end), at warn
// level when its id was never used by this connection, which is a peer bug.
func (c *Conn) dropReply(m *message) {
	c.mu.Lock()
	issued := c.nextCall
	c.mu.Unlock()
	if n, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil && n >= 1 && n <= issued {
		c.log.Debug("reply to a withdrawn request dropped", "id", string(m.ID))
		return
	}
	id := string(m.ID)
	if m.ID == nil {
		id = "null"
	}
	c.log.Warn("reply to an unknown request id dropped", "id", truncate(id, 64))
}

// peerNotification handles a notification on a client connection. An error
// notification naming the id of a pending call (an oversized request line)
// fails that call; serverRequest/cancelled cancels the answering handler.
func (c *Conn) peerNotification(m *message) {
	switch m.Method {
	case protocol.ErrorNotification.Name:
		var p protocol.ErrorParams
		if json.Unmarshal(m.Params, &p) == nil && len(p.ID) > 0 {
			c.mu.Lock()
			ch, ok := c.calls[string(p.ID)]
			delete(c.calls, string(p.ID))
			c.mu.Unlock()
			if ok {
				ch <- callReply{err: &Error{Code: p.Code, Message: p.Message}}
			}
		}
	case protocol.ServerRequestCancelled.Name:
		var p protocol.ServerRequestCancelledParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.mu.Lock()
			cancel := c.incoming[string(p.RequestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	}
	if c.peer.Notification != nil {
		c.peer.Notification(m.Method, m.Params)
	}
}

// peerRequest answers a server request on a client connection, on its own
// goroutine.
func (c *Conn) peerRequest(ctx context.Context, m *message) {
	if c.peer.Request == nil {
		c.writeResponse(m.ID, nil, Errorf(protocol.CodeMethodNotFound, "this client answers no requests"))
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	key := string(m.ID)
	c.mu.Lock()
	c.incoming[key] = cancel
	c.handlers.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.handlers.Done()
		defer cancel()
		res, err := c.peer.Request(rctx, m.Method, m.Params)
		c.mu.Lock()
		delete(c.incoming, key)
		c.mu.Unlock()
		e := ToWireError(err)
		if e != nil && err != e {
			c.log.Error("request handler failed", "method", m.Method, "err", err)
		}
		c.writeResponse(m.ID, res, e)
	}()
}

// abort ends the connection at once (output overflow, a write error, or
// Close on a server connection): input stops, queued output is dropped,
// handler contexts are cancelled with err, unanswered requests stay
// unanswered, pending calls fail and the transport is closed.
func (c *Conn) abort(err error) {
	if !c.abortFlag.CompareAndSwap(false, true) {
		return // aborted already, or re-entered through out.fail's onFail
	}
	c.abortErr = err
	c.log.Error("connection aborted", "err", err)
	c.stopInput()
	close(c.aborted)
	c.out.fail(err)
	if c.cancelHandlers != nil {
		c.cancelHandlers(err)
	}
	c.mu.Lock()
	for inf := range c.inflight {
		inf.answered.Store(true)
	}
	c.inflight = map[*inflight]struct{}{}
	c.checkIdleLocked()
	c.room.Broadcast()
	c.mu.Unlock()
	c.closeTransport()
}

// closeTransport closes r and w when they are io.Closers: a peer reading w
// sees end of input, and a reader or writer blocked on a pipe is released.
func (c *Conn) closeTransport() {
	if wc, ok := c.w.(io.Closer); ok {
		wc.Close()
	}
	if rc, ok := c.r.(io.Closer); ok {
		rc.Close()
	}
}

// Close ends a client connection: queued output is flushed and w closed (the
// server sees end of input and shuts down or drops the connection), then
// Close waits until the server closes its side (end of r) and the
// connection's goroutines exit. Pending calls fail with ErrConnClosed. On a
// server connection Close aborts the connection.
func (c *Conn) Close() error {
	if c.srv != nil {
		c.abort(ErrConnClosed)
		return nil
	}
	c.out.close()
	<-c.out.done
	if wc, ok := c.w.(io.Closer); ok {
		wc.Close()
	}
	<-c.inputEnded
	c.mu.Lock()
	for _, cancel := range c.incoming {
		cancel()
	}
	c.mu.Unlock()
	c.handlers.Wait()
	if rc, ok := c.r.(io.Closer); ok {
		rc.Close()
	}
	c.markDone()
	if err := c.readErr; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		return err
	}
	return nil
}

// waitTimeout waits for wg until deadline and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, deadline time.Time) bool {
	ch := make(chan struct{})
	go func() {
		wg.Wait()
		close(ch)
	}()
	select {
	case <-ch:
		return true
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
