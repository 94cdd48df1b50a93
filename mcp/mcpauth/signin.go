package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// signInTimeout is how long a sign-in waits for the browser to come back
// (EXTENSIBILITY.md §2: the flow expires after 5 minutes).
const signInTimeout = 5 * time.Minute

// callbackPath is the loopback redirect URI's path.
const callbackPath = "/callback"

// SignIn runs the interactive sign-in for server name at serverURL with
// go-sdk's [auth.AuthorizationCodeHandler]: protected resource metadata
// (RFC 9728) and authorization server discovery (RFC 8414), dynamic client
// registration (RFC 7591) unless cfg names a client, PKCE (S256), and a
// loopback redirect listener on 127.0.0.1:<cfg.RedirectPort or a free
// port> (RFC 8252). The authorization URL, once it passes [CheckURL], is
// given to notify (the runtime sends it as ui/notify, for a machine
// without a browser) and then opened with the Opener. Every request of the
// flow and every endpoint discovery names is checked too (see
// checkedTransport); an unsafe one ends the flow with an error wrapping
// [ErrUnsafeURL] before anything is opened.
//
// The flow ends after 5 minutes, when ctx ends, when [Manager.Close] is
// called, or when another SignIn for the same server starts. On success
// the client registration and tokens are stored in <agentDir>/mcp-auth.json
// (mode 0600, keyed by name and canonical URL, under the file's lock) and
// every [Manager.Subscribe] callback is called with (name, serverURL).
func (m *Manager) SignIn(ctx context.Context, name, serverURL string, cfg Config, notify func(authURL string)) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	ctx, cancel := context.WithTimeout(ctx, signInTimeout)
	defer cancel()
	key := recordKey(name, serverURL)
	done, err := m.startSignIn(key, stop)
	if err != nil {
		return err
	}
	defer done()

	rec, err := m.authorize(ctx, name, serverURL, cfg, notify)
	if err != nil {
		switch {
		case errors.Is(err, ErrUnsafeURL):
		case errors.Is(context.Cause(ctx), errClosed), errors.Is(context.Cause(ctx), errSuperseded):
			err = fmt.Errorf("mcpauth: sign-in to %s cancelled: %w", name, context.Cause(ctx))
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("mcpauth: sign-in to %s expired: %w", name, err)
		}
		m.log.Warn("mcp auth: sign-in failed", "server", name, "err", err)
		return err
	}
	err = m.store.update(ctx, key, func(*record) (*record, error) { return rec, nil })
	if err != nil {
		return err
	}
	m.log.Info("mcp auth: signed in", "server", name)
	done()
	m.notify(name, serverURL)
	return nil
}

// errSuperseded ends a sign-in when another starts for the same server.
var errSuperseded = errors.New("another sign-in to the server started")

// startSignIn registers a running sign-in for the record key, whose cancel
// Close calls with errClosed, and cancels an earlier one for the same key
// with errSuperseded; done (idempotent) unregisters it.
func (m *Manager) startSignIn(key string, cancel context.CancelCauseFunc) (done func(), err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errClosed
	}
	for _, p := range m.pending {
		if p.key == key {
			p.cancel(errSuperseded)
		}
	}
	m.nextID++
	id := m.nextID
	m.pending[id] = pendingSignIn{key: key, cancel: cancel}
	m.running.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.pending, id)
			m.mu.Unlock()
			m.running.Done()
		})
	}, nil
}

