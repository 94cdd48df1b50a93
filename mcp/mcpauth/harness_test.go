package mcpauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/knightcode/knightcode/rpc/rpctest"
)

// authServer is an OAuth 2.1 authorization server for the tests: RFC 8414
// metadata, dynamic client registration, an authorize endpoint that
// redirects at once with a code (no login page), and a token endpoint
// that verifies PKCE (S256) and rotates refresh tokens (a refresh token
// works once; any other answers invalid_grant).
type authServer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// Endpoints announced in the metadata; "" = this server's own.
	authorizationEndpoint, tokenEndpoint, registrationEndpoint string
	expiresIn                                                  int
	clients                                                    map[string][]string // client_id -> redirect URIs
	codes                                                      map[string]codeGrant
	refresh                                                    map[string]bool // refresh tokens that still work
	access                                                     map[string]bool // access tokens that still work
	issued                                                     []string        // every secret handed out
	grants                                                     map[string]int  // /token grants by grant_type
	registrations                                              int
	onRefresh                                                  func(rt string) // runs before a refresh grant is answered
	metadataPath                                               string          // where the metadata is served
}

// codeGrant is what an authorization code stands for.
type codeGrant struct {
	clientID, redirectURI, challenge string
}

// newAuthServer starts an authorization server; with metadataPath set it
// is an https server whose metadata is served only at that path.
func newAuthServer(t *testing.T, metadataPath string) *authServer {
	t.Helper()
	a := &authServer{
		t: t, expiresIn: 100, metadataPath: metadataPath,
		clients: map[string][]string{}, codes: map[string]codeGrant{},
		refresh: map[string]bool{}, access: map[string]bool{}, grants: map[string]int{},
	}
	mux := http.NewServeMux()
	prefix := "" // where the endpoints are: not where go-sdk's fallback looks in the https variant
	if metadataPath != "" {
		prefix = "/oauth"
	}
	mux.HandleFunc("POST "+prefix+"/register", a.register)
	mux.HandleFunc("GET "+prefix+"/authorize", a.authorize)
	mux.HandleFunc("POST "+prefix+"/token", a.token)
	if metadataPath == "" {
		mux.HandleFunc("GET /.well-known/oauth-authorization-server", a.metadata)
		a.srv = httptest.NewServer(mux)
	} else {
		mux.HandleFunc("GET "+metadataPath, a.metadata)
		a.srv = httptest.NewTLSServer(mux)
		a.authorizationEndpoint = a.srv.URL + prefix + "/authorize"
		a.tokenEndpoint = a.srv.URL + prefix + "/token"
		a.registrationEndpoint = a.srv.URL + prefix + "/register"
	}
	t.Cleanup(a.srv.Close)
	return a
}

func (a *authServer) URL() string { return a.srv.URL }

func (a *authServer) secret(prefix string) string {
	s := prefix + "-" + rand.Text()
	a.issued = append(a.issued, s)
	return s
}

func (a *authServer) metadata(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return a.srv.URL + def
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                a.srv.URL,
		"authorization_endpoint":                or(a.authorizationEndpoint, "/authorize"),
		"token_endpoint":                        or(a.tokenEndpoint, "/token"),
		"registration_endpoint":                 or(a.registrationEndpoint, "/register"),
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                      []string{"read", "offline_access"},
	})
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.registrations++
	id := a.secret("client")
	a.clients[id] = meta.RedirectURIs
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
	})
}

func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	defer a.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if q.Get("response_type") != "code" || !slices.Contains(a.clients[q.Get("client_id")], redirect) ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := a.secret("code")
	a.codes[code] = codeGrant{clientID: q.Get("client_id"), redirectURI: redirect, challenge: q.Get("code_challenge")}
	u, _ := url.Parse(redirect)
	u.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	grant := r.PostForm.Get("grant_type")
	a.mu.Lock()
	a.grants[grant]++
	hook := a.onRefresh
	a.mu.Unlock()
	if grant == "refresh_token" && hook != nil {
		hook(r.PostForm.Get("refresh_token"))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch grant {
	case "authorization_code":
		g, ok := a.codes[r.PostForm.Get("code")]
		delete(a.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.clientID != r.PostForm.Get("client_id") || g.redirectURI != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if !a.refresh[rt] {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(a.refresh, rt) // rotation: a refresh token works once
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	at, rt := a.secret("at"), a.secret("rt")
	a.access[at], a.refresh[rt] = true, true
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": at, "token_type": "Bearer", "expires_in": a.expiresIn, "refresh_token": rt, "scope": "read",
	})
}

// revokeAll makes every access and refresh token issued so far refused.
func (a *authServer) revokeAll(accessToo bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
	if accessToo {
		clear(a.access)
	}
}

func (a *authServer) revokeAccess() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

func (a *authServer) validAccess(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.access[tok]
}

func (a *authServer) grantCount(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[kind]
}

func (a *authServer) isCurrentRefresh(rt string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refresh[rt]
}

func (a *authServer) secrets() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.issued)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// newMCPServer starts a go-sdk streamable MCP server with one tool,
// "whoami" (and the same server over legacy SSE, see sseEndpoint), behind go-sdk's bearer-token middleware that accepts the
// access tokens a currently honours, and its protected resource metadata
// naming a. It returns the MCP endpoint's URL.
func newMCPServer(t *testing.T, a *authServer) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed-in"}}}, nil, nil
	})
	verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if !a.validAccess(tok) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"read"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	endpoint := srv.URL + "/mcp"
	prmURL := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: endpoint, AuthorizationServers: []string{a.URL()}, ScopesSupported: []string{"read"},
	}))
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(mcpHandler))
	// The legacy SSE transport of the same server, at /sse (sseEndpoint).
	ssePRM := srv.URL + "/.well-known/oauth-protected-resource/sse"
	mux.Handle("/.well-known/oauth-protected-resource/sse", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: srv.URL + "/sse", AuthorizationServers: []string{a.URL()}, ScopesSupported: []string{"read"},
	}))
	sseHandler := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/sse", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ssePRM})(sseHandler))
	return endpoint
}

