package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/threads/ext"
)

// reason is err's invalidParams field and reason ("" when err is no
// *coreerr.ParamError).
func reason(err error) string {
	var pe *coreerr.ParamError
	if !errors.As(err, &pe) {
		return ""
	}
	return pe.Field + ":" + pe.Reason
}

// TestAppReachMatrix: visibility absent, ["app"], ["model"] and
// ["model","app"] × hidden by the configuration or not × the tool of the
// named server or of another one.
func TestAppReachMatrix(t *testing.T) {
	vis := map[string]map[string]any{
		"absent":    nil,
		"app":       {"ui": map[string]any{"visibility": []any{"app"}}},
		"model":     {"ui": map[string]any{"visibility": []any{"model"}}},
		"modelApp":  {"ui": map[string]any{"visibility": []any{"model", "app"}}},
		"malformed": {"ui": map[string]any{"visibility": "app"}}, // not a list: the default
	}
	for name, meta := range vis {
		for _, hide := range []bool{false, true} {
			for _, same := range []bool{true, false} {
				listed := []*mcpsdk.Tool{{Name: "other"}}
				if same {
					listed = append(listed, &mcpsdk.Tool{Name: "t", Meta: meta})
				}
				var disabled []string
				if hide {
					disabled = []string{"t"}
				}
				got, err := AppReach(listed, "t", nil, disabled)
				want := ""
				switch {
				case !same:
					want = "name:" + ReasonUnknownTool
				case hide:
					want = "name:" + ReasonHidden
				case name == "model":
					want = "name:" + ReasonNotAppVisible
				}
				if reason(err) != want || (want == "" && (err != nil || got == nil || got.Name != "t")) {
					t.Errorf("visibility %s, hidden %v, same server %v: %v (%q), want %q", name, hide, same, err, reason(err), want)
				}
			}
		}
	}
	// enabledTools is an allowlist and wins over disabledTools.
	listed := []*mcpsdk.Tool{{Name: "t"}}
	if _, err := AppReach(listed, "t", []string{"u"}, nil); reason(err) != "name:"+ReasonHidden {
		t.Errorf("not in enabledTools: %v", err)
	}
	if _, err := AppReach(listed, "t", []string{"t"}, []string{"t"}); err != nil {
		t.Errorf("in enabledTools and disabledTools: %v", err)
	}
}

