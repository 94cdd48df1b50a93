package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// The extension UI (spec "Dialogs and extension UI", "ui/event",
// "Limits"; EXTENSIBILITY.md §6). What a thread load's extensions set
// through their ext.UI is the thread's uiState, changed on the thread's
// goroutine together with the notification of the change (ui/state, or
// ui/widget for one widget), so the ui snapshot a start, resume or fork
// takes with its subscription, followed by the notifications sent after
// it, is always the thread's UI: the client installs the snapshot, then
// applies the notifications it buffered while it waited (the queue's
// rule). Text is cleaned (ext.CleanText) and views checked
// (ext.CheckView) before anything is kept; a refused status or widget, or
// a dropped view, is one warning per key per load: a load warning while
// the extensions load, else a subscriber warning. A thread a
// terminal-mode connection loaded has no extension UI: nothing is kept or
// sent.

// uiState is a thread load's extension UI (owner goroutine).
type uiState struct {
	statuses      map[string]string
	title         string
	working       string
	workingHidden bool
	widgets       []uiWidget // aboveEditor ones first, each group in last-set order
	// warned holds the keys ("status k", "widget k", "view k") already
	// warned about in this load.
	warned map[string]bool
	// loaded is set once the extensions' Load returned: later warnings go
	// to the subscribers.
	loaded       bool
	loadWarnings []protocol.Warning
	// terminalLogged holds the terminal-only methods already logged in
	// this load.
	terminalLogged map[string]bool
}

// uiWidget is one widget as shown, with the controls of its view.
type uiWidget struct {
	wire     protocol.UIWidget
	controls map[string]ext.Control
}

// uiHandlers are the view event handlers registered in a thread load
// (ext.UI.OnViewEvent), safe for concurrent use.
type uiHandlers struct {
	mu   sync.Mutex
	next int
	list []uiHandler
}

type uiHandler struct {
	id   int
	path string
	h    ext.ViewEventHandler
}

// viewEventTimeout bounds how long a ui/event waits for its handlers
// (EXTENSIBILITY.md §6 "ui/event answer timing").
const viewEventTimeout = 10 * time.Second

// uiSnapshot is the thread's extension UI as its start, resume and fork
// results show it (owner goroutine): empty for a thread without UI (a
// terminal-mode connection's).
func (t *thread) uiSnapshot() protocol.ThreadUI {
	if t.asks.terminal.Load() {
		return protocol.EmptyUI()
	}
	return t.ui.snapshot()
}

// snapshot is the UI as the results show it: statuses sorted by key,
// widgets above the editor first, each group in last-set order.
func (u *uiState) snapshot() protocol.ThreadUI {
	ui := protocol.EmptyUI()
	st := u.state()
	ui.Statuses, ui.Title, ui.WorkingMessage, ui.WorkingVisible = st.Statuses, st.Title, st.WorkingMessage, st.WorkingVisible
	for _, w := range u.widgets {
		ui.Widgets = append(ui.Widgets, w.wire)
	}
	return ui
}

// state is every field but the widgets, as ui/state sends them.
func (u *uiState) state() protocol.UIStateParams {
	st := protocol.UIStateParams{Statuses: []protocol.UIStatus{}, Title: u.title, WorkingMessage: u.working, WorkingVisible: !u.workingHidden}
	for k, v := range u.statuses {
		st.Statuses = append(st.Statuses, protocol.UIStatus{Key: k, Text: v})
	}
	slices.SortFunc(st.Statuses, func(a, b protocol.UIStatus) int { return strings.Compare(a.Key, b.Key) })
	return st
}

// uiChange runs change on the thread's goroutine, unless the thread has
// no UI; then, when change reports a change of the state, it sends
// ui/state. Nothing happens once the thread is unloading or gone, or when
// r, the runner of the extension asking (nil: none), is stale (reloaded
// or replaced).
func (t *thread) uiChange(r *ext.Runner, change func() bool) {
	_ = t.call(context.Background(), func() error {
		if t.unloading || t.asks.terminal.Load() || (r != nil && r.Stale()) {
			return nil
		}
		if change() {
			st := t.ui.state()
			st.ThreadID = t.id
			t.notify(protocol.UIState.With(st))
		}
		return nil
	})
}

