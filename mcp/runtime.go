package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/mcp/mcpauth"
	"github.com/knightcode/knightcode/threads/ext"
)

// protocolVersion is the MCP version the client asks for: the newest with
// the initialize handshake, server-to-client requests (roots,
// elicitation) and notifications/cancelled, which every server of the
// ecosystem speaks; a server may negotiate an older one.
const protocolVersion = "2025-11-25"

// Options are what the MCP runtime needs from the app-server
// (cmd/knightcode wires it).
type Options struct {
	// Store reads the MCP servers files at each thread load
	// (config.Store.MCPServers).
	Store *config.Store
	// Log receives the runtime's log and the servers' stderr. Env and
	// header values are never logged.
	Log *slog.Logger
	// Version is the client version sent in initialize.
	Version string
	// Auth, when set, is the process's OAuth sign-ins and tokens (one
	// Manager on the agent directory, shared by every thread load): each
	// HTTP connection (streamable or SSE) sends its tokens, refreshed as
	// mcpauth says, `/mcp login <name>` runs its SignIn, and a finished
	// sign-in reconnects the server in every loaded thread. Nil connects
	// without OAuth: a server answering 401 is "sign-in required" and
	// /mcp login answers that sign-in is not available.
	Auth *mcpauth.Manager
	// Environ is the app-server's environment, from which a stdio server
	// gets its base (PATH, HOME, TMPDIR, LANG, LC_*); nil is os.Environ.
	Environ func() []string
	// Apps, when set, is where each thread load registers its servers
	// for mcp/app/readResource and mcp/app/callTool (MCP Apps).
	Apps *Apps
}

// Extension is the MCP client runtime as a thread extension
// (EXTENSIBILITY.md §2 "Runtime"): each thread load reads the MCP
// servers of its cwd (config.Store.MCPServers) and connects the enabled
// ones in the background, each bounded by its startupTimeoutSec, so Load
// returns at once and a turn never waits for a server. A connected
// server's tools are registered for the model (mcp__<server>__<tool>, or
// behind the one tool "mcp" for exposure "search") and refreshed on
// tools/list_changed; the command /mcp shows the servers' status and
// retries or signs in. Its Path, which warnings name, is the global
// mcp.json; a project server's warnings name the project's file.
// Disposing the load (the thread unloads) stops every server: no server
// process outlives it.
func Extension(opts Options) ext.Extension {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	return ext.Extension{Path: opts.Store.MCPGlobalPath(), Load: func(api *ext.API) error {
		return load(opts, api)
	}}
}

// The states of a server (its status).
const (
	stateDisabled   = "disabled"
	stateConnecting = "connecting"
	stateConnected  = "connected"
	stateFailed     = "failed"
	stateSignIn     = "sign-in required"
	// stateSignInFailed is a /mcp login that ended in an error; reason
	// says why ("unsafe authorization URL" when mcpauth.CheckURL refused
	// an address).
	stateSignInFailed = "sign-in failed"
)

// runtime is one thread load's MCP servers.
type runtime struct {
	opts Options
	api  *ext.API
	cwd  string
	// apps: the thread's loading connection draws MCP Apps (fixed for the
	// load: every connection of its servers advertises the same).
	apps bool
	ctx  context.Context // ends at dispose
	stop context.CancelFunc
	wg   sync.WaitGroup // connects, watchers

	mu       sync.Mutex
	servers  []*server // in configuration order
	disposed bool
	// registered are the model tool names registered, with what each is.
	registered map[string]*regTool
	// refused are the collisions already warned about (name + loser).
	refused map[string]bool
	// syncMu serializes the tool set's updates (sync).
	syncMu sync.Mutex
	// unsubscribe ends the subscription to finished sign-ins (Options.Auth).
	unsubscribe func()
	// statusMu serializes showStatus, so that the status set last is the
	// one computed last.
	statusMu sync.Mutex
}

// server is one configured server of a load. Its mutable fields are
// guarded by the runtime's mu.
type server struct {
	rt    *runtime
	cfg   config.MCPServerConfig
	index int

	state   string
	reason  string
	gen     int // connection attempt; a stale attempt's outcome is dropped
	session *mcpsdk.ClientSession
	stdio   *stdioTransport
	tools   []*mcpsdk.Tool // the model-visible tools, as listed
	listed  []*mcpsdk.Tool // every tool listed (apps reach app-only ones)
	// resolved is the expanded configuration of the current attempt.
	resolved resolved
	// calls are the running tool calls by progress token.
	calls map[string]*callTimer
	// reinit counts the session reinitializations after an HTTP 404.
	reinit int
}

