package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/threads/ext"
)

// regTool is a model tool the runtime registered: an MCP server's tool
// (direct exposure), or the search tool (server nil).
type regTool struct {
	server *server
	tool   *mcpsdk.Tool
}

// sync makes the thread's tools those of the servers connected now
// (EXTENSIBILITY.md §2, §9): each direct server's model tools, named by
// ToolName, in configuration order, and the search tool "mcp" while a
// search server is connected. A name two tools give is the first's in
// configuration order (never connect order): the later one is refused
// with a warning naming both, and withdrawn when the earlier server
// connects after it was offered. The thread takes its tools again before
// each model request (agent.Options.LiveTools), so what sync registers
// reaches the next request, in a running turn too.
func (rt *runtime) sync() {
	rt.syncMu.Lock()
	defer rt.syncMu.Unlock()
	type collision struct {
		name          string
		winner, loser regTool
	}
	want := map[string]regTool{}
	var order []string
	var collisions []collision
	search := false
	rt.mu.Lock()
	if rt.disposed {
		rt.mu.Unlock()
		return
	}
	for _, s := range rt.servers {
		if s.session == nil {
			continue
		}
		if s.cfg.Exposure == config.MCPExposureSearch {
			search = search || len(s.tools) > 0
			continue
		}
		for _, t := range s.tools {
			name := ToolName(s.cfg.Name, t.Name)
			if w, ok := want[name]; ok {
				collisions = append(collisions, collision{name, w, regTool{s, t}})
				continue
			}
			want[name] = regTool{s, t}
			order = append(order, name)
		}
	}
	if search {
		want[SearchToolName] = regTool{}
		order = append(order, SearchToolName)
	}
	var drop []string
	for name, r := range rt.registered {
		if w, ok := want[name]; !ok || w != *r {
			drop = append(drop, name)
		}
	}
	var add []string
	for _, name := range order {
		if r, ok := rt.registered[name]; !ok || *r != want[name] {
			add = append(add, name)
		}
	}
	var warnings []collision
	for _, c := range collisions {
		key := c.name + "\x00" + c.loser.server.cfg.Name + "\x00" + c.loser.tool.Name
		if !rt.refused[key] {
			rt.refused[key] = true
			warnings = append(warnings, c)
		}
	}
	rt.mu.Unlock()
	for _, name := range drop {
		rt.api.UnregisterTool(name)
		rt.mu.Lock()
		delete(rt.registered, name)
		rt.mu.Unlock()
	}
	for _, name := range add {
		w := want[name]
		var t ext.Tool
		if w.server == nil {
			t = rt.searchTool()
		} else {
			t = rt.directTool(name, w.server, w.tool)
		}
		if err := rt.api.RegisterTool(t); err != nil {
			if w.server != nil {
				rt.warn(w.server, fmt.Sprintf("tool %s was not given to the model: %v", w.tool.Name, err))
			} else {
				rt.opts.Log.Warn("the MCP search tool was not registered", "err", err)
			}
			continue
		}
		rt.mu.Lock()
		rt.registered[name] = &w
		rt.mu.Unlock()
	}
	for _, c := range warnings {
		rt.warn(c.loser.server, fmt.Sprintf("tool %s is not given to the model: its name %s is already the name of tool %s of MCP server %s, which comes first in the configuration",
			c.loser.tool.Name, c.name, c.winner.tool.Name, c.winner.server.cfg.Name))
	}
}

// directTool is the model tool name of tool t of s.
func (rt *runtime) directTool(name string, s *server, t *mcpsdk.Tool) ext.Tool {
	readOnly := readOnlyHint(t)
	return ext.Tool{
		Name:        name,
		Label:       t.Title,
		Description: describe(t),
		Parameters:  schemaOf(t),
		Source:      ext.SourceMCP,
		Server:      s.cfg.Name,
		Approve:     func(json.RawMessage) ext.ApproveAs { return ext.ApproveAs{ReadOnly: readOnly} },
		Execute: func(ctx context.Context, _ *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
			return rt.call(ctx, s, t.Name, call.Input), nil
		},
	}
}

// readOnlyHint is the tool's annotations.readOnlyHint.
func readOnlyHint(t *mcpsdk.Tool) bool { return t.Annotations != nil && t.Annotations.ReadOnlyHint }

// describe is what the model is told a tool does: its description, else
// its title, else its name.
func describe(t *mcpsdk.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	}
	return "MCP tool " + t.Name
}

