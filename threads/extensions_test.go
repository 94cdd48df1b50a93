package threads

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// startEcho starts a fullAccess thread in cwd on the recording env's
// model, subscribing sub.
func (e *promptEnv) startEcho(t *testing.T, sub Subscriber, cwd string) Opened {
	t.Helper()
	res, err := e.m.Start(context.Background(), sub, StartOptions{Cwd: cwd, ApprovalMode: protocol.ApprovalFullAccess, Model: &ModelRef{Provider: scripted.Name, ID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// completed waits for the turn/completed of thread from *from on.
func completed(t *testing.T, sub *recorder, from *int, thread string) protocol.Turn {
	t.Helper()
	var p protocol.TurnCompletedParams
	if err := json.Unmarshal(sub.wait(t, from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &p); err != nil {
		t.Fatal(err)
	}
	return p.Turn
}

// warningsFrom returns the warning notifications of thread from index from
// on.
func warningsFrom(sub *recorder, from int, thread string) []protocol.WarningParams {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	var out []protocol.WarningParams
	for _, n := range sub.notes[from:] {
		var p protocol.WarningParams
		if n.method == protocol.WarningNotification.Name && json.Unmarshal(n.params, &p) == nil && p.ThreadID == thread {
			out = append(out, p)
		}
	}
	return out
}

// itemsFrom returns the items of thread completed from index from on.
func itemsFrom(sub *recorder, from int, thread string) []protocol.Item {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	var out []protocol.Item
	for _, n := range sub.notes[from:] {
		var p protocol.ItemCompletedParams
		if n.method == protocol.ItemCompleted.Name && json.Unmarshal(n.params, &p) == nil && p.ThreadID == thread {
			out = append(out, p.Item)
		}
	}
	return out
}

// TestExtensionsInATurn runs a turn through two Go extensions: the first's
// before_agent_start changes the system prompt the model gets and adds a
// message after the input (an extensionMessage item); its tool_call
// handler changes a bash call's command and the second's sees the change,
// so the changed command is what runs; a tool_result handler that fails
// is a subscriber warning (source extension, threadId, the extension's
// path) and the turn goes on, while the other's change of the result is
// what the model reads.
func TestExtensionsInATurn(t *testing.T) {
	sc := scripted.Script{Responses: []scripted.Response{bashResponse("b1", "echo one", false), {Text: "done"}}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
	var seen []string
	e.m.cfg.Extensions = []ext.Extension{
		{Path: "/ext/a.ts", Load: func(api *ext.API) error {
			api.OnBeforeAgentStart(func(_ context.Context, th *ext.Thread, ev ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
				seen = append(seen, "a.before_agent_start "+ev.Prompt+" in "+th.Mode)
				p := ev.SystemPrompt + "\nAlways answer in French."
				return ext.BeforeAgentStartResult{SystemPrompt: &p, Message: &ext.Message{CustomType: "reminder", Display: true,
					Content: []agent.ContentBlock{agent.TextBlock("Remember the style guide.")}}}, nil
			})
			api.OnToolCall(func(_ context.Context, _ *ext.Thread, ev ext.ToolCallEvent) (ext.ToolCallResult, error) {
				seen = append(seen, "a.tool_call "+string(ev.Input))
				return ext.ToolCallResult{Input: json.RawMessage(`{"command":"echo two"}`)}, nil
			})
			api.OnToolResult(func(context.Context, *ext.Thread, ext.ToolResultEvent) (ext.ToolResultResult, error) {
				return ext.ToolResultResult{}, errors.New("result hook broke")
			})
			return nil
		}},
		{Path: "/ext/b.ts", Load: func(api *ext.API) error {
			api.OnToolCall(func(_ context.Context, _ *ext.Thread, ev ext.ToolCallEvent) (ext.ToolCallResult, error) {
				seen = append(seen, "b.tool_call "+string(ev.Input))
				return ext.ToolCallResult{}, nil
			})
			api.OnToolResult(func(_ context.Context, _ *ext.Thread, ev ext.ToolResultEvent) (ext.ToolResultResult, error) {
				return ext.ToolResultResult{Content: append(ev.Content, agent.TextBlock("[checked by b]"))}, nil
			})
			return nil
		}},
	}
	sub := newRecorder()
	thread := e.startEcho(t, sub, t.TempDir()).Thread.ID
	mark := sub.mark()
	from := mark
	status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{})
	if err != nil || status != protocol.TurnStartStarted {
		t.Fatalf("StartTurn: %s, %v", status, err)
	}
	if turn := completed(t, sub, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %+v", turn)
	}
	wantSeen := []string{"a.before_agent_start go in desktop", `a.tool_call {"command":"echo one","run_in_background":false}`, `b.tool_call {"command":"echo two"}`}
	if diff := cmp.Diff(seen, wantSeen); diff != "" {
		t.Errorf("handlers (-got +want):\n%s", diff)
	}
	reqs := e.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.HasSuffix(reqs[0].SystemPrompt, "\nAlways answer in French.") || !strings.HasPrefix(reqs[0].SystemPrompt, DefaultSystemPrompt) {
		t.Errorf("system prompt %q, want the default one with the extension's line", reqs[0].SystemPrompt)
	}
	if diff := cmp.Diff(userTexts(reqs[0]), []string{"go", "Remember the style guide."}); diff != "" {
		t.Errorf("user messages of the first request (-got +want):\n%s", diff)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != agent.RoleToolResult || !strings.Contains(last.Text(), "two") || strings.Contains(last.Text(), "one") || !strings.HasSuffix(last.Text(), "[checked by b]") {
		t.Errorf("tool result the model read: %q", last.Text())
	}
	warned := warningsFrom(sub, 0, thread)
	if len(warned) != 1 || warned[0].Source != protocol.WarningSourceExtension || warned[0].Path != "/ext/a.ts" ||
		!strings.Contains(warned[0].Message, "tool_result handler failed: result hook broke") {
		t.Errorf("warnings %+v, want the failed tool_result handler of a.ts", warned)
	}
	var types []string
	for _, it := range itemsFrom(sub, mark, thread) {
		types = append(types, it.Type+"/"+it.Extension)
	}
	want := []string{"userMessage/", "extensionMessage/reminder", "toolCall/", "agentMessage/"}
	if diff := cmp.Diff(types, want); diff != "" {
		t.Errorf("items (-got +want):\n%s", diff)
	}
}

// TestFailingToolCallHookBlocks: a tool_call handler that fails blocks the
// call (it does not run; its item fails with a reason naming the
// extension), is a warning, and the turn goes on to the model's next
// reply.
func TestFailingToolCallHookBlocks(t *testing.T) {
	dir := t.TempDir()
	sc := scripted.Script{Responses: []scripted.Response{bashResponse("b1", "touch ran", false), {Text: "ok then"}}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
	e.m.cfg.Extensions = []ext.Extension{{Path: "/ext/guard.ts", Load: func(api *ext.API) error {
		api.OnToolCall(func(context.Context, *ext.Thread, ext.ToolCallEvent) (ext.ToolCallResult, error) {
			panic("guard crashed")
		})
		return nil
	}}}
	sub := newRecorder()
	thread := e.startEcho(t, sub, dir).Thread.ID
	from := sub.mark()
	if _, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if turn := completed(t, sub, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %+v", turn)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the blocked call ran (stat: %v)", err)
	}
	var call protocol.Item
	for _, it := range itemsFrom(sub, 0, thread) {
		if it.Type == protocol.ItemToolCall {
			call = it
		}
	}
	if call.Status != protocol.ToolFailed || call.Output == nil || !strings.Contains(*call.Output, "blocked: extension /ext/guard.ts failed while checking it: panic: guard crashed") {
		t.Errorf("call item %+v", call)
	}
	if w := warningsFrom(sub, 0, thread); len(w) != 1 || w[0].Path != "/ext/guard.ts" {
		t.Errorf("warnings %+v", w)
	}
	if n := len(e.prov.requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (the turn went on)", n)
	}
}

// inputExtension is a Go test extension: an input handler that rewrites
// "please " to "" and consumes "skip:" inputs, and a command /hello that
// records its args.
func inputExtension(hello chan<- string) ext.Extension {
	return ext.Extension{Path: "/ext/input.ts", Load: func(api *ext.API) error {
		api.OnInput(func(_ context.Context, _ *ext.Thread, ev ext.InputEvent) (ext.InputResult, error) {
			switch {
			case strings.HasPrefix(ev.Text, "skip:"):
				return ext.InputResult{Action: ext.InputHandled}, nil
			case strings.Contains(ev.Text, "please "):
				return ext.InputResult{Action: ext.InputTransform, Text: strings.ReplaceAll(ev.Text, "please ", "")}, nil
			}
			return ext.InputResult{}, nil
		})
		return api.RegisterCommand(ext.Command{Name: "hello", Handler: func(_ context.Context, _ *ext.Thread, args string) error {
			hello <- args
			return nil
		}})
	}}
}

// TestInputHooks: an input handler's transform is what the model gets and
// what the userMessage item shows, with the clientMessageId kept; a
// handled input and a command answer "handled" and start nothing (no
// turn/started, no item, no model request); a queued input goes through
// the handlers too.
func TestInputHooks(t *testing.T) {
	e := newPromptEnv(t, 3)
	hello := make(chan string, 1)
	e.m.cfg.Extensions = []ext.Extension{inputExtension(hello)}
	sub := newRecorder()
	thread := e.startEcho(t, sub, t.TempDir()).Thread.ID
	ctx := context.Background()

	from := sub.mark()
	status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "please fix it", ClientMessageID: "c-1"}, TurnOptions{RequestID: "r-1"})
	if err != nil || status != protocol.TurnStartStarted {
		t.Fatalf("StartTurn: %s, %v", status, err)
	}
	completed(t, sub, &from, thread)
	items := itemsFrom(sub, 0, thread)
	if len(items) == 0 || items[0].Type != protocol.ItemUserMessage || items[0].Text != "fix it" || items[0].ClientMessageID != "c-1" {
		t.Errorf("userMessage %+v, want the transformed text with clientMessageId c-1", items)
	}
	if got := userTexts(e.prov.requests()[0]); len(got) != 1 || got[0] != "fix it" {
		t.Errorf("the model got %q", got)
	}

	for _, text := range []string{"skip: nothing to do", "/hello world"} {
		from := sub.mark()
		status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: text, ClientMessageID: "c-2"}, TurnOptions{RequestID: "r-2"})
		if err != nil || status != protocol.TurnStartHandled {
			t.Fatalf("%q: StartTurn %s, %v, want handled", text, status, err)
		}
		if sub.has(from, protocol.TurnStarted.Name) || sub.has(from, protocol.ItemStarted.Name) {
			t.Errorf("%q: a handled input started a turn or an item", text)
		}
	}
	if got := <-hello; got != "world" {
		t.Errorf("/hello ran with %q", got)
	}
	if n := len(e.prov.requests()); n != 1 {
		t.Errorf("%d model requests after the handled inputs, want 1", n)
	}

	// Queued: the handled one starts nothing, the next one starts
	// transformed.
	from = sub.mark()
	if _, err := e.m.QueueAdd(ctx, sub.ID(), thread, Input{Text: "skip: queued"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.QueueAdd(ctx, sub.ID(), thread, Input{Text: "please queue"}); err != nil {
		t.Fatal(err)
	}
	completed(t, sub, &from, thread)
	reqs := e.prov.requests()
	if len(reqs) != 2 || userTexts(reqs[1])[len(userTexts(reqs[1]))-1] != "queue" {
		t.Errorf("requests after the queue: %d, last user text %q", len(reqs), userTexts(reqs[len(reqs)-1]))
	}
}

// blockingInput is an extension whose input handler (or, with
// beforeStart, before_agent_start handler) signals entered and waits for
// release.
func blockingHook(beforeStart bool, entered chan<- struct{}, release <-chan struct{}) ext.Extension {
	return ext.Extension{Path: "/ext/slow.ts", Load: func(api *ext.API) error {
		if beforeStart {
			api.OnBeforeAgentStart(func(context.Context, *ext.Thread, ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
				entered <- struct{}{}
				<-release
				return ext.BeforeAgentStartResult{}, nil
			})
			return nil
		}
		api.OnInput(func(context.Context, *ext.Thread, ext.InputEvent) (ext.InputResult, error) {
			entered <- struct{}{}
			<-release
			return ext.InputResult{Action: ext.InputTransform, Text: "changed"}, nil
		})
		return nil
	}}
}

// TestInterruptDuringInputHook (spec "Threads and turns"): turn/interrupt
// during an input handler answers at once, while the handler still runs;
// the start answers "cancelled" and launches nothing, and the handler's
// late answer is dropped; meanwhile another start is refused
// (turnInProgress) and a queued input waits; afterwards a start works.
func TestInterruptDuringInputHook(t *testing.T) {
	e := newPromptEnv(t, 2)
	entered, release := make(chan struct{}, 2), make(chan struct{})
	e.m.cfg.Extensions = []ext.Extension{blockingHook(false, entered, release)}
	sub := newRecorder()
	thread := e.startEcho(t, sub, t.TempDir()).Thread.ID
	ctx := context.Background()
	mark := sub.mark()
	from := mark
	type answer struct {
		status string
		err    error
	}
	started := make(chan answer, 1)
	go func() {
		status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{})
		started <- answer{status, err}
	}()
	<-entered
	if _, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "again"}, TurnOptions{}); !errors.Is(err, ErrTurnInProgress) {
		t.Errorf("a second start during the input hook: %v, want turnInProgress", err)
	}
	if _, err := e.m.QueueAdd(ctx, sub.ID(), thread, Input{Text: "later"}); err != nil {
		t.Fatal(err)
	}
	interrupted := make(chan error, 1)
	go func() {
		err := e.m.Interrupt(ctx, thread, "")
		interrupted <- err
	}()
	select {
	case err := <-interrupted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("turn/interrupt waited for the input hook")
	}
	a := <-started
	if a.err != nil || a.status != protocol.TurnStartCancelled {
		t.Fatalf("start: %s, %v, want cancelled", a.status, a.err)
	}
	close(release)
	// The hook's late answer starts nothing (and the queued input was
	// dropped by the interrupt).
	status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "now"}, TurnOptions{})
	if err != nil || status != protocol.TurnStartStarted {
		t.Fatalf("start after the interrupt: %s, %v", status, err)
	}
	completed(t, sub, &from, thread)
	time.Sleep(50 * time.Millisecond)
	sub.mu.Lock()
	n := 0
	for _, note := range sub.notes[mark:] {
		if note.method == protocol.TurnStarted.Name {
			n++
		}
	}
	sub.mu.Unlock()
	if n != 1 {
		t.Errorf("%d turns started, want 1 (the cancelled start launched nothing)", n)
	}
	if reqs := e.prov.requests(); len(reqs) != 1 || userTexts(reqs[0])[0] != "changed" {
		t.Errorf("model requests %d: %+v", len(reqs), reqs)
	}
}

