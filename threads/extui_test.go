package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// uiEnv starts a thread whose extension /ext/ui.ts keeps its API; it
// returns the thread's id and its UI.
func uiEnv(t *testing.T, sub Subscriber, load func(*ext.API) error) (*promptEnv, string, ext.UI) {
	t.Helper()
	e := newPromptEnv(t, 0)
	e.m.cfg.IdleUnload = time.Hour
	var api *ext.API
	e.m.cfg.Extensions = []ext.Extension{{Path: "/ext/ui.ts", Load: func(a *ext.API) error {
		api = a
		if load != nil {
			return load(a)
		}
		return nil
	}}}
	res := e.startEcho(t, sub, t.TempDir())
	return e, res.Thread.ID, api.Thread().UI
}

func lines(s ...string) *ext.Widget { return &ext.Widget{Lines: s} }

// TestExtensionUIOrderAndNotifications: ui/widget per set or removal
// (a removal of an absent key sends nothing; lines [] is a set), set a,
// b, a orders [b, a] with the aboveEditor widgets before the belowEditor
// ones; ui/state whole on each change and only on a change, with the
// cleaned text; a fresh resume's ui is the snapshot.
func TestExtensionUIOrderAndNotifications(t *testing.T) {
	sub := newRecorder()
	e, thread, ui := uiEnv(t, sub, nil)
	from := sub.mark()
	ui.SetWidget("c", &ext.Widget{Placement: ext.BelowEditor, Lines: []string{"below"}})
	ui.SetWidget("a", lines("A"))
	ui.SetWidget("b", lines("B"))
	ui.SetWidget("a", lines("  A again\x1b[0m"))
	ui.SetWidget("gone", nil)
	ui.SetWidget("empty", lines())
	ui.SetWidget("empty", nil)
	ui.SetTitle("\x1b[1mReview\x1b[0m\nnow")
	ui.SetTitle("Review now")
	ui.SetStatus("z", "last")
	ui.SetStatus("m", "middle")
	ui.SetWorkingVisible(false)
	ui.SetWorkingMessage("Indexing")
	ui.SetWorkingMessage("")

	var widgets []string
	for _, raw := range notesSince(sub, from, protocol.UIWidgetNotification.Name) {
		widgets = append(widgets, string(raw))
	}
	want := []string{
		`{"threadId":"` + thread + `","key":"c","placement":"belowEditor","lines":["below"]}`,
		`{"threadId":"` + thread + `","key":"a","placement":"aboveEditor","lines":["A"]}`,
		`{"threadId":"` + thread + `","key":"b","placement":"aboveEditor","lines":["B"]}`,
		`{"threadId":"` + thread + `","key":"a","placement":"aboveEditor","lines":["  A again"]}`,
		`{"threadId":"` + thread + `","key":"empty","placement":"aboveEditor","lines":[]}`,
		`{"threadId":"` + thread + `","key":"empty"}`,
	}
	if diff := cmp.Diff(widgets, want); diff != "" {
		t.Errorf("ui/widget notifications (-got +want):\n%s", diff)
	}
	var states []string
	for _, raw := range notesSince(sub, from, protocol.UIState.Name) {
		states = append(states, string(raw))
	}
	pre := `{"threadId":"` + thread + `","statuses":`
	wantStates := []string{
		pre + `[],"title":"Review now","workingVisible":true}`,
		pre + `[{"key":"z","text":"last"}],"title":"Review now","workingVisible":true}`,
		pre + `[{"key":"m","text":"middle"},{"key":"z","text":"last"}],"title":"Review now","workingVisible":true}`,
		pre + `[{"key":"m","text":"middle"},{"key":"z","text":"last"}],"title":"Review now","workingVisible":false}`,
		pre + `[{"key":"m","text":"middle"},{"key":"z","text":"last"}],"title":"Review now","workingMessage":"Indexing","workingVisible":false}`,
		pre + `[{"key":"m","text":"middle"},{"key":"z","text":"last"}],"title":"Review now","workingVisible":false}`,
	}
	if diff := cmp.Diff(states, wantStates); diff != "" {
		t.Errorf("ui/state notifications (-got +want):\n%s", diff)
	}
	res, err := e.m.Resume(context.Background(), newRecorder(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, w := range res.UI.Widgets {
		order = append(order, w.Key+":"+w.Placement)
	}
	if got := strings.Join(order, " "); got != "b:aboveEditor a:aboveEditor c:belowEditor" {
		t.Errorf("widgets in the snapshot: %s, want b, a above, then c below", got)
	}
}

// TestExtensionUILimits: the 17th widget and the 51st status are refused
// with one warning each (a second refusal of the same key warns no more),
// and so are bad keys and lines over 16 KiB; what was refused during the
// load is a load warning of the start result.
func TestExtensionUILimits(t *testing.T) {
	sub := newRecorder()
	e, thread, ui := uiEnv(t, sub, func(a *ext.API) error {
		a.Thread().UI.SetStatus("", "empty key")
		return nil
	})
	from := sub.mark()
	for i := range ext.MaxWidgets + 1 {
		ui.SetWidget(fmt.Sprintf("w%02d", i), lines("x"))
	}
	ui.SetWidget("w16", lines("again"))
	ui.SetWidget("w00", lines("replacing is no new widget"))
	for i := range ext.MaxStatuses + 1 {
		ui.SetStatus(fmt.Sprintf("s%02d", i), "x")
	}
	ui.SetStatus("s50", "again")
	ui.SetWidget(strings.Repeat("k", 129), lines("x"))
	ui.SetWidget("w01", lines(strings.Repeat("a", 200), strings.Repeat("b", 200)))
	big := make([]string, 100)
	for i := range big {
		big[i] = strings.Repeat("é", 199)
	}
	ui.SetWidget("w02", lines(big...))
	ui.SetWidget("w02", lines(big...))

	var warned []string
	for _, raw := range notesSince(sub, from, protocol.WarningNotification.Name) {
		var p protocol.WarningParams
		_ = json.Unmarshal(raw, &p)
		if p.ThreadID != thread || p.Source != protocol.WarningSourceExtension || p.Path != "/ext/ui.ts" {
			t.Errorf("warning %+v", p)
		}
		warned = append(warned, p.Message)
	}
	want := []string{
		`widget "w16" refused: a thread shows at most 16 widgets`,
		`status "s50" refused: a thread shows at most 50 statuses`,
		`widget "` + strings.Repeat("k", 129)[:128] + `k" refused: keys are 1 to 128 characters`,
		`widget "w02" refused: its lines are 40101 bytes, over the 16 KiB limit`,
	}
	if diff := cmp.Diff(warned, want); diff != "" {
		t.Errorf("warnings (-got +want):\n%s", diff)
	}
	if n := len(notesSince(sub, from, protocol.UIWidgetNotification.Name)); n != 18 {
		t.Errorf("%d ui/widget notifications, want 18 (16 sets, a replacement, w01's lines)", n)
	}
	res, err := e.m.Resume(context.Background(), newRecorder(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.UI.Widgets) != 16 || len(res.UI.Statuses) != 50 {
		t.Errorf("%d widgets and %d statuses, want 16 and 50", len(res.UI.Widgets), len(res.UI.Statuses))
	}
	if w := res.Warnings; len(w) != 1 || w[0].Message != `status "" refused: keys are 1 to 128 characters` || w[0].Path != "/ext/ui.ts" {
		t.Errorf("load warnings %+v, want the empty status key", w)
	}
}

// viewWidget is a widget whose view has a toggle, a select, a button and
// an input.
func viewWidget(verbose bool) *ext.Widget {
	return &ext.Widget{View: json.RawMessage(fmt.Sprintf(`{"type":"stack","children":[
		{"type":"toggle","id":"verbose","value":%v},
		{"type":"select","id":"level","value":"info","options":[{"value":"info"},{"value":"debug"}]},
		{"type":"button","id":"run","label":"Run"},
		{"type":"input","id":"query","value":"old"}]}`, verbose))}
}

// TestUIEvent: a ui/event reaches every handler with {widgetKey, id,
// value}; the widget a handler sets again is sent before UIEvent returns;
// a value that does not fit the control is invalidParams "value"; an
// unknown widget or control, or a widget without a view, reaches nobody;
// a failing handler is a warning; an unregistered handler hears nothing;
// an event no handler re-sets the widget for changes nothing (the field
// shows the view's value); a thread not loaded is ErrThreadNotFound.
func TestUIEvent(t *testing.T) {
	sub := newRecorder()
	var got []ext.ViewEvent
	var calls atomic.Int32
	e, thread, _ := uiEnv(t, sub, func(a *ext.API) error {
		u := a.Thread().UI
		u.SetWidget("checks", viewWidget(false))
		u.SetWidget("plain", lines("no view"))
		u.OnViewEvent(func(_ context.Context, ev ext.ViewEvent) error {
			calls.Add(1)
			got = append(got, ev)
			if ev.ID == "verbose" {
				time.Sleep(20 * time.Millisecond) // the answer waits for it
				u.SetWidget("checks", viewWidget(ev.Value.(bool)))
			}
			return nil
		})
		u.OnViewEvent(func(context.Context, ext.ViewEvent) error { return errors.New("boom") })
		return nil
	})
	ctx := context.Background()
	from := sub.mark()
	if err := e.m.UIEvent(ctx, thread, "checks", "verbose", json.RawMessage(`true`)); err != nil {
		t.Fatal(err)
	}
	ws := notesSince(sub, from, protocol.UIWidgetNotification.Name)
	if len(ws) != 1 || !strings.Contains(string(ws[0]), `"id":"verbose","type":"toggle","value":true`) {
		t.Errorf("ui/widget before the answer: %s", ws)
	}
	for _, tc := range []struct {
		id, value string
	}{
		{"verbose", `"yes"`}, {"verbose", ``}, {"verbose", `null`}, {"level", `"trace"`}, {"level", `1`},
		{"run", `true`}, {"query", `false`}, {"query", `"` + strings.Repeat("q", 16<<10+1) + `"`},
	} {
		var v json.RawMessage
		if tc.value != "" {
			v = json.RawMessage(tc.value)
		}
		err := e.m.UIEvent(ctx, thread, "checks", tc.id, v)
		var pe *coreerr.ParamError
		if !errors.As(err, &pe) || pe.Field != "value" {
			t.Errorf("ui/event %s %.20s: %v, want invalidParams value", tc.id, tc.value, err)
		}
	}
	// null is an absent value, as in every optional member: a press.
	if err := e.m.UIEvent(ctx, thread, "checks", "run", json.RawMessage(`null`)); err != nil {
		t.Errorf("ui/event run with value null: %v, want a press", err)
	}
	before := calls.Load()
	for _, tc := range [][2]string{{"checks", "nope"}, {"gone", "run"}, {"plain", "run"}} {
		if err := e.m.UIEvent(ctx, thread, tc[0], tc[1], nil); err != nil {
			t.Errorf("ui/event %v: %v, want {}", tc, err)
		}
	}
	if calls.Load() != before {
		t.Error("an event of a gone widget or control reached a handler")
	}
	from = sub.mark()
	if err := e.m.UIEvent(ctx, thread, "checks", "query", json.RawMessage(`"abc"`)); err != nil {
		t.Fatal(err)
	}
	if err := e.m.UIEvent(ctx, thread, "checks", "run", nil); err != nil {
		t.Fatal(err)
	}
	if err := e.m.UIEvent(ctx, thread, "checks", "level", json.RawMessage(`"debug"`)); err != nil {
		t.Fatal(err)
	}
	if sub.has(from, protocol.UIWidgetNotification.Name) {
		t.Error("a widget changed although no handler set it")
	}
	wantEvents := []ext.ViewEvent{{WidgetKey: "checks", ID: "verbose", Value: true}, {WidgetKey: "checks", ID: "run"}, {WidgetKey: "checks", ID: "query", Value: "abc"},
		{WidgetKey: "checks", ID: "run"}, {WidgetKey: "checks", ID: "level", Value: "debug"}}
	if diff := cmp.Diff(got, wantEvents); diff != "" {
		t.Errorf("events the handler got (-got +want):\n%s", diff)
	}
	sub.wait(t, &from, protocol.WarningNotification.Name, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), "its view event handler failed: boom")
	})
	res, err := e.m.Resume(ctx, newRecorder(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	if w := res.UI.Widgets[len(res.UI.Widgets)-1]; w.Key != "checks" || !strings.Contains(string(w.View), `"id":"query","type":"input","value":"old"`) {
		t.Errorf("the snapshot's last widget %s %s, want checks, its input showing the view's old value", w.Key, w.View)
	}
	if err := e.m.UIEvent(ctx, "no-such-thread", "checks", "run", nil); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("ui/event of an unknown thread: %v", err)
	}
}

// TestExtensionUIInvalidViewShowsLines: a widget whose view is invalid
// shows its lines, with one warning per key per load.
func TestExtensionUIInvalidViewShowsLines(t *testing.T) {
	sub := newRecorder()
	_, _, ui := uiEnv(t, sub, nil)
	from := sub.mark()
	bad := &ext.Widget{Lines: []string{"fallback"}, View: json.RawMessage(`{"type":"html","html":"<b>x</b>"}`)}
	ui.SetWidget("w", bad)
	ui.SetWidget("w", bad)
	ws := notesSince(sub, from, protocol.UIWidgetNotification.Name)
	if len(ws) != 2 || !strings.Contains(string(ws[1]), `"lines":["fallback"]`) || strings.Contains(string(ws[1]), "view") {
		t.Errorf("ui/widget %s, want the lines", ws)
	}
	if n := len(notesSince(sub, from, protocol.WarningNotification.Name)); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
}
