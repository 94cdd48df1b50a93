package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// Shutdown timing (spec: Ownership, unloading, and shutdown).
const (
	// DefaultShutdownGrace is how long accepted requests may run after stdin
	// EOF or a signal before they are answered shuttingDown.
	DefaultShutdownGrace = 9 * time.Second
	// DefaultShutdownLimit is when the server stops waiting for output to
	// drain and returns, so the process exits even if the client stopped
	// reading stdout.
	DefaultShutdownLimit = 10 * time.Second
	// DefaultMaxInFlight bounds the requests of one connection that run at
	// once; more wait (see Config.MaxInFlight).
	DefaultMaxInFlight = 1024
	// DefaultMaxQueuedInput bounds the input bytes of a connection's
	// waiting requests before it stops reading input (64 MiB, like a line).
	DefaultMaxQueuedInput = 64 << 20
)

// Config configures a Server. Zero fields take the defaults.
type Config struct {
	// Name and Version are reported as serverInfo by initialize.
	Name    string
	Version string
	// Logger receives the server's log (default: discard). The app-server
	// logs to stderr; stdout carries protocol messages only.
	Logger *slog.Logger
	// MaxLineBytes bounds an input line: a longer line is dropped with an
	// error notification (default DefaultMaxLineBytes, 64 MiB).
	MaxLineBytes int
	// MaxPendingOutput bounds a connection's unwritten output: past it the
	// connection aborts (default DefaultMaxPendingOutput, 64 MiB).
	MaxPendingOutput int
	// MaxInFlight bounds a connection's requests that run at once (queued
	// behind their thread included); more wait in arrival order and start as
	// those finish, turn/interrupt never waits, and once the waiting ones
	// hold DefaultMaxQueuedInput bytes the connection stops reading input
	// until they drain (default DefaultMaxInFlight).
	MaxInFlight int
	// MaxQueuedInput bounds the input bytes of a connection's waiting
	// requests before it stops reading (default DefaultMaxQueuedInput).
	MaxQueuedInput int
	// ShutdownGrace and ShutdownLimit are the 9 s and 10 s of shutdown,
	// counted from stdin EOF, a signal or Shutdown.
	ShutdownGrace time.Duration
	ShutdownLimit time.Duration
	// ErrorMappers turn typed errors of core packages into wire errors, tried
	// in order by ToWireError. Unmapped errors answer internal and are logged
	// with their cause.
	ErrorMappers []ErrorMapper
}

// DiagnosticsSource supplies the thread, payload and listing counters of
// server/diagnostics. The threads layer implements it; until
// Server.SetDiagnosticsSource installs one those counters are zero.
type DiagnosticsSource interface {
	// ThreadCounters returns the current counters. It is called on a
	// request goroutine and must not block for long.
	ThreadCounters() protocol.ThreadCounters
}

// Server dispatches the requests of its connections to handlers installed by
// Handle, keeps the handshake, and runs shutdown. Install handlers and hooks
// before serving.
type Server struct {
	cfg      Config
	log      *slog.Logger
	started  time.Time
	handlers map[string]*handlerEntry
	serving  atomic.Bool
	diag     atomic.Pointer[DiagnosticsSource]

	mu            sync.Mutex
	conns         map[*Conn]struct{}
	nextConnID    uint64
	closeHooks    []func(*Conn)
	shutdownHooks []func(context.Context)
	connWG        sync.WaitGroup

	shutOnce  sync.Once
	stopping  chan struct{} // closed when shutdown begins
	graceAt   time.Time     // written before stopping is closed
	hardAt    time.Time
	hooksDone chan struct{} // closed when the shutdown hooks returned
	shutDone  chan struct{} // closed when shutdown is complete (or the hard limit passed)
}

// handlerEntry is an installed handler with its table row; decode and call
// close over the row's Go types.
type handlerEntry struct {
	method protocol.Method
	decode func(json.RawMessage) (any, error)
	call   func(context.Context, *Conn, any) (any, error)
}