// resolved is a server's configuration with ${VAR} expanded.
type resolved struct {
	argv    []string
	env     map[string]string
	dir     string
	url     string
	headers map[string]string
	auth    mcpauth.Config
}

// load reads the servers of the thread's cwd, registers /mcp, and starts
// the enabled servers' connections; it returns at once.
func load(opts Options, api *ext.API) error {
	th := api.Thread()
	cfgs, _, err := opts.Store.ThreadMCPServers(context.Background(), th.Cwd)
	if err != nil {
		return fmt.Errorf("reading the MCP servers: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	rt := &runtime{opts: opts, api: api, cwd: th.Cwd, apps: th.DrawsApps(), ctx: ctx, stop: stop,
		registered: map[string]*regTool{}, refused: map[string]bool{}}
	for i, c := range cfgs {
		s := &server{rt: rt, cfg: c, index: i, state: stateDisabled, calls: map[string]*callTimer{}}
		rt.servers = append(rt.servers, s)
	}
	api.OnDispose(rt.dispose)
	if opts.Auth != nil {
		rt.unsubscribe = opts.Auth.Subscribe(rt.signedIn)
	}
	if opts.Apps != nil {
		api.OnDispose(opts.Apps.add(th.ID, rt))
	}
	if err := api.RegisterCommand(rt.command()); err != nil {
		return err
	}
	for _, s := range rt.servers {
		if !s.cfg.Enabled {
			continue
		}
		res, err := s.resolve()
		if err != nil {
			s.state, s.reason = stateFailed, err.Error()
			api.Warn(ext.Warning{Path: s.cfg.Path, Message: s.cfg.Name + ": " + err.Error()})
			continue
		}
		s.resolved = res
		rt.start(s)
	}
	rt.showStatus()
	return nil
}

// resolve expands the server's ${VAR}s (EXTENSIBILITY.md §2) and checks
// what needs the expanded value: an http(s) URL, an absolute cwd. Errors
// name the variable or the key, never a value of env or headers.
func (s *server) resolve() (resolved, error) {
	c := s.cfg
	var r resolved
	var err error
	exp := func(key, v string) string {
		if err != nil {
			return ""
		}
		out, e := config.ExpandMCPVars(v, nil)
		if e != nil {
			err = fmt.Errorf("%s: %v", key, e)
		}
		return out
	}
	if c.Type == config.MCPTypeStdio {
		r.argv = append(r.argv, exp("command", c.Command))
		for _, a := range c.Args {
			r.argv = append(r.argv, exp("args", a))
		}
		r.env = map[string]string{}
		for k, v := range c.Env {
			r.env[k] = exp("env."+k, v)
		}
		r.dir = s.rt.cwd
		if c.Cwd != "" {
			r.dir = exp("cwd", c.Cwd)
			if err == nil && !filepath.IsAbs(r.dir) {
				err = fmt.Errorf("cwd: %q is not an absolute path", r.dir)
			}
		}
		return r, err
	}
	r.url = exp("url", c.URL)
	r.headers = map[string]string{}
	for k, v := range c.Headers {
		r.headers[k] = exp("headers."+k, v)
	}
	if a := c.Auth; a != nil {
		r.auth = mcpauth.Config{
			ClientID:              exp("auth.clientId", a.ClientID),
			ClientSecret:          exp("auth.clientSecret", a.ClientSecret),
			Scopes:                a.Scopes,
			RedirectPort:          a.RedirectPort,
			AuthServerMetadataURL: exp("auth.authServerMetadataUrl", a.AuthServerMetadataURL),
		}
	}
	if err == nil {
		if u, e := url.Parse(r.url); e != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			err = errors.New("url: not an http or https URL once expanded")
		}
	}
	return r, err
}

// start connects s in the background (a new attempt).
func (rt *runtime) start(s *server) {
	rt.mu.Lock()
	if rt.disposed {
		rt.mu.Unlock()
		return
	}
	s.gen++
	gen := s.gen
	s.state, s.reason = stateConnecting, ""
	rt.wg.Add(1)
	rt.mu.Unlock()
	go func() {
		defer rt.wg.Done()
		rt.connect(s, gen)
	}()
}