// TestInterruptDuringBeforeAgentStart (spec "Threads and turns"): a start
// interrupted during before_agent_start answers "started"; turn/interrupt
// answers at once, and the turn completes interrupted without a model
// request.
func TestInterruptDuringBeforeAgentStart(t *testing.T) {
	e := newPromptEnv(t, 1)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	e.m.cfg.Extensions = []ext.Extension{blockingHook(true, entered, release)}
	sub := newRecorder()
	thread := e.startEcho(t, sub, t.TempDir()).Thread.ID
	ctx := context.Background()
	from := sub.mark()
	status, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{})
	if err != nil || status != protocol.TurnStartStarted {
		t.Fatalf("StartTurn: %s, %v", status, err)
	}
	<-entered
	if err := e.m.Interrupt(ctx, thread, ""); err != nil {
		t.Fatal(err)
	}
	close(release)
	if turn := completed(t, sub, &from, thread); turn.Status != protocol.TurnInterrupted {
		t.Errorf("turn %+v, want interrupted", turn)
	}
	if n := len(e.prov.requests()); n != 0 {
		t.Errorf("%d model requests, want none", n)
	}
}

// TestExtensionLoadAndUI: an extension whose Load fails is a warning of
// every start and resume result (source extension, its path); what an
// extension sets in the UI while loading is the ui of those results;
// messages it sends reach the next turn (nextTurn) or the running one
// (steer) after the input.
func TestExtensionLoadAndUI(t *testing.T) {
	e := newPromptEnv(t, 1)
	e.m.cfg.IdleUnload = time.Hour
	var api *ext.API
	e.m.cfg.Extensions = []ext.Extension{
		{Path: "/ext/broken.ts", Load: func(*ext.API) error { return errors.New("SyntaxError: Unexpected token (3:7)") }},
		{Path: "/ext/ui.ts", Load: func(a *ext.API) error {
			api = a
			ui := a.Thread().UI
			ui.SetStatus("b", "second")
			ui.SetStatus("a", "first")
			ui.SetStatus("gone", "x")
			ui.SetStatus("gone", "")
			ui.SetWidget("w1", &ext.Widget{Lines: []string{"one"}})
			ui.SetWidget("w2", &ext.Widget{Placement: ext.BelowEditor, Lines: []string{"two"}})
			ui.SetWidget("w3", &ext.Widget{Lines: []string{"three"}})
			ui.SetWidget("w1", &ext.Widget{Lines: []string{"one again"}})
			ui.SetWidget("w4", &ext.Widget{Lines: []string{"removed"}})
			ui.SetWidget("w4", nil)
			ui.SetTitle("Review")
			ui.SetWorkingMessage("Indexing")
			ui.SetWorkingVisible(false)
			return nil
		}},
	}
	sub := newRecorder()
	res := e.startEcho(t, sub, t.TempDir())
	wantWarning := protocol.Warning{Source: protocol.WarningSourceExtension, Path: "/ext/broken.ts",
		Message: "extension /ext/broken.ts failed to load: SyntaxError: Unexpected token (3:7)"}
	if diff := cmp.Diff(res.Warnings, []protocol.Warning{wantWarning}); diff != "" {
		t.Errorf("start warnings (-got +want):\n%s", diff)
	}
	wantUI := protocol.ThreadUI{
		Statuses: []protocol.UIStatus{{Key: "a", Text: "first"}, {Key: "b", Text: "second"}},
		Title:    "Review", WorkingMessage: "Indexing", WorkingVisible: false,
		Widgets: []protocol.UIWidget{
			{Key: "w3", Placement: ext.AboveEditor, Lines: []string{"three"}},
			{Key: "w1", Placement: ext.AboveEditor, Lines: []string{"one again"}},
			{Key: "w2", Placement: ext.BelowEditor, Lines: []string{"two"}},
		},
	}
	if diff := cmp.Diff(res.UI, wantUI); diff != "" {
		t.Errorf("start ui (-got +want):\n%s", diff)
	}
	other := newRecorder()
	resumed, err := e.m.Resume(context.Background(), other, res.Thread.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(resumed.Warnings, []protocol.Warning{wantWarning}); diff != "" {
		t.Errorf("resume warnings (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(resumed.UI, wantUI); diff != "" {
		t.Errorf("resume ui (-got +want):\n%s", diff)
	}

	for _, d := range []ext.Delivery{ext.DeliverNextTurn, ext.DeliverSteer} {
		if err := api.SendMessage(ext.Message{CustomType: "note", Content: []agent.ContentBlock{agent.TextBlock("sent " + string(d))}}, d); err != nil {
			t.Fatal(err)
		}
	}
	from := sub.mark()
	if _, _, err := e.m.StartTurn(context.Background(), sub, res.Thread.ID, Input{Text: "go"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	completed(t, sub, &from, res.Thread.ID)
	if diff := cmp.Diff(userTexts(e.prov.requests()[0]), []string{"go", "sent nextTurn", "sent steer"}); diff != "" {
		t.Errorf("what the model got (-got +want):\n%s", diff)
	}
}

// TestTerminalThreadExtensionUI: a thread a terminal-mode connection
// started has no extension UI (spec): its extensions see mode terminal
// and no UI, its start result's ui is empty whatever they set, their
// dialogs answer cancelled at once without a request, and their notices
// are dropped.
func TestTerminalThreadExtensionUI(t *testing.T) {
	e := newPromptEnv(t, 0)
	var api *ext.API
	e.m.cfg.Extensions = []ext.Extension{{Path: "/ext/ui.ts", Load: func(a *ext.API) error {
		api = a
		a.Thread().UI.SetStatus("k", "v")
		return nil
	}}}
	sub := newAsker(reply(`{"value":"a"}`))
	sub.mode = protocol.ClientModeTerminal
	res := e.startEcho(t, sub, t.TempDir())
	if diff := cmp.Diff(res.UI, protocol.EmptyUI()); diff != "" {
		t.Errorf("ui of a terminal thread (-got +want):\n%s", diff)
	}
	th := api.Thread()
	if th.HasUI || th.Mode != ext.ModeTerminal {
		t.Errorf("thread handle %+v, want terminal without UI", th)
	}
	from := sub.mark()
	a, err := th.UI.Dialog(context.Background(), ext.Dialog{Kind: ext.DialogConfirm, Title: "sure?"})
	if err != nil || !a.Cancelled {
		t.Errorf("dialog: %+v, %v, want cancelled", a, err)
	}
	th.UI.Notify(protocol.NotifyInfo, "hello")
	if _, err := e.m.Read(context.Background(), res.Thread.ID, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(sub.requests()); n != 0 {
		t.Errorf("%d server requests, want none", n)
	}
	if sub.has(from, protocol.UINotify.Name) {
		t.Error("a terminal thread's extension sent ui/notify")
	}
}

// TestMessageEndReplacementItems: the items of messages a message_end
// handler replaced are what a read-back gives. A user message replaced
// completes with the new text; a reply whose replacement drops its
// thinking block but keeps (changed) text withdraws both streamed items
// (item/removed) and makes the agentMessage again with the id a read-back
// gives it; the model's next request has the replacements.
func TestMessageEndReplacementItems(t *testing.T) {
	sc := scripted.Script{Responses: []scripted.Response{{Thinking: "let me think", Text: "the answer"}, {Text: "later"}}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
	e.m.cfg.Extensions = []ext.Extension{{Path: "/ext/replace.ts", Load: func(api *ext.API) error {
		api.OnMessageEnd(func(_ context.Context, _ *ext.Thread, ev ext.MessageEndEvent) (ext.MessageEndResult, error) {
			m := ev.Message
			switch {
			case m.Role == agent.RoleUser && m.Text() == "go":
				m.Content = []agent.ContentBlock{agent.TextBlock("go (checked)")}
			case m.Role == agent.RoleAssistant && m.Text() == "the answer":
				m.Content = []agent.ContentBlock{agent.TextBlock("the answer, revised")}
			default:
				return ext.MessageEndResult{}, nil
			}
			return ext.MessageEndResult{Message: &m}, nil
		})
		return nil
	}}}
	sub := newRecorder()
	ctx := context.Background()
	thread := e.startEcho(t, sub, t.TempDir()).Thread.ID
	from := sub.mark()
	mark := from
	if status, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "go"}, TurnOptions{}); err != nil || status != protocol.TurnStartStarted {
		t.Fatalf("StartTurn: %s, %v", status, err)
	}
	if turn := completed(t, sub, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %+v", turn)
	}
	var live []string
	sub.mu.Lock()
	for _, n := range sub.notes[mark:] {
		var p struct {
			Item   protocol.Item `json:"item"`
			ItemID string        `json:"itemId"`
		}
		_ = json.Unmarshal(n.params, &p)
		switch n.method {
		case protocol.ItemStarted.Name, protocol.ItemCompleted.Name:
			live = append(live, n.method+" "+p.Item.ID+" "+p.Item.Type+" "+p.Item.Text)
		case protocol.ItemRemoved.Name:
			live = append(live, n.method+" "+p.ItemID)
		}
	}
	sub.mu.Unlock()
	want := []string{
		"item/started item-0 userMessage go", "item/completed item-0 userMessage go (checked)",
		"item/started item-1 reasoning ", "item/started item-2 agentMessage ",
		"item/removed item-1", "item/removed item-2",
		"item/started item-1 agentMessage ", "item/completed item-1 agentMessage the answer, revised",
	}
	if diff := cmp.Diff(live, want); diff != "" {
		t.Errorf("live items (-got +want):\n%s", diff)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var back []string
	for _, it := range read.Turns[0].Items {
		back = append(back, it.ID+" "+it.Type+" "+it.Text)
	}
	if diff := cmp.Diff(back, []string{"item-0 userMessage go (checked)", "item-1 agentMessage the answer, revised"}); diff != "" {
		t.Errorf("read back (-got +want):\n%s", diff)
	}

	from = sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "more"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	completed(t, sub, &from, thread)
	reqs := e.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var texts []string
	for _, m := range reqs[1].Messages {
		texts = append(texts, string(m.Role)+": "+m.Text())
	}
	if diff := cmp.Diff(texts, []string{"user: go (checked)", "assistant: the answer, revised", "user: more"}); diff != "" {
		t.Errorf("the second request (-got +want):\n%s", diff)
	}
}