func TestAppHTMLFirst(t *testing.T) {
	in := `{"contents":[{"uri":"a","mimeType":"application/json","text":"{}"},{"uri":"b","mimeType":"text/html"},` +
		`{"uri":"c","mimeType":"text/plain"},{"uri":"d","mimeType":"text/html;profile=mcp-app"},{"uri":"e"},` +
		`{"uri":"f","mimeType":"text/html;profile=mcp-app"}],"_meta":{"k":1}}`
	out, err := AppHTMLFirst([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Contents []struct{ URI string } `json:"contents"`
		Meta     map[string]any         `json:"_meta"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range res.Contents {
		order = append(order, c.URI)
	}
	if strings.Join(order, "") != "dfbace" || res.Meta["k"] != float64(1) {
		t.Errorf("order %v, _meta %v", order, res.Meta)
	}
	if out, err := AppHTMLFirst([]byte(`{}`)); err != nil || string(out) != `{"contents":[]}` {
		t.Errorf("no contents: %s %v", out, err)
	}
}

// sized is a JSON object {"k":"xx…"} of exactly n bytes (n >= 8).
func sized(n int) []byte { return []byte(`{"k":"` + strings.Repeat("x", n-8) + `"}`) }

// TestAppSizeCaps checks each cap at its exact byte boundary.
func TestAppSizeCaps(t *testing.T) {
	// Arguments: 1 MiB passes, one byte more is invalidParams "arguments".
	if b, err := appArguments(sized(MaxAppArgumentsBytes)); err != nil || len(b) != MaxAppArgumentsBytes {
		t.Errorf("1 MiB of arguments: %d bytes, %v", len(b), err)
	}
	if _, err := appArguments(sized(MaxAppArgumentsBytes + 1)); reason(err) != "arguments:" {
		t.Errorf("1 MiB + 1 of arguments: %v", err)
	}
	// Measured compacted: whitespace does not count.
	spaced := append([]byte("  "), sized(MaxAppArgumentsBytes)...)
	if _, err := appArguments(spaced); err != nil {
		t.Errorf("1 MiB of arguments with spaces around: %v", err)
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`} {
		if _, err := appArguments(json.RawMessage(bad)); reason(err) != "arguments:" {
			t.Errorf("arguments %s: %v", bad, err)
		}
	}
	if b, err := appArguments(nil); err != nil || string(b) != "{}" {
		t.Errorf("no arguments: %s %v", b, err)
	}

	// A resource: 4 MiB passes, one byte more is invalidParams "uri".
	res := func(n int) []byte {
		b := []byte(`{"contents":[{"uri":"u","text":"`)
		tail := []byte(`"}]}`)
		return append(append(b, bytes.Repeat([]byte("r"), n-len(b)-len(tail))...), tail...)
	}
	if out, err := appResourceAnswer(res(MaxAppResourceBytes)); err != nil || len(out) != MaxAppResourceBytes {
		t.Errorf("a 4 MiB resource: %d bytes, %v", len(out), err)
	}
	if _, err := appResourceAnswer(res(MaxAppResourceBytes + 1)); reason(err) != "uri:" {
		t.Errorf("a 4 MiB + 1 resource: %v", err)
	}

	// A tool result: 4 MiB is answered whole, one byte more as "the tool ran".
	if out := appCallAnswer(sized(MaxAppCallResultBytes)); len(out) != MaxAppCallResultBytes {
		t.Errorf("a 4 MiB result answered %d bytes", len(out))
	}
	out := appCallAnswer(sized(MaxAppCallResultBytes + 1))
	want := `{"_meta":{"knightcode/resultOmitted":true},"content":[{"text":"The tool ran; its result (4.0 MiB) is over 4 MiB and was left out.","type":"text"}]}`
	if string(out) != want {
		t.Errorf("a 4 MiB + 1 result answered %s", out)
	}

	// mcpApp.result: 256 KiB is kept, one byte more is resultOmitted.
	rt := &runtime{apps: true}
	s := &server{rt: rt, listed: []*mcpsdk.Tool{{Name: "show", Meta: mcpsdk.Meta{"ui": map[string]any{"resourceUri": "ui://a/b"}}}}}
	s.cfg.Name = "srv"
	result := func(n int) *mcpsdk.CallToolResult {
		r := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: ""}}}
		b, _ := json.Marshal(r)
		r.Content[0].(*mcpsdk.TextContent).Text = strings.Repeat("y", n-len(b))
		return r
	}
	for _, tc := range []struct {
		n       int
		omitted bool
	}{{MaxAppResultBytes, false}, {MaxAppResultBytes + 1, true}} {
		r := result(tc.n)
		if b, _ := json.Marshal(r); len(b) != tc.n {
			t.Fatalf("the result is %d bytes, want %d", len(b), tc.n)
		}
		got := rt.withApp(s, "show", r, toResult(r))
		var d struct {
			MCPApp struct {
				Server        string
				ResourceURI   string `json:"resourceUri"`
				Result        json.RawMessage
				ResultOmitted bool
			} `json:"mcpApp"`
		}
		if err := json.Unmarshal(got.Details, &d); err != nil {
			t.Fatal(err)
		}
		if d.MCPApp.ResourceURI != "ui://a/b" || d.MCPApp.ResultOmitted != tc.omitted || (len(d.MCPApp.Result) == tc.n) == tc.omitted {
			t.Errorf("a %d-byte result: resourceUri %q, resultOmitted %v, result %d bytes", tc.n, d.MCPApp.ResourceURI, d.MCPApp.ResultOmitted, len(d.MCPApp.Result))
		}
	}
	// No mcpApp when the thread draws no apps, or the tool has no ui:// app.
	r := result(100)
	if got := (&runtime{}).withApp(s, "show", r, toResult(r)); len(got.Details) != 0 {
		t.Errorf("mcpApp without apps: %s", got.Details)
	}
	s.listed[0].Meta = mcpsdk.Meta{"ui": map[string]any{"resourceUri": "https://a/b"}}
	if got := rt.withApp(s, "show", r, toResult(r)); len(got.Details) != 0 {
		t.Errorf("mcpApp for an https app: %s", got.Details)
	}
	s.listed[0].Meta = mcpsdk.Meta{"ui/resourceUri": "ui://flat/x"}
	if got := rt.withApp(s, "show", r, toResult(r)); !strings.Contains(string(got.Details), `"resourceUri":"ui://flat/x"`) {
		t.Errorf("the flat ui/resourceUri key: %s", got.Details)
	}
}