// NewServer returns a server with the built-in handlers of initialize and
// server/diagnostics installed.
func NewServer(cfg Config) *Server {
	if cfg.Name == "" {
		cfg.Name = "knightcode"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.MaxLineBytes = orDefault(cfg.MaxLineBytes, DefaultMaxLineBytes)
	cfg.MaxPendingOutput = orDefault(cfg.MaxPendingOutput, DefaultMaxPendingOutput)
	cfg.MaxInFlight = orDefault(cfg.MaxInFlight, DefaultMaxInFlight)
	cfg.MaxQueuedInput = orDefault(cfg.MaxQueuedInput, DefaultMaxQueuedInput)
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.ShutdownLimit <= 0 {
		cfg.ShutdownLimit = DefaultShutdownLimit
	}
	if cfg.ShutdownLimit < cfg.ShutdownGrace {
		cfg.ShutdownLimit = cfg.ShutdownGrace
	}
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		started:   time.Now(),
		handlers:  map[string]*handlerEntry{},
		conns:     map[*Conn]struct{}{},
		stopping:  make(chan struct{}),
		hooksDone: make(chan struct{}),
		shutDone:  make(chan struct{}),
	}
	Handle(s, protocol.Initialize, s.initialize)
	Handle(s, protocol.ServerDiagnostics, s.diagnostics)
	return s
}

// Handle installs h as the handler of the client request m. The frame decodes
// params into P through the one strict decoding path (decodeParams:
// invalidParams naming the field for an unknown member, a value that does not
// fit, a missing required member, an empty or null member tagged
// minLength=1, or a refusal of P's Validate method), runs h
// under m's serialization rule, and writes h's result or error as the one
// response, also after ctx is cancelled. Errors go through ToWireError.
//
// Handle panics when m is not a client request of the method table, its
// types differ from the table's, a handler is installed twice, or the server
// is already serving: these are wiring bugs.
func Handle[P, R any](s *Server, m protocol.ClientRequest[P, R], h func(ctx context.Context, c *Conn, params P) (R, error)) {
	row, ok := protocol.Lookup(m.Name)
	switch {
	case !ok || row.Direction != protocol.ClientRequestDir:
		panic(fmt.Sprintf("jsonrpc: Handle(%q): not a client request of the method table", m.Name))
	case row.Params != reflect.TypeFor[P]() || row.Result != reflect.TypeFor[R]():
		panic(fmt.Sprintf("jsonrpc: Handle(%q): types differ from the method table", m.Name))
	case s.serving.Load():
		panic(fmt.Sprintf("jsonrpc: Handle(%q) after the server started serving", m.Name))
	case s.handlers[m.Name] != nil:
		panic(fmt.Sprintf("jsonrpc: Handle(%q): handler installed twice", m.Name))
	}
	s.handlers[m.Name] = newHandlerEntry(row, h)
}

func newHandlerEntry[P, R any](row protocol.Method, h func(context.Context, *Conn, P) (R, error)) *handlerEntry {
	return &handlerEntry{
		method: row,
		decode: func(raw json.RawMessage) (any, error) {
			var p P
			err := decodeParams(raw, &p)
			return p, err
		},
		call: func(ctx context.Context, c *Conn, p any) (any, error) {
			return h(ctx, c, p.(P))
		},
	}
}

// MissingHandlers lists the client requests and client notifications of the
// method table that this server does not handle, sorted by name. A fully
// wired server has none.
func (s *Server) MissingHandlers() []string {
	var missing []string
	for _, m := range protocol.Methods() {
		switch {
		case m.Direction == protocol.ClientRequestDir && s.handlers[m.Name] == nil,
			m.Direction == protocol.ClientNotificationDir && m.Name != protocol.Initialized.Name:
			missing = append(missing, m.Name)
		}
	}
	return missing
}

// Logger returns the server's logger (Config.Logger), for the hooks and
// handlers registered on it.
func (s *Server) Logger() *slog.Logger { return s.log }

// SetDiagnosticsSource installs the source of server/diagnostics' thread,
// payload and listing counters.
func (s *Server) SetDiagnosticsSource(src DiagnosticsSource) { s.diag.Store(&src) }

