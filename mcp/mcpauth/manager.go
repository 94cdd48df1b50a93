package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// ErrSignInRequired is wrapped by the errors of [Manager.Handler]'s
// Authorize and token source when no usable token is stored for a server:
// the user must sign in (/mcp login <name>, [Manager.SignIn]).
var ErrSignInRequired = errors.New("sign-in required")

// errClosed is returned by SignIn after Close.
var errClosed = errors.New("mcpauth: shutting down")

// Config is one server's auth settings from mcp.json (EXTENSIBILITY.md §2,
// the "auth" entry key, or Claude Code's "oauth"), with ${VAR} already
// expanded.
type Config struct {
	// ClientID and ClientSecret are a pre-registered client; with no
	// ClientID the client registers itself (dynamic client registration,
	// RFC 7591) at each sign-in.
	ClientID, ClientSecret string
	// Scopes, when not empty, replace the scopes discovery suggests.
	Scopes []string
	// RedirectPort is the loopback redirect listener's port on 127.0.0.1;
	// 0 picks a free one.
	RedirectPort int
	// AuthServerMetadataURL, when set, is fetched instead of the
	// authorization server's well-known metadata documents (RFC 8414); it
	// must be https. The issuer it names must still be the one discovery
	// finds (go-sdk checks it).
	AuthServerMetadataURL string
}

// Options are a Manager's seams; the zero value is the real system.
type Options struct {
	// Opener opens a checked authorization URL in the system browser; nil
	// runs xdg-open (Linux), open (macOS) or rundll32
	// url.dll,FileProtocolHandler (Windows) with the URL as one argument,
	// never through a shell.
	Opener func(url string) error
	// HTTPClient sends discovery, registration and token requests (through
	// a transport that refuses URLs failing [CheckURL]); nil is a client
	// with a 30 s timeout over http.DefaultTransport.
	HTTPClient *http.Client
	// Now is the clock that dates tokens and decides refreshes; nil is
	// time.Now.
	Now func() time.Time
}

// Manager keeps the OAuth tokens of the HTTP MCP servers of one agent
// directory (<agentDir>/mcp-auth.json), hands them to connections
// ([Manager.Handler]) and runs interactive sign-ins ([Manager.SignIn]).
// One Manager serves a whole server process; several processes may share
// the agent directory. Its methods are safe for concurrent use.
type Manager struct {
	store  *store
	log    *slog.Logger
	opener func(string) error
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	closed  bool
	nextID  uint64
	pending map[uint64]pendingSignIn
	subs    map[uint64]func(name, serverURL string)
	running sync.WaitGroup // sign-ins in progress
}

// New returns the Manager of agentDir. log receives sign-in and refresh
// events (never a token or secret); nil discards them.
func New(agentDir string, log *slog.Logger, opts Options) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		store:   newStore(agentDir),
		log:     log,
		opener:  opts.Opener,
		client:  opts.HTTPClient,
		now:     opts.Now,
		pending: map[uint64]pendingSignIn{},
		subs:    map[uint64]func(string, string){},
	}
	if m.opener == nil {
		m.opener = openBrowser
	}
	if m.client == nil {
		m.client = &http.Client{Timeout: 30 * time.Second}
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Subscribe registers f to be called with (name, serverURL) after every
// successful [Manager.SignIn] (the runtime reconnects that server in every
// loaded thread). f runs on the signing-in goroutine after the tokens are
// stored. The returned function removes f.
func (m *Manager) Subscribe(f func(name, serverURL string)) (unsubscribe func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	id := m.nextID
	m.subs[id] = f
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.subs, id)
	}
}

// HasToken reports whether a usable token, or one that can be refreshed,
// is stored for (name, serverURL). A token file that cannot be read counts
// as none.
func (m *Manager) HasToken(name, serverURL string) bool {
	rec, err := m.store.read(recordKey(name, serverURL))
	if err != nil {
		m.log.Warn("mcp auth: reading tokens", "server", name, "err", err)
		return false
	}
	return rec.usable(m.now())
}

// Close cancels every pending sign-in (spec "Shutdown": pending login flows
// cancel) and waits for them to return; a later SignIn fails at once.
// Stored tokens and handlers are unaffected.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, p := range m.pending {
		p.cancel(errClosed)
	}
	m.mu.Unlock()
	m.running.Wait()
}

// pendingSignIn is a running [Manager.SignIn]: its record key and the
// cancel of its context.
type pendingSignIn struct {
	key    string
	cancel context.CancelCauseFunc
}

// notify calls every subscriber with (name, serverURL).
func (m *Manager) notify(name, serverURL string) {
	m.mu.Lock()
	subs := make([]func(string, string), 0, len(m.subs))
	for _, f := range m.subs {
		subs = append(subs, f)
	}
	m.mu.Unlock()
	for _, f := range subs {
		f(name, serverURL)
	}
}

// signInRequired is the error for a server with no usable token.
func signInRequired(name string) error {
	return fmt.Errorf("mcpauth: %s: %w (/mcp login %s)", name, ErrSignInRequired, name)
}
