package threads

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// Dialogs (spec: "Dialogs and extension UI"; issue 11): ask_user's
// questions (item/toolCall/requestUserInput), ui/dialog for server
// components, and the ui/notify notice; the thread's extensions reach them
// through their ext.UI (extensions.go). They are asked the way approvals
// are (serverreq.go), of desktop-mode subscribers only; a thread a
// terminal-mode connection loaded has no dialogs.

// questions asks ask_user's questions qs of the running turn's call
// callID (ext.UI.Questions, for the built-in ask_user extension): it
// sends them as item/toolCall/requestUserInput and checks the answer. {},
// an answer of the wrong shape (a label matching no option of its
// question, an unknown question id, label and other together, neither of
// them), no subscriber to ask, or no running turn dismiss the questions
// (an error wrapping ext.ErrDismissed; the extension ends the turn).
func (t *thread) questions(ctx context.Context, callID string, qs []ext.Question) (map[string]ext.Answer, error) {
	var turnID string
	if err := t.call(ctx, func() error {
		if t.turn != nil {
			turnID = t.turn.id
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if turnID == "" {
		return nil, fmt.Errorf("%w: no turn is running", ext.ErrDismissed)
	}
	p := protocol.ItemToolCallRequestUserInputParams{ThreadID: t.id, TurnID: turnID, ItemID: callID}
	for _, q := range qs {
		wq := protocol.UserInputQuestion{ID: q.ID, Text: q.Text, Options: []protocol.UserInputOption{}}
		for _, o := range q.Options {
			wq.Options = append(wq.Options, protocol.UserInputOption{Label: o.Label, Description: o.Description})
		}
		p.Questions = append(p.Questions, wq)
	}
	raw, answered := t.ask(ctx, protocol.WaitingOnDialog, protocol.ItemToolCallRequestUserInput.Name, p)
	var res protocol.ItemToolCallRequestUserInputResult
	if answered {
		if err := decodeStrict(raw, &res); err != nil {
			t.m.log.Info("ask_user answer of the wrong shape: dismissed", "thread", t.id, "item", callID, "err", err)
			answered = false
		}
	}
	var answers map[string]ext.Answer
	if answered && res.Answers != nil {
		var err error
		if answers, err = checkAnswers(qs, res.Answers); err != nil {
			t.m.log.Info("ask_user answer of the wrong shape: dismissed", "thread", t.id, "item", callID, "err", err)
			answered = false
		}
	}
	if !answered || res.Answers == nil {
		return nil, ext.ErrDismissed
	}
	return answers, nil
}

// checkAnswers checks the answers against the questions: every key is a
// question's id and every answer is either the exact label of one of its
// options (with an optional note) or other alone.
func checkAnswers(qs []ext.Question, in map[string]protocol.UserInputAnswer) (map[string]ext.Answer, error) {
	out := make(map[string]ext.Answer, len(in))
	for id, a := range in {
		i := slices.IndexFunc(qs, func(q ext.Question) bool { return q.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("answers.%s: no question has this id", id)
		}
		switch {
		case a.Label != nil && a.Other == nil:
			if !slices.ContainsFunc(qs[i].Options, func(o ext.QuestionOption) bool { return o.Label == *a.Label }) {
				return nil, fmt.Errorf("answers.%s.label: %q is not an option of the question", id, *a.Label)
			}
			ans := ext.Answer{Label: *a.Label}
			if a.Note != nil {
				ans.Note = *a.Note
			}
			out[id] = ans
		case a.Other != nil && a.Label == nil && a.Note == nil:
			out[id] = ext.Answer{Other: *a.Other}
		default:
			return nil, fmt.Errorf("answers.%s: give label (and an optional note) or other", id)
		}
	}
	return out, nil
}

// DialogRequest is a ui/dialog a server component asks in a loaded
// thread: Kind is protocol.DialogSelect (with Options), DialogConfirm (with
// Message), DialogInput (with Placeholder) or DialogEditor (with Prefill);
// Title is shown for every kind.
type DialogRequest struct {
	Kind        string
	Title       string
	Options     []string
	Message     string
	Placeholder string
	Prefill     string
}

// DialogAnswer is the person's answer to a ui/dialog. Cancelled is true
// for {}, an answer of the wrong shape (a select value that is not one of
// the options, a value to a confirm, confirmed to anything else), no
// subscriber to ask, or a withdrawn dialog. Otherwise Value holds the
// select, input or editor value, and a confirm was confirmed.
type DialogAnswer struct {
	Cancelled bool
	Value     string
}

// Dialog asks the person in threadID the dialog d with ui/dialog, of one
// desktop-mode subscriber at a time (routed as approvals are: spec,
// "Dialogs and extension UI"), while the thread reports waitingOn
// ["dialog"]. ctx ending withdraws it (serverRequest/cancelled). A thread
// a terminal-mode connection loaded has no dialogs: it answers cancelled.
// Errors: ErrThreadNotFound; invalidParams "kind" for an unknown kind,
// "options" for a select without options.
func (m *Manager) Dialog(ctx context.Context, threadID string, d DialogRequest) (DialogAnswer, error) {
	t, err := m.lookup(threadID)
	if err != nil {
		return DialogAnswer{}, err
	}
	return t.dialog(ctx, d)
}

// dialog is Manager.Dialog on the loaded thread t (not on its goroutine).
func (t *thread) dialog(ctx context.Context, d DialogRequest) (DialogAnswer, error) {
	p := protocol.UIDialogParams{ThreadID: t.id, Kind: d.Kind, Title: d.Title}
	switch d.Kind {
	case protocol.DialogSelect:
		if len(d.Options) == 0 {
			return DialogAnswer{}, coreerr.Param("options", "a select needs options")
		}
		p.Options = d.Options
	case protocol.DialogConfirm:
		p.Message = d.Message
	case protocol.DialogInput:
		p.Placeholder = d.Placeholder
	case protocol.DialogEditor:
		p.Prefill = d.Prefill
	default:
		return DialogAnswer{}, coreerr.Param("kind", "must be select, confirm, input or editor, got %q", d.Kind)
	}
	cancelled := DialogAnswer{Cancelled: true}
	if t.asks.terminal.Load() {
		return cancelled, nil
	}
	raw, answered := t.ask(ctx, protocol.WaitingOnDialog, protocol.UIDialog.Name, p)
	var res protocol.UIDialogResult
	if !answered || decodeStrict(raw, &res) != nil {
		return cancelled, nil
	}
	switch {
	case d.Kind == protocol.DialogConfirm:
		if res.Value != nil || res.Confirmed == nil || !*res.Confirmed {
			return cancelled, nil
		}
		return DialogAnswer{}, nil
	case res.Confirmed != nil || res.Value == nil:
		return cancelled, nil
	case d.Kind == protocol.DialogSelect && !slices.Contains(d.Options, *res.Value):
		return cancelled, nil
	}
	return DialogAnswer{Value: *res.Value}, nil
}

// MaxNoticeChars bounds a ui/notify message in code points; longer is cut.
const MaxNoticeChars = 4000

// NotifyUI sends the notice ui/notify {threadId, level, message} to the
// subscribers of the loaded thread threadID (spec: "Notices such as
// "Downloaded model" arrive as the notification ui/notify"). The message is
// cut to MaxNoticeChars code points. Errors: ErrThreadNotFound;
// invalidParams "level" for a level other than info, warning or error,
// "message" for an empty message.
func (m *Manager) NotifyUI(ctx context.Context, threadID, level, message string) error {
	if err := checkNotice(level, message); err != nil {
		return err
	}
	t, err := m.lookup(threadID)
	if err != nil {
		return err
	}
	return t.notifyUI(ctx, level, message)
}

// checkNotice checks a ui/notify level and message (NotifyUI's errors).
func checkNotice(level, message string) error {
	switch level {
	case protocol.NotifyInfo, protocol.NotifyWarning, protocol.NotifyError:
	default:
		return coreerr.Param("level", "must be info, warning or error, got %q", level)
	}
	if strings.TrimSpace(message) == "" {
		return coreerr.Param("message", "must not be empty")
	}
	return nil
}

// notifyUI sends the checked notice to t's subscribers (not on its
// goroutine).
func (t *thread) notifyUI(ctx context.Context, level, message string) error {
	n := protocol.UINotify.With(protocol.UINotifyParams{ThreadID: t.id, Level: level, Message: session.TruncateRunes(message, MaxNoticeChars)})
	return t.call(ctx, func() error {
		t.notify(n)
		return nil
	})
}
