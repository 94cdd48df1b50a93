// Command mcpserver is the MCP server the tests of package mcp and the
// end-to-end tests connect to: a go-sdk server over stdio whose behaviour
// flags choose. It writes <dir>/<name>-<pid>.pid when it starts (and
// <dir>/<name>-grandchild-<pid>.pid for the grandchild it starts with
// -grandchild), so a test can count the processes left, and records what
// happened to its tools in <dir>/<name>-<event> files.
//
// Tools: read_file (readOnlyHint), write_file, echo (readOnlyHint; text
// and structuredContent), fail (isError), image (an image part), slow
// (runs until cancelled and records <name>-cancelled), progress (sends a
// progress notification every 200 ms for -progress-steps steps), add_tool
// (adds the tool late_tool: tools/list_changed), remove_tool (removes the
// tool its text names: tools/list_changed), ask (an elicitation),
// app_panel (app-only: _meta.ui.visibility ["app"]), and with -long a tool
// whose name is 70 characters long, with -extra one of the name given.
//
// With -counter it is the counter app of the MCP Apps tests instead
// (counterApp): show_counter (the app's tool), increment (app-only, not
// read-only), peek (read-only), secret (model-only) and slow_peek, and the
// resources ui://counter/app.html, ui://counter/big and ui://counter/stall.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	name := flag.String("name", "fixture", "the server's name in its record files")
	dir := flag.String("dir", "", "where to write pid and record files")
	stall := flag.Bool("stall", false, "never answer initialize")
	sleep := flag.Duration("sleep", 0, "sleep this long before serving")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	ignoreEOF := flag.Bool("ignore-eof", false, "keep running when stdin closes (only a signal ends it)")
	grandchild := flag.Bool("grandchild", false, "start a grandchild (a sleep) in the process group")
	long := flag.Bool("long", false, "add a tool with a 70-character name")
	progressSteps := flag.Int("progress-steps", 3, "the progress tool's steps (200 ms each)")
	extra := flag.String("extra", "", "add a read-only tool of this name (answers \"extra\")")
	counter := flag.Bool("counter", false, "be the counter app (MCP Apps)")
	flag.Parse()
	// A record appears whole (renamed into place): a process killed while
	// it writes one leaves none.
	record := func(event, text string) {
		if *dir != "" {
			tmp := filepath.Join(*dir, ".tmp-"+strconv.Itoa(os.Getpid())+"-"+event)
			if os.WriteFile(tmp, []byte(text), 0o644) == nil {
				_ = os.Rename(tmp, filepath.Join(*dir, *name+"-"+event))
			}
		}
	}
	record(strconv.Itoa(os.Getpid())+".pid", strconv.Itoa(os.Getpid()))
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *grandchild {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err == nil {
			record("grandchild-"+strconv.Itoa(c.Process.Pid)+".pid", strconv.Itoa(c.Process.Pid))
		}
	}
	record("env", strings.Join(os.Environ(), "\n"))
	if *stall {
		select {}
	}
	time.Sleep(*sleep)

	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1"}, nil)
	if *counter {
		counterApp(s, record)
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "fixture:", err)
		}
		return
	}
	obj := map[string]any{"type": "object", "properties": map[string]any{
		"path": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]string {
		m := map[string]string{}
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	s.AddTool(&mcp.Tool{Name: "read_file", Description: "Read a file", InputSchema: obj, Annotations: ro},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("contents of " + args(req)["path"]), nil
		})
	s.AddTool(&mcp.Tool{Name: "write_file", Description: "Write a file", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("wrote", args(req)["path"])
			return text("wrote " + args(req)["path"]), nil
		})
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text", InputSchema: obj, Annotations: ro},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("echo: " + args(req)["text"])
			r.StructuredContent = map[string]any{"echoed": args(req)["text"]}
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Fail", InputSchema: obj, Annotations: ro},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("it failed")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "image", Description: "An image", InputSchema: obj, Annotations: ro},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a pixel"},
				&mcp.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Run until cancelled", InputSchema: obj, Annotations: ro},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("started-slow", "")
			select {
			case <-ctx.Done():
				record("cancelled", "")
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return text("slow done"), nil
			}
		})
	s.AddTool(&mcp.Tool{Name: "progress", Description: "Report progress", InputSchema: obj, Annotations: ro},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := range *progressSteps {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1)})
				}
			}
			return text("progress done"), nil
		})
	s.AddTool(&mcp.Tool{Name: "add_tool", Description: "Add late_tool", InputSchema: obj, Annotations: ro},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "late_tool", Description: "Added late", InputSchema: obj, Annotations: ro},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("late"), nil })
			return text("added"), nil
		})
	s.AddTool(&mcp.Tool{Name: "remove_tool", Description: "Remove the tool named by text", InputSchema: obj, Annotations: ro},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.RemoveTools(args(req)["text"])
			return text("removed " + args(req)["text"]), nil
		})
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Ask the user", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Pick", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{
					"color": map[string]any{"type": "string", "enum": []any{"red", "blue"}},
					"count": map[string]any{"type": "integer", "minimum": 1, "maximum": 5}}}})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res)
			return text(string(b)), nil
		})
	s.AddTool(&mcp.Tool{Name: "app_panel", Description: "App only", InputSchema: obj,
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("app-called", "")
			return text("app"), nil
		})
	if *long {
		s.AddTool(&mcp.Tool{Name: strings.Repeat("x", 60) + "_long_tail", Description: "Long", InputSchema: obj, Annotations: ro},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("long"), nil })
	}
	if *extra != "" {
		s.AddTool(&mcp.Tool{Name: *extra, Description: "Extra", InputSchema: obj, Annotations: ro},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("extra"), nil })
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
	}
	if *ignoreEOF {
		record("eof", "")
		select {}
	}
}
