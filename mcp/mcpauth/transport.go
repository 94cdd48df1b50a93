package mcpauth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// checkedTransport is the http.RoundTripper of every request this package
// makes or lets go-sdk make: go-sdk v1.8.0 has no hook to check the
// endpoints it discovers before it uses them (its own check allows any
// https or loopback URL after the request for metadata, and its error
// hides the cause), so the checks sit here:
//
//   - every request URL (each redirect hop included) must pass [CheckURL];
//   - an authorization server metadata document (RFC 8414, or OpenID
//     discovery) whose authorization_endpoint, token_endpoint or
//     registration_endpoint fails CheckURL is refused as a whole, before
//     go-sdk registers a client or builds an authorization URL.
//
// A refusal is an error wrapping [ErrUnsafeURL]; the first is kept
// ([checkedTransport.unsafeErr]) because go-sdk flattens errors to text.
// Using a transport of our own turns off go-sdk's dial-time refusal of
// private addresses for discovery (it applies only to a bare
// *http.Transport); a desktop client may well reach a server on a private
// network, and CheckURL still requires https away from loopback.
//
// When metaURL is set (Config.AuthServerMetadataURL), a request for an
// authorization server's well-known metadata is sent to metaURL instead.
type checkedTransport struct {
	base    http.RoundTripper
	metaURL string

	mu     sync.Mutex
	unsafe error
}

// maxMetadataBytes bounds a metadata document read for checking, as
// go-sdk's own reader does (1 MiB).
const maxMetadataBytes = 1 << 20

// RoundTrip checks and sends req.
func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := CheckURL(req.URL.String()); err != nil {
		return nil, t.refuse(fmt.Errorf("request: %w", err))
	}
	isMeta := isAuthServerMetadataPath(req.URL.Path)
	if isMeta && t.metaURL != "" {
		r := req.Clone(req.Context())
		u, err := req.URL.Parse(t.metaURL)
		if err != nil {
			return nil, err
		}
		r.URL, r.Host = u, ""
		req = r
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || !isMeta || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var meta struct {
		AuthorizationEndpoint string `json:"authorization_endpoint"`
		TokenEndpoint         string `json:"token_endpoint"`
		RegistrationEndpoint  string `json:"registration_endpoint"`
	}
	if json.Unmarshal(body, &meta) == nil {
		for _, e := range []struct{ name, url string }{
			{"authorization_endpoint", meta.AuthorizationEndpoint},
			{"token_endpoint", meta.TokenEndpoint},
			{"registration_endpoint", meta.RegistrationEndpoint},
		} {
			if e.url == "" {
				continue
			}
			if err := CheckURL(e.url); err != nil {
				return nil, t.refuse(fmt.Errorf("%s from %s: %w", e.name, req.URL.Redacted(), err))
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// refuse keeps the first refusal and returns err.
func (t *checkedTransport) refuse(err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unsafe == nil {
		t.unsafe = err
	}
	return err
}

// unsafeErr is the first refusal, or nil.
func (t *checkedTransport) unsafeErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.unsafe
}

// isAuthServerMetadataPath reports whether path is one of the
// authorization server metadata locations go-sdk tries
// (auth.GetAuthServerMetadata: RFC 8414 with or without path insertion,
// OpenID Connect discovery inserted or appended).
func isAuthServerMetadataPath(path string) bool {
	return strings.HasPrefix(path, "/.well-known/oauth-authorization-server") ||
		strings.HasPrefix(path, "/.well-known/openid-configuration") ||
		strings.HasSuffix(path, "/.well-known/openid-configuration")
}

// checkedClient is client with its transport wrapped in t (t.base set to
// the client's transport); redirects, timeout and jar are kept.
func checkedClient(client *http.Client, t *checkedTransport) *http.Client {
	t.base = client.Transport
	c := *client
	c.Transport = t
	return &c
}
