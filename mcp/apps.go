package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	mcpjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/threads/ext"
)

// MCP Apps (EXTENSIBILITY.md §3; spec "mcp/app/readResource and
// mcp/app/callTool"): a thread whose loading connection sent mode
// "desktop" explicitly tells its servers that the client draws apps; a
// call of a tool with an app carries mcpApp on its toolCall item; the
// app's view reads resources and calls tools of its own server through
// Apps.

// UIExtension is the MCP Apps extension's identifier in a client's
// capabilities.extensions.
const UIExtension = "io.modelcontextprotocol/ui"

// AppMIMEType is the MIME type of an app's HTML (MCP Apps 2026-01-26).
const AppMIMEType = "text/html;profile=mcp-app"

// The MCP Apps limits (EXTENSIBILITY.md §3), in bytes of JSON.
const (
	// MaxAppResultBytes: a CallToolResult over it is left out of a
	// toolCall item's mcpApp (resultOmitted).
	MaxAppResultBytes = 256 << 10
	// MaxAppArgumentsBytes: mcp/app/callTool arguments over it are
	// refused (invalidParams).
	MaxAppArgumentsBytes = 1 << 20
	// MaxAppResourceBytes: a ReadResourceResult over it is refused
	// (invalidParams).
	MaxAppResourceBytes = 4 << 20
	// MaxAppCallResultBytes: a CallToolResult over it is answered with a
	// text saying the tool ran.
	MaxAppCallResultBytes = 4 << 20
)

// ResourceReadTimeout bounds a resource read for an app (spec: "the
// server gives the MCP extension 60 seconds to answer a resource read").
const ResourceReadTimeout = 60 * time.Second

// ErrThreadNotLoaded is returned by Apps for a thread that is not loaded
// (mapped to threadNotFound): apps exist only for loaded threads.
var ErrThreadNotLoaded = errors.New("mcp: the thread is not loaded")

// The states of an UnavailableError (the spec's mcpUnavailable data.state).
const (
	AppStateNotConfigured  = "notConfigured"
	AppStateDisabled       = "disabled"
	AppStateConnecting     = "connecting"
	AppStateFailed         = "failed"
	AppStateSignInRequired = "signInRequired"
)

// UnavailableError is an mcp/app request for a server the thread has not
// connected (mcpUnavailable): State is one of the AppState* values.
type UnavailableError struct {
	Server, State string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("MCP server %s is not connected (%s)", e.Server, e.State)
}

// ApprovalRequiredError is an app's call of a tool that is not read-only,
// outside fullAccess and without confirmed (approvalRequired).
type ApprovalRequiredError struct {
	Server, Tool string
}

func (e *ApprovalRequiredError) Error() string {
	return fmt.Sprintf("tool %s of MCP server %s changes things: send the call again with confirmed: true once the user agreed", e.Tool, e.Server)
}

// The invalidParams reasons of an app's call of a tool it may not reach.
const (
	ReasonUnknownTool   = "unknownTool"
	ReasonHidden        = "hidden"
	ReasonNotAppVisible = "notAppVisible"
)

// Apps is how mcp/app/readResource and mcp/app/callTool reach the MCP
// runtime of a loaded thread: each thread load registers its runtime
// (Options.Apps) and unregisters it when disposed. Safe for concurrent use.
type Apps struct {
	mu    sync.Mutex
	loads map[string]*runtime
	// readTimeout bounds a resource read (ResourceReadTimeout; tests
	// shorten it).
	readTimeout time.Duration
}

// NewApps returns an empty registry.
func NewApps() *Apps {
	return &Apps{loads: map[string]*runtime{}, readTimeout: ResourceReadTimeout}
}

// add registers rt as the runtime of thread id, and returns what removes
// it (only while it is still the one registered: a reload may come first).
func (a *Apps) add(id string, rt *runtime) func() {
	a.mu.Lock()
	a.loads[id] = rt
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if a.loads[id] == rt {
			delete(a.loads, id)
		}
		a.mu.Unlock()
	}
}

// runtime is the MCP runtime of the loaded thread id.
func (a *Apps) runtime(id string) (*runtime, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rt := a.loads[id]; rt != nil {
		return rt, nil
	}
	return nil, ErrThreadNotLoaded
}