// OnConnClose registers f to run after a connection ended (its Done channel
// is closed then), on the goroutine that served it; threads drops the
// connection's subscriptions there.
func (s *Server) OnConnClose(f func(*Conn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeHooks = append(s.closeHooks, f)
}

// OnShutdown registers f to run once during shutdown (stdin EOF, a signal,
// Shutdown); threads unloads every thread there. The hooks run after the
// requests accepted before input stopped have settled (every connection
// answered them), so that work runs against the state it was accepted in
// (spec, "Ownership, unloading, and shutdown": accepted requests still
// receive answers; a diff read of a loaded thread is one), or at the
// latest hookReserve before the grace deadline when some request is still
// running (it may then meet unloaded threads and answer shuttingDown).
// Handlers of long work (a login flow) watch ShuttingDown to end early.
// ctx ends at the grace deadline (9 s). Connections flush their output only
// after every hook returned or the grace deadline passed, so what a hook
// sends still reaches the client. Hooks run one after another in
// registration order.
func (s *Server) OnShutdown(f func(ctx context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdownHooks = append(s.shutdownHooks, f)
}

// ShuttingDown returns a channel closed when shutdown begins. Handlers of
// long work watch it to answer shuttingDown early.
func (s *Server) ShuttingDown() <-chan struct{} { return s.stopping }

// Broadcast sends the server notification n with params p to every
// initialized connection of s that did not opt out of it (spec: Handshake,
// optOutNotifications); see Server.Broadcast.
func Broadcast[P any](s *Server, n protocol.ServerNotification[P], p P) error {
	return s.Broadcast(n.With(p))
}

// Broadcast sends the notification n (made by protocol.ServerNotification's
// With) to every initialized connection that did not opt out of it; params
// are encoded once (nil params are left out). A connection that is closing or
// overflows is skipped (an overflow aborts it). It returns an error only
// when n is not a server notification of the method table (the zero
// Notification) or its params cannot be encoded.
func (s *Server) Broadcast(n protocol.Notification) error {
	n = s.withErrorCode(n)
	method, params := n.Method(), n.Params()
	if err := checkDirection(method, protocol.ServerNotificationDir); err != nil {
		return err
	}
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = encodeJSON(params); err != nil {
			return fmt.Errorf("jsonrpc: encode %s params: %w", method, err)
		}
	}
	line := requestLine(nil, method, raw)
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		if c.initState.Load() == stateReady && !c.optedOut(method) {
			_ = c.out.put(line)
		}
	}
	return nil
}

// Serve runs the app-server over its primary connection, r and w being
// stdin and stdout: it serves until r ends (EOF) or ctx is done (a signal),
// then shuts the whole server down (see Shutdown) and returns by the
// shutdown limit (10 s) even when w is blocked by a client that stopped
// reading. It returns nil after a clean shutdown, and an error when the
// connection aborted, input failed, or output could not be drained in time.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.serveConn(ctx, r, w, true)
	t := time.NewTimer(time.Until(s.hardAt))
	defer t.Stop()
	select {
	case <-s.shutDone:
	case <-t.C:
	}
	return err
}

// ServeConn serves one more connection over r and w (the in-process client
// uses a pipe) until r ends, ctx is done or the server shuts down. Then it
// drains the connection: no more input is read, accepted requests are
// answered (shuttingDown past the grace period), output is flushed within
// the shutdown limit, and r and w are closed if they are io.Closers. It
// returns nil after a clean end; the abort cause (ErrOutputOverflow, a write
// error, or the output-not-drained error at the shutdown limit) or an input
// error otherwise; and ErrShuttingDown at once when the server is already
// shutting down.
func (s *Server) ServeConn(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.serveConn(ctx, r, w, false)
}

func (s *Server) serveConn(ctx context.Context, r io.Reader, w io.Writer, primary bool) error {
	s.serving.Store(true)
	s.mu.Lock()
	select {
	case <-s.stopping:
		s.mu.Unlock()
		return ErrShuttingDown
	default:
	}
	s.nextConnID++
	id := s.nextConnID
	c := newConn(id, r, w, s.cfg.MaxLineBytes, s.cfg.MaxPendingOutput, s.log.With("conn", id))
	c.srv = s
	c.maxInFlight = s.cfg.MaxInFlight
	c.maxQueuedBytes = s.cfg.MaxQueuedInput
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	defer s.connWG.Done()

	c.start(ctx)
	select {
	case <-c.inputEnded:
	case <-ctx.Done():
	case <-s.stopping:
	case <-c.aborted:
	}
	if primary {
		s.beginShutdown()
	}
	var err error
	select {
	case <-s.stopping:
		err = c.drain(s.graceAt, s.hardAt, s.hooksDone)
	default:
		now := time.Now()
		err = c.drain(now.Add(s.cfg.ShutdownGrace), now.Add(s.cfg.ShutdownLimit), nil)
	}

	s.mu.Lock()
	delete(s.conns, c)
	hooks := s.closeHooks
	s.mu.Unlock()
	c.markDone()
	for _, f := range hooks {
		f(c)
	}
	return err
}