// uiWarn (owner goroutine) reports a refused status or widget, or a
// dropped view, of the extension at path, once per what (a kind and a
// key) per load: a load warning while the extensions load, else a
// subscriber warning.
func (t *thread) uiWarn(path, what, msg string) {
	u := &t.ui
	if u.warned[what] {
		return
	}
	if u.warned == nil {
		u.warned = map[string]bool{}
	}
	u.warned[what] = true
	t.m.log.Warn("extension UI refused", "thread", t.id, "path", path, "message", msg)
	w := protocol.Warning{Source: protocol.WarningSourceExtension, Path: path, Message: msg}
	if !u.loaded {
		u.loadWarnings = append(u.loadWarnings, w)
		return
	}
	t.notify(protocol.WarningNotification.With(protocol.WarningParams{ThreadID: t.id, Warning: w}))
}

// uiLoaded (owner goroutine) ends the load of the extension UI and returns
// the warnings it gave meanwhile.
func (t *thread) uiLoaded() []protocol.Warning {
	t.ui.loaded = true
	w := t.ui.loadWarnings
	t.ui.loadWarnings = nil
	return w
}

// setUIStatus (owner goroutine) sets the status key of the extension at
// path to text as cleaned; "" clears it. A key that is not 1–128
// characters, or a new key past MaxStatuses, is refused.
func (t *thread) setUIStatus(path, key, text string) bool {
	u := &t.ui
	if !ext.ValidKey(key) {
		t.uiWarn(path, "status "+key, fmt.Sprintf("status %q refused: keys are 1 to %d characters", cutKey(key), ext.MaxKeyChars))
		return false
	}
	text = ext.CleanText(text, false)
	old, had := u.statuses[key]
	switch {
	case text == "":
		delete(u.statuses, key)
		return had
	case had && old == text:
		return false
	case !had && len(u.statuses) >= ext.MaxStatuses:
		t.uiWarn(path, "status "+key, fmt.Sprintf("status %q refused: a thread shows at most %d statuses", key, ext.MaxStatuses))
		return false
	}
	if u.statuses == nil {
		u.statuses = map[string]string{}
	}
	u.statuses[key] = text
	return true
}

// cutKey is a refused key as a warning quotes it.
func cutKey(key string) string { return ext.CleanText(key, true) }