// ServerError is an MCP server's own JSON-RPC error response to a request
// made for an app: Server names it, Request what was asked ("read of
// ui://x"), Code and Message are the server's. rpc maps it to
// externalFailure (reason toolFailed, tool mcp, output the server's
// words), so a client tells it from the 60 s timeout (internal).
type ServerError struct {
	Server, Request string
	Code            int64
	Message         string
}

func (e *ServerError) Error() string {
	if e.Code == 0 { // go-sdk's code for a handler's plain Go error
		return fmt.Sprintf("MCP server %s refused the %s: %s", e.Server, e.Request, e.Message)
	}
	return fmt.Sprintf("MCP server %s refused the %s: %s (JSON-RPC error %d)", e.Server, e.Request, e.Message, e.Code)
}

// resourceNotFoundCodes are the JSON-RPC codes of an MCP server's "no such
// resource": -32602 (invalid params, the MCP specification's since
// SEP-2164) and -32002 (the one before it).
var resourceNotFoundCodes = []int64{mcpjsonrpc.CodeInvalidParams, -32002}

// ReadResource reads the resource uri of the MCP server named server of
// the loaded thread threadID for its app, and returns the server's
// ReadResourceResult as JSON ({contents, _meta?}) with the app's HTML first
// (AppHTMLFirst). Errors: ErrThreadNotLoaded; *UnavailableError; a
// *coreerr.ParamError (field uri) for a result over MaxAppResourceBytes or
// a resource the server says it does not have (resourceNotFoundCodes);
// *ServerError for any other error response of the server; a read not
// answered within 60 s.
func (a *Apps) ReadResource(ctx context.Context, threadID, server, uri string) (json.RawMessage, error) {
	rt, err := a.runtime(threadID)
	if err != nil {
		return nil, err
	}
	s, session, err := rt.appSession(server)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, a.readTimeout)
	defer cancel()
	res, err := session.ReadResource(rctx, &mcpsdk.ReadResourceParams{URI: uri})
	if err != nil {
		if errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("MCP server %s did not answer the read of %s within %s", s.cfg.Name, uri, a.readTimeout)
		}
		if we, ok := errors.AsType[*mcpjsonrpc.Error](err); ok {
			if slices.Contains(resourceNotFoundCodes, we.Code) {
				return nil, coreerr.Param("uri", "MCP server %s has no resource %s: %s", s.cfg.Name, uri, we.Message)
			}
			return nil, &ServerError{Server: s.cfg.Name, Request: "read of " + uri, Code: we.Code, Message: we.Message}
		}
		return nil, fmt.Errorf("MCP server %s, resource %s: %w", s.cfg.Name, uri, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s, resource %s: encoding its contents: %w", s.cfg.Name, uri, err)
	}
	return appResourceAnswer(b)
}

// appResourceAnswer is an app's answer from the ReadResourceResult b
// (JSON): its HTML first (AppHTMLFirst). Errors: a *coreerr.ParamError of
// field uri when b is over MaxAppResourceBytes.
func appResourceAnswer(b []byte) (json.RawMessage, error) {
	if len(b) > MaxAppResourceBytes {
		return nil, coreerr.Param("uri", "the resource is %s as JSON, over the 4 MiB an app may read", mib(len(b)))
	}
	return AppHTMLFirst(b)
}