// connect runs one connection attempt of s, bounded by its startup
// timeout; on success its tools join the thread's, on failure the status
// says why and a warning names the server.
func (rt *runtime) connect(s *server, gen int) {
	ctx, cancel := context.WithTimeout(rt.ctx, s.cfg.StartupTimeout)
	defer cancel()
	session, stdio, unauthorized, err := rt.dial(ctx, s)
	if err == nil {
		err = rt.listTools(ctx, s, session, gen)
		if err != nil {
			closeSession(session, stdio)
		}
	}
	if err != nil {
		state, why := stateFailed, err.Error()
		switch {
		case unauthorized():
			state, why = stateSignIn, signInHint(s.cfg.Name)
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			why = fmt.Sprintf("did not connect within %s (startupTimeoutSec): abandoned", s.cfg.StartupTimeout)
		}
		if rt.ctx.Err() != nil {
			return // disposed
		}
		if !rt.settle(s, gen, state, why) {
			return
		}
		rt.warn(s, why)
		rt.showStatus()
		return
	}
	rt.mu.Lock()
	if s.gen != gen || rt.disposed {
		rt.mu.Unlock()
		go closeSession(session, stdio)
		return
	}
	s.session, s.stdio = session, stdio
	s.state, s.reason = stateConnected, ""
	rt.wg.Add(1)
	rt.mu.Unlock()
	go func() {
		defer rt.wg.Done()
		rt.watch(s, gen, session, stdio)
	}()
	rt.sync()
	rt.showStatus()
	rt.opts.Log.Info("MCP server connected", "server", s.cfg.Name, "tools", len(s.visibleTools()))
}

// settle records the end of attempt gen of s (state and why) unless a
// later attempt replaced it; it reports whether it did.
func (rt *runtime) settle(s *server, gen int, state, why string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if s.gen != gen || rt.disposed {
		return false
	}
	s.state, s.reason = state, why
	s.session, s.stdio, s.tools = nil, nil, nil
	return true
}

// warn reports a problem of s: a subscriber warning naming the server,
// with its file as the path, and a log line.
func (rt *runtime) warn(s *server, why string) {
	rt.opts.Log.Warn("MCP server problem", "server", s.cfg.Name, "err", why)
	rt.api.Warn(ext.Warning{Path: s.cfg.Path, Message: s.cfg.Name + ": " + why})
}

// dial starts s's transport and the MCP handshake. unauthorized reports
// (after the attempt) whether the HTTP server answered 401 or 403.
func (rt *runtime) dial(ctx context.Context, s *server) (*mcpsdk.ClientSession, *stdioTransport, func() bool, error) {
	rt.mu.Lock()
	res := s.resolved
	rt.mu.Unlock()
	client := rt.client(s)
	var stdio *stdioTransport
	var transport mcpsdk.Transport
	hdr := &headerTransport{headers: res.headers, base: http.DefaultTransport}
	var oauth auth.OAuthHandler
	if rt.opts.Auth != nil && s.cfg.Type != config.MCPTypeStdio {
		oauth = rt.opts.Auth.Handler(s.cfg.Name, res.url, res.auth)
	}
	switch s.cfg.Type {
	case config.MCPTypeStdio:
		env := withEnv(baseEnv(rt.opts.Environ()), res.env)
		stdio = newStdioTransport(s.cfg.Name, res.argv, res.dir, env, rt.opts.Log)
		transport = stdio
	case config.MCPTypeSSE:
		// go-sdk's SSE transport takes no OAuth handler: its client's
		// transport sends the tokens (mcpauth.Transport).
		var rtp http.RoundTripper = hdr
		if oauth != nil {
			rtp = mcpauth.Transport(oauth, hdr)
		}
		transport = &sseTransport{inner: &mcpsdk.SSEClientTransport{Endpoint: res.url, HTTPClient: &http.Client{Transport: rtp}}, life: rt.ctx}
	default:
		t := &mcpsdk.StreamableClientTransport{Endpoint: res.url, HTTPClient: &http.Client{Transport: hdr}, MaxRetries: 1}
		if oauth != nil {
			t.OAuthHandler = oauth
		}
		transport = t
	}
	type result struct {
		session *mcpsdk.ClientSession
		err     error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := client.Connect(ctx, transport, &mcpsdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
		done <- result{cs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && stdio != nil {
			stdio.kill()
		}
		return r.session, stdio, hdr.unauthorized, r.err
	case <-ctx.Done():
		// Abandoned: go-sdk's own cleanup may wait on the process; the
		// group is killed now, and a late session is closed.
		if stdio != nil {
			stdio.kill()
		}
		go func() {
			if r := <-done; r.session != nil {
				closeSession(r.session, stdio)
			}
		}()
		return nil, nil, hdr.unauthorized, ctx.Err()
	}
}

// client is the go-sdk client of one connection of s: roots (the thread's
// cwd), elicitation (the thread's dialogs), tools/list_changed and
// progress handlers; no sampling.
func (rt *runtime) client(s *server) *mcpsdk.Client {
	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "knightcode", Version: rt.opts.Version}, &mcpsdk.ClientOptions{
		Capabilities: rt.capabilities(),
		ElicitationHandler: func(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
			return rt.elicit(ctx, s, req.Params)
		},
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) {
			rt.refresh(s)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
			s.progress(req.Params.ProgressToken)
		},
	})
	c.AddRoots(&mcpsdk.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(rt.cwd)}).String(), Name: "cwd"})
	return c
}

