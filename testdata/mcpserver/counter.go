package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appMIME is the MIME type of an MCP App's HTML.
const appMIME = "text/html;profile=mcp-app"

// counterHTML is the counter app's view.
const counterHTML = `<!doctype html><html><body><p id="count">0</p><button id="inc">+1</button></body></html>`

// counterApp adds the counter app (MCP Apps 2026-01-26) to s:
//   - show_counter {pad?}: read-only, no visibility (model and app), with
//     the app ui://counter/app.html; structuredContent {count, ui, pad?}
//     where ui is the io.modelcontextprotocol/ui capability the client
//     sent in initialize (null without; also recorded as <name>-ui), pad
//     pad bytes of "x", and _meta {"counter/seen": true};
//   - increment {by?, pad?}: app-only (visibility ["app"]), not read-only:
//     adds by (default 1); structuredContent {count, pad?}; a negative by
//     answers the JSON-RPC error invalid params ("by must not be
//     negative"), one over 1000 an error of its own ("the counter is
//     locked above 1000"), and neither adds;
//   - peek: read-only, visibility ["model", "app"]: {count};
//   - slow_peek: read-only, waits 2 s, then peek; records started-slow_peek;
//   - secret: model-only (visibility ["model"]);
//   - ui://counter/app.html: a JSON entry first, then the HTML
//     (text/html;profile=mcp-app), so a host must reorder;
//   - ui://counter/big: 4 MiB + 1 KiB of text; ui://counter/stall: never
//     answers; ui://counter/broken: answers a JSON-RPC error of its own
//     (the handler's "the counter's store is offline").
func counterApp(s *mcp.Server, record func(event, text string)) {
	var mu sync.Mutex
	count := 0
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"by": map[string]any{"type": "integer"}, "pad": map[string]any{"type": "integer"}}}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	type in struct {
		By  int `json:"by"`
		Pad int `json:"pad"`
	}
	parse := func(req *mcp.CallToolRequest) in {
		var a in
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a
	}
	result := func(sc map[string]any, pad int) *mcp.CallToolResult {
		if pad > 0 {
			sc["pad"] = strings.Repeat("x", pad)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("count: %v", sc["count"])}},
			StructuredContent: sc}
	}
	now := func() int {
		mu.Lock()
		defer mu.Unlock()
		return count
	}
	s.AddTool(&mcp.Tool{Name: "show_counter", Description: "Show the counter app", InputSchema: obj, Annotations: ro,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://counter/app.html"}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var ui any
			if p := req.Session.InitializeParams(); p != nil && p.Capabilities != nil {
				ui = p.Capabilities.Extensions["io.modelcontextprotocol/ui"]
			}
			b, _ := json.Marshal(ui)
			record("ui", string(b))
			r := result(map[string]any{"count": now(), "ui": ui}, parse(req).Pad)
			r.Meta = mcp.Meta{"counter/seen": true}
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "increment", Description: "Add to the counter", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://counter/app.html", "visibility": []any{"app"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := parse(req)
			switch {
			case a.By < 0:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "by must not be negative"}
			case a.By > 1000:
				return nil, errors.New("the counter is locked above 1000")
			case a.By == 0:
				a.By = 1
			}
			mu.Lock()
			count += a.By
			c := count
			mu.Unlock()
			record("incremented", fmt.Sprint(c))
			return result(map[string]any{"count": c}, a.Pad), nil
		})
	s.AddTool(&mcp.Tool{Name: "peek", Description: "Read the counter", InputSchema: obj, Annotations: ro,
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model", "app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return result(map[string]any{"count": now()}, 0), nil
		})
	s.AddTool(&mcp.Tool{Name: "slow_peek", Description: "Read the counter slowly", InputSchema: obj, Annotations: ro},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("started-slow_peek", "")
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Second):
			}
			return result(map[string]any{"count": now()}, 0), nil
		})
	s.AddTool(&mcp.Tool{Name: "secret", Description: "Model only", InputSchema: obj, Annotations: ro,
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"model"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("secret-called", "")
			return result(map[string]any{"count": now()}, 0), nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://counter/app.html", Name: "counter", MIMEType: appMIME},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "ui://counter/app.json", MIMEType: "application/json", Text: `{"title":"Counter"}`},
				{URI: "ui://counter/app.html", MIMEType: appMIME, Text: counterHTML,
					Meta: mcp.Meta{"ui": map[string]any{"prefersBorder": true}}},
			}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://counter/big", Name: "big", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "ui://counter/big", MIMEType: "text/plain", Text: strings.Repeat("b", 4<<20+1<<10)}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "ui://counter/broken", Name: "broken", MIMEType: appMIME},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, errors.New("the counter's store is offline")
		})
	s.AddResource(&mcp.Resource{URI: "ui://counter/stall", Name: "stall", MIMEType: appMIME},
		func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			record("started-stall", "")
			<-ctx.Done()
			return nil, ctx.Err()
		})
}