// Shutdown begins shutdown if it has not begun, and waits until it is
// complete or ctx ends. Shutdown stops input on every connection at once,
// lets accepted requests finish and then runs the OnShutdown hooks (see
// OnShutdown), answers what is still unanswered at the grace deadline (9 s)
// shuttingDown (a late result publishes nothing), flushes output, and
// completes by the shutdown limit (10 s) even when a client does not read.
func (s *Server) Shutdown(ctx context.Context) error {
	s.beginShutdown()
	select {
	case <-s.shutDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) beginShutdown() {
	s.shutOnce.Do(func() {
		now := time.Now()
		s.mu.Lock()
		s.graceAt = now.Add(s.cfg.ShutdownGrace)
		s.hardAt = now.Add(s.cfg.ShutdownLimit)
		for c := range s.conns {
			c.stopInput() // new input stops immediately
		}
		close(s.stopping)
		hooks := s.shutdownHooks
		s.mu.Unlock()
		s.log.Info("shutting down", "grace", s.cfg.ShutdownGrace, "limit", s.cfg.ShutdownLimit)

		// The hooks goroutine waits for the accepted requests to settle,
		// runs the OnShutdown hooks and exits when the last returns.
		go func() {
			defer close(s.hooksDone)
			s.waitSettled(s.graceAt.Add(-hookReserve(s.cfg.ShutdownGrace)))
			ctx, cancel := context.WithDeadlineCause(context.Background(), s.graceAt, ErrShuttingDown)
			defer cancel()
			for _, f := range hooks {
				f(ctx)
			}
		}()
		// The completion goroutine closes shutDone when connections and hooks
		// are done, or at the hard limit.
		go func() {
			defer close(s.shutDone)
			all := make(chan struct{})
			go func() {
				s.connWG.Wait()
				<-s.hooksDone
				close(all)
			}()
			t := time.NewTimer(time.Until(s.hardAt))
			defer t.Stop()
			select {
			case <-all:
				s.log.Info("shutdown complete")
			case <-t.C:
				s.log.Warn("shutdown limit reached")
			}
		}()
	})
}

// hookReserve is how much of the grace period the shutdown hooks keep for
// themselves when accepted requests are slow to settle: 2 s of the 9 s (a
// quarter of a shorter grace), enough for threads to interrupt their turns
// and write the turns' end entries before unanswered requests are answered
// shuttingDown at the grace deadline.
func hookReserve(grace time.Duration) time.Duration {
	return min(2*time.Second, grace/4)
}

// waitSettled waits until every connection has answered every request it
// accepted (input is stopped, so none is accepted any more), or until
// deadline.
func (s *Server) waitSettled(deadline time.Time) {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for _, c := range conns {
		select {
		case <-c.beginDrain():
		case <-t.C:
			s.log.Warn("shutdown hooks run while accepted requests are still running")
			return
		}
	}
}

// drain ends a server connection gracefully; see ServeConn.
func (c *Conn) drain(graceAt, hardAt time.Time, hooksDone <-chan struct{}) error {
	c.stopInput()
	grace, cancelGrace := context.WithDeadline(context.Background(), graceAt)
	defer cancelGrace()
	hard, cancelHard := context.WithDeadline(context.Background(), hardAt)
	defer cancelHard()

	select {
	case <-c.beginDrain():
	case <-grace.Done():
		c.answerAll(ErrShuttingDown)
	case <-c.aborted:
	}
	if hooksDone != nil {
		select {
		case <-hooksDone:
		case <-grace.Done():
		case <-c.aborted:
		}
	}
	c.cancelHandlers(ErrShuttingDown)
	c.out.close()

	select {
	case <-c.out.done:
	case <-c.aborted:
	case <-hard.Done():
		c.abort(errNotDrained)
	}
	c.closeTransport()
	if !waitTimeout(&c.handlers, hardAt) {
		c.log.Error("handlers still running at the shutdown limit")
	}
	select {
	case <-c.aborted:
		return c.abortErr
	default:
	}
	select {
	case <-c.inputEnded:
		if err := c.readErr; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
			c.log.Error("input failed", "err", err)
			return err
		}
	default:
	}
	return nil
}

// errNotDrained aborts a connection whose output was not written by the
// shutdown limit (a client that stopped reading).
var errNotDrained = errors.New("jsonrpc: output not drained by the shutdown limit")

