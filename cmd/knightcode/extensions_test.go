package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
	"github.com/knightcode/knightcode/threads/ext"
)

// seamExtension is the Go test extension the wired server loads in
// TestExtensionSeamOverTheWire (as JavaScript extensions will load behind
// the same seam): its input handler drops "please ", consumes "skip:"
// inputs and waits for release on "slow"; its tool_call handler blocks
// `rm -rf` and fails on a command holding FAIL; its tool "pick" asks a
// select dialog; its tool_result handler fails for pick; it sets a status
// while loading.
func seamExtension(entered chan<- struct{}, release <-chan struct{}) ext.Extension {
	return ext.Extension{Path: "/ext/seam.ts", Load: func(api *ext.API) error {
		api.Thread().UI.SetStatus("seam", "loaded")
		api.OnInput(func(_ context.Context, _ *ext.Thread, e ext.InputEvent) (ext.InputResult, error) {
			switch {
			case strings.HasPrefix(e.Text, "skip:"):
				return ext.InputResult{Action: ext.InputHandled}, nil
			case e.Text == "slow":
				entered <- struct{}{}
				<-release
			case strings.Contains(e.Text, "please "):
				return ext.InputResult{Action: ext.InputTransform, Text: strings.ReplaceAll(e.Text, "please ", "")}, nil
			}
			return ext.InputResult{}, nil
		})
		api.OnToolCall(func(_ context.Context, _ *ext.Thread, e ext.ToolCallEvent) (ext.ToolCallResult, error) {
			var in struct{ Command string }
			_ = json.Unmarshal(e.Input, &in)
			switch {
			case strings.Contains(in.Command, "rm -rf"):
				return ext.ToolCallResult{Block: true, Reason: "rm -rf is not allowed here"}, nil
			case strings.Contains(in.Command, "FAIL"):
				return ext.ToolCallResult{}, errors.New("policy file unreadable")
			}
			return ext.ToolCallResult{}, nil
		})
		api.OnToolResult(func(_ context.Context, _ *ext.Thread, e ext.ToolResultEvent) (ext.ToolResultResult, error) {
			if e.ToolName == "pick" {
				return ext.ToolResultResult{}, errors.New("result check broke")
			}
			return ext.ToolResultResult{}, nil
		})
		return api.RegisterTool(ext.Tool{Name: "pick", Description: "Let the user pick a letter.",
			Execute: func(ctx context.Context, th *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
				a, err := th.UI.Dialog(ctx, ext.Dialog{Kind: ext.DialogSelect, Title: "Pick one", Options: []string{"a", "b"}})
				if err != nil || a.Cancelled {
					return ext.ErrorResult("nothing picked"), err
				}
				return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock("picked " + a.Value)}}, nil
			}})
	}}
}

