package ext_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// host is a test ext.Host recording what the extensions did to it.
type host struct {
	mu       sync.Mutex
	warnings []ext.Warning
	sent     []string // customType/delivery
	entries  []string // customType data
	aborted  int
	terminal bool
}

func (h *host) ThreadID() string { return "T" }
func (h *host) Cwd() string      { return "/w" }
func (h *host) HasUI() bool      { return !h.terminal }
func (h *host) UI() ext.UI       { return nil }
func (h *host) Warn(w ext.Warning) {
	h.mu.Lock()
	h.warnings = append(h.warnings, w)
	h.mu.Unlock()
}
func (h *host) SendMessage(m ext.Message, d ext.Delivery) error {
	h.mu.Lock()
	h.sent = append(h.sent, m.CustomType+"/"+string(d))
	h.mu.Unlock()
	return nil
}
func (h *host) AppendEntry(customType string, data json.RawMessage) error {
	h.mu.Lock()
	h.entries = append(h.entries, customType+" "+string(data))
	h.mu.Unlock()
	return nil
}
func (h *host) Abort()       { h.aborted++ }
func (h *host) IsIdle() bool { return true }

func (h *host) warned() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, w := range h.warnings {
		out = append(out, w.Path+": "+w.Message)
	}
	return out
}

// trace records the handlers called, in order.
type trace struct {
	mu    sync.Mutex
	calls []string
}

func (tr *trace) add(s string) {
	tr.mu.Lock()
	tr.calls = append(tr.calls, s)
	tr.mu.Unlock()
}

func (tr *trace) got() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.calls)
}

// load makes and loads a runner of exts on h.
func load(t *testing.T, h *host, exts ...ext.Extension) *ext.Runner {
	t.Helper()
	r := ext.New(ext.Config{Host: h, Extensions: exts, ReservedTools: []string{"bash"}})
	if w := r.Load(); len(w) > 0 {
		t.Fatalf("load warnings: %+v", w)
	}
	return r
}

// recording is an extension named name whose handlers of every event
// record "name.event#i" in tr, registered in an interleaved order: tool_call
// #1, input #1, tool_call #2, then the others, then input #2.
func recording(name string, tr *trace) ext.Extension {
	return ext.Extension{Path: name, Load: func(api *ext.API) error {
		api.OnToolCall(func(context.Context, *ext.Thread, ext.ToolCallEvent) (ext.ToolCallResult, error) {
			tr.add(name + ".tool_call#1")
			return ext.ToolCallResult{}, nil
		})
		api.OnInput(func(context.Context, *ext.Thread, ext.InputEvent) (ext.InputResult, error) {
			tr.add(name + ".input#1")
			return ext.InputResult{}, nil
		})
		api.OnToolCall(func(context.Context, *ext.Thread, ext.ToolCallEvent) (ext.ToolCallResult, error) {
			tr.add(name + ".tool_call#2")
			return ext.ToolCallResult{}, nil
		})
		api.OnBeforeAgentStart(func(context.Context, *ext.Thread, ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
			tr.add(name + ".before_agent_start#1")
			return ext.BeforeAgentStartResult{}, nil
		})
		api.OnToolResult(func(context.Context, *ext.Thread, ext.ToolResultEvent) (ext.ToolResultResult, error) {
			tr.add(name + ".tool_result#1")
			return ext.ToolResultResult{}, nil
		})
		api.OnTurnEnd(func(context.Context, *ext.Thread, ext.TurnEndEvent) error {
			tr.add(name + ".turn_end#1")
			return nil
		})
		api.OnInput(func(context.Context, *ext.Thread, ext.InputEvent) (ext.InputResult, error) {
			tr.add(name + ".input#2")
			return ext.InputResult{}, nil
		})
		api.OnDispose(func() { tr.add(name + ".dispose#1") })
		return nil
	}}
}