// CallTool calls the tool name of the MCP server named server of the
// loaded thread threadID for its app, outside the conversation (nothing
// is written to the session or shown to the model; logged at debug
// level), at once even while a turn runs, bounded by the server's
// toolTimeoutSec. args is a JSON object (absent: {}); confirmed says the
// person agreed to this one call. It returns the server's CallToolResult
// as JSON, or for one over MaxAppCallResultBytes a text saying the tool
// ran with _meta {"knightcode/resultOmitted": true}.
//
// Errors: a *coreerr.ParamError: field arguments (not an object, or over
// MaxAppArgumentsBytes), field name with reason ReasonUnknownTool,
// ReasonHidden or ReasonNotAppVisible (AppReach); ErrThreadNotLoaded;
// *UnavailableError; *ApprovalRequiredError, outside fullAccess for a tool
// not annotated readOnlyHint, unless confirmed; the server's own error
// response: invalid params (-32602) as a *coreerr.ParamError of field
// arguments, any other as a *ServerError; else the call's failure.
func (a *Apps) CallTool(ctx context.Context, threadID, server, name string, args json.RawMessage, confirmed bool) (json.RawMessage, error) {
	input, err := appArguments(args)
	if err != nil {
		return nil, err
	}
	rt, err := a.runtime(threadID)
	if err != nil {
		return nil, err
	}
	s, _, err := rt.appSession(server)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	listed := s.listed
	rt.mu.Unlock()
	t, err := AppReach(listed, name, s.cfg.EnabledTools, s.cfg.DisabledTools)
	if err != nil {
		return nil, err
	}
	if !confirmed && !readOnlyHint(t) && rt.api.Thread().ApprovalMode() != ext.ApprovalFullAccess {
		return nil, &ApprovalRequiredError{Server: s.cfg.Name, Tool: t.Name}
	}
	begin := time.Now()
	res, _, err := rt.callOnce(ctx, s, t.Name, input)
	rt.opts.Log.Debug("MCP app tool call", "server", s.cfg.Name, "tool", t.Name, "duration", time.Since(begin), "err", err)
	if err != nil {
		if we, ok := errors.AsType[*mcpjsonrpc.Error](err); ok && ctx.Err() == nil {
			if we.Code == mcpjsonrpc.CodeInvalidParams {
				return nil, coreerr.Param("arguments", "MCP server %s refused the arguments of %s: %s", s.cfg.Name, t.Name, we.Message)
			}
			return nil, &ServerError{Server: s.cfg.Name, Request: "call of " + t.Name, Code: we.Code, Message: we.Message}
		}
		return nil, fmt.Errorf("MCP server %s, tool %s: %w", s.cfg.Name, t.Name, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s, tool %s: encoding its result: %w", s.cfg.Name, t.Name, err)
	}
	return appCallAnswer(b), nil
}

// appArguments checks an app call's arguments: absent or null is {}; else
// a JSON object of at most MaxAppArgumentsBytes (compacted).
func appArguments(args json.RawMessage) (json.RawMessage, error) {
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}"), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, coreerr.Param("arguments", "must be a JSON object")
	}
	if buf.Len() > MaxAppArgumentsBytes {
		return nil, coreerr.Param("arguments", "%s as JSON, over the 1 MiB an app call may send", mib(buf.Len()))
	}
	return buf.Bytes(), nil
}

// appCallAnswer is an app call's answer from the CallToolResult b (JSON):
// b itself, or past MaxAppCallResultBytes a text saying the tool ran.
func appCallAnswer(b []byte) json.RawMessage {
	if len(b) <= MaxAppCallResultBytes {
		return b
	}
	out, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text",
			"text": fmt.Sprintf("The tool ran; its result (%s) is over 4 MiB and was left out.", mib(len(b)))}},
		"_meta": map[string]bool{"knightcode/resultOmitted": true},
	})
	return out
}

// mib is n bytes in MiB with one decimal ("5.2 MiB").
func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// AppReach returns the tool of listed (a server's tools, every one it
// listed) an app may call by name (EXTENSIBILITY.md §3): one the server
// lists (else reason ReasonUnknownTool: another server's tool too), that
// the configuration does not hide (enabledTools and disabledTools as for
// the model; else ReasonHidden) and whose _meta.ui.visibility includes
// "app" (absent is MCP Apps' default ["model", "app"]; else
// ReasonNotAppVisible). A refusal is a *coreerr.ParamError of field name.
func AppReach(listed []*mcpsdk.Tool, name string, enabled, disabled []string) (*mcpsdk.Tool, error) {
	i := slices.IndexFunc(listed, func(t *mcpsdk.Tool) bool { return t.Name == name })
	switch {
	case i < 0:
		return nil, coreerr.ParamReason("name", ReasonUnknownTool, "the MCP server has no tool %q", name)
	case hidden(name, enabled, disabled):
		return nil, coreerr.ParamReason("name", ReasonHidden, "tool %q is hidden by the server's enabledTools or disabledTools", name)
	case !appVisible(listed[i].Meta):
		return nil, coreerr.ParamReason("name", ReasonNotAppVisible, "tool %q is not visible to apps (its _meta.ui.visibility lacks \"app\")", name)
	}
	return listed[i], nil
}

// visibility is a tool's _meta.ui.visibility, or nil when it has none (a
// value that is not a list counts as none).
func visibility(meta map[string]any) []any {
	ui, _ := meta["ui"].(map[string]any)
	vis, _ := ui["visibility"].([]any)
	return vis
}

// appVisible reports whether an app may call a tool with _meta meta:
// visibility absent (["model", "app"]) or including "app".
func appVisible(meta map[string]any) bool {
	vis := visibility(meta)
	return vis == nil || slices.Contains(vis, any("app"))
}