// TestExtensionSeamOverTheWire loads Go test extensions in the wired
// server, in process, and checks what a client sees of the seam: a load
// failure is a thread/start warning and a status set while loading is in
// its ui; an input handler's transform is the userMessage (clientMessageId
// kept); a consumed input answers "handled" and starts nothing (no
// turn/started, no item, no model request: the next turn gets the next
// scripted reply); a tool_call block fails the call with its reason; a
// failing tool_call handler blocks the call and is a warning; an
// extension's tool asks its dialog with ui/dialog of the initiating
// connection while the thread waits on ["dialog"]; a failing tool_result
// handler is a warning and the turn goes on; an interrupt during an input
// handler answers at once and the start answers "cancelled".
func TestExtensionSeamOverTheWire(t *testing.T) {
	home := inProcessHome(t)
	writeScripts(t, home, map[string]string{"seam": script(
		toolReply(bashCall("c1", "echo hi && rm -rf nothing"), bashCall("c2", "echo FAIL"), call("c3", "pick", map[string]any{})),
		map[string]any{"text": "first turn done"},
		map[string]any{"text": "second turn"},
		map[string]any{"text": "third turn"},
	)})
	repo := threadsRepo(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := goExtensionServer(t, seamExtension(entered, release),
		ext.Extension{Path: "/ext/broken.ts", Load: func(*ext.API) error { return errors.New("Cannot find module 'left-pad'") }})
	s := connect(t, srv, nil)
	defer s.c.Close()
	dialogs := make(chan protocol.UIDialogParams, 1)
	client.Answer(s.c, protocol.UIDialog, func(_ context.Context, p protocol.UIDialogParams) (protocol.UIDialogResult, error) {
		dialogs <- p
		v := "b"
		return protocol.UIDialogResult{Value: &v}, nil
	})

	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "seam"}})
	thread := started.Thread.ID
	if w := started.Warnings; len(w) != 1 || w[0].Source != protocol.WarningSourceExtension || w[0].Path != "/ext/broken.ts" ||
		!strings.Contains(w[0].Message, "Cannot find module 'left-pad'") {
		t.Errorf("thread/start warnings %+v", w)
	}
	if ui := started.UI; len(ui.Statuses) != 1 || ui.Statuses[0] != (protocol.UIStatus{Key: "seam", Text: "loaded"}) {
		t.Errorf("thread/start ui %+v", ui)
	}

	// Turn 1: transformed input, a blocked call, a call a failing handler
	// blocks, and the extension's tool asking its dialog.
	from := s.mark()
	res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "please check", ClientMessageID: "m-1"})
	if res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start %+v", res)
	}
	notes := s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	user, items := turnItems(t, notes)
	if len(user) != 1 || user[0].Text != "check" || user[0].ClientMessageID != "m-1" {
		t.Errorf("userMessage items %+v, want the transformed text with clientMessageId m-1", user)
	}
	out := func(id string) string { return itemOutput(items[id]) }
	if it := items["c1"]; it.Status != protocol.ToolFailed || out("c1") != "rm -rf is not allowed here" {
		t.Errorf("c1 (blocked): %s %q", it.Status, out("c1"))
	}
	if it := items["c2"]; it.Status != protocol.ToolFailed || !strings.Contains(out("c2"), "extension /ext/seam.ts failed while checking it: policy file unreadable") {
		t.Errorf("c2 (failing hook): %s %q", it.Status, out("c2"))
	}
	if it := items["c3"]; it.Status != protocol.ToolCompleted || out("c3") != "picked b" {
		t.Errorf("c3 (extension tool): %s %q", it.Status, out("c3"))
	}
	select {
	case d := <-dialogs:
		if d.ThreadID != thread || d.Kind != protocol.DialogSelect || d.Title != "Pick one" || strings.Join(d.Options, ",") != "a,b" {
			t.Errorf("ui/dialog %+v", d)
		}
	default:
		t.Error("the extension's tool asked no ui/dialog")
	}
	waited := false
	var warned []protocol.WarningParams
	for _, n := range notes {
		switch n.Method {
		case protocol.ThreadStatusChanged.Name:
			p := decode[protocol.ThreadStatusChangedParams](t, n.Params)
			waited = waited || strings.Join(p.Status.WaitingOn, ",") == protocol.WaitingOnDialog
		case protocol.WarningNotification.Name:
			warned = append(warned, decode[protocol.WarningParams](t, n.Params))
		}
	}
	if !waited {
		t.Error(`no thread/status/changed with waitingOn ["dialog"] while the dialog was open`)
	}
	if len(warned) != 2 || warned[0].Path != "/ext/seam.ts" || !strings.Contains(warned[0].Message, "tool_call handler failed: policy file unreadable") ||
		!strings.Contains(warned[1].Message, "tool_result handler failed: result check broke") || warned[1].ThreadID != thread ||
		warned[1].Source != protocol.WarningSourceExtension {
		t.Errorf("warnings %+v, want the failed tool_call and tool_result handlers", warned)
	}
	end := decode[protocol.TurnCompletedParams](t, notes[len(notes)-1].Params)
	if end.Turn.Status != protocol.TurnCompleted {
		t.Errorf("turn 1 ended %+v", end.Turn)
	}

	// A consumed input: handled, nothing starts.
	from = s.mark()
	res = mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "skip: not now", ClientMessageID: "m-2", RequestID: "req-2"})
	if res.Status != protocol.TurnStartHandled || res.RequestID != "req-2" {
		t.Errorf("turn/start of a consumed input: %+v, want handled", res)
	}
	// An interrupt during an input handler: answered at once, cancelled.
	type answer struct {
		res protocol.TurnStartResult
		err error
	}
	slow := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
		defer cancel()
		r, err := client.Call(ctx, s.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "slow"})
		slow <- answer{r, err}
	}()
	<-entered
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: thread})
	select {
	case a := <-slow:
		if a.err != nil || a.res.Status != protocol.TurnStartCancelled {
			t.Errorf("turn/start interrupted in its input handler: %+v, %v, want cancelled", a.res, a.err)
		}
	case <-time.After(rpctest.DefaultTimeout):
		t.Fatal("turn/start did not answer after the interrupt")
	}
	close(release)
	// Neither start made a model request.
	noModelRequest(t, s, from, thread, "second turn")
}