// setUIWidget (owner goroutine) sets (w nil: removes) the widget key of the
// extension at path and sends ui/widget. A set widget moves to the end of
// its placement. An invalid or oversized view is dropped (a warning) and
// the lines show; a widget whose lines are over MaxWidgetBytes, a key
// that is not 1–128 characters, or a new key past MaxWidgets is refused
// (a warning; what was shown stays). Removing an absent key sends nothing.
func (t *thread) setUIWidget(path, key string, w *ext.Widget) {
	u := &t.ui
	if !ext.ValidKey(key) {
		t.uiWarn(path, "widget "+key, fmt.Sprintf("widget %q refused: keys are 1 to %d characters", cutKey(key), ext.MaxKeyChars))
		return
	}
	at := slices.IndexFunc(u.widgets, func(o uiWidget) bool { return o.wire.Key == key })
	if w == nil {
		if at >= 0 {
			u.widgets = slices.Delete(u.widgets, at, at+1)
			t.notify(protocol.UIWidgetNotification.With(protocol.UIWidgetParams{ThreadID: t.id, Key: key}))
		}
		return
	}
	placement := w.Placement
	if placement != ext.BelowEditor {
		placement = ext.AboveEditor
	}
	nw := uiWidget{wire: protocol.UIWidget{Key: key, Placement: placement}}
	if len(w.View) > 0 {
		v, err := ext.CheckView(w.View, ext.MaxWidgetBytes)
		if err == nil {
			nw.wire.View, nw.controls = v.JSON, v.Controls
		} else {
			t.uiWarn(path, "view "+key, fmt.Sprintf("the view of widget %q was dropped: %v", key, err))
		}
	}
	if nw.wire.View == nil {
		nw.wire.Lines = make([]string, 0, len(w.Lines))
		for _, l := range w.Lines {
			nw.wire.Lines = append(nw.wire.Lines, ext.CleanText(l, true))
		}
		if b, _ := json.Marshal(nw.wire.Lines); len(b) > ext.MaxWidgetBytes {
			t.uiWarn(path, "widget "+key, fmt.Sprintf("widget %q refused: its lines are %d bytes, over the 16 KiB limit", key, len(b)))
			return
		}
	}
	if at < 0 && len(u.widgets) >= ext.MaxWidgets {
		t.uiWarn(path, "widget "+key, fmt.Sprintf("widget %q refused: a thread shows at most %d widgets", key, ext.MaxWidgets))
		return
	}
	if at >= 0 {
		u.widgets = slices.Delete(u.widgets, at, at+1)
	}
	pos := len(u.widgets)
	if placement == ext.AboveEditor {
		// After the last aboveEditor widget, before the belowEditor ones.
		if i := slices.IndexFunc(u.widgets, func(o uiWidget) bool { return o.wire.Placement == ext.BelowEditor }); i >= 0 {
			pos = i
		}
	}
	u.widgets = slices.Insert(u.widgets, pos, nw)
	wire := nw.wire
	t.notify(protocol.UIWidgetNotification.With(protocol.UIWidgetParams{ThreadID: t.id, Key: key,
		Placement: wire.Placement, Lines: wire.Lines, View: wire.View}))
}

// setText (owner goroutine) sets *field to text as cleaned ("" clears it)
// and reports whether it changed.
func setText(field *string, text string) bool {
	text = ext.CleanText(text, false)
	if *field == text {
		return false
	}
	*field = text
	return true
}

// logTerminalOnly (owner goroutine) writes the log line of a
// terminal-only call (EXTENSIBILITY.md §6 "Factories and other
// terminal-only calls"), once per method per load.
func (t *thread) logTerminalOnly(path, method string) {
	if t.ui.terminalLogged[method] {
		return
	}
	if t.ui.terminalLogged == nil {
		t.ui.terminalLogged = map[string]bool{}
	}
	t.ui.terminalLogged[method] = true
	t.m.log.Info(fmt.Sprintf("extension %s: ctx.ui.%s draws only in the terminal (thread %s)", path, method, t.id))
}

// clearUI (owner goroutine) clears everything the thread load's
// extensions showed, for /reload (spec "Dialogs and extension UI"): a
// ui/widget removal per widget, then one ui/state with every field
// cleared; the per-load warnings and log lines start over.
func (t *thread) clearUI() {
	widgets := t.ui.widgets
	t.ui = uiState{}
	if t.asks.terminal.Load() {
		return
	}
	for _, w := range widgets {
		t.notify(protocol.UIWidgetNotification.With(protocol.UIWidgetParams{ThreadID: t.id, Key: w.wire.Key}))
	}
	st := t.ui.state()
	st.ThreadID = t.id
	t.notify(protocol.UIState.With(st))
}

// clear drops every handler (the load that registered them is over).
func (hs *uiHandlers) clear() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.list = nil
}

// add registers h of the extension at path and returns its unregister
// function.
func (hs *uiHandlers) add(path string, h ext.ViewEventHandler) func() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.next++
	id := hs.next
	hs.list = append(hs.list, uiHandler{id: id, path: path, h: h})
	return func() {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		hs.list = slices.DeleteFunc(hs.list, func(o uiHandler) bool { return o.id == id })
	}
}

func (hs *uiHandlers) all() []uiHandler {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return slices.Clone(hs.list)
}