// dispatch handles a request on the reader goroutine: handshake gate, method
// lookup, params decoding, then the method's serialization rule.
func (s *Server) dispatch(ctx context.Context, c *Conn, m *message, size int) {
	if m.Method != protocol.Initialize.Name && c.initState.Load() != stateReady {
		c.writeResponse(m.ID, nil, Errorf(protocol.CodeNotInitialized,
			"%s before the handshake finished: send initialize, wait for its result, then send initialized", truncate(m.Method, 200)))
		return
	}
	h := s.handlers[m.Method]
	if h == nil {
		msg := "unknown method " + truncate(m.Method, 200)
		if m.Method == "" {
			msg = "unknown method \"\": the method name is empty"
		} else if row, ok := protocol.Lookup(m.Method); ok && row.Direction == protocol.ClientRequestDir {
			msg = m.Method + " is not implemented by this server"
		} else if ok {
			msg = m.Method + " is not a client request"
		}
		c.writeResponse(m.ID, nil, Errorf(protocol.CodeMethodNotFound, "%s", msg))
		return
	}
	p, err := h.decode(m.Params)
	if err != nil {
		c.writeResponse(m.ID, nil, s.wireError(c, m.Method, err))
		return
	}
	if h.method.Serialization == protocol.Inline {
		res, err := s.call(ctx, c, h, p)
		c.writeResponse(m.ID, res, s.wireError(c, m.Method, err))
		return
	}
	key := ""
	if ts, ok := p.(protocol.ThreadScoped); ok && h.method.Serialization == protocol.PerThread {
		key = ts.ThreadKey()
	}
	urgent := m.Method == protocol.TurnInterrupt.Name
	if e := c.admit(m.ID, m.Method, key, size, urgent, func(inf *inflight, leave func()) {
		hctx := ctx
		if leave != nil {
			hctx = context.WithValue(ctx, laneKey{}, leave)
		}
		res, err := s.call(hctx, c, h, p)
		if !c.settle(inf, res, s.wireError(c, m.Method, err)) {
			c.log.Warn("late result dropped: request already answered", "method", m.Method, "id", string(m.ID))
		}
	}); e != nil {
		c.writeResponse(m.ID, nil, e)
		return
	}
	c.waitForRoom()
}

// call runs a handler, turning a panic into internal.
func (s *Server) call(ctx context.Context, c *Conn, h *handlerEntry, p any) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panicked", "method", h.method.Name, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, Errorf(protocol.CodeInternal, "internal error")
		}
	}()
	return h.call(ctx, c, p)
}

// withErrorCode returns n with the code of an error notification filled in
// from its Cause by the server's error table (ToWireError with
// Config.ErrorMappers), as a response to a request failing the same way
// would carry; other notifications, and error notifications that name a
// code or have no cause, are returned as they are.
func (s *Server) withErrorCode(n protocol.Notification) protocol.Notification {
	p, ok := n.Params().(protocol.ErrorParams)
	if !ok || p.Code != "" || p.Cause == nil {
		return n
	}
	p.Code = ToWireError(p.Cause, s.cfg.ErrorMappers...).Code
	return protocol.ErrorNotification.With(p)
}

// wireError maps a handler error and logs the cause of an internal one, and
// of a mapped one whose wire message leaves part of its cause out (git's
// command line and stderr behind notGitRepo, a wrapped context).
func (s *Server) wireError(c *Conn, method string, err error) *Error {
	e := ToWireError(err, s.cfg.ErrorMappers...)
	switch {
	case e == nil || errors.As(err, new(*Error)):
	case e.Code == protocol.CodeInternal:
		c.log.Error("request failed", "method", method, "err", err)
	case e.Message != err.Error():
		c.log.Info("request failed", "method", method, "code", e.Code, "err", err)
	}
	return e
}

// handleNotification handles a client notification on the reader goroutine.
func (s *Server) handleNotification(c *Conn, m *message) {
	if m.Method != protocol.Initialized.Name {
		if row, ok := protocol.Lookup(m.Method); ok && row.Direction == protocol.ClientRequestDir {
			// A request sent without an id cannot be answered; say so
			// rather than drop it silently.
			c.log.Warn("request without an id ignored", "method", m.Method)
			c.sendError(protocol.ErrorParams{Code: protocol.CodeParseError,
				Message: m.Method + " is a request: send it with a string or numeric id to get an answer; this one was ignored"})
			return
		}
		c.log.Debug("client notification ignored", "method", m.Method)
		return
	}
	switch c.initState.Load() {
	case stateAwaitInitialized:
		c.initState.Store(stateReady)
	case stateNew:
		c.sendError(protocol.ErrorParams{Code: protocol.CodeNotInitialized,
			Message: "initialized before the initialize response: send initialize first"})
	}
}