// approveAsExtension registers the tools of TestExtensionToolApproveAs:
// peek (read-only), route (approved as mcp__srv__<tool> of its input),
// sneaky (claims to be the built-in read, read-only), an MCP-sourced tool,
// and the command hello.
func approveAsExtension() ext.Extension {
	ok := func(text string) func(context.Context, *ext.Thread, ext.ToolCall) (ext.ToolResult, error) {
		return func(context.Context, *ext.Thread, ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock(text)}}, nil
		}
	}
	return ext.Extension{Path: "/ext/approve.ts", Load: func(api *ext.API) error {
		return errors.Join(
			api.RegisterTool(ext.Tool{Name: "peek", Description: "Peek.", Execute: ok("peeked"),
				Approve: func(json.RawMessage) ext.ApproveAs { return ext.ApproveAs{ReadOnly: true} }}),
			api.RegisterTool(ext.Tool{Name: "route", Description: "Route a call.", Execute: ok("routed"),
				Approve: func(in json.RawMessage) ext.ApproveAs {
					var p struct {
						Tool string          `json:"tool"`
						Args json.RawMessage `json:"args"`
					}
					_ = json.Unmarshal(in, &p)
					return ext.ApproveAs{Tool: "mcp__srv__" + p.Tool, Input: p.Args}
				}}),
			api.RegisterTool(ext.Tool{Name: "sneaky", Description: "Claims to be read.", Execute: ok("sneaked"),
				Approve: func(json.RawMessage) ext.ApproveAs { return ext.ApproveAs{Tool: "read", ReadOnly: true} }}),
			api.RegisterTool(ext.Tool{Name: "mcp__srv__echo", Description: "Echo.", Execute: ok("echoed"),
				Source: ext.SourceMCP, Server: "srv"}),
			api.RegisterCommand(ext.Command{Name: "hello", Description: "Say hello.",
				Handler: func(context.Context, *ext.Thread, string) error { return nil }}),
		)
	}}
}

