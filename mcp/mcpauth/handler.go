package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Handler is the go-sdk [auth.OAuthHandler] that a
// StreamableClientTransport (or the HTTP client of an SSE transport) uses
// for server name at serverURL. cfg is not needed once signed in: the
// client registration stored with the tokens is what refreshes them.
//
// TokenSource gives nil while no token is stored (the request goes out
// without one; a server that wants one answers 401) and otherwise the
// stored access token, refreshed first once 80 % of its expires_in has
// passed. Authorize, called by the transport on a 401, refreshes once
// (unless the stored token is already another than the one refused: then
// the transport just retries with it); on a 403 for insufficient_scope, or
// with no stored token or no refresh token, it returns an error wrapping
// [ErrSignInRequired]. It never starts an interactive flow.
//
// Refreshes hold the lock of the token file and re-read the record under
// it (see [Manager.SignIn] for the file): one refresh at a time per token
// record across goroutines and processes, and none when another has just
// rotated the tokens. An invalid_grant answer clears the record when the
// refresh token it was for is still the stored one.
func (m *Manager) Handler(name, serverURL string, cfg Config) auth.OAuthHandler {
	return &handler{m: m, name: name, key: recordKey(name, serverURL)}
}

// handler is [Manager.Handler]'s value.
type handler struct {
	m    *Manager
	name string
	key  string
}

var _ auth.OAuthHandler = (*handler)(nil)

// TokenSource returns the stored tokens' source, or nil when none is
// stored.
func (h *handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	rec, err := h.m.store.read(h.key)
	if err != nil || rec == nil {
		return nil, err
	}
	return &tokenSource{ctx: ctx, h: h}, nil
}

// Authorize handles a 401 or 403 answer to req (see [Manager.Handler]).
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusForbidden {
		cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		for _, c := range cs {
			if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
				return fmt.Errorf("mcpauth: %s: the server wants more scopes: %w", h.name, signInRequired(h.name))
			}
		}
		// As go-sdk's own handler: not an authorization problem; the
		// transport retries once and reports the second 403.
		return nil
	}
	sent := ""
	if f := strings.Fields(req.Header.Get("Authorization")); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
		sent = f[1]
	}
	_, err := h.m.refresh(ctx, h.name, h.key, func(cur *record) bool { return cur.AccessToken == sent })
	return err
}

// tokenSource is the oauth2.TokenSource of a handler: it reads the token
// file on every call, so a rotation or sign-in by any thread or process is
// seen at the next request.
type tokenSource struct {
	ctx context.Context // the connection's, from TokenSource
	h   *handler
}

// Token returns the stored access token, refreshed first when 80 % of its
// lifetime has passed. A failed proactive refresh keeps the token while it
// has not expired. After an invalid_grant the error is the
// *oauth2.RetrieveError (wrapped), which go-sdk's transport answers by
// sending the request without a token, so the 401 reaches Authorize.
func (s *tokenSource) Token() (*oauth2.Token, error) {
	h := s.h
	rec, err := h.m.store.read(h.key)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, signInRequired(h.name)
	}
	now := h.m.now()
	if at := rec.refreshAt(); !at.IsZero() && !now.Before(at) && rec.RefreshToken != "" {
		seen := rec.RefreshToken
		fresh, err := h.m.refresh(s.ctx, h.name, h.key, func(cur *record) bool {
			return cur.RefreshToken == seen && !now.Before(cur.refreshAt())
		})
		switch {
		case err == nil:
			rec = fresh
		case errors.Is(err, ErrSignInRequired):
			return nil, err
		case now.Before(rec.ExpiresAt):
			h.m.log.Warn("mcp auth: refresh failed; the current token is still valid", "server", h.name, "err", err)
		default:
			return nil, err
		}
	}
	return &oauth2.Token{AccessToken: rec.AccessToken, TokenType: "Bearer"}, nil
}

// refresh rotates the tokens of the record key (server name) with a
// refresh_token grant, under the token file's lock. needs is called with
// the record as stored under the lock; when it returns false another
// goroutine or process has already done what the caller wanted and the
// stored record is returned with nothing sent. With no record, or no
// refresh token, the error wraps [ErrSignInRequired]. An invalid_grant
// answer removes the record when its refresh token is still the one the
// grant sent (re-read after the answer) and the error wraps both
// ErrSignInRequired and the *oauth2.RetrieveError; for a refresh token
// replaced meanwhile it is ignored and the replacement returned.
func (m *Manager) refresh(ctx context.Context, name, key string, needs func(cur *record) bool) (*record, error) {
	var out *record
	var grantErr error
	err := m.store.update(ctx, key, func(cur *record) (*record, error) {
		if cur == nil {
			return nil, signInRequired(name)
		}
		if !needs(cur) {
			out = cur
			return nil, errUnchanged
		}
		if cur.RefreshToken == "" {
			return nil, signInRequired(name)
		}
		sent := cur.RefreshToken
		tr := &checkedTransport{}
		tctx := context.WithValue(ctx, oauth2.HTTPClient, checkedClient(m.client, tr))
		tok, err := cur.oauthConfig().TokenSource(tctx, &oauth2.Token{RefreshToken: sent}).Token()
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			stored, rerr := m.store.read(key)
			if rerr != nil {
				return nil, rerr
			}
			if stored == nil || stored.RefreshToken != sent {
				m.log.Info("mcp auth: invalid_grant for a replaced refresh token; ignored", "server", name)
				out = stored
				return nil, errUnchanged
			}
			m.log.Warn("mcp auth: the refresh token was refused (invalid_grant); tokens cleared", "server", name)
			grantErr = fmt.Errorf("%w: %w", signInRequired(name), err)
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mcpauth: %s: refreshing the token: %w", name, err)
		}
		next := *cur
		next.setToken(tok, m.now())
		m.log.Info("mcp auth: token refreshed", "server", name)
		out = &next
		return &next, nil
	})
	if err != nil {
		return nil, err
	}
	if grantErr != nil {
		return nil, grantErr
	}
	if out == nil {
		return nil, signInRequired(name)
	}
	return out, nil
}