// TestDispatchOrder: every event reaches the extensions in load order and
// each extension's handlers in registration order; nothing fails.
func TestDispatchOrder(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	r := load(t, h, recording("A", &tr), recording("B", &tr))
	ctx := context.Background()
	r.Input(ctx, ext.InputEvent{Text: "hi"})
	r.BeforeAgentStart(ctx, ext.BeforeAgentStartEvent{})
	r.ToolCall(ctx, ext.ToolCallEvent{ToolName: "read", Input: json.RawMessage(`{}`)})
	r.ToolResult(ctx, ext.ToolResultEvent{ToolName: "read"})
	r.TurnEnd(ctx, ext.TurnEndEvent{})
	r.Dispose()
	want := []string{
		"A.input#1", "A.input#2", "B.input#1", "B.input#2",
		"A.before_agent_start#1", "B.before_agent_start#1",
		"A.tool_call#1", "A.tool_call#2", "B.tool_call#1", "B.tool_call#2",
		"A.tool_result#1", "B.tool_result#1",
		"A.turn_end#1", "B.turn_end#1",
		"A.dispose#1", "B.dispose#1",
	}
	if diff := cmp.Diff(tr.got(), want); diff != "" {
		t.Errorf("dispatch (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) > 0 {
		t.Errorf("warnings %q", w)
	}
	for _, ev := range []string{ext.EventInput, ext.EventBeforeAgentStart, ext.EventToolCall, ext.EventToolResult, ext.EventTurnEnd} {
		if r.Handles(ev) {
			t.Errorf("a disposed runner still handles %s", ev)
		}
	}
}

// inputExt is an extension whose one input handler answers with f.
func inputExt(name string, tr *trace, f func(e ext.InputEvent) (ext.InputResult, error)) ext.Extension {
	return ext.Extension{Path: name, Load: func(api *ext.API) error {
		api.OnInput(func(_ context.Context, _ *ext.Thread, e ext.InputEvent) (ext.InputResult, error) {
			tr.add(fmt.Sprintf("%s saw %q (%d images)", name, e.Text, len(e.Images)))
			return f(e)
		})
		return nil
	}}
}

// TestInputMerging: transforms chain (a handler sees the text the previous
// one left; images are kept unless a transform gives some), a failing
// handler is a warning and the dispatch goes on, and the first "handled"
// consumes the input: later handlers are not asked.
func TestInputMerging(t *testing.T) {
	t.Parallel()
	img := []agent.ContentBlock{{Type: agent.ContentImage, Data: "AA==", MimeType: "image/png"}}
	upper := func(e ext.InputEvent) (ext.InputResult, error) {
		return ext.InputResult{Action: ext.InputTransform, Text: strings.ToUpper(e.Text)}, nil
	}
	exclaim := func(e ext.InputEvent) (ext.InputResult, error) {
		return ext.InputResult{Action: ext.InputTransform, Text: e.Text + "!"}, nil
	}
	failing := func(ext.InputEvent) (ext.InputResult, error) { return ext.InputResult{}, errors.New("boom") }
	handled := func(ext.InputEvent) (ext.InputResult, error) { return ext.InputResult{Action: ext.InputHandled}, nil }
	cont := func(ext.InputEvent) (ext.InputResult, error) { return ext.InputResult{Action: ext.InputContinue}, nil }

	t.Run("transforms chain", func(t *testing.T) {
		h := &host{}
		var tr trace
		r := load(t, h, inputExt("A", &tr, upper), inputExt("B", &tr, failing), inputExt("C", &tr, exclaim), inputExt("D", &tr, cont))
		got := r.Input(context.Background(), ext.InputEvent{Text: "hi", Images: img})
		want := ext.InputResult{Action: ext.InputTransform, Text: "HI!", Images: img}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("result (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(tr.got(), []string{`A saw "hi" (1 images)`, `B saw "HI" (1 images)`, `C saw "HI" (1 images)`, `D saw "HI!" (1 images)`}); diff != "" {
			t.Errorf("handlers (-got +want):\n%s", diff)
		}
		if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "B: extension B: its input handler failed: boom") {
			t.Errorf("warnings %q, want B's failure", w)
		}
	})
	t.Run("handled stops", func(t *testing.T) {
		h := &host{}
		var tr trace
		r := load(t, h, inputExt("A", &tr, upper), inputExt("B", &tr, handled), inputExt("C", &tr, exclaim))
		if got := r.Input(context.Background(), ext.InputEvent{Text: "hi"}); got.Action != ext.InputHandled {
			t.Errorf("result %+v, want handled", got)
		}
		if diff := cmp.Diff(tr.got(), []string{`A saw "hi" (0 images)`, `B saw "HI" (0 images)`}); diff != "" {
			t.Errorf("handlers (-got +want):\n%s", diff)
		}
	})
	t.Run("nothing changed", func(t *testing.T) {
		h := &host{}
		var tr trace
		r := load(t, h, inputExt("A", &tr, cont), inputExt("B", &tr, failing))
		if got := r.Input(context.Background(), ext.InputEvent{Text: "hi"}); got.Action != ext.InputContinue {
			t.Errorf("result %+v, want continue", got)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		h := &host{}
		var tr trace
		ctx, cancel := context.WithCancel(context.Background())
		cancelling := func(ext.InputEvent) (ext.InputResult, error) { cancel(); return ext.InputResult{}, nil }
		r := load(t, h, inputExt("A", &tr, cancelling), inputExt("B", &tr, handled))
		r.Input(ctx, ext.InputEvent{Text: "hi"})
		if diff := cmp.Diff(tr.got(), []string{`A saw "hi" (0 images)`}); diff != "" {
			t.Errorf("handlers after the interrupt (-got +want):\n%s", diff)
		}
	})
}

// toolCallExt is an extension whose one tool_call handler answers with f.
func toolCallExt(name string, tr *trace, f func(e ext.ToolCallEvent) (ext.ToolCallResult, error)) ext.Extension {
	return ext.Extension{Path: name, Load: func(api *ext.API) error {
		api.OnToolCall(func(_ context.Context, _ *ext.Thread, e ext.ToolCallEvent) (ext.ToolCallResult, error) {
			tr.add(name + " saw " + string(e.Input))
			return f(e)
		})
		return nil
	}}
}

// TestToolCallMerging: a handler that changes the input hands the change
// to the next one, and the answer carries the final input; a block ends
// the dispatch with its reason (a default naming the extension when it
// gives none); a failing handler (an error, a panic, an input that is not
// a JSON object) blocks the call (fail closed) with a reason naming the
// extension and the failure, and is a warning.
func TestToolCallMerging(t *testing.T) {
	t.Parallel()
	setForce := func(e ext.ToolCallEvent) (ext.ToolCallResult, error) {
		var in map[string]any
		_ = json.Unmarshal(e.Input, &in)
		in["force"] = false
		b, _ := json.Marshal(in)
		return ext.ToolCallResult{Input: b}, nil
	}
	pass := func(ext.ToolCallEvent) (ext.ToolCallResult, error) { return ext.ToolCallResult{}, nil }
	block := func(ext.ToolCallEvent) (ext.ToolCallResult, error) {
		return ext.ToolCallResult{Block: true, Reason: "rm -rf is not allowed"}, nil
	}
	for _, tc := range []struct {
		name     string
		handlers []func(ext.ToolCallEvent) (ext.ToolCallResult, error)
		want     ext.ToolCallResult
		saw      []string
		warned   string
	}{
		{
			name:     "change then see",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){setForce, pass},
			want:     ext.ToolCallResult{Input: json.RawMessage(`{"force":false,"path":"x"}`)},
			saw:      []string{`A saw {"path":"x"}`, `B saw {"force":false,"path":"x"}`},
		},
		{
			name:     "nothing changed",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){pass, pass},
			want:     ext.ToolCallResult{},
			saw:      []string{`A saw {"path":"x"}`, `B saw {"path":"x"}`},
		},
		{
			name:     "a block stops",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){setForce, block, pass},
			want:     ext.ToolCallResult{Block: true, Reason: "rm -rf is not allowed"},
			saw:      []string{`A saw {"path":"x"}`, `B saw {"force":false,"path":"x"}`},
		},
		{
			name: "a block without a reason",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){
				func(ext.ToolCallEvent) (ext.ToolCallResult, error) { return ext.ToolCallResult{Block: true}, nil },
			},
			want: ext.ToolCallResult{Block: true, Reason: "The call was blocked by extension A."},
			saw:  []string{`A saw {"path":"x"}`},
		},
		{
			name: "a failure blocks",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){pass,
				func(ext.ToolCallEvent) (ext.ToolCallResult, error) {
					return ext.ToolCallResult{}, errors.New("policy unreadable")
				},
				pass},
			want:   ext.ToolCallResult{Block: true, Reason: "The call was blocked: extension B failed while checking it: policy unreadable"},
			saw:    []string{`A saw {"path":"x"}`, `B saw {"path":"x"}`},
			warned: "B: extension B: its tool_call handler failed: policy unreadable",
		},
		{
			name: "a panic blocks",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){
				func(ext.ToolCallEvent) (ext.ToolCallResult, error) { panic("nil map") },
				pass},
			want:   ext.ToolCallResult{Block: true, Reason: "The call was blocked: extension A failed while checking it: panic: nil map"},
			saw:    []string{`A saw {"path":"x"}`},
			warned: "A: extension A: its tool_call handler failed: panic: nil map",
		},
		{
			name: "an input that is not an object blocks",
			handlers: []func(ext.ToolCallEvent) (ext.ToolCallResult, error){
				func(ext.ToolCallEvent) (ext.ToolCallResult, error) {
					return ext.ToolCallResult{Input: json.RawMessage(`[1]`)}, nil
				},
				pass},
			want:   ext.ToolCallResult{Block: true, Reason: "The call was blocked: extension A failed while checking it: the input it gave is not a JSON object: [1]"},
			saw:    []string{`A saw {"path":"x"}`},
			warned: "A: extension A: its tool_call handler failed: the input it gave is not a JSON object: [1]",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &host{}
			var tr trace
			var exts []ext.Extension
			for i, f := range tc.handlers {
				exts = append(exts, toolCallExt(string(rune('A'+i)), &tr, f))
			}
			r := load(t, h, exts...)
			got := r.ToolCall(context.Background(), ext.ToolCallEvent{ToolCallID: "c", ToolName: "write", Input: json.RawMessage(`{"path":"x"}`)})
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("result (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(tr.got(), tc.saw); diff != "" {
				t.Errorf("handlers (-got +want):\n%s", diff)
			}
			var want []string
			if tc.warned != "" {
				want = []string{tc.warned}
			}
			if diff := cmp.Diff(h.warned(), want); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
		})
	}
}

