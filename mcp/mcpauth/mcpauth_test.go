package mcpauth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/mcp/mcpauth/authtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSignInStoresTokensAndCallsTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager(newClock())
	ctx := testCtx(t)

	if err := callTool(ctx, m, "docs", e.endpoint); !errors.Is(err, ErrSignInRequired) {
		t.Fatalf("call before sign-in: err = %v, want ErrSignInRequired", err)
	}
	var mu sync.Mutex
	var notified, signedIn []string
	unsubscribe := m.Subscribe(func(name, serverURL string) {
		mu.Lock()
		defer mu.Unlock()
		signedIn = append(signedIn, name+" "+serverURL)
	})
	defer unsubscribe()
	err := m.SignIn(ctx, "docs", e.endpoint, Config{}, func(u string) {
		mu.Lock()
		defer mu.Unlock()
		notified = append(notified, u)
	})
	if err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	opened := e.browser.calls()
	if len(opened) != 1 || len(notified) != 1 || notified[0] != opened[0] {
		t.Fatalf("notified %q, opened %q: want the same one URL", notified, opened)
	}
	if !strings.HasPrefix(opened[0], e.as.URL()+"/authorize?") {
		t.Errorf("opened %q, want the authorization endpoint", opened[0])
	}
	if want := []string{"docs " + e.endpoint}; len(signedIn) != 1 || signedIn[0] != want[0] {
		t.Errorf("subscribers got %q, want %q", signedIn, want)
	}

	rec := e.stored("docs") // checks mode 0600
	if rec == nil || rec.AccessToken == "" || rec.RefreshToken == "" || !strings.HasPrefix(rec.ClientID, "client-") {
		t.Fatalf("stored record = %+v, want tokens and the registered client", rec)
	}
	if rec.TokenURL != e.as.URL()+"/token" || rec.URL != e.endpoint {
		t.Errorf("stored token URL %q, URL %q", rec.TokenURL, rec.URL)
	}
	if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
		t.Fatalf("call after sign-in: %v", err)
	}
	// The record is keyed by the canonical URL: another spelling finds it,
	// another name does not.
	if !m.HasToken("docs", strings.Replace(e.endpoint, "http://", "HTTP://", 1)+"/#frag") {
		t.Error("HasToken with another spelling of the URL = false")
	}
	if m.HasToken("other", e.endpoint) {
		t.Error("HasToken for another server name = true")
	}
	if got := e.as.GrantCount("refresh_token"); got != 0 {
		t.Errorf("refresh grants = %d, want 0", got)
	}
}

