package main

import (
	"context"
	"encoding/json"
	"errors"
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
	srv, err := newAppServer(options{GoExtensions: []ext.Extension{
		seamExtension(entered, release),
		{Path: "/ext/broken.ts", Load: func(*ext.API) error { return errors.New("Cannot find module 'left-pad'") }},
	}}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
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