// TestToolResultMerging: each handler sees the result as the previous one
// left it; content, details and isError are replaced field by field; a
// failing handler is a warning and the others still run.
func TestToolResultMerging(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	yes := true
	exts := []ext.Extension{
		{Path: "A", Load: func(api *ext.API) error {
			api.OnToolResult(func(_ context.Context, _ *ext.Thread, e ext.ToolResultEvent) (ext.ToolResultResult, error) {
				tr.add("A saw " + e.Content[0].Text)
				return ext.ToolResultResult{Content: []agent.ContentBlock{agent.TextBlock("redacted")}}, nil
			})
			return nil
		}},
		{Path: "B", Load: func(api *ext.API) error {
			api.OnToolResult(func(context.Context, *ext.Thread, ext.ToolResultEvent) (ext.ToolResultResult, error) {
				return ext.ToolResultResult{}, errors.New("boom")
			})
			return nil
		}},
		{Path: "C", Load: func(api *ext.API) error {
			api.OnToolResult(func(_ context.Context, _ *ext.Thread, e ext.ToolResultEvent) (ext.ToolResultResult, error) {
				tr.add("C saw " + e.Content[0].Text)
				return ext.ToolResultResult{Details: json.RawMessage(`{"k":1}`), IsError: &yes}, nil
			})
			return nil
		}},
	}
	r := load(t, h, exts...)
	got, changed := r.ToolResult(context.Background(), ext.ToolResultEvent{ToolCallID: "c", ToolName: "read",
		Content: []agent.ContentBlock{agent.TextBlock("secret")}})
	want := ext.ToolResultEvent{ToolCallID: "c", ToolName: "read", Content: []agent.ContentBlock{agent.TextBlock("redacted")},
		Details: json.RawMessage(`{"k":1}`), IsError: true}
	if diff := cmp.Diff(got, want); diff != "" || !changed {
		t.Errorf("result (changed %v) (-got +want):\n%s", changed, diff)
	}
	if diff := cmp.Diff(tr.got(), []string{"A saw secret", "C saw redacted"}); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "its tool_result handler failed: boom") {
		t.Errorf("warnings %q", w)
	}
}