// schemaOf is the tool's input schema as a JSON object ({"type":"object"}
// when it has none usable).
func schemaOf(t *mcpsdk.Tool) json.RawMessage {
	b, err := json.Marshal(t.InputSchema)
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

// errToolTimeout ends a call that outlived its toolTimeoutSec.
var errToolTimeout = errors.New("tool timeout")

// callSeq numbers the calls' progress tokens.
var callSeq atomic.Int64

// call runs the tool named tool of s with the arguments input (a JSON
// object) and returns its result as the model reads it. ctx ends with an
// interrupt: go-sdk then sends notifications/cancelled for the request.
// The call is bounded by toolTimeoutSec, restarted by each progress
// notification. A streamable HTTP server that lost the session (HTTP 404)
// is reinitialized once (here, or by the session's watcher, which sees
// the same loss) and the call sent again on the new session.
func (rt *runtime) call(ctx context.Context, s *server, tool string, input json.RawMessage) ext.ToolResult {
	res, used, err := rt.callOnce(ctx, s, tool, input)
	if err != nil && errors.Is(err, mcpsdk.ErrSessionMissing) && ctx.Err() == nil {
		rt.mu.Lock()
		// The watcher may have begun the reinitialization: it then
		// replaced the session (or will: used is still s.session).
		first := s.reinit == 0
		if first {
			s.reinit++
		}
		again := s.reinit == 1
		rt.mu.Unlock()
		if first {
			rt.opts.Log.Info("MCP server lost the session: reinitializing", "server", s.cfg.Name)
			rt.reconnect(s)
		}
		if again {
			if werr := rt.waitConnected(ctx, s, used); werr == nil {
				res, _, err = rt.callOnce(ctx, s, tool, input)
			}
		}
	}
	if err != nil {
		return ext.ErrorResult(fmt.Sprintf("MCP server %s, tool %s: %v", s.cfg.Name, tool, err))
	}
	return rt.withApp(s, tool, res, toResult(res))
}

// callOnce is one tools/call of tool on s's live session, which it
// returns too.
func (rt *runtime) callOnce(ctx context.Context, s *server, tool string, input json.RawMessage) (*mcpsdk.CallToolResult, *mcpsdk.ClientSession, error) {
	session, err := s.live()
	if err != nil {
		return nil, nil, err
	}
	args := map[string]any{}
	if len(input) > 0 {
		if err := json.Unmarshal(input, &args); err != nil {
			return nil, session, fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tok := "knightcode-" + strconv.FormatInt(callSeq.Add(1), 10)
	ct := &callTimer{timeout: s.cfg.ToolTimeout}
	ct.timer = time.AfterFunc(ct.timeout, func() { cancel(errToolTimeout) })
	defer ct.timer.Stop()
	rt.mu.Lock()
	s.calls[tok] = ct
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		delete(s.calls, tok)
		rt.mu.Unlock()
	}()
	params := &mcpsdk.CallToolParams{Name: tool, Arguments: args}
	params.SetProgressToken(tok)
	res, err := session.CallTool(cctx, params)
	if err != nil && errors.Is(context.Cause(cctx), errToolTimeout) {
		return nil, session, fmt.Errorf("no answer within %s (toolTimeoutSec): the call was cancelled", s.cfg.ToolTimeout)
	}
	return res, session, err
}

// waitConnected waits until s is connected on a session other than old
// (nil) or its attempt ended otherwise, bounded by its startup timeout and
// ctx.
func (rt *runtime) waitConnected(ctx context.Context, s *server, old *mcpsdk.ClientSession) error {
	deadline := time.Now().Add(s.cfg.StartupTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		rt.mu.Lock()
		st, cur := s.state, s.session
		rt.mu.Unlock()
		switch {
		case st == stateConnected && cur != old:
			return nil
		case st == stateConnecting || st == stateConnected:
			time.Sleep(20 * time.Millisecond)
		default:
			return errors.New(st)
		}
	}
	return errors.New("not connected")
}

// toResult is a tools/call result as the model reads it (EXTENSIBILITY.md
// §2 "Tool calls"): the text parts joined by newlines (resource links and
// embedded text resources as text, audio named), then the images as
// image blocks; structuredContent is kept in details
// ({"structuredContent": ...}) and, when there is no text, given as JSON
// text; isError makes it a failed result.
func toResult(res *mcpsdk.CallToolResult) ext.ToolResult {
	var texts []string
	var images []agent.ContentBlock
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcpsdk.TextContent:
			texts = append(texts, c.Text)
		case *mcpsdk.ImageContent:
			images = append(images, agent.ContentBlock{Type: agent.ContentImage, Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *mcpsdk.ResourceLink:
			texts = append(texts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcpsdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				texts = append(texts, c.Resource.Text)
			} else if c.Resource != nil {
				texts = append(texts, fmt.Sprintf("[resource %s (%s, %d bytes)]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		case *mcpsdk.AudioContent:
			texts = append(texts, fmt.Sprintf("[audio (%s, %d bytes)]", c.MIMEType, len(c.Data)))
		}
	}
	out := ext.ToolResult{IsError: res.IsError}
	if res.StructuredContent != nil {
		sc, err := json.Marshal(res.StructuredContent)
		if err == nil {
			out.Details, _ = json.Marshal(map[string]json.RawMessage{"structuredContent": sc})
			if len(texts) == 0 {
				texts = append(texts, string(sc))
			}
		}
	}
	if len(texts) > 0 || len(images) == 0 {
		out.Content = append(out.Content, agent.TextBlock(strings.Join(texts, "\n")))
	}
	out.Content = append(out.Content, images...)
	return out
}

// searchToolDescription is the search tool's description (about 200
// tokens with its schema, instead of one schema per tool).
const searchToolDescription = `Use the tools of MCP servers that are not listed as tools of their own. Actions:
- search: find tools by words of their name or description ("query"; "server" to look in one server only). Answers each tool's server, name and description.
- describe: the input schema of one tool ("server", "tool").
- call: call one tool ("server", "tool", "arguments": an object matching its schema). Answers the tool's result.
Search first, describe the tool you pick, then call it.`

// searchInput is the search tool's input.
type searchInput struct {
	Action    string          `json:"action"`
	Query     string          `json:"query,omitempty"`
	Server    string          `json:"server,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// searchTool is the one model tool of the search servers
// (EXTENSIBILITY.md §2 "exposure"): search and describe never ask;
// call is approved as the real tool (mcp__<server>__<tool>, with the
// call's arguments and that tool's readOnlyHint). Hidden, app-only and
// unknown tools are neither listed nor callable: the model reads
// "unknown tool" and the server is never asked.
func (rt *runtime) searchTool() ext.Tool {
	return ext.Tool{
		Name:        SearchToolName,
		Label:       "MCP tools",
		Description: searchToolDescription,
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"action":{"type":"string","enum":["search","describe","call"]},` +
			`"query":{"type":"string"},"server":{"type":"string"},"tool":{"type":"string"},` +
			`"arguments":{"type":"object"}},"required":["action"]}`),
		Source: ext.SourceMCP,
		Approve: func(input json.RawMessage) ext.ApproveAs {
			var in searchInput
			if json.Unmarshal(input, &in) != nil || in.Action != "call" {
				return ext.ApproveAs{ReadOnly: true}
			}
			s, t := rt.findSearchTool(in.Server, in.Tool)
			if t == nil {
				return ext.ApproveAs{ReadOnly: true} // answered "unknown tool", asking nothing
			}
			args := in.Arguments
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			return ext.ApproveAs{Tool: ToolName(s.cfg.Name, t.Name), Input: args, ReadOnly: readOnlyHint(t)}
		},
		Execute: func(ctx context.Context, _ *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
			var in searchInput
			if err := json.Unmarshal(call.Input, &in); err != nil {
				return ext.ErrorResult("the input is not an object of action, query, server, tool and arguments: " + err.Error()), nil
			}
			switch in.Action {
			case "search":
				return rt.search(in.Server, in.Query), nil
			case "describe", "call":
				s, t := rt.findSearchTool(in.Server, in.Tool)
				if t == nil {
					return ext.ErrorResult(fmt.Sprintf("unknown tool %q of MCP server %q: search lists the tools", in.Tool, in.Server)), nil
				}
				if in.Action == "describe" {
					b, _ := json.MarshalIndent(map[string]any{"server": s.cfg.Name, "tool": t.Name,
						"description": describe(t), "inputSchema": json.RawMessage(schemaOf(t)), "readOnly": readOnlyHint(t)}, "", "  ")
					return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock(string(b))}}, nil
				}
				return rt.call(ctx, s, t.Name, in.Arguments), nil
			}
			return ext.ErrorResult(fmt.Sprintf("unknown action %q: search, describe or call", in.Action)), nil
		},
	}
}

// searchServers are the connected search servers, with their model tools.
func (rt *runtime) searchServers() []*server {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []*server
	for _, s := range rt.servers {
		if s.session != nil && s.cfg.Exposure == config.MCPExposureSearch {
			out = append(out, s)
		}
	}
	return out
}

// findSearchTool is the model-visible tool named tool of the connected
// search server named server, or nils.
func (rt *runtime) findSearchTool(server, tool string) (*server, *mcpsdk.Tool) {
	for _, s := range rt.searchServers() {
		if s.cfg.Name != server {
			continue
		}
		tools := s.visibleTools()
		if i := slices.IndexFunc(tools, func(t *mcpsdk.Tool) bool { return t.Name == tool }); i >= 0 {
			return s, tools[i]
		}
	}
	return nil, nil
}

// maxSearchResults bounds what one search lists.
const maxSearchResults = 20

// search lists the search servers' tools (of server only, when given)
// whose name or description holds every word of query (case-insensitive;
// an empty query lists them all), up to maxSearchResults.
func (rt *runtime) search(server, query string) ext.ToolResult {
	words := strings.Fields(strings.ToLower(query))
	var lines []string
	more := 0
	for _, s := range rt.searchServers() {
		if server != "" && s.cfg.Name != server {
			continue
		}
		for _, t := range s.visibleTools() {
			hay := strings.ToLower(t.Name + " " + t.Title + " " + t.Description)
			if slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(hay, w) }) {
				continue
			}
			if len(lines) == maxSearchResults {
				more++
				continue
			}
			desc, _, _ := strings.Cut(describe(t), "\n")
			lines = append(lines, fmt.Sprintf("- server %s, tool %s: %s", s.cfg.Name, t.Name, desc))
		}
	}
	if len(lines) == 0 {
		return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock("No tool matches.")}}
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("(%d more: narrow the query)", more))
	}
	return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock(strings.Join(lines, "\n"))}}
}
