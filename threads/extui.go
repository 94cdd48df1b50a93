package threads

import (
	"slices"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// uiState is a thread load's extension UI (spec "Dialogs and extension
// UI"): what its extensions set through the UI setters of ext.UI, shown
// as the ui of the thread/start, thread/resume and thread/fork results.
// Its methods are safe for concurrent use. The live ui/state and
// ui/widget notifications, the text rules and the limits of the spec are
// issue 26's.
type uiState struct {
	mu            sync.Mutex
	statuses      map[string]string
	title         string
	working       string
	workingHidden bool
	widgets       []protocol.UIWidget // aboveEditor ones first, each group in last-set order
}

func (u *uiState) setStatus(key, text string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if text == "" {
		delete(u.statuses, key)
		return
	}
	if u.statuses == nil {
		u.statuses = map[string]string{}
	}
	u.statuses[key] = text
}

// setWidget sets (nil: removes) the widget key; a set widget moves to the
// end of its placement.
func (u *uiState) setWidget(key string, w *ext.Widget) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.widgets = slices.DeleteFunc(u.widgets, func(o protocol.UIWidget) bool { return o.Key == key })
	if w == nil {
		return
	}
	placement := w.Placement
	if placement != ext.BelowEditor {
		placement = ext.AboveEditor
	}
	nw := protocol.UIWidget{Key: key, Placement: placement, Lines: append([]string{}, w.Lines...)}
	at := len(u.widgets)
	if placement == ext.AboveEditor {
		// After the last aboveEditor widget, before the belowEditor ones.
		at = slices.IndexFunc(u.widgets, func(o protocol.UIWidget) bool { return o.Placement == ext.BelowEditor })
		if at < 0 {
			at = len(u.widgets)
		}
	}
	u.widgets = slices.Insert(u.widgets, at, nw)
}

func (u *uiState) setTitle(title string) {
	u.mu.Lock()
	u.title = title
	u.mu.Unlock()
}

func (u *uiState) setWorking(message string) {
	u.mu.Lock()
	u.working = message
	u.mu.Unlock()
}

func (u *uiState) setWorkingVisible(visible bool) {
	u.mu.Lock()
	u.workingHidden = !visible
	u.mu.Unlock()
}

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
	u.mu.Lock()
	defer u.mu.Unlock()
	ui := protocol.EmptyUI()
	for k, v := range u.statuses {
		ui.Statuses = append(ui.Statuses, protocol.UIStatus{Key: k, Text: v})
	}
	slices.SortFunc(ui.Statuses, func(a, b protocol.UIStatus) int { return strings.Compare(a.Key, b.Key) })
	ui.Title, ui.WorkingMessage, ui.WorkingVisible = u.title, u.working, !u.workingHidden
	ui.Widgets = append(ui.Widgets, u.widgets...)
	return ui
}