// TestBeforeAgentStart: the system prompt chains through the handlers,
// every message a handler returns is added in order, a failing handler is
// a warning and the others still count.
func TestBeforeAgentStart(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	prompt := func(s string) *string { return &s }
	exts := []ext.Extension{
		{Path: "A", Load: func(api *ext.API) error {
			api.OnBeforeAgentStart(func(_ context.Context, _ *ext.Thread, e ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
				tr.add("A saw " + e.SystemPrompt + " for " + e.Prompt)
				return ext.BeforeAgentStartResult{SystemPrompt: prompt(e.SystemPrompt + " +A"),
					Message: &ext.Message{CustomType: "a", Content: []agent.ContentBlock{agent.TextBlock("from A")}}}, nil
			})
			api.OnBeforeAgentStart(func(context.Context, *ext.Thread, ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
				return ext.BeforeAgentStartResult{}, errors.New("boom")
			})
			return nil
		}},
		{Path: "B", Load: func(api *ext.API) error {
			api.OnBeforeAgentStart(func(_ context.Context, _ *ext.Thread, e ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
				tr.add("B saw " + e.SystemPrompt)
				return ext.BeforeAgentStartResult{Message: &ext.Message{CustomType: "b", Display: true}}, nil
			})
			return nil
		}},
	}
	r := load(t, h, exts...)
	got := r.BeforeAgentStart(context.Background(), ext.BeforeAgentStartEvent{Prompt: "go", SystemPrompt: "base"})
	want := ext.AgentStart{SystemPrompt: "base +A", Messages: []ext.Message{
		{CustomType: "a", Content: []agent.ContentBlock{agent.TextBlock("from A")}}, {CustomType: "b", Display: true}}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("result (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(tr.got(), []string{"A saw base for go", "B saw base +A"}); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "its before_agent_start handler failed: boom") {
		t.Errorf("warnings %q", w)
	}
}

// testTool is a tool named name answering text.
func testTool(name, text string) ext.Tool {
	return ext.Tool{Name: name, Description: "d", Execute: func(_ context.Context, th *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
		return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock(text + " " + call.ID + " in " + th.Cwd)}}, nil
	}}
}

// TestRegistrations: tools, commands and providers are listed in load and
// registration order; a name the thread's own tools or another extension
// use is refused (the first keeps it); the same extension registering a
// name again replaces it; a Load that fails (an error or a panic) is a
// warning and keeps nothing it registered.
func TestRegistrations(t *testing.T) {
	t.Parallel()
	h := &host{}
	var errs []string
	note := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	streamer := agent.Streamer(nil)
	exts := []ext.Extension{
		{Path: "A", Load: func(api *ext.API) error {
			note(api.RegisterTool(testTool("t1", "old")))
			note(api.RegisterTool(testTool("t2", "a")))
			note(api.RegisterTool(testTool("t1", "new")))
			note(api.RegisterTool(testTool("bash", "mine")))
			note(api.RegisterTool(ext.Tool{Name: "bad", Parameters: json.RawMessage(`[]`), Execute: testTool("x", "").Execute}))
			note(api.RegisterCommand(ext.Command{Name: "hello", Handler: func(context.Context, *ext.Thread, string) error { return nil }}))
			note(api.RegisterCommand(ext.Command{Name: "/bad"}))
			return nil
		}},
		{Path: "B", Load: func(api *ext.API) error {
			note(api.RegisterTool(testTool("t2", "b")))
			note(api.RegisterTool(testTool("t3", "b")))
			note(api.RegisterCommand(ext.Command{Name: "hello", Handler: func(context.Context, *ext.Thread, string) error { return nil }}))
			note(api.RegisterProvider(ext.Provider{Name: "p", Streamer: streamer}))
			return nil
		}},
		{Path: "C", Load: func(api *ext.API) error {
			note(api.RegisterTool(testTool("t4", "c")))
			return errors.New("missing module")
		}},
		{Path: "D", Load: func(api *ext.API) error {
			note(api.RegisterTool(testTool("t5", "d")))
			panic("top-level throw")
		}},
	}
	r := ext.New(ext.Config{Host: h, Extensions: exts, ReservedTools: []string{"bash"}})
	warnings := r.Load()
	wantWarnings := []ext.Warning{
		{Path: "C", Message: "extension C failed to load: missing module"},
		{Path: "D", Message: "extension D failed to load: panic: top-level throw"},
	}
	if diff := cmp.Diff(warnings, wantWarnings); diff != "" {
		t.Errorf("load warnings (-got +want):\n%s", diff)
	}
	wantErrs := []string{
		`ext: tool "bash" is one of the thread's own tools`,
		`ext: the parameters of tool "bad" are not a JSON Schema object: []`,
		`ext: "/bad" is not a command name (a word, without the leading /)`,
		`ext: tool "t2" is already registered by A`,
		`ext: command "hello" is already registered by A`,
		`ext: provider "p" has neither a configuration nor a Streamer`,
	}
	if diff := cmp.Diff(errs, wantErrs); diff != "" {
		t.Errorf("registration errors (-got +want):\n%s", diff)
	}
	var names []string
	for _, tl := range r.Tools() {
		res := r.Execute(context.Background(), tl, ext.ToolCall{ID: "c1", Name: tl.Name})
		names = append(names, tl.Name+"="+res.Content[0].Text)
	}
	if diff := cmp.Diff(names, []string{"t1=new c1 in /w", "t2=a c1 in /w", "t3=b c1 in /w"}); diff != "" {
		t.Errorf("tools (-got +want):\n%s", diff)
	}
	if cmds := r.Commands(); len(cmds) != 1 || cmds[0].Name != "hello" {
		t.Errorf("commands %+v", cmds)
	}
	if p := r.Providers(); len(p) != 0 {
		t.Errorf("providers %+v", p)
	}
}