// listTools lists s's tools on session (every page) and keeps the model
// tools, unless attempt gen was replaced.
func (rt *runtime) listTools(ctx context.Context, s *server, session *mcpsdk.ClientSession, gen int) error {
	var tools, listed []*mcpsdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("listing its tools: %w", err)
		}
		listed = append(listed, t)
		if visible(t.Name, t.Meta, s.cfg.EnabledTools, s.cfg.DisabledTools) {
			tools = append(tools, t)
		}
	}
	rt.mu.Lock()
	if s.gen == gen {
		s.tools, s.listed = tools, listed
	}
	rt.mu.Unlock()
	return nil
}

// refresh lists s's tools again (tools/list_changed) and updates the
// thread's tools.
func (rt *runtime) refresh(s *server) {
	rt.mu.Lock()
	session, gen := s.session, s.gen
	if session == nil || rt.disposed {
		rt.mu.Unlock()
		return
	}
	rt.wg.Add(1)
	rt.mu.Unlock()
	go func() {
		defer rt.wg.Done()
		ctx, cancel := context.WithTimeout(rt.ctx, s.cfg.StartupTimeout)
		defer cancel()
		if err := rt.listTools(ctx, s, session, gen); err != nil {
			if rt.ctx.Err() == nil {
				rt.warn(s, err.Error())
			}
			return
		}
		rt.sync()
		rt.showStatus()
	}()
}

// watch waits for the session of attempt gen to end. An end the runtime
// did not ask for (the server exited, the connection broke) fails the
// server: its tools go, a warning says so, its process group is stopped.
// A streamable HTTP session that ends is reinitialized once.
func (rt *runtime) watch(s *server, gen int, session *mcpsdk.ClientSession, stdio *stdioTransport) {
	err := session.Wait()
	rt.mu.Lock()
	current := s.gen == gen && !rt.disposed
	again := current && s.cfg.Type == config.MCPTypeHTTP && s.reinit == 0
	if again {
		s.reinit++
	}
	rt.mu.Unlock()
	if !current {
		return
	}
	why := "the connection ended"
	if s.cfg.Type == config.MCPTypeStdio {
		why = "the server exited"
	}
	if err != nil {
		why += ": " + err.Error()
	}
	closeSession(session, stdio)
	if again {
		rt.start(s)
		rt.sync()
		return
	}
	if !rt.settle(s, gen, stateFailed, why) {
		return
	}
	rt.sync()
	rt.warn(s, why)
	rt.showStatus()
}

// closeSession ends a session and, for a stdio server, its process group
// (the stop sequence).
func closeSession(session *mcpsdk.ClientSession, stdio *stdioTransport) {
	closeIt := func() {
		if session != nil {
			_ = session.Close()
		}
	}
	if stdio == nil {
		closeIt()
		return
	}
	stdio.stop(closeIt)
}

// retry starts a new attempt of each named server (every failed or
// signed-out one when name is ""); a connected or connecting one is left
// alone. It returns the names restarted.
func (rt *runtime) retry(name string) ([]string, error) {
	var out []string
	found := false
	for _, s := range rt.servers {
		if name != "" && s.cfg.Name != name {
			continue
		}
		found = true
		rt.mu.Lock()
		st := s.state
		rt.mu.Unlock()
		if !s.cfg.Enabled || st == stateConnected || st == stateConnecting {
			continue
		}
		res, err := s.resolve()
		if err != nil {
			rt.mu.Lock()
			s.reason = err.Error()
			rt.mu.Unlock()
			rt.warn(s, err.Error())
			continue
		}
		rt.mu.Lock()
		s.resolved, s.reinit = res, 0
		rt.mu.Unlock()
		rt.start(s)
		out = append(out, s.cfg.Name)
	}
	if name != "" && !found {
		return nil, fmt.Errorf("no MCP server %s", name)
	}
	rt.showStatus()
	return out, nil
}