// TestAppCapabilityInitialize checks the initialize request go-sdk v1.8.0
// sends on the wire: the io.modelcontextprotocol/ui extension only for a
// thread that draws apps, besides roots and elicitation, and what a go-sdk
// server reads of it.
func TestAppCapabilityInitialize(t *testing.T) {
	for _, apps := range []bool{true, false} {
		rt := &runtime{apps: apps, opts: Options{Version: "1"}}
		s := &server{rt: rt}
		srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "s", Version: "1"}, nil)
		ct, st := mcpsdk.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var wire bytes.Buffer
		cs, err := rt.client(s).Connect(context.Background(), &mcpsdk.LoggingTransport{Transport: ct, Writer: &wire},
			&mcpsdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
		if err != nil {
			t.Fatal(err)
		}
		var initialize string
		for _, line := range strings.Split(wire.String(), "\n") {
			if strings.Contains(line, `"method":"initialize"`) {
				initialize = line
			}
		}
		const ext = `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
		if strings.Contains(initialize, ext) != apps || !strings.Contains(initialize, `"roots":{"listChanged":true}`) ||
			!strings.Contains(initialize, `"elicitation":{`) {
			t.Errorf("apps %v: the initialize request sent:\n%s", apps, initialize)
		}
		got := ss.InitializeParams().Capabilities.Extensions[UIExtension]
		if b, _ := json.Marshal(got); (string(b) == `{"mimeTypes":["text/html;profile=mcp-app"]}`) != apps {
			t.Errorf("apps %v: the server read %s", apps, b)
		}
		cs.Close()
		ss.Close()
	}
}

// appEnv loads a thread that draws apps (in mode) with the counter app as
// server counter, the fixture fs, a disabled server off and a stalled one
// stall, and waits for counter and fs.
func appEnv(t *testing.T, mode string) *env {
	t.Helper()
	e := newEnvHost(t, &host{cwd: t.TempDir(), apps: true, mode: mode}, []string{"counter", "fs", "off", "stall"},
		func(e *env) map[string]map[string]any {
			return map[string]map[string]any{
				"counter": e.server("counter", map[string]any{"disabledTools": []string{"peek"}}, "-counter"),
				"fs":      e.server("fs", nil),
				"off":     e.server("off", map[string]any{"enabled": false}, "-counter"),
				"stall":   e.server("stall", nil, "-stall"),
			}
		})
	e.tool("mcp__counter__show_counter")
	e.tool("mcp__fs__echo")
	return e
}

func TestAppCallsAndRefusals(t *testing.T) {
	t.Parallel()
	e := appEnv(t, "ask")
	ctx := context.Background()
	for _, name := range e.names() {
		if name == "mcp__counter__increment" {
			t.Errorf("the app-only increment is a model tool: %v", e.names())
		}
	}
	// The model's call of show_counter carries mcpApp with the whole result.
	res := e.run(ctx, e.tool("mcp__counter__show_counter"), `{}`)
	var d struct {
		MCPApp struct {
			Server      string
			ResourceURI string `json:"resourceUri"`
			Result      struct {
				StructuredContent map[string]any `json:"structuredContent"`
				Meta              map[string]any `json:"_meta"`
			}
		} `json:"mcpApp"`
	}
	if err := json.Unmarshal(res.Details, &d); err != nil || d.MCPApp.Server != "counter" || d.MCPApp.ResourceURI != "ui://counter/app.html" ||
		d.MCPApp.Result.Meta["counter/seen"] != true || d.MCPApp.Result.StructuredContent["ui"] == nil {
		t.Errorf("show_counter details %s (%v)", res.Details, err)
	}

	call := func(server, name, args string, confirmed bool) (string, error) {
		out, err := e.apps.CallTool(ctx, "t1", server, name, json.RawMessage(args), confirmed)
		return string(out), err
	}
	_, err := call("counter", "increment", `{"by":2}`, false)
	if ae, ok := errors.AsType[*ApprovalRequiredError](err); !ok || *ae != (ApprovalRequiredError{Server: "counter", Tool: "increment"}) {
		t.Errorf("increment without confirmed in ask mode: %v", err)
	}
	if out, err := call("counter", "increment", `{"by":2}`, true); err != nil || !strings.Contains(out, `"structuredContent":{"count":2}`) {
		t.Errorf("increment confirmed: %s %v", out, err)
	}
	e.h.mu.Lock()
	e.h.mode = ext.ApprovalFullAccess
	e.h.mu.Unlock()
	if out, err := call("counter", "increment", ``, false); err != nil || !strings.Contains(out, `"count":3`) {
		t.Errorf("increment in fullAccess: %s %v", out, err)
	}
	for _, tc := range []struct{ server, name, want string }{
		{"counter", "secret", "name:" + ReasonNotAppVisible},
		{"counter", "peek", "name:" + ReasonHidden},
		{"counter", "nope", "name:" + ReasonUnknownTool},
		{"counter", "echo", "name:" + ReasonUnknownTool}, // fs's tool
		{"fs", "increment", "name:" + ReasonUnknownTool}, // counter's tool
	} {
		if _, err := call(tc.server, tc.name, `{}`, true); reason(err) != tc.want {
			t.Errorf("%s of %s: %v, want %s", tc.name, tc.server, err, tc.want)
		}
	}
	for server, state := range map[string]string{"off": AppStateDisabled, "stall": AppStateConnecting, "none": AppStateNotConfigured} {
		_, err := call(server, "increment", `{}`, true)
		var ue *UnavailableError
		if !errors.As(err, &ue) || ue.Server != server || ue.State != state {
			t.Errorf("a call on %s: %v, want state %s", server, err, state)
		}
		_, err = e.apps.ReadResource(ctx, "t1", server, "ui://counter/app.html")
		if !errors.As(err, &ue) || ue.State != state {
			t.Errorf("a read on %s: %v, want state %s", server, err, state)
		}
	}
	if _, err := e.apps.CallTool(ctx, "t2", "counter", "peek", nil, false); !errors.Is(err, ErrThreadNotLoaded) {
		t.Errorf("another thread: %v", err)
	}

	// The HTML first; the 4 MiB cap; the read timeout.
	out, err := e.apps.ReadResource(ctx, "t1", "counter", "ui://counter/app.html")
	var read struct {
		Contents []struct {
			URI, MIMEType, Text string
			Meta                map[string]any `json:"_meta"`
		}
	}
	if err != nil || json.Unmarshal(out, &read) != nil || len(read.Contents) != 2 || read.Contents[0].MIMEType != AppMIMEType ||
		!strings.HasPrefix(read.Contents[0].Text, "<!doctype html>") || read.Contents[0].Meta["ui"] == nil || read.Contents[1].URI != "ui://counter/app.json" {
		t.Errorf("read the app: %.300s %v", out, err)
	}
	if _, err := e.apps.ReadResource(ctx, "t1", "counter", "ui://counter/big"); reason(err) != "uri:" {
		t.Errorf("read a resource over 4 MiB: %v", err)
	}
	e.apps.readTimeout = 300 * time.Millisecond
	begin := time.Now()
	_, err = e.apps.ReadResource(ctx, "t1", "counter", "ui://counter/stall")
	if err == nil || !strings.Contains(err.Error(), "did not answer the read of ui://counter/stall within 300ms") || reason(err) != "" {
		t.Errorf("a read that never answers: %v", err)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the read took %v", d)
	}

	// Disposed: the thread is no longer reachable.
	e.r.Dispose()
	if _, err := e.apps.CallTool(ctx, "t1", "counter", "increment", nil, true); !errors.Is(err, ErrThreadNotLoaded) {
		t.Errorf("after dispose: %v", err)
	}
}

// TestAppFailedServer: a server that exited answers mcpUnavailable with
// state failed.
func TestAppFailedServer(t *testing.T) {
	t.Parallel()
	e := newEnvHost(t, &host{cwd: t.TempDir(), apps: true}, []string{"gone"}, func(e *env) map[string]map[string]any {
		return map[string]map[string]any{"gone": {"command": "/nonexistent/mcp-server"}}
	})
	waitFor(t, 10*time.Second, "the failure", func() bool { return strings.Contains(e.h.status(), "gone: failed") })
	_, err := e.apps.CallTool(context.Background(), "t1", "gone", "x", nil, true)
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.State != AppStateFailed {
		t.Errorf("a failed server: %v", err)
	}
}
