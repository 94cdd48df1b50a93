package mcpauth

import (
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// Transport is an http.RoundTripper that authorizes every request with h
// the way go-sdk's StreamableClientTransport does with its OAuthHandler,
// for a transport that takes only an *http.Client (go-sdk v1.8.0's
// SSEClientTransport): each request carries h's current access token as
// "Authorization: Bearer" (none while h has none, or after an
// invalid_grant, so the server's 401 reaches Authorize); a 401 or 403
// answer goes to h.Authorize (with [Manager.Handler]: one refresh, or an
// error wrapping [ErrSignInRequired]) and, when it returns nil, the
// request is sent once more with the token it left. A request whose body
// cannot be sent again (no GetBody) gets the first answer. base sends the
// requests; nil is http.DefaultTransport.
func Transport(h auth.OAuthHandler, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &bearerTransport{h: h, base: base}
}

// bearerTransport is [Transport]'s value.
type bearerTransport struct {
	h    auth.OAuthHandler
	base http.RoundTripper
}

// RoundTrip sends req with the token, and once more after a successful
// Authorize of a 401 or 403.
func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sent, err := t.authorized(req, req.Body)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(sent)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	if err := t.h.Authorize(req.Context(), sent, resp); err != nil {
		return nil, err
	}
	body := req.Body
	if req.GetBody != nil {
		if body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	again, err := t.authorized(req, body)
	if err != nil {
		if body != nil {
			body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(again)
}

// authorized is a copy of req with body and the current token, if any.
// An invalid_grant from the token source sends the request without one,
// as go-sdk's transport does.
func (t *bearerTransport) authorized(req *http.Request, body io.ReadCloser) (*http.Request, error) {
	r := req.Clone(req.Context())
	r.Body = body
	ts, err := t.h.TokenSource(req.Context())
	if err != nil {
		return nil, err
	}
	if ts == nil {
		return r, nil
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
	case err != nil:
		return nil, err
	case tok != nil:
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return r, nil
}

// closeBody closes req's body, as a RoundTripper must even when it fails.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
