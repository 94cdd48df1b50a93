// Package authtest is a local OAuth 2.1 authorization server and a go-sdk
// MCP server behind go-sdk's bearer-token middleware, for the tests of
// package mcpauth and of the binary's sign-in (cmd/knightcode): discovery
// (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), PKCE and
// rotating refresh tokens, with counters and switches the tests read and
// set. Only tests import it.
package authtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// AuthServer is an OAuth 2.1 authorization server for the tests: RFC 8414
// metadata, dynamic client registration, an authorize endpoint that
// redirects at once with a code (no login page), and a token endpoint
// that verifies PKCE (S256) and rotates refresh tokens (a refresh token
// works once; any other answers invalid_grant).
type AuthServer struct {
	t   testing.TB
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

// NewAuthServer starts an authorization server; with metadataPath set it
// is an https server whose metadata is served only at that path.
func NewAuthServer(t testing.TB, metadataPath string) *AuthServer {
	t.Helper()
	a := &AuthServer{
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

func (a *AuthServer) URL() string { return a.srv.URL }

func (a *AuthServer) secret(prefix string) string {
	s := prefix + "-" + rand.Text()
	a.issued = append(a.issued, s)
	return s
}

func (a *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
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

func (a *AuthServer) register(w http.ResponseWriter, r *http.Request) {
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

func (a *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
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

func (a *AuthServer) token(w http.ResponseWriter, r *http.Request) {
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

// RevokeAll makes every access and refresh token issued so far refused.
func (a *AuthServer) RevokeAll(accessToo bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.refresh)
	if accessToo {
		clear(a.access)
	}
}

func (a *AuthServer) RevokeAccess() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.access)
}

func (a *AuthServer) ValidAccess(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.access[tok]
}

func (a *AuthServer) GrantCount(kind string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.grants[kind]
}

func (a *AuthServer) IsCurrentRefresh(rt string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refresh[rt]
}

func (a *AuthServer) Secrets() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.issued)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// NewMCPServer starts a go-sdk streamable MCP server with one tool,
// "whoami" (and the same server over legacy SSE, see SSEEndpoint), behind go-sdk's bearer-token middleware that accepts the
// access tokens a currently honours, and its protected resource metadata
// naming a. It returns the MCP endpoint's URL.
func NewMCPServer(t testing.TB, a *AuthServer) string {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed-in"}}}, nil, nil
	})
	verify := func(ctx context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if !a.ValidAccess(tok) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: []string{"read"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		// What a client left open (a killed one sends no DELETE).
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	endpoint := srv.URL + "/mcp"
	prmURL := srv.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: endpoint, AuthorizationServers: []string{a.URL()}, ScopesSupported: []string{"read"},
	}))
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(mcpHandler))
	// The legacy SSE transport of the same server, at /sse (SSEEndpoint).
	ssePRM := srv.URL + "/.well-known/oauth-protected-resource/sse"
	mux.Handle("/.well-known/oauth-protected-resource/sse", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: srv.URL + "/sse", AuthorizationServers: []string{a.URL()}, ScopesSupported: []string{"read"},
	}))
	sseHandler := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/sse", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ssePRM})(sseHandler))
	return endpoint
}

// SSEEndpoint is the legacy SSE endpoint of NewMCPServer's endpoint.
func SSEEndpoint(endpoint string) string {
	return strings.TrimSuffix(endpoint, "/mcp") + "/sse"
}

// SetEndpoint sets the address the metadata announces for kind
// ("authorization", "token" or "registration"); "" announces this
// server's own.
func (a *AuthServer) SetEndpoint(kind, u string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch kind {
	case "authorization":
		a.authorizationEndpoint = u
	case "token":
		a.tokenEndpoint = u
	case "registration":
		a.registrationEndpoint = u
	default:
		a.t.Fatalf("SetEndpoint: unknown kind %q", kind)
	}
}

// Endpoint is the address SetEndpoint set for kind ("" when none).
func (a *AuthServer) Endpoint(kind string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return map[string]string{"authorization": a.authorizationEndpoint, "token": a.tokenEndpoint, "registration": a.registrationEndpoint}[kind]
}

// Registrations counts the dynamic client registrations.
func (a *AuthServer) Registrations() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registrations
}

// SetOnRefresh sets f to run (without the server's lock) before each
// refresh grant is answered, with the refresh token it carries.
func (a *AuthServer) SetOnRefresh(f func(rt string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.onRefresh = f
}

// ForgetRefresh makes the refresh token rt refused from now on.
func (a *AuthServer) ForgetRefresh(rt string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.refresh, rt)
}

// Client is an HTTP client that trusts the server's certificate (the
// https variant).
func (a *AuthServer) Client() *http.Client { return a.srv.Client() }
