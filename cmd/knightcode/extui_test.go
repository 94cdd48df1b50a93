package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
	"github.com/knightcode/knightcode/threads/ext"
)

// checksView is the view of the fixture's widget checks.
func checksView(verbose bool) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"stack","children":[{"type":"text","text":"Checks"},
		{"type":"toggle","id":"verbose","value":%v,"label":"Verbose"},{"type":"button","id":"run","label":"Run"},
		{"type":"input","id":"query","value":"old"}]}`, verbose))
}

// resultView is the view of the fixture tool show's result and of its
// message: a button whose press must reach nobody.
const resultView = `{"type":"list","items":[{"type":"text","text":"3 checks"},{"type":"button","id":"run","label":"Run"}]}`

// uiFixture is the Go test extension of TestExtensionUIOverTheWire (as
// testdata/extensions/ui.ts will be for the JavaScript runtime): it sets a
// status and the widget checks while loading; its view event handler sets
// checks again for the toggle verbose and counts every event; /ui-title
// sets the title; /ui-spin sets widgets and a status every 10 ms, 30
// times; /ui-note sends a message with a view; /ui-hasui reports HasUI;
// the tool show answers with details.view.
type uiFixture struct {
	events atomic.Int32
	hasUI  chan bool
	spun   chan struct{}
}

func (f *uiFixture) extension() ext.Extension {
	return ext.Extension{Path: "/ext/ui.ts", Load: func(api *ext.API) error {
		ui := api.Thread().UI
		ui.SetStatus("mcp", "MCP 2/3")
		ui.SetWidget("checks", &ext.Widget{View: checksView(false)})
		ui.OnViewEvent(func(_ context.Context, e ext.ViewEvent) error {
			f.events.Add(1)
			if e.WidgetKey == "checks" && e.ID == "verbose" {
				v, _ := e.Value.(bool)
				ui.SetWidget("checks", &ext.Widget{View: checksView(v)})
			}
			return nil
		})
		cmd := func(name string, h func(th *ext.Thread, args string)) error {
			return api.RegisterCommand(ext.Command{Name: name, Handler: func(_ context.Context, th *ext.Thread, args string) error {
				h(th, args)
				return nil
			}})
		}
		return errors.Join(
			cmd("ui-title", func(th *ext.Thread, args string) { th.UI.SetTitle(args) }),
			cmd("ui-hasui", func(th *ext.Thread, _ string) { f.hasUI <- th.HasUI }),
			cmd("ui-spin", func(th *ext.Thread, _ string) {
				go func() {
					defer close(f.spun)
					for i := range 30 {
						key := fmt.Sprintf("spin%d", i%4)
						switch {
						case i%7 == 6:
							th.UI.SetWidget(key, nil)
						case i%3 == 0:
							th.UI.SetWidget(key, &ext.Widget{Placement: ext.BelowEditor, Lines: []string{fmt.Sprint(i)}})
						default:
							th.UI.SetWidget(key, &ext.Widget{Lines: []string{fmt.Sprint(i)}})
						}
						th.UI.SetStatus("spin", fmt.Sprint(i))
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}),
			cmd("ui-note", func(*ext.Thread, string) {
				_ = api.SendMessage(ext.Message{CustomType: "ui", Display: true, Content: []agent.ContentBlock{agent.TextBlock("note")},
					View: json.RawMessage(resultView)}, ext.DeliverNextTurn)
			}),
			api.RegisterTool(ext.Tool{Name: "show", Description: "Show checks.",
				Execute: func(context.Context, *ext.Thread, ext.ToolCall) (ext.ToolResult, error) {
					return ext.ToolResult{Content: []agent.ContentBlock{agent.TextBlock("3 checks")},
						Details: json.RawMessage(`{"view":` + resultView + `}`)}, nil
				}}),
		)
	}}
}

// goExtensionServer is the wired server loading the Go extensions exts,
// shut down by a cleanup.
func goExtensionServer(t *testing.T, exts ...ext.Extension) *jsonrpc.Server {
	t.Helper()
	return optionsServer(t, options{GoExtensions: exts})
}

// optionsServer is the wired server of opts, shut down by a cleanup.
func optionsServer(t *testing.T, opts options) *jsonrpc.Server {
	t.Helper()
	srv, err := newAppServer(opts, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// wireLog is a connection to a wired server, in process, that keeps every
// line the server wrote, in order, besides the client's own handling.
type wireLog struct {
	c     *client.Client
	mu    sync.Mutex
	lines []string
}

func dialLogged(t *testing.T, srv *jsonrpc.Server, mode string) *wireLog {
	t.Helper()
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	logR, logW := io.Pipe()
	w := &wireLog{}
	go func() {
		// The log first: a line is logged before the client reads it.
		_ = srv.ServeConn(context.Background(), serverIn, io.MultiWriter(logW, serverOut))
		serverOut.Close()
		logW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(logR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
		}
	}()
	w.c = client.Dial(clientIn, clientOut)
	t.Cleanup(func() { w.c.Close(); serverIn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	if _, err := w.c.Initialize(ctx, protocol.InitializeParams{Capabilities: &protocol.ClientCapabilities{Mode: mode}}); err != nil {
		t.Fatal(err)
	}
	return w
}

// mark is the number of lines logged so far, once the server wrote what
// the client has read (the log trails the client by a line at most: wait
// for it to settle).
func (w *wireLog) mark() int {
	time.Sleep(5 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

func (w *wireLog) since(from int) []string {
	time.Sleep(5 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.lines[from:])
}

// wireMsg is one line of the log.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func parseLine(t *testing.T, line string) wireMsg {
	t.Helper()
	var m wireMsg
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	return m
}

func callOn[P, R any](t *testing.T, c *client.Client, m protocol.ClientRequest[P, R], p P) (R, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	return client.Call(ctx, c, m, p)
}

// applyUI applies a ui/state or ui/widget notification to ui as a client
// does (spec "Dialogs and extension UI").
func applyUI(t *testing.T, ui *protocol.ThreadUI, method string, params json.RawMessage) {
	t.Helper()
	switch method {
	case protocol.UIState.Name:
		var p protocol.UIStateParams
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		ui.Statuses, ui.Title, ui.WorkingMessage, ui.WorkingVisible = p.Statuses, p.Title, p.WorkingMessage, p.WorkingVisible
	case protocol.UIWidgetNotification.Name:
		var p protocol.UIWidgetParams
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		ui.Widgets = slices.DeleteFunc(ui.Widgets, func(w protocol.UIWidget) bool { return w.Key == p.Key })
		if p.Placement == "" {
			return
		}
		w := protocol.UIWidget{Key: p.Key, Placement: p.Placement, Lines: p.Lines, View: p.View}
		if w.View == nil && w.Lines == nil {
			w.Lines = []string{}
		}
		at := len(ui.Widgets)
		if p.Placement == protocol.WidgetAboveEditor {
			if i := slices.IndexFunc(ui.Widgets, func(o protocol.UIWidget) bool { return o.Placement == protocol.WidgetBelowEditor }); i >= 0 {
				at = i
			}
		}
		ui.Widgets = slices.Insert(ui.Widgets, at, w)
	}
}

func errCode(err error) string {
	if e, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return e.Code
	}
	return ""
}

// TestExtensionUIOverTheWire checks the extension UI a client sees, with
// a Go fixture extension loaded in the wired server: the snapshot after
// the load; a command setting the title answers handled after one
// ui/state; ui/event's re-set widget is on the wire before its {} answer,
// wrong values are invalidParams, an unknown control and a tool result's
// view reach nobody; views on toolCall and extensionMessage items read
// back as they were sent live; a resume while the extension sets widgets
// every 10 ms: the snapshot plus the notifications after it equal a fresh
// resume's ui; a terminal-mode connection's thread has no UI and gets no
// ui notification; 1,000 random ui/event params never answer internal.
func TestExtensionUIOverTheWire(t *testing.T) {
	home := inProcessHome(t)
	writeScripts(t, home, map[string]string{"ui": script(
		toolReply(call("c1", "show", map[string]any{})),
		map[string]any{"text": "shown"},
	)})
	repo := threadsRepo(t)
	fx := &uiFixture{hasUI: make(chan bool, 2), spun: make(chan struct{})}
	srv := goExtensionServer(t, fx.extension())
	a := dialLogged(t, srv, "")
	started, err := callOn(t, a.c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "ui"}})
	if err != nil {
		t.Fatal(err)
	}
	thread := started.Thread.ID
	if ui := started.UI; len(ui.Statuses) != 1 || ui.Statuses[0] != (protocol.UIStatus{Key: "mcp", Text: "MCP 2/3"}) ||
		len(ui.Widgets) != 1 || ui.Widgets[0].Key != "checks" || !strings.Contains(string(ui.Widgets[0].View), `"id":"verbose"`) {
		t.Errorf("thread/start ui %+v", ui)
	}

	// A command setting the title: one ui/state, then handled.
	from := a.mark()
	res, err := callOn(t, a.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/ui-title New"})
	if err != nil || res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /ui-title: %+v %v", res, err)
	}
	var states []string
	for _, l := range a.since(from) {
		if m := parseLine(t, l); m.Method == protocol.UIState.Name {
			states = append(states, string(m.Params))
		} else if m.Method == protocol.TurnStarted.Name {
			t.Error("a handled command started a turn")
		}
	}
	if want := `{"threadId":"` + thread + `","statuses":[{"key":"mcp","text":"MCP 2/3"}],"title":"New","workingVisible":true}`; len(states) != 1 || states[0] != want {
		t.Errorf("ui/state %q, want one %s", states, want)
	}

	// ui/event: the re-set widget before the answer {}.
	from = a.mark()
	if _, err := callOn(t, a.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: thread, WidgetKey: "checks", ID: "verbose", Value: json.RawMessage(`true`)}); err != nil {
		t.Fatal(err)
	}
	widgetAt, answerAt := -1, -1
	for i, l := range a.since(from) {
		m := parseLine(t, l)
		if m.Method == protocol.UIWidgetNotification.Name && strings.Contains(string(m.Params), `"id":"verbose","label":"Verbose","type":"toggle","value":true`) && widgetAt < 0 {
			widgetAt = i
		}
		if m.Method == "" && string(m.Result) == "{}" && answerAt < 0 {
			answerAt = i
		}
	}
	if widgetAt < 0 || answerAt < 0 || widgetAt > answerAt {
		t.Errorf("ui/widget at line %d, the {} answer at %d: want the widget first", widgetAt, answerAt)
	}
	for _, tc := range []struct{ id, value string }{{"verbose", `"yes"`}, {"run", `true`}, {"query", `1`}} {
		_, err := callOn(t, a.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: thread, WidgetKey: "checks", ID: tc.id, Value: json.RawMessage(tc.value)})
		if e, ok := errors.AsType[*jsonrpc.Error](err); !ok || e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, "value") {
			t.Errorf("ui/event %s %s: %v, want invalidParams naming value", tc.id, tc.value, err)
		}
	}
	before := fx.events.Load()
	if _, err := callOn(t, a.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: thread, WidgetKey: "checks", ID: "nope"}); err != nil {
		t.Errorf("ui/event of an unknown id: %v, want {}", err)
	}

	// Views on toolCall and extensionMessage items, live and read back;
	// a press in a tool result's view reaches nobody.
	if res, err := callOn(t, a.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/ui-note"}); err != nil || res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /ui-note: %+v %v", res, err)
	}
	from = a.mark()
	if _, err := callOn(t, a.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "show"}); err != nil {
		t.Fatal(err)
	}
	live := map[string]string{}
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for done := false; !done && time.Now().Before(deadline); {
		for _, l := range a.since(from) {
			m := parseLine(t, l)
			if m.Method == protocol.ItemCompleted.Name {
				var p protocol.ItemCompletedParams
				_ = json.Unmarshal(m.Params, &p)
				if p.Item.View != nil {
					live[p.Item.Type] = string(p.Item.View)
				}
			}
			done = done || m.Method == protocol.TurnCompletedNotification.Name
		}
	}
	want := `{"items":[{"text":"3 checks","type":"text"},{"id":"run","label":"Run","type":"button"}],"type":"list"}`
	if live[protocol.ItemToolCall] != want || live[protocol.ItemExtensionMessage] != want {
		t.Errorf("live item views %v, want %s on the toolCall and the extensionMessage", live, want)
	}
	read, err := callOn(t, a.c, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	back := map[string]string{}
	for _, turn := range read.Turns {
		for _, it := range turn.Items {
			if it.View != nil {
				back[it.Type] = string(it.View)
			}
		}
	}
	if diff := cmp.Diff(back, live); diff != "" {
		t.Errorf("item views read back (-got +live):\n%s", diff)
	}
	for _, key := range []string{"c1", "item-1", ""} {
		if _, err := callOn(t, a.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: thread, WidgetKey: key, ID: "run"}); err != nil {
			t.Errorf("ui/event on an item's view (%q): %v, want {}", key, err)
		}
	}
	if n := fx.events.Load(); n != before {
		t.Errorf("%d events reached the handler after the unknown id and the items' views, want none", n-before)
	}

	// The replay invariant: a resume while the extension sets widgets every
	// 10 ms.
	if res, err := callOn(t, a.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/ui-spin"}); err != nil || res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /ui-spin: %+v %v", res, err)
	}
	b := dialLogged(t, srv, "")
	time.Sleep(45 * time.Millisecond)
	first, err := callOn(t, b.c, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	// Once the spinner is done, the UI stays as it is: every ui
	// notification b got came after its first subscription, and applied
	// to the first snapshot they give what a fresh resume shows. (Taken
	// while the spinner ran, the fresh snapshot would race the
	// notifications sent after it, which may be written before its
	// answer.)
	<-fx.spun
	fresh, err := callOn(t, b.c, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	ui := first.UI
	applied := 0
	for _, l := range b.since(0) {
		m := parseLine(t, l)
		if strings.HasPrefix(m.Method, "ui/") {
			applyUI(t, &ui, m.Method, m.Params)
			applied++
		}
	}
	if applied == 0 {
		t.Error("no ui notification arrived between the two resumes: the spinner did not overlap")
	}
	if diff := cmp.Diff(ui, fresh.UI); diff != "" {
		t.Errorf("snapshot + %d notifications != a fresh resume's ui (-replayed +fresh):\n%s", applied, diff)
	}

	// A terminal-mode connection's thread: no UI, no ui notification.
	term := dialLogged(t, srv, protocol.ClientModeTerminal)
	ts, err := callOn(t, term.c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ts.UI, protocol.EmptyUI()); diff != "" {
		t.Errorf("a terminal thread's ui (-got +want):\n%s", diff)
	}
	for _, text := range []string{"/ui-title T", "/ui-hasui"} {
		if _, err := callOn(t, term.c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: ts.Thread.ID, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if has := <-fx.hasUI; has {
		t.Error("a terminal thread's extension sees hasUI true")
	}
	if _, err := callOn(t, term.c, protocol.UIEvent, protocol.UIEventParams{ThreadID: ts.Thread.ID, WidgetKey: "checks", ID: "verbose", Value: json.RawMessage(`true`)}); err != nil {
		t.Errorf("ui/event on a terminal thread: %v, want {}", err)
	}
	for _, l := range term.since(0) {
		if m := parseLine(t, l); strings.HasPrefix(m.Method, "ui/") {
			t.Errorf("a terminal connection got %s", l)
		}
	}

	// 1,000 random ui/event params: never internal.
	rng := rand.New(rand.NewPCG(26, 26))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	codes := map[string]int{}
	for range 1000 {
		p := map[string]any{}
		if rng.IntN(10) > 0 {
			p["threadId"] = pick(thread, thread, thread, "nope", "", "../x")
		}
		if rng.IntN(10) > 0 {
			p["widgetKey"] = pick("checks", "checks", "spin0", "mcp", "", strings.Repeat("k", 200), "c1")
		}
		if rng.IntN(10) > 0 {
			p["id"] = pick("verbose", "run", "query", "", "nope", "\x00")
		}
		if rng.IntN(3) > 0 {
			p["value"] = json.RawMessage(pick(`true`, `false`, `"x"`, `""`, `1`, `null`, `[]`, `{}`, `"`+strings.Repeat("q", 17<<10)+`"`, `1e999`))
		}
		if rng.IntN(20) == 0 {
			p["extra"] = 1
		}
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
		err := a.c.Request(ctx, protocol.UIEvent.Name, p, nil)
		cancel()
		code := errCode(err)
		if err != nil && code == "" {
			t.Fatalf("ui/event %s: %v", mustJSON(p), err)
		}
		if code == protocol.CodeInternal {
			t.Fatalf("ui/event %s answered internal: %v", mustJSON(p), err)
		}
		codes[code]++
	}
	if codes[""] == 0 || codes[protocol.CodeInvalidParams] == 0 || codes[protocol.CodeThreadNotFound] == 0 {
		t.Errorf("answers by code %v: want {}, invalidParams and threadNotFound among them", codes)
	}
}
