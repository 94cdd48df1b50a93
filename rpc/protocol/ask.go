package protocol

import "encoding/json"

// Approvals and dialogs: the requests the server sends a client to ask the
// person (spec: Approvals; Dialogs and extension UI). A server request is
// sent to one subscriber of the thread at a time and withdrawn with
// serverRequest/cancelled; an answer of the wrong shape is a decline
// (approvals) or a cancel (dialogs), never consent.

// Client modes of capabilities.mode (issue 11's decisions).
const (
	// ClientModeDesktop is the default: the connection's threads default to
	// approvalMode ask and have dialogs.
	ClientModeDesktop = "desktop"
	// ClientModeTerminal is an in-process terminal connection: the threads
	// it loads default to fullAccess and have no dialogs (ask_user answers
	// the model that no UI is attached).
	ClientModeTerminal = "terminal"
)

// The decisions of item/toolCall/requestApproval, as on the wire.
const (
	DecisionAccept                 = "accept"
	DecisionAcceptForSession       = "acceptForSession"
	DecisionAcceptPrefixForSession = "acceptPrefixForSession"
	DecisionDecline                = "decline"
	DecisionCancel                 = "cancel"
)

// MaxDeclineMessageChars bounds a decline's message in code points; a longer
// message is cut (spec: "bounded to 4,000 characters").
const MaxDeclineMessageChars = 4000

// ItemToolCallRequestApprovalParams are the params of
// item/toolCall/requestApproval: the call waiting (thread, turn and item
// ids: the item is the toolCall item, whose id is the call's id), the tool's
// name, its input (the arguments object, inline), the decisions to offer in
// the order to show them, an optional reason (why the gate asks, e.g. a write
// outside the checkout) and, when acceptPrefixForSession is offered, the
// shell command prefix it grants (words separated by one space).
type ItemToolCallRequestApprovalParams struct {
	ThreadID  string          `json:"threadId"`
	TurnID    string          `json:"turnId"`
	ItemID    string          `json:"itemId"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input,omitempty"`
	InputRef  *PayloadRef     `json:"inputRef,omitempty"`
	Decisions []string        `json:"decisions"`
	Reason    string          `json:"reason,omitempty"`
	Prefix    string          `json:"prefix,omitempty"`
}

// ItemToolCallRequestApprovalResult is the client's answer: one of the
// offered decisions and, for decline, an optional message (at most 4,000
// code points; longer is cut) the model gets as the decline reason. An
// unoffered decision or an answer of another shape is a decline.
type ItemToolCallRequestApprovalResult struct {
	Decision string `json:"decision"`
	Message  string `json:"message,omitempty"`
}

// UserInputOption is one answer offered for an ask_user question; a label
// ending in "(Recommended)" is the recommended one.
type UserInputOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// UserInputQuestion is one ask_user question: its id (the key of its
// answer), its text and its options.
type UserInputQuestion struct {
	ID      string            `json:"id"`
	Text    string            `json:"text"`
	Options []UserInputOption `json:"options"`
}

// ItemToolCallRequestUserInputParams are the params of
// item/toolCall/requestUserInput: ask_user's questions, all at once, with
// the id of the toolCall item asking.
type ItemToolCallRequestUserInputParams struct {
	ThreadID  string              `json:"threadId"`
	TurnID    string              `json:"turnId"`
	ItemID    string              `json:"itemId"`
	Questions []UserInputQuestion `json:"questions"`
}

// UserInputAnswer answers one question: Label, the chosen option's exact
// label, with an optional Note; or Other, the person's own answer.
type UserInputAnswer struct {
	Label *string `json:"label,omitempty"`
	Note  *string `json:"note,omitempty"`
	Other *string `json:"other,omitempty"`
}

// ItemToolCallRequestUserInputResult is the client's answer: answers by
// question id, a skipped question left out. An absent answers ({})
// dismisses the questions and stops the turn, as does an answer whose label
// matches no option of its question or of another shape.
type ItemToolCallRequestUserInputResult struct {
	Answers map[string]UserInputAnswer `json:"answers,omitempty"`
}

// Dialog kinds of ui/dialog.
const (
	DialogSelect  = "select"
	DialogConfirm = "confirm"
	DialogInput   = "input"
	DialogEditor  = "editor"
)

// UIDialogParams are the params of ui/dialog: kind says which dialog and
// which field it carries: a select its options (labels), a confirm its
// message, an input its placeholder, an editor its prefill. Title is shown
// for every kind.
type UIDialogParams struct {
	ThreadID    string   `json:"threadId"`
	Kind        string   `json:"kind"`
	Title       string   `json:"title"`
	Options     []string `json:"options,omitempty"`
	Message     string   `json:"message,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Prefill     string   `json:"prefill,omitempty"`
}

// UIDialogResult is the client's answer: {value} for a select (one of the
// options), an input or an editor; {confirmed: true} for a confirm; {} to
// cancel. Anything else cancels.
type UIDialogResult struct {
	Value     *string `json:"value,omitempty"`
	Confirmed *bool   `json:"confirmed,omitempty"`
}

// Levels of ui/notify.
const (
	NotifyInfo    = "info"
	NotifyWarning = "warning"
	NotifyError   = "error"
)

// UINotifyParams are the params of ui/notify: a notice for the thread's
// subscribers, level info, warning or error.
type UINotifyParams struct {
	ThreadID string `json:"threadId"`
	Level    string `json:"level"`
	Message  string `json:"message"`
}