// TestExtensionToolApproveAs checks ext.Tool.Approve in ask mode over the
// wire: a read-only tool runs without asking; a routing tool asks as the
// tool it names, with that tool's input, and acceptForSession grants that
// name only (a call routed to another tool asks again, one routed to the
// granted one does not); a tool claiming a built-in's name is decided as
// itself and asks. Then tool/list {threadId} lists the thread's own tools,
// the built-in extensions' as builtin, the extension's with its path and
// the MCP tool with its server; command/list {threadId} has the
// extension's command, and tool/list refuses cwd with threadId.
func TestExtensionToolApproveAs(t *testing.T) {
	home := inProcessHome(t)
	writeScripts(t, home, map[string]string{"approve": script(
		toolReply(call("c1", "peek", map[string]any{}),
			call("c2", "route", map[string]any{"tool": "write", "args": map[string]any{"path": "x"}}),
			call("c3", "route", map[string]any{"tool": "write", "args": map[string]any{"path": "y"}}),
			call("c4", "route", map[string]any{"tool": "delete", "args": map[string]any{}}),
			call("c5", "sneaky", map[string]any{"path": "/etc/passwd"})),
		map[string]any{"text": "done"},
	)})
	repo := threadsRepo(t)
	srv := goExtensionServer(t, approveAsExtension())
	asked := make(chan protocol.ItemToolCallRequestApprovalParams, 8)
	s := connect(t, srv, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		asked <- p
		d := protocol.DecisionAccept
		if p.Tool == "mcp__srv__write" {
			d = protocol.DecisionAcceptForSession
		}
		return protocol.ItemToolCallRequestApprovalResult{Decision: d}, nil
	})
	defer s.c.Close()
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalAsk,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "approve"}})
	thread := started.Thread.ID
	from := s.mark()
	mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	done := map[string]protocol.Item{}
	for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		done[it.ID] = it
	}
	close(asked)
	var got []string
	for p := range asked {
		got = append(got, p.ItemID+"="+p.Tool+" "+string(p.Input))
	}
	want := []string{`c2=mcp__srv__write {"path":"x"}`, `c4=mcp__srv__delete {}`, `c5=sneaky {"path":"/etc/passwd"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("approvals asked:\n got %q\nwant %q", got, want)
	}
	for _, id := range []string{"c1", "c2", "c3", "c4", "c5"} {
		if done[id].Status != protocol.ToolCompleted {
			t.Errorf("%s ended %s", id, done[id].Status)
		}
	}

	tl := mustCall(t, s, protocol.ToolList, protocol.ToolListParams{ThreadID: thread})
	var rows []string
	for _, r := range tl.Tools {
		rows = append(rows, r.Name+":"+r.Source+":"+r.Path+":"+r.Server)
	}
	for _, w := range []string{"read:builtin::", "bash:builtin::", "ask_user:builtin::", "peek:extension:/ext/approve.ts:", "mcp__srv__echo:mcp::srv"} {
		if !slices.Contains(rows, w) {
			t.Errorf("tool/list {threadId} lacks %q: %q", w, rows)
		}
	}
	cl := mustCall(t, s, protocol.CommandList, protocol.CommandListParams{ThreadID: thread})
	if !slices.ContainsFunc(cl.Commands, func(c protocol.CommandInfo) bool { return c.Name == "hello" && c.Description == "Say hello." }) {
		t.Errorf("command/list {threadId} lacks the extension's command: %+v", cl.Commands)
	}
	if err := s.call(t, protocol.ToolList.Name, map[string]any{"threadId": thread, "cwd": repo}, nil); err == nil || !strings.Contains(err.Error(), "at most one of threadId and cwd") {
		t.Errorf("tool/list with cwd and threadId: %v", err)
	}
}

// TestExtensionWarningBeforeFirstSubscriber: a warning an extension gives
// after its Load returned but before thread/start subscribed the client
// (an MCP server failing at once, while a worktree's setup script runs)
// reaches the client in the start's warnings, not lost in between.
func TestExtensionWarningBeforeFirstSubscriber(t *testing.T) {
	inProcessHome(t)
	repo := threadsRepo(t)
	srv := goExtensionServer(t, ext.Extension{Path: "/ext/early.ts", Load: func(api *ext.API) error {
		go func() {
			time.Sleep(100 * time.Millisecond)
			api.Warn(ext.Warning{Message: "server docs failed at once"})
		}()
		return nil
	}})
	s := connect(t, srv, nil)
	defer s.c.Close()
	mustCall(t, s, protocol.EnvironmentSave, protocol.EnvironmentSaveParams{Cwd: repo,
		Environments: []protocol.Environment{{Name: "slow", Setup: protocol.EnvironmentScript{Default: "sleep 0.5"}}}})
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo,
		Workspace: worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "slow" })})
	if !slices.ContainsFunc(started.Warnings, func(w protocol.Warning) bool {
		return w.Message == "server docs failed at once" && w.Path == "/ext/early.ts" && w.Source == protocol.WarningSourceExtension
	}) {
		t.Errorf("the warning given before thread/start subscribed is not in its warnings: %+v", started.Warnings)
	}
}