// UIEvent carries a press of the button id, or a change of the field id,
// in the view of the widget widgetKey of the loaded thread threadID to
// every handler its extensions registered with ext.UI.OnViewEvent (spec
// "ui/event"), and returns once they all returned, at most 10 s later (a
// handler still running goes on unheard): what they set is sent before.
// A failing handler is a warning. value is the raw JSON value (nil when
// absent). A widget without a view or no longer shown, an id naming no
// control of its view, or a thread without UI reaches nobody and is no
// error. Errors: ErrThreadNotFound; invalidParams "value" when the value
// does not fit the control: not a boolean for a toggle, not a string for
// an input (or one over 16 KiB) or a select (or one that is not the
// value of one of its options), any value for a button.
func (m *Manager) UIEvent(ctx context.Context, threadID, widgetKey, id string, value json.RawMessage) error {
	t, err := m.lookup(threadID)
	if err != nil {
		return err
	}
	var ctl ext.Control
	var found bool
	if err := t.call(ctx, func() error {
		if t.asks.terminal.Load() {
			return nil
		}
		i := slices.IndexFunc(t.ui.widgets, func(o uiWidget) bool { return o.wire.Key == widgetKey })
		if i >= 0 {
			ctl, found = t.ui.widgets[i].controls[id]
		}
		return nil
	}); err != nil {
		return err
	}
	if !found {
		return nil
	}
	e := ext.ViewEvent{WidgetKey: widgetKey, ID: id}
	if e.Value, err = controlValue(ctl, value); err != nil {
		return err
	}
	t.dispatchViewEvent(ctx, e)
	return nil
}

// controlValue checks value (raw JSON, nil when absent; null is absent,
// as for every optional member) against ctl and returns it as a ViewEvent
// carries it.
func controlValue(ctl ext.Control, value json.RawMessage) (any, error) {
	if string(bytes.TrimSpace(value)) == "null" {
		value = nil
	}
	if ctl.Type == ext.ViewButton {
		if value != nil {
			return nil, coreerr.Param("value", "a button press carries no value")
		}
		return nil, nil
	}
	if value == nil {
		return nil, coreerr.Param("value", "a %s needs a value", ctl.Type)
	}
	if ctl.Type == ext.ViewToggle {
		var b bool
		if string(value) == "null" || json.Unmarshal(value, &b) != nil {
			return nil, coreerr.Param("value", "a toggle's value is a boolean")
		}
		return b, nil
	}
	var s string
	if string(value) == "null" || json.Unmarshal(value, &s) != nil {
		return nil, coreerr.Param("value", "a %s's value is a string", ctl.Type)
	}
	switch {
	case ctl.Type == ext.ViewInput && len(s) > ext.MaxInputValueBytes:
		return nil, coreerr.Param("value", "an input's value is at most 16 KiB, got %d bytes", len(s))
	case ctl.Type == ext.ViewSelect && !slices.Contains(ctl.Options, s):
		return nil, coreerr.Param("value", "%q is not one of the select's options", s)
	}
	return s, nil
}

// dispatchViewEvent gives e to every handler at once and waits until they
// all returned, the 10 s passed, or ctx ended. A failing handler (an
// error or a panic) is a subscriber warning.
func (t *thread) dispatchViewEvent(ctx context.Context, e ext.ViewEvent) {
	hs := t.uiHandlers.all()
	if len(hs) == 0 {
		return
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), viewEventTimeout)
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runViewHandler(hctx, h.h, e); err != nil {
				(&extHost{t: t}).Warn(ext.Warning{Path: h.path, Message: fmt.Sprintf("extension %s: its view event handler failed: %v", h.path, err)})
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		cancel()
		close(done)
	}()
	select {
	case <-done:
	case <-hctx.Done():
	case <-ctx.Done():
	}
}

// runViewHandler runs h, its panic an error.
func runViewHandler(ctx context.Context, h ext.ViewEventHandler, e ext.ViewEvent) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, e)
}