// authorize runs the flow and returns the record to store.
func (m *Manager) authorize(ctx context.Context, name, serverURL string, cfg Config, notify func(string)) (*record, error) {
	if err := CheckURL(serverURL); err != nil {
		return nil, fmt.Errorf("mcpauth: %s: server URL: %w", name, err)
	}
	tr := &checkedTransport{metaURL: cfg.AuthServerMetadataURL}
	if cfg.AuthServerMetadataURL != "" {
		if err := CheckURL(cfg.AuthServerMetadataURL); err != nil {
			return nil, fmt.Errorf("mcpauth: %s: authServerMetadataUrl: %w", name, err)
		}
		if u, _ := url.Parse(cfg.AuthServerMetadataURL); u.Scheme != "https" {
			return nil, fmt.Errorf("mcpauth: %s: authServerMetadataUrl: %w: must be https", name, ErrUnsafeURL)
		}
	}
	client := checkedClient(m.client, tr)

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.RedirectPort)))
	if err != nil {
		return nil, fmt.Errorf("mcpauth: %s: redirect listener: %w", name, err)
	}
	redirectURL := "http://" + ln.Addr().String() + callbackPath
	cb := &callback{results: make(chan callbackResult, 1)}
	srv := &http.Server{Handler: cb, ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan struct{})
	go func() { // ends when srv is closed below
		defer close(serveDone)
		_ = srv.Serve(ln)
	}()
	defer func() {
		srv.Close()
		<-serveDone
	}()

	var got struct {
		conf *oauth2.Config
		tok  *oauth2.Token
	}
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:           redirectURL,
		RequestRefreshToken:   true,
		AcceptUnadvertisedIss: true,
		Client:                client,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return m.fetchCode(ctx, tr, cb, args.URL, notify)
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got.conf, got.tok = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if len(cfg.Scopes) > 0 {
		scopes := cfg.Scopes
		hcfg.ScopeFilter = func([]string) []string { return scopes }
	}
	if cfg.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
		hcfg.PreregisteredClient = pre
	} else {
		hcfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:            []string{redirectURL},
				ClientName:              "knightcode",
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		return nil, fmt.Errorf("mcpauth: %s: %w", name, err)
	}

	req, resp, err := probe(ctx, client, serverURL)
	if err != nil {
		return nil, m.flowError(name, tr, err)
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return nil, m.flowError(name, tr, err)
	}
	if got.tok == nil {
		return nil, fmt.Errorf("mcpauth: %s: the authorization server gave no token", name)
	}
	style := "params"
	if got.conf.Endpoint.AuthStyle == oauth2.AuthStyleInHeader ||
		(got.conf.Endpoint.AuthStyle == oauth2.AuthStyleAutoDetect && got.conf.ClientSecret != "") {
		style = "header"
	}
	rec := &record{
		Name:         name,
		URL:          CanonicalURL(serverURL),
		ClientID:     got.conf.ClientID,
		ClientSecret: got.conf.ClientSecret,
		AuthStyle:    style,
		TokenURL:     got.conf.Endpoint.TokenURL,
		Scopes:       got.conf.Scopes,
	}
	rec.setToken(got.tok, m.now())
	return rec, nil
}

// flowError is err, or the transport's refusal when it made one (go-sdk
// keeps only the text of the errors it passes on).
func (m *Manager) flowError(name string, tr *checkedTransport, err error) error {
	if u := tr.unsafeErr(); u != nil {
		return fmt.Errorf("mcpauth: sign-in to %s: %w", name, u)
	}
	return fmt.Errorf("mcpauth: sign-in to %s: %w", name, err)
}

// probe asks serverURL without a token so that its 401 names the resource
// metadata (WWW-Authenticate, RFC 9728 §5.1). An answer other than 401 is
// replaced by a bare 401 (go-sdk's handler then discovers from the
// well-known locations); the caller hands the response to go-sdk, which
// closes its body.
func probe(ctx context.Context, client *http.Client, serverURL string) (*http.Request, *http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		resp = &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody, Request: req}
	}
	return req, resp, nil
}

// fetchCode is the AuthorizationCodeFetcher: it checks authURL, gives it
// to notify, opens it, and waits for the redirect to the loopback
// listener with the same state.
func (m *Manager) fetchCode(ctx context.Context, tr *checkedTransport, cb *callback, authURL string, notify func(string)) (*auth.AuthorizationResult, error) {
	if err := CheckURL(authURL); err != nil {
		return nil, tr.refuse(fmt.Errorf("authorization URL: %w", err))
	}
	u, _ := url.Parse(authURL)
	cb.expect(u.Query().Get("state"))
	if notify != nil {
		notify(authURL)
	}
	if err := m.opener(authURL); err != nil {
		// The URL went to notify: the user can still open it by hand.
		m.log.Warn("mcp auth: opening the browser failed", "err", err)
	}
	select {
	case r := <-cb.results:
		if r.err != nil {
			return nil, r.err
		}
		return r.res, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the browser: %w", context.Cause(ctx))
	}
}

// callback is the loopback redirect listener's handler: the first request
// to callbackPath carrying the expected state ends the wait with its code
// (or the authorization server's error); any other request is refused.
type callback struct {
	results chan callbackResult // capacity 1

	mu    sync.Mutex
	state string
	done  bool
}

// callbackResult is what the redirect brought.
type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// expect sets the state the redirect must carry.
func (c *callback) expect(state string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = state
}

// ServeHTTP answers the browser's redirect.
func (c *callback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c.mu.Lock()
	ok := r.URL.Path == callbackPath && c.state != "" && q.Get("state") == c.state && !c.done
	if ok {
		c.done = true
	}
	c.mu.Unlock()
	if !ok {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	var res callbackResult
	if e := q.Get("error"); e != "" {
		res.err = fmt.Errorf("the authorization server answered %s: %s", e, q.Get("error_description"))
	} else {
		res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}
	// The page is sent before the flow goes on: the flow closes this
	// listener when it ends, which would cut an unsent answer.
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := "Signed in. You can close this window."
	if res.err != nil {
		msg = "Sign-in failed: " + res.err.Error()
	}
	fmt.Fprintf(w, "<!doctype html><title>knightcode</title><p>%s</p>\n", html.EscapeString(msg))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	c.results <- res
}
