package protocol

import "encoding/json"

// The extension UI's notifications and ui/event (spec "Dialogs and
// extension UI", "ui/event"; EXTENSIBILITY.md §6). A client installs the
// ui of a thread/start, thread/resume or thread/fork result, then applies
// ui/state and ui/widget, buffered across a resume as the queue's
// notifications are.

// UIStateParams are the params of ui/state: every field of the thread's
// extension UI but the widgets, whole, after one changed. An absent title
// or workingMessage is a cleared one; workingVisible false asks the
// client to hide its waiting indicator.
type UIStateParams struct {
	ThreadID       string     `json:"threadId"`
	Statuses       []UIStatus `json:"statuses"`
	Title          string     `json:"title,omitempty"`
	WorkingMessage string     `json:"workingMessage,omitempty"`
	WorkingVisible bool       `json:"workingVisible"`
}

// UIWidgetParams are the params of ui/widget: one widget set or replaced
// ({threadId, key, placement, lines} or {threadId, key, placement, view};
// it moves to the end of its placement), or {threadId, key} alone when
// it was removed. Lines [] is a set (an empty widget), not a removal.
type UIWidgetParams struct {
	ThreadID  string          `json:"threadId"`
	Key       string          `json:"key"`
	Placement string          `json:"placement,omitempty"`
	Lines     []string        `json:"lines,omitempty"`
	View      json.RawMessage `json:"view,omitempty"`
}

// MarshalJSON writes lines, [] when empty, for a widget set without a
// view (as UIWidget does).
func (p UIWidgetParams) MarshalJSON() ([]byte, error) {
	type fields UIWidgetParams
	if p.Placement == "" {
		return json.Marshal(fields(p))
	}
	w, err := json.Marshal(UIWidget{Key: p.Key, Placement: p.Placement, Lines: p.Lines, View: p.View})
	if err != nil {
		return nil, err
	}
	id, err := json.Marshal(p.ThreadID)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"threadId":`), id...), append([]byte{','}, w[1:]...)...), nil
}

// UIEventParams are the params of ui/event: a press of the button id, or a
// change of the field id, in the view of the widget widgetKey. Value is a
// string for an input or a select (one of its options' values; an input's
// at most 16 KiB), a boolean for a toggle, and absent for a button.
type UIEventParams struct {
	ThreadID  string          `json:"threadId"`
	WidgetKey string          `json:"widgetKey"`
	ID        string          `json:"id"`
	Value     json.RawMessage `json:"value,omitempty"`
}

// UIEventResult is the answer to ui/event: {}, written once every
// handler returned (at most 10 s), after the ui/widget notifications
// they sent.
type UIEventResult struct{}
