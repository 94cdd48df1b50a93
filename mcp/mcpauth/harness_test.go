package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/mcp/mcpauth/authtest"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

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

// refreshOn401 calls whoami on s; then the server stops honouring the
// (unexpired) access token, and the next call gets a 401, refreshes once
// and is retried: one refresh grant in all.
func (e *env) refreshOn401(ctx context.Context, s *mcp.ClientSession) {
	e.t.Helper()
	if err := callOn(ctx, s); err != nil {
		e.t.Fatal(err)
	}
	e.as.RevokeAccess()
	if err := callOn(ctx, s); err != nil {
		e.t.Fatalf("call after the 401: %v", err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 1 {
		e.t.Fatalf("refresh grants = %d, want 1", got)
	}
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
	as       *authtest.AuthServer
	endpoint string
	log      *rpctest.SyncBuffer
	browser  *browser
}

// newEnv starts an authorization server and a protected MCP server; at
// cleanup it checks that no secret the authorization server handed out
// appears in the log.
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), as: authtest.NewAuthServer(t, ""), log: &rpctest.SyncBuffer{}, browser: &browser{follow: true}}
	e.endpoint = authtest.NewMCPServer(t, e.as)
	t.Cleanup(func() {
		logged := e.log.String()
		for _, s := range e.as.Secrets() {
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