// sseEndpoint is the legacy SSE endpoint of newMCPServer's endpoint.
func sseEndpoint(endpoint string) string {
	return strings.TrimSuffix(endpoint, "/mcp") + "/sse"
}

// callTool connects a go-sdk client to endpoint with m's Handler for
// server name and calls "whoami".
func callTool(ctx context.Context, m *Manager, name, endpoint string) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "knightcode-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, OAuthHandler: m.Handler(name, endpoint, Config{}), DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	return callOn(ctx, s)
}

func callOn(ctx context.Context, s *mcp.ClientSession) error {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return err
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "signed-in" {
		return errors.New("unexpected tool result")
	}
	return nil
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// browser is the Opener double: it records each URL and, when follow is
// set, does what a browser would: GET it and follow the redirect to the
// loopback listener.
type browser struct {
	follow    bool
	transport http.RoundTripper // nil: a plain one
	mu        sync.Mutex
	urls      []string
	opened    chan string // each URL, when not nil (buffered)
}

func (b *browser) open(u string) error {
	b.mu.Lock()
	b.urls = append(b.urls, u)
	b.mu.Unlock()
	if b.opened != nil {
		b.opened <- u
	}
	if !b.follow {
		return nil
	}
	client := &http.Client{Transport: b.transport}
	if b.transport == nil {
		client.Transport = &http.Transport{}
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get(u)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (b *browser) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.urls)
}

// env is one test's agent directory, servers and manager seams.
type env struct {
	t        *testing.T
	dir      string
	as       *authServer
	endpoint string
	log      *rpctest.SyncBuffer
	browser  *browser
}

// newEnv starts an authorization server and a protected MCP server; at
// cleanup it checks that no secret the authorization server handed out
// appears in the log.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), as: newAuthServer(t, ""), log: &rpctest.SyncBuffer{}, browser: &browser{follow: true}}
	e.endpoint = newMCPServer(t, e.as)
	t.Cleanup(func() {
		logged := e.log.String()
		for _, s := range e.as.secrets() {
			if strings.Contains(logged, s) {
				t.Errorf("the log holds a secret (%s…):\n%s", s[:4], logged)
			}
		}
	})
	return e
}

// manager is a Manager of the env's agent directory with clock c.
func (e *env) manager(c *clock) *Manager {
	log := slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return New(e.dir, log, Options{Opener: e.browser.open, Now: c.Now})
}

// file returns the token file, checking its mode is 0600.
func (e *env) file() *authFile {
	e.t.Helper()
	path := filepath.Join(e.dir, fileName)
	st, err := os.Stat(path)
	if err != nil {
		e.t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		e.t.Fatalf("%s mode = %v, want 0600", path, st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	var f authFile
	if err := json.Unmarshal(data, &f); err != nil {
		e.t.Fatal(err)
	}
	return &f
}

// stored is the record of server name at the env's endpoint, or nil.
func (e *env) stored(name string) *record {
	e.t.Helper()
	return e.file().Servers[recordKey(name, e.endpoint)]
}

// signedIn is a new env with a Manager on clock c signed in to server
// "docs", and a context for the test.
func signedIn(t *testing.T) (*env, *clock, *Manager, context.Context) {
	t.Helper()
	e := newEnv(t)
	c := newClock()
	m := e.manager(c)
	e.signIn(m, "docs")
	return e, c, m, testCtx(t)
}

// signIn signs m in to server name at the env's endpoint.
func (e *env) signIn(m *Manager, name string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.SignIn(ctx, name, e.endpoint, Config{}, nil); err != nil {
		e.t.Fatalf("SignIn: %v", err)
	}
}

func jsonIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

func itoa(n int) string { return strconv.Itoa(n) }