func TestRefreshBeforeExpiryPersistsRotation(t *testing.T) {
	t.Parallel()
	e, c, m, ctx := signedIn(t)
	first := e.stored("docs")

	// At 79 % of expires_in (100 s) the token is used as it is.
	c.advance(79 * time.Second)
	if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
		t.Fatal(err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 0 {
		t.Fatalf("refresh grants at 79%% = %d, want 0", got)
	}
	// Past 80 %: one refresh, the rotated refresh token on disk.
	c.advance(2 * time.Second)
	if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
		t.Fatal(err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 1 {
		t.Fatalf("refresh grants past 80%% = %d, want 1", got)
	}
	if !strings.Contains(e.log.String(), "token refreshed") {
		t.Errorf("the log does not tell of the refresh:\n%s", e.log.String())
	}
	second := e.stored("docs")
	if second.RefreshToken == first.RefreshToken || !e.as.IsCurrentRefresh(second.RefreshToken) {
		t.Fatal("the rotated refresh token was not persisted")
	}
	if second.AccessToken == first.AccessToken || !second.ObtainedAt.Equal(c.Now()) {
		t.Errorf("stored record not renewed: %+v", second)
	}

	// After a restart (a new Manager, same agent directory) the stored
	// client registration refreshes again.
	c2 := &clock{t: c.Now().Add(81 * time.Second)}
	m2 := e.manager(c2)
	if err := callTool(ctx, m2, "docs", e.endpoint); err != nil {
		t.Fatal(err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 2 {
		t.Fatalf("refresh grants after restart = %d, want 2", got)
	}
	if third := e.stored("docs"); third.RefreshToken == second.RefreshToken || !e.as.IsCurrentRefresh(third.RefreshToken) {
		t.Fatal("the second rotation was not persisted")
	}
}

func TestAuthServerMetadataURLOverride(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The MCP server names an https authorization server whose metadata is
	// not at a well-known location: discovery alone fails, the configured
	// authServerMetadataUrl makes it work.
	e.as = authtest.NewAuthServer(t, "/custom/metadata")
	e.endpoint = authtest.NewMCPServer(t, e.as)
	tlsClient := e.as.Client()
	e.browser.transport = tlsClient.Transport
	m := New(e.dir, e.manager(newClock()).log, Options{Opener: e.browser.open, HTTPClient: tlsClient})
	ctx := testCtx(t)

	if err := m.SignIn(ctx, "docs", e.endpoint, Config{}, nil); err == nil {
		t.Fatal("SignIn without the override succeeded")
	}
	if err := m.SignIn(ctx, "docs", e.endpoint, Config{AuthServerMetadataURL: "http://127.0.0.1:1/meta"}, nil); !errors.Is(err, ErrUnsafeURL) {
		t.Errorf("SignIn with an http override: err = %v, want ErrUnsafeURL", err)
	}
	cfg := Config{AuthServerMetadataURL: e.as.URL() + "/custom/metadata", Scopes: []string{"read"}}
	if err := m.SignIn(ctx, "docs", e.endpoint, cfg, nil); err != nil {
		t.Fatalf("SignIn with the override: %v", err)
	}
	// The configured scopes replace the discovered ones; go-sdk adds
	// offline_access, which the server offers, for a refresh token.
	opened := e.browser.calls()
	if len(opened) != 1 {
		t.Fatalf("opened %q, want one URL", opened)
	}
	u, _ := url.Parse(opened[0])
	scopes := strings.Fields(u.Query().Get("scope"))
	slices.Sort(scopes)
	if !slices.Equal(scopes, []string{"offline_access", "read"}) {
		t.Errorf("requested scopes %q, want read and offline_access", scopes)
	}
	if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
		t.Fatal(err)
	}
}

func TestRefreshOnceOn401(t *testing.T) {
	t.Parallel()
	e, _, m, ctx := signedIn(t)
	before := e.stored("docs")

	c := mcp.NewClient(&mcp.Implementation{Name: "knightcode-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: e.endpoint, OAuthHandler: m.Handler("docs", e.endpoint, Config{}), DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e.refreshOn401(ctx, s)
	after := e.stored("docs")
	if after.AccessToken == before.AccessToken || !e.as.IsCurrentRefresh(after.RefreshToken) {
		t.Error("the refreshed tokens were not stored")
	}
	if err := callOn(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 1 {
		t.Errorf("refresh grants after another call = %d, want 1", got)
	}
}

func TestInvalidGrantClearsTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		advance time.Duration // past 80 %: the proactive refresh meets invalid_grant
	}{{"on401", 0}, {"proactive", 90 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, c, m, ctx := signedIn(t)
			e.as.RevokeAll(true)
			c.advance(tc.advance)

			err := callTool(ctx, m, "docs", e.endpoint)
			if !errors.Is(err, ErrSignInRequired) {
				t.Fatalf("call after invalid_grant: err = %v, want ErrSignInRequired", err)
			}
			if got := e.as.GrantCount("refresh_token"); got != 1 {
				t.Errorf("refresh grants = %d, want 1", got)
			}
			if rec := e.stored("docs"); rec != nil {
				t.Errorf("record kept after invalid_grant: %+v", rec)
			}
			if m.HasToken("docs", e.endpoint) {
				t.Error("HasToken after invalid_grant = true")
			}
			// From now on the handler asks for a sign-in without a request
			// to the token endpoint.
			h := m.Handler("docs", e.endpoint, Config{})
			req, _ := http.NewRequest(http.MethodPost, e.endpoint, nil)
			resp := &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}, Body: http.NoBody}
			if err := h.Authorize(ctx, req, resp); !errors.Is(err, ErrSignInRequired) {
				t.Errorf("Authorize after clearing: err = %v, want ErrSignInRequired", err)
			}
			if ts, err := h.TokenSource(ctx); ts != nil || err != nil {
				t.Errorf("TokenSource after clearing = %v, %v; want nil, nil", ts, err)
			}
			if got := e.as.GrantCount("refresh_token"); got != 1 {
				t.Errorf("refresh grants after clearing = %d, want 1", got)
			}
			// A new sign-in works again.
			e.signIn(m, "docs")
			if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInvalidGrantForReplacedTokenKeepsRecord(t *testing.T) {
	t.Parallel()
	e, c, m, ctx := signedIn(t)

	// A second sign-in's record, written by a writer that does not share
	// the lock (a restored backup, another tool), lands while the refresh
	// grant for the old refresh token is in flight; that grant is refused.
	c.advance(90 * time.Second)
	other := e.manager(c)
	e.signIn(other, "tmp")
	replacement := e.stored("tmp")
	replacement.Name = "docs"
	var once sync.Once
	e.as.SetOnRefresh(func(rt string) {
		once.Do(func() {
			f := e.file()
			delete(f.Servers, recordKey("tmp", e.endpoint))
			f.Servers[recordKey("docs", e.endpoint)] = replacement
			data, _ := jsonIndent(f)
			if err := atomicfile.WriteFile(filepath.Join(e.dir, fileName), data, fileMode); err != nil {
				t.Error(err)
			}
			e.as.ForgetRefresh(rt)
		})
	})

	if err := callTool(ctx, m, "docs", e.endpoint); err != nil {
		t.Fatalf("call: %v (the replacement should have been used)", err)
	}
	if got := e.as.GrantCount("refresh_token"); got != 1 {
		t.Errorf("refresh grants = %d, want 1", got)
	}
	rec := e.stored("docs")
	if rec == nil || rec.RefreshToken != replacement.RefreshToken {
		t.Fatalf("record after a stale invalid_grant = %+v, want the replacement kept", rec)
	}
	if !m.HasToken("docs", e.endpoint) {
		t.Error("HasToken = false")
	}
}

func TestUnsafeDiscoveredEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, field, url string
	}{
		{"fileScheme", "authorization", "file:///etc/passwd"},
		{"plainHTTP", "authorization", "http://evil.example/a"},
		{"userInfo", "authorization", "https://user:pw@x.example/a"},
		{"tokenPlainHTTP", "token", "http://evil.example/token"},
		{"registrationJavascript", "registration", "javascript:alert(1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.as.SetEndpoint(tc.field, tc.url)
			m := e.manager(newClock())
			notified := false
			err := m.SignIn(testCtx(t), "docs", e.endpoint, Config{}, func(string) { notified = true })
			if !errors.Is(err, ErrUnsafeURL) || !strings.Contains(err.Error(), "unsafe") {
				t.Fatalf("SignIn err = %v, want ErrUnsafeURL", err)
			}
			if !strings.Contains(err.Error(), tc.field+"_endpoint") {
				t.Errorf("error %q does not name %s_endpoint", err, tc.field)
			}
			if calls := e.browser.calls(); len(calls) != 0 || notified {
				t.Errorf("opened %q (notified %v) for an unsafe endpoint", calls, notified)
			}
			if n := e.as.Registrations(); n != 0 {
				t.Errorf("registrations = %d, want 0 (the flow ends at discovery)", n)
			}
			if _, err := os.Stat(filepath.Join(e.dir, fileName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("token file written: %v", err)
			}
		})
	}
}

// fakeOpener puts a stand-in for the system opener first on PATH that
// writes its argument count and arguments to a file, and returns that
// file's path.
func fakeOpener(t *testing.T) string {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in opener is a shell script")
	}
	bin := t.TempDir()
	out := filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\n{ printf '%s\\n' \"$#\"; for a in \"$@\"; do printf '%s\\n' \"$a\"; done; } > '" + out + ".tmp'\nmv '" + out + ".tmp' '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(bin, openerArgv("")[0]), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	return out
}

func TestOpenerGetsURLAsOneArgument(t *testing.T) {
	argvFile := fakeOpener(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	u := "https://x.example/?q=$(touch " + pwned + ")"
	if err := CheckURL(u); err != nil {
		t.Fatal(err)
	}
	if err := openBrowser(u); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(argvFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\n" + u + "\n"; string(got) != want {
		t.Errorf("opener argv file = %q, want %q", got, want)
	}
	if _, err := os.Stat(pwned); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: the URL went through a shell", pwned)
	}
}

func TestSignInOpensDiscoveredURLWithoutShell(t *testing.T) {
	argvFile := fakeOpener(t)
	e := newEnv(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	e.as.SetEndpoint("authorization", "https://x.example/?q=$(touch "+pwned+")")
	log := e.manager(newClock()).log
	m := New(e.dir, log, Options{Now: newClock().Now}) // the real opener
	defer m.Close()

	ctx, cancel := context.WithCancel(testCtx(t))
	notified := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- m.SignIn(ctx, "docs", e.endpoint, Config{}, func(u string) { notified <- u }) }()
	authURL := <-notified
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(argvFile); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("SignIn after cancel: err = %v, want context.Canceled", err)
	}
	got, err := os.ReadFile(argvFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1\n" + authURL + "\n"; string(got) != want {
		t.Errorf("opener argv file = %q, want %q", got, want)
	}
	if !strings.HasPrefix(authURL, e.as.Endpoint("authorization")+"&") {
		t.Errorf("authorization URL %q does not start with the endpoint", authURL)
	}
	if _, err := os.Stat(pwned); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists: the URL went through a shell", pwned)
	}
}

func TestTwoManagersRefreshOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newClock()
	e.signIn(e.manager(c), "docs")
	signedIn := e.stored("docs")

	// Two processes (two Managers with their own clocks) on one agent
	// directory, both past 80 % of expires_in, call at the same time.
	ctx := testCtx(t)
	start := make(chan struct{})
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	for range 2 {
		c := &clock{t: c.Now().Add(85 * time.Second)}
		m := e.manager(c)
		wg.Go(func() {
			<-start
			errs <- callTool(ctx, m, "docs", e.endpoint)
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
	if got := e.as.GrantCount("refresh_token"); got != 1 {
		t.Errorf("refresh grants = %d, want exactly 1", got)
	}
	rec := e.stored("docs")
	if rec == nil || rec.RefreshToken == signedIn.RefreshToken || !e.as.IsCurrentRefresh(rec.RefreshToken) {
		t.Fatalf("record after the race = %+v, want the one rotation stored", rec)
	}
}

func TestCloseCancelsPendingSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.browser.follow = false // the user never comes back
	e.browser.opened = make(chan string, 1)
	m := e.manager(newClock())
	port := freePort(t)

	done := make(chan error, 1)
	go func() { done <- m.SignIn(context.Background(), "docs", e.endpoint, Config{RedirectPort: port}, nil) }()
	authURL := <-e.browser.opened
	if !strings.Contains(authURL, "127.0.0.1%3A"+itoa(port)) {
		t.Errorf("authorization URL %q does not name the redirect port %d", authURL, port)
	}
	m.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("SignIn after Close: err = %v, want cancelled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SignIn still running 5 s after Close")
	}
	// The loopback listener is gone, and a new sign-in refuses to start.
	if conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(port))); err == nil {
		conn.Close()
		t.Error("the redirect listener still accepts connections")
	}
	if err := m.SignIn(testCtx(t), "docs", e.endpoint, Config{}, nil); err == nil {
		t.Error("SignIn after Close succeeded")
	}
	if len(e.browser.calls()) != 1 {
		t.Errorf("opener calls = %d, want 1", len(e.browser.calls()))
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	long := "https://x.example/?q=" + strings.Repeat("a", maxURLBytes)
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://auth.example.com/authorize?x=1", true},
		{"https://x.example/?q=$(touch /tmp/pwned)", true},
		{"http://127.0.0.1:8080/cb", true},
		{"http://[::1]:8080/cb", true},
		{"http://localhost/cb", true},
		{"http://evil.example/a", false},
		{"http://127.0.0.2/a", false},
		{"http://localhost.evil.example/a", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"https://user@x.example/", false},
		{"https://user:pw@x.example/", false},
		{"https:///nohost", false},
		{"/relative", false},
		{"", false},
		{long, false},
		{"https://x.example/\x00", false},
	} {
		err := CheckURL(tc.url)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrUnsafeURL)) {
			t.Errorf("CheckURL(%.60q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

func TestCanonicalURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"HTTPS://Example.COM:443/mcp/":  "https://example.com/mcp",
		"https://example.com/mcp#frag":  "https://example.com/mcp",
		"http://LOCALHOST:80/":          "http://localhost",
		"http://127.0.0.1:8080/Mcp":     "http://127.0.0.1:8080/Mcp",
		"https://[::1]:443/x":           "https://[::1]/x",
		"https://example.com:8443/a?b=": "https://example.com:8443/a?b=",
	} {
		if got := CanonicalURL(in); got != want {
			t.Errorf("CanonicalURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestTransportSignsSSEIn: go-sdk's SSE transport, whose client has
// Transport over the Handler, is refused before the sign-in (sign-in
// required), connects after it, and a 401 on a later POST refreshes once
// and is retried.
func TestTransportSignsSSEIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.manager(newClock())
	ctx := testCtx(t)
	sse := authtest.SSEEndpoint(e.endpoint)
	connect := func() (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "knightcode-test", Version: "1"}, nil)
		hc := &http.Client{Transport: Transport(m.Handler("old", sse, Config{}), nil)}
		return c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: sse, HTTPClient: hc}, nil)
	}
	if s, err := connect(); !errors.Is(err, ErrSignInRequired) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("SSE connect before sign-in: err = %v, want ErrSignInRequired", err)
	}
	if err := m.SignIn(ctx, "old", sse, Config{}, nil); err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	s, err := connect()
	if err != nil {
		t.Fatalf("SSE connect after sign-in: %v", err)
	}
	defer s.Close()
	e.refreshOn401(ctx, s)
}