// appResource is the ui:// URI of the app of a tool with _meta meta
// (_meta.ui.resourceUri, or the older flat _meta["ui/resourceUri"]), or
// "" when it has none.
func appResource(meta map[string]any) string {
	ui, _ := meta["ui"].(map[string]any)
	for _, v := range []any{ui["resourceUri"], meta["ui/resourceUri"]} {
		if u, ok := v.(string); ok && len(u) > len("ui://") && u[:len("ui://")] == "ui://" {
			return u
		}
	}
	return ""
}

// AppHTMLFirst returns the ReadResourceResult b (JSON) with its contents
// stable-sorted: the entries of mimeType text/html;profile=mcp-app, then
// those of text/html, then the others, each group in the server's order.
// Errors: b is not a ReadResourceResult.
func AppHTMLFirst(b []byte) (json.RawMessage, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("a resource read answered %.100s: %w", b, err)
	}
	var contents []json.RawMessage
	if raw, ok := res["contents"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &contents); err != nil {
			return nil, fmt.Errorf("a resource read's contents: %w", err)
		}
	}
	rank := func(c json.RawMessage) int {
		var e struct {
			MIMEType string `json:"mimeType"`
		}
		_ = json.Unmarshal(c, &e)
		switch e.MIMEType {
		case AppMIMEType:
			return 0
		case "text/html":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(contents, func(x, y json.RawMessage) int { return rank(x) - rank(y) })
	if contents == nil {
		contents = []json.RawMessage{}
	}
	res["contents"], _ = json.Marshal(contents)
	return json.Marshal(res)
}

// appSession is the server named name of rt and its live session. Errors:
// *UnavailableError with the server's state.
func (rt *runtime) appSession(name string) (*server, *mcpsdk.ClientSession, error) {
	i := slices.IndexFunc(rt.servers, func(s *server) bool { return s.cfg.Name == name })
	if i < 0 {
		return nil, nil, &UnavailableError{Server: name, State: AppStateNotConfigured}
	}
	s := rt.servers[i]
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if s.session != nil && !rt.disposed {
		return s, s.session, nil
	}
	state := AppStateFailed
	switch {
	case !s.cfg.Enabled:
		state = AppStateDisabled
	case s.state == stateConnecting:
		state = AppStateConnecting
	case s.state == stateSignIn:
		state = AppStateSignInRequired
	}
	return nil, nil, &UnavailableError{Server: name, State: state}
}

// capabilities are the client capabilities of a connection of rt: go-sdk's
// default (roots, with listChanged), and the MCP Apps extension
// ({"mimeTypes": ["text/html;profile=mcp-app"]}) when the thread's loading
// connection draws apps.
func (rt *runtime) capabilities() *mcpsdk.ClientCapabilities {
	c := &mcpsdk.ClientCapabilities{RootsV2: &mcpsdk.RootCapabilities{ListChanged: true}}
	if rt.apps {
		c.AddExtension(UIExtension, map[string]any{"mimeTypes": []string{AppMIMEType}})
	}
	return c
}

// withApp is out, the result of a call of tool of s, with its mcpApp in
// details when the tool has an app and the thread draws apps
// (EXTENSIBILITY.md §3): {server, resourceUri, result} with the whole
// CallToolResult res, or resultOmitted past MaxAppResultBytes.
func (rt *runtime) withApp(s *server, tool string, res *mcpsdk.CallToolResult, out ext.ToolResult) ext.ToolResult {
	if !rt.apps {
		return out
	}
	rt.mu.Lock()
	listed := s.listed
	rt.mu.Unlock()
	i := slices.IndexFunc(listed, func(t *mcpsdk.Tool) bool { return t.Name == tool })
	if i < 0 {
		return out
	}
	uri := appResource(listed[i].Meta)
	if uri == "" {
		return out
	}
	app := map[string]any{"server": s.cfg.Name, "resourceUri": uri}
	if b, err := json.Marshal(res); err == nil && len(b) <= MaxAppResultBytes {
		app["result"] = json.RawMessage(b)
	} else {
		app["resultOmitted"] = true
	}
	details := map[string]json.RawMessage{}
	if len(out.Details) > 0 {
		_ = json.Unmarshal(out.Details, &details)
	}
	details["mcpApp"], _ = json.Marshal(app)
	out.Details, _ = json.Marshal(details)
	return out
}