// TestProviders: a provider's models carry its name.
func TestProviders(t *testing.T) {
	t.Parallel()
	var s agent.Streamer = stubStreamer{}
	r := load(t, &host{}, ext.Extension{Path: "A", Load: func(api *ext.API) error {
		return api.RegisterProvider(ext.Provider{Name: "mine", Models: []agent.Model{{ID: "m1", Provider: "other"}}, Streamer: s})
	}})
	p := r.Providers()
	if len(p) != 1 || p[0].Name != "mine" || len(p[0].Models) != 1 || p[0].Models[0].Provider != "mine" || p[0].Streamer != s {
		t.Errorf("providers %+v", p)
	}
}

type stubStreamer struct{ agent.Streamer }

// TestCommandsAndTools: "/name args" runs the command with args (a
// failing command is a warning and still handled the input); text naming
// no command runs nothing; a tool whose Execute fails or panics gives an
// error result.
func TestCommandsAndTools(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	r := load(t, h, ext.Extension{Path: "A", Load: func(api *ext.API) error {
		if err := api.RegisterCommand(ext.Command{Name: "greet", Handler: func(_ context.Context, th *ext.Thread, args string) error {
			tr.add("greet " + args + " in " + th.ID)
			if args == "fail" {
				return errors.New("no greeting")
			}
			return nil
		}}); err != nil {
			return err
		}
		if err := api.RegisterTool(ext.Tool{Name: "oops", Execute: func(context.Context, *ext.Thread, ext.ToolCall) (ext.ToolResult, error) {
			return ext.ToolResult{}, errors.New("disk full")
		}}); err != nil {
			return err
		}
		return api.RegisterTool(ext.Tool{Name: "crash", Execute: func(context.Context, *ext.Thread, ext.ToolCall) (ext.ToolResult, error) {
			panic("bug")
		}})
	}})
	ctx := context.Background()
	for _, text := range []string{"/greet you all", "/greet fail", "/greet", "/other x", "greet x", "/greeting"} {
		tr.add(fmt.Sprintf("%q handled=%v", text, r.RunCommand(ctx, text)))
	}
	want := []string{
		"greet you all in T", `"/greet you all" handled=true`,
		"greet fail in T", `"/greet fail" handled=true`,
		"greet  in T", `"/greet" handled=true`,
		`"/other x" handled=false`, `"greet x" handled=false`, `"/greeting" handled=false`,
	}
	if diff := cmp.Diff(tr.got(), want); diff != "" {
		t.Errorf("commands (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "command /greet failed: no greeting") {
		t.Errorf("warnings %q", w)
	}
	tools := r.Tools()
	for i, want := range []string{"oops: disk full", "crash: panic: bug"} {
		res := r.Execute(ctx, tools[i], ext.ToolCall{ID: "c"})
		if !res.IsError || res.Content[0].Text != want {
			t.Errorf("%s: %+v, want an error result %q", tools[i].Name, res, want)
		}
	}
	if got := tools[0].Definition(); got.Name != "oops" || string(got.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("definition %+v", got)
	}
}

// TestActionsAndDispose: an extension's messages and entries reach the
// host (checked first); the thread handle carries the mode; after Dispose
// the dispose functions ran once and every API call answers ErrDisposed.
func TestActionsAndDispose(t *testing.T) {
	t.Parallel()
	h := &host{terminal: true}
	var api *ext.API
	r := load(t, h, ext.Extension{Path: "A", Load: func(a *ext.API) error { api = a; return nil }})
	if err := api.SendMessage(ext.Message{CustomType: "note"}, ext.DeliverSteer); err != nil {
		t.Fatal(err)
	}
	if err := api.SendMessage(ext.Message{CustomType: "note"}, ext.DeliverNextTurn); err != nil {
		t.Fatal(err)
	}
	if err := api.AppendEntry("state", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		api.SendMessage(ext.Message{}, ext.DeliverSteer),
		api.SendMessage(ext.Message{CustomType: "x"}, "followUp"),
		api.AppendEntry("", nil),
		api.AppendEntry("x", json.RawMessage(`{`)),
	} {
		if err == nil {
			t.Error("a bad action was accepted")
		}
	}
	if th := api.Thread(); th.ID != "T" || th.Cwd != "/w" || th.HasUI || th.Mode != ext.ModeTerminal {
		t.Errorf("thread %+v", th)
	}
	api.Thread().Abort()
	if diff := cmp.Diff(h.sent, []string{"note/steer", "note/nextTurn"}); diff != "" {
		t.Errorf("sent (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(h.entries, []string{`state {"n":1}`}); diff != "" {
		t.Errorf("entries (-got +want):\n%s", diff)
	}
	if h.aborted != 1 {
		t.Errorf("aborted %d times", h.aborted)
	}
	calls := 0
	api.OnDispose(func() { calls++ })
	api.OnDispose(func() { panic("late") })
	r.Dispose()
	r.Dispose()
	if calls != 1 {
		t.Errorf("dispose ran %d times", calls)
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "its dispose handler failed: panic: late") {
		t.Errorf("warnings %q", w)
	}
	for name, err := range map[string]error{
		"SendMessage":  api.SendMessage(ext.Message{CustomType: "x"}, ext.DeliverSteer),
		"AppendEntry":  api.AppendEntry("x", nil),
		"RegisterTool": api.RegisterTool(testTool("late", "")),
	} {
		if !errors.Is(err, ext.ErrDisposed) {
			t.Errorf("%s after Dispose: %v, want ErrDisposed", name, err)
		}
	}
	if len(r.Tools()) != 0 {
		t.Error("a disposed runner lists tools")
	}
}

// TestJSONShapes: the values crossing the seam marshal to pi's JSON.
func TestJSONShapes(t *testing.T) {
	t.Parallel()
	yes := true
	for _, tc := range []struct {
		v    any
		want string
	}{
		{ext.InputEvent{Text: "hi", Source: ext.SourceInteractive}, `{"text":"hi","source":"interactive"}`},
		{ext.InputResult{Action: ext.InputTransform, Text: "x"}, `{"action":"transform","text":"x"}`},
		{ext.ToolCallEvent{ToolCallID: "c", ToolName: "bash", Input: json.RawMessage(`{"command":"ls"}`)}, `{"toolCallId":"c","toolName":"bash","input":{"command":"ls"}}`},
		{ext.ToolCallResult{Block: true, Reason: "no"}, `{"block":true,"reason":"no"}`},
		{ext.ToolResultResult{IsError: &yes}, `{"isError":true}`},
		{ext.Message{CustomType: "n", Content: []agent.ContentBlock{agent.TextBlock("t")}, Display: true}, `{"customType":"n","content":[{"type":"text","text":"t"}],"display":true}`},
		{ext.BeforeAgentStartEvent{Prompt: "p", SystemPrompt: "s"}, `{"prompt":"p","systemPrompt":"s"}`},
		{ext.Tool{Name: "t", Description: "d", Parameters: json.RawMessage(`{}`)}, `{"name":"t","description":"d","parameters":{}}`},
		{ext.TurnStartEvent{TurnIndex: 1, Timestamp: 7}, `{"turnIndex":1,"timestamp":7}`},
		{ext.TurnEndEvent{TurnIndex: 1, Message: agent.Message{Role: agent.RoleAssistant}}, `{"turnIndex":1,"message":{"role":"assistant","content":[],"provider":"","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}},"stopReason":"","timestamp":0},"toolResults":null}`},
		{ext.AgentEndEvent{Messages: []agent.Message{agent.UserText("hi", 3)}}, `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":3}]}`},
		{ext.MessageUpdateEvent{Message: agent.UserText("", 0), AssistantMessageEvent: ext.AssistantMessageEvent{Type: ext.UpdateTextDelta, ContentIndex: 2, Delta: "x"}},
			`{"message":{"role":"user","content":[{"type":"text","text":""}],"timestamp":0},"assistantMessageEvent":{"type":"text_delta","contentIndex":2,"delta":"x"}}`},
		{ext.ContextResult{}, `{}`},
		{ext.MessageEndResult{Message: &agent.Message{Role: agent.RoleUser}}, `{"message":{"role":"user","content":[],"timestamp":0}}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%T: %s (%v), want %s", tc.v, b, err, tc.want)
		}
	}
}

// TestWarnDuringAndAfterLoad: API.Warn while Load runs is a load warning
// (Load returns it, the extension stays loaded); afterwards it reaches the
// host's subscribers; after Dispose it is dropped.
func TestWarnDuringAndAfterLoad(t *testing.T) {
	t.Parallel()
	h := &host{}
	var api *ext.API
	r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{{Path: "/x/mcp.json", Load: func(a *ext.API) error {
		api = a
		a.Warn(ext.Warning{Message: "docs: failed"})
		a.Warn(ext.Warning{Path: "/p/mcp.json", Message: "local: failed"})
		return a.RegisterCommand(ext.Command{Name: "mcp", Handler: func(context.Context, *ext.Thread, string) error { return nil }})
	}}}})
	ws := r.Load()
	want := []ext.Warning{{Path: "/x/mcp.json", Message: "docs: failed"}, {Path: "/p/mcp.json", Message: "local: failed"}}
	if !slices.Equal(ws, want) || len(h.warned()) != 0 || len(r.Commands()) != 1 {
		t.Fatalf("load warnings %+v, host warnings %v, commands %v", ws, h.warned(), r.Commands())
	}
	api.Warn(ext.Warning{Message: "docs: exited"})
	if got := h.warned(); !slices.Equal(got, []string{"/x/mcp.json: docs: exited"}) {
		t.Errorf("host warnings %v", got)
	}
	r.Dispose()
	api.Warn(ext.Warning{Message: "late"})
	if len(h.warned()) != 1 {
		t.Errorf("a warning after dispose reached the host: %v", h.warned())
	}
}

// TestMessageEndMerging: each message_end handler sees the message as the
// previous one left it; a replacement of another role is a warning and
// ignored, as a failing handler is; no replacement answers unchanged.
func TestMessageEndMerging(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	reply := func(text string) agent.Message {
		return agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock(text)}, Timestamp: 5}
	}
	exts := []ext.Extension{
		{Path: "A", Load: func(api *ext.API) error {
			api.OnMessageEnd(func(_ context.Context, _ *ext.Thread, e ext.MessageEndEvent) (ext.MessageEndResult, error) {
				tr.add("A saw " + e.Message.Text())
				m := reply("[redacted]")
				return ext.MessageEndResult{Message: &m}, nil
			})
			return nil
		}},
		{Path: "B", Load: func(api *ext.API) error {
			api.OnMessageEnd(func(_ context.Context, _ *ext.Thread, e ext.MessageEndEvent) (ext.MessageEndResult, error) {
				tr.add("B saw " + e.Message.Text())
				return ext.MessageEndResult{Message: &agent.Message{Role: agent.RoleUser}}, nil
			})
			api.OnMessageEnd(func(context.Context, *ext.Thread, ext.MessageEndEvent) (ext.MessageEndResult, error) {
				return ext.MessageEndResult{}, errors.New("boom")
			})
			return nil
		}},
		{Path: "C", Load: func(api *ext.API) error {
			api.OnMessageEnd(func(_ context.Context, _ *ext.Thread, e ext.MessageEndEvent) (ext.MessageEndResult, error) {
				tr.add("C saw " + e.Message.Text())
				return ext.MessageEndResult{}, nil
			})
			return nil
		}},
	}
	r := load(t, h, exts...)
	got, changed := r.MessageEnd(context.Background(), ext.MessageEndEvent{Message: reply("the secret")})
	if diff := cmp.Diff(got, reply("[redacted]")); diff != "" || !changed {
		t.Errorf("message (changed %v) (-got +want):\n%s", changed, diff)
	}
	if diff := cmp.Diff(tr.got(), []string{"A saw the secret", "B saw [redacted]", "C saw [redacted]"}); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	w := h.warned()
	if len(w) != 2 || !strings.Contains(w[0], "B: extension B: its message_end handler failed: message_end handlers must return a message with the same role") ||
		!strings.Contains(w[1], "its message_end handler failed: boom") {
		t.Errorf("warnings %q", w)
	}

	// Only C: nothing replaced.
	r2 := load(t, &host{}, exts[2])
	if got, changed := r2.MessageEnd(context.Background(), ext.MessageEndEvent{Message: reply("plain")}); changed || got.Text() != "plain" {
		t.Errorf("no replacement: %q changed %v", got.Text(), changed)
	}
}

// TestContextMerging: each context handler sees the messages as the
// previous one left them; an answer without messages keeps them, an
// empty list replaces them; a failing handler is a warning.
func TestContextMerging(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	texts := func(ms []agent.Message) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.Text())
		}
		return strings.Join(s, ",")
	}
	exts := []ext.Extension{
		{Path: "A", Load: func(api *ext.API) error {
			api.OnContext(func(_ context.Context, _ *ext.Thread, e ext.ContextEvent) (ext.ContextResult, error) {
				tr.add("A saw " + texts(e.Messages))
				return ext.ContextResult{Messages: e.Messages[1:]}, nil
			})
			api.OnContext(func(context.Context, *ext.Thread, ext.ContextEvent) (ext.ContextResult, error) {
				return ext.ContextResult{}, errors.New("boom")
			})
			return nil
		}},
		{Path: "B", Load: func(api *ext.API) error {
			api.OnContext(func(_ context.Context, _ *ext.Thread, e ext.ContextEvent) (ext.ContextResult, error) {
				tr.add("B saw " + texts(e.Messages))
				return ext.ContextResult{}, nil
			})
			return nil
		}},
	}
	r := load(t, h, exts...)
	in := []agent.Message{agent.UserText("one", 1), agent.UserText("two", 2), agent.UserText("three", 3)}
	if got := texts(r.Context(context.Background(), ext.ContextEvent{Messages: in})); got != "two,three" {
		t.Errorf("messages %q", got)
	}
	if diff := cmp.Diff(tr.got(), []string{"A saw one,two,three", "B saw two,three"}); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], "its context handler failed: boom") {
		t.Errorf("warnings %q", w)
	}
	empty := load(t, &host{}, ext.Extension{Path: "E", Load: func(api *ext.API) error {
		api.OnContext(func(context.Context, *ext.Thread, ext.ContextEvent) (ext.ContextResult, error) {
			return ext.ContextResult{Messages: []agent.Message{}}, nil
		})
		return nil
	}})
	if got := empty.Context(context.Background(), ext.ContextEvent{Messages: in}); got == nil || len(got) != 0 {
		t.Errorf("an empty list did not replace the messages: %v", got)
	}
}

// TestLifecycleEvents: agent_start, agent_end, turn_start, message_start
// and message_update reach every handler in load and registration order;
// Handles reports each only while a handler is registered; a failing
// handler is a warning and the others still run.
func TestLifecycleEvents(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	rec := func(name string) ext.Extension {
		return ext.Extension{Path: name, Load: func(api *ext.API) error {
			api.OnAgentStart(func(context.Context, *ext.Thread, ext.AgentStartEvent) error {
				tr.add(name + ".agent_start")
				return nil
			})
			api.OnTurnStart(func(_ context.Context, _ *ext.Thread, e ext.TurnStartEvent) error {
				tr.add(fmt.Sprintf("%s.turn_start %d", name, e.TurnIndex))
				return errors.New("boom")
			})
			api.OnMessageStart(func(_ context.Context, _ *ext.Thread, e ext.MessageStartEvent) error {
				tr.add(fmt.Sprintf("%s.message_start %s", name, e.Message.Role))
				return nil
			})
			api.OnMessageUpdate(func(_ context.Context, _ *ext.Thread, e ext.MessageUpdateEvent) error {
				tr.add(fmt.Sprintf("%s.message_update %s %q", name, e.AssistantMessageEvent.Type, e.Message.Text()))
				return nil
			})
			api.OnAgentEnd(func(_ context.Context, _ *ext.Thread, e ext.AgentEndEvent) error {
				tr.add(fmt.Sprintf("%s.agent_end %d", name, len(e.Messages)))
				return nil
			})
			return nil
		}}
	}
	idle := load(t, &host{})
	for _, ev := range []string{ext.EventAgentStart, ext.EventAgentEnd, ext.EventTurnStart, ext.EventMessageStart, ext.EventMessageUpdate, ext.EventMessageEnd, ext.EventContext} {
		if idle.Handles(ev) {
			t.Errorf("a runner without handlers handles %s", ev)
		}
	}
	r := load(t, h, rec("A"), rec("B"))
	for _, ev := range []string{ext.EventAgentStart, ext.EventAgentEnd, ext.EventTurnStart, ext.EventMessageStart, ext.EventMessageUpdate} {
		if !r.Handles(ev) {
			t.Errorf("Handles(%s) is false", ev)
		}
	}
	ctx := context.Background()
	r.AgentStart(ctx, ext.AgentStartEvent{})
	r.TurnStart(ctx, ext.TurnStartEvent{TurnIndex: 0, Timestamp: 1})
	partial := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock("He")}}
	r.MessageStart(ctx, ext.MessageStartEvent{Message: agent.Message{Role: agent.RoleAssistant}})
	r.MessageUpdate(ctx, ext.MessageUpdateEvent{Message: partial, AssistantMessageEvent: ext.AssistantMessageEvent{Type: ext.UpdateTextDelta, Delta: "He"}})
	r.AgentEnd(ctx, ext.AgentEndEvent{Messages: []agent.Message{partial, partial}})
	var results []agent.Message
	load(t, &host{}, ext.Extension{Path: "E", Load: func(api *ext.API) error {
		api.OnTurnEnd(func(_ context.Context, _ *ext.Thread, e ext.TurnEndEvent) error {
			results = e.ToolResults
			return nil
		})
		return nil
	}}).TurnEnd(ctx, ext.TurnEndEvent{})
	if results == nil {
		t.Error("turn_end of a reply without calls has toolResults null, not []")
	}
	want := []string{"A.agent_start", "B.agent_start", "A.turn_start 0", "B.turn_start 0",
		"A.message_start assistant", "B.message_start assistant",
		`A.message_update text_delta "He"`, `B.message_update text_delta "He"`, "A.agent_end 2", "B.agent_end 2"}
	if diff := cmp.Diff(tr.got(), want); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 2 || !strings.Contains(w[0], "A: extension A: its turn_start handler failed: boom") {
		t.Errorf("warnings %q", w)
	}
}

// TestInterruptedDispatch: once the context ends (an interrupt), a
// message_end handler's failure is no warning and its answer is not
// heard, the later handlers are not asked, and the notify-only events
// reach nobody.
func TestInterruptedDispatch(t *testing.T) {
	t.Parallel()
	h := &host{}
	var tr trace
	ctx, cancel := context.WithCancel(context.Background())
	r := load(t, h, ext.Extension{Path: "A", Load: func(api *ext.API) error {
		api.OnMessageEnd(func(ctx context.Context, _ *ext.Thread, e ext.MessageEndEvent) (ext.MessageEndResult, error) {
			tr.add("A.message_end")
			cancel() // the interrupt comes while the handler runs
			m := agent.UserText("late", 1)
			return ext.MessageEndResult{Message: &m}, ctx.Err()
		})
		api.OnMessageEnd(func(context.Context, *ext.Thread, ext.MessageEndEvent) (ext.MessageEndResult, error) {
			tr.add("A.message_end#2")
			return ext.MessageEndResult{}, nil
		})
		api.OnTurnStart(func(context.Context, *ext.Thread, ext.TurnStartEvent) error {
			tr.add("A.turn_start")
			return nil
		})
		api.OnContext(func(context.Context, *ext.Thread, ext.ContextEvent) (ext.ContextResult, error) {
			tr.add("A.context")
			return ext.ContextResult{}, nil
		})
		return nil
	}})
	if got, changed := r.MessageEnd(ctx, ext.MessageEndEvent{Message: agent.UserText("hi", 1)}); changed || got.Text() != "hi" {
		t.Errorf("interrupted message_end: %q changed %v", got.Text(), changed)
	}
	r.TurnStart(ctx, ext.TurnStartEvent{})
	r.Context(ctx, ext.ContextEvent{})
	if diff := cmp.Diff(tr.got(), []string{"A.message_end"}); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
