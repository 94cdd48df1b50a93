package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/mcp/mcpauth"
	"github.com/knightcode/knightcode/threads/ext"
)

// login is "/mcp login <name>" (EXTENSIBILITY.md §2 "OAuth sign-in"): it
// starts Options.Auth's SignIn for the HTTP server name and returns once
// the authorization URL was sent as a ui/notify info notice (SignIn opens
// it in the browser too), so the thread's input is not held while the
// user is in the browser. The sign-in goes on in the background until the
// browser comes back, 5 minutes pass, the thread unloads or the server
// shuts down (mcpauth.Manager.Close). A sign-in that fails before the URL
// was shown is the command's error (an error notice to a thread with UI:
// command); one that fails later is a warning;
// either way the server's status becomes "sign-in failed: <why>" ("unsafe
// authorization URL" when an address failed mcpauth.CheckURL: nothing was
// opened). A finished sign-in reconnects the server in every loaded
// thread (signedIn), this one included.
//
// Errors: an unknown or stdio server, no Options.Auth, a ${VAR} that does
// not expand, the sign-in's before the URL.
func (rt *runtime) login(th *ext.Thread, name string) error {
	var s *server
	for _, x := range rt.servers {
		if x.cfg.Name == name {
			s = x
		}
	}
	switch {
	case s == nil:
		return fmt.Errorf("no MCP server %s", name)
	case s.cfg.Type == config.MCPTypeStdio:
		return fmt.Errorf("MCP server %s runs a command: it has no sign-in", name)
	case rt.opts.Auth == nil:
		return fmt.Errorf("sign-in to MCP servers is not available in this build")
	}
	res, err := s.resolve()
	if err != nil {
		return err
	}
	rt.mu.Lock()
	if rt.disposed {
		rt.mu.Unlock()
		return errors.New("the thread is unloading")
	}
	rt.wg.Add(1)
	rt.mu.Unlock()
	shown := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		defer rt.wg.Done()
		err := rt.opts.Auth.SignIn(rt.ctx, name, res.url, res.auth, func(authURL string) {
			th.UI.Notify("info", "MCP: sign in to "+name+" in your browser: "+authURL)
			once.Do(func() { close(shown) })
		})
		done <- err
		if err != nil && rt.ctx.Err() == nil {
			rt.signInFailed(s, err, isClosed(shown))
		}
	}()
	select {
	case <-shown:
		return nil
	case err := <-done:
		if err == nil || isClosed(shown) {
			return nil
		}
		return fmt.Errorf("sign-in to %s failed: %w", name, err)
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// signInFailed records a failed sign-in of s: its status becomes "sign-in
// failed: <why>" unless it connected meanwhile; warn sends the warning
// (the command did not return the error).
func (rt *runtime) signInFailed(s *server, err error, warn bool) {
	why := err.Error()
	if errors.Is(err, mcpauth.ErrUnsafeURL) {
		why = "unsafe authorization URL"
	}
	rt.mu.Lock()
	if s.state != stateConnected && s.state != stateConnecting {
		s.state, s.reason = stateSignInFailed, why
	}
	rt.mu.Unlock()
	rt.opts.Log.Warn("MCP sign-in failed", "server", s.cfg.Name, "err", err)
	if warn {
		rt.api.Warn(ext.Warning{Path: s.cfg.Path, Message: s.cfg.Name + ": sign-in failed: " + err.Error()})
	}
	rt.showStatus()
}

// signedIn is the mcpauth.Manager subscription of the load: a finished
// sign-in to server name at serverURL (by any thread) reconnects this
// load's server of that name and canonical URL when it is not connected
// (sign-in required, or failed), with the new tokens, without a reload.
// A connected one needs nothing: its connection reads the token file on
// every request.
func (rt *runtime) signedIn(name, serverURL string) {
	want := mcpauth.CanonicalURL(serverURL)
	for _, s := range rt.servers {
		if s.cfg.Name != name || !s.cfg.Enabled || s.cfg.Type == config.MCPTypeStdio {
			continue
		}
		rt.mu.Lock()
		skip := rt.disposed || s.state == stateConnected || mcpauth.CanonicalURL(s.resolved.url) != want
		rt.mu.Unlock()
		if skip {
			continue
		}
		rt.opts.Log.Info("MCP server signed in: reconnecting", "server", name)
		rt.reconnect(s)
	}
}

// sseTransport is go-sdk's legacy SSE client transport with the hanging
// GET bound to the load (life) rather than to the connect's context:
// go-sdk's SSEClientTransport sends the GET with the context given to
// Connect, which the runtime ends with the startup timeout once the
// connect returned. The startup timeout still abandons a GET that has not
// answered by then; the stream ends when the connection closes or the
// load is disposed.
type sseTransport struct {
	inner *mcpsdk.SSEClientTransport
	life  context.Context
}

// Connect connects inner under a context that ends with life, or with ctx
// while Connect runs.
func (t *sseTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	lctx, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(lctx)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

// sseConn is an SSE connection that ends its stream's context on Close.
type sseConn struct {
	mcpsdk.Connection
	cancel context.CancelFunc
}

func (c *sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