// reconnect ends s's connection and starts a new one (after a sign-in).
func (rt *runtime) reconnect(s *server) {
	rt.mu.Lock()
	session, stdio := s.session, s.stdio
	s.session, s.stdio, s.tools = nil, nil, nil
	s.gen++ // the old attempt's watcher and outcome are dropped
	rt.mu.Unlock()
	if session != nil {
		closeSession(session, stdio)
	}
	rt.sync()
	if res, err := s.resolve(); err == nil {
		rt.mu.Lock()
		s.resolved, s.reinit = res, 0
		rt.mu.Unlock()
	}
	rt.start(s)
	rt.showStatus()
}

// dispose ends the load: pending connects are abandoned and every server
// is stopped (stdio: the stop sequence, within 4 s), concurrently; it
// returns when they are.
func (rt *runtime) dispose() {
	if rt.unsubscribe != nil {
		rt.unsubscribe()
	}
	rt.mu.Lock()
	rt.disposed = true
	type conn struct {
		session *mcpsdk.ClientSession
		stdio   *stdioTransport
	}
	var conns []conn
	for _, s := range rt.servers {
		if s.session != nil {
			conns = append(conns, conn{s.session, s.stdio})
		}
		s.session, s.stdio = nil, nil
	}
	rt.mu.Unlock()
	rt.stop()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closeSession(c.session, c.stdio)
		}()
	}
	wg.Wait()
	rt.wg.Wait()
}

// session is s's live session, or an error saying why there is none.
func (s *server) live() (*mcpsdk.ClientSession, error) {
	s.rt.mu.Lock()
	defer s.rt.mu.Unlock()
	if s.session == nil {
		return nil, fmt.Errorf("MCP server %s is not connected (%s)", s.cfg.Name, s.statusLocked())
	}
	return s.session, nil
}

// visibleTools are s's model tools while it is connected.
func (s *server) visibleTools() []*mcpsdk.Tool {
	s.rt.mu.Lock()
	defer s.rt.mu.Unlock()
	if s.session == nil {
		return nil
	}
	return s.tools
}

// headerTransport adds a server's configured headers to every request and
// notes a 401 or 403 answer (a server that needs a sign-in).
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper

	mu     sync.Mutex
	denied bool
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		h.mu.Lock()
		h.denied = true
		h.mu.Unlock()
	}
	return resp, err
}

func (h *headerTransport) unauthorized() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.denied
}

// callTimer bounds one tool call: toolTimeoutSec, restarted by each
// progress notification of the call.
type callTimer struct {
	timer   *time.Timer
	timeout time.Duration
}

// progress restarts the timeout of the call whose progress token is tok.
func (s *server) progress(tok any) {
	key := fmt.Sprint(tok)
	s.rt.mu.Lock()
	c := s.calls[key]
	s.rt.mu.Unlock()
	if c != nil {
		c.timer.Reset(c.timeout)
	}
}

// statusLocked is s's status text: "connected, N tools", "failed: why",
// ... (mu held).
func (s *server) statusLocked() string {
	switch s.state {
	case stateConnected:
		return fmt.Sprintf("connected, %d tools", len(s.tools))
	case stateFailed:
		return "failed: " + s.reason
	case stateSignIn:
		return signInHint(s.cfg.Name)
	case stateSignInFailed:
		return stateSignInFailed + ": " + s.reason
	}
	return s.state
}

// signInHint is the status of a server that needs a sign-in: "sign-in
// required: run /mcp login <name>".
func signInHint(name string) string {
	return stateSignIn + ": run /mcp login " + name
}

// showStatus sets the thread's "mcp" status: "MCP <connected>/<enabled>"
// and the servers that are not connected with their state, e.g.
// "MCP 2/3 · docs: sign-in required: run /mcp login docs" or "MCP 0/1 ·
// docs: sign-in failed: unsafe authorization URL"; none when no server is
// enabled.
func (rt *runtime) showStatus() {
	rt.statusMu.Lock()
	defer rt.statusMu.Unlock()
	rt.mu.Lock()
	if rt.disposed {
		rt.mu.Unlock()
		return
	}
	enabled, connected := 0, 0
	var others []string
	for _, s := range rt.servers {
		if !s.cfg.Enabled {
			continue
		}
		enabled++
		if s.state == stateConnected {
			connected++
			continue
		}
		st := s.state
		switch st {
		case stateSignIn:
			st = signInHint(s.cfg.Name)
		case stateSignInFailed:
			st += ": " + s.reason
		}
		others = append(others, s.cfg.Name+": "+st)
	}
	rt.mu.Unlock()
	text := ""
	if enabled > 0 {
		text = fmt.Sprintf("MCP %d/%d", connected, enabled)
		if len(others) > 0 {
			text += " · " + strings.Join(others, ", ")
		}
	}
	rt.api.Thread().UI.SetStatus("mcp", text)
}
