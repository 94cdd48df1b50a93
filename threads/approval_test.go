package threads

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
)

// asker is a subscriber that answers server requests with answer and
// records what it was asked.
type asker struct {
	*recorder
	mode   string
	answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

	mu    sync.Mutex
	asked []recorded
}

func newAsker(answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)) *asker {
	return &asker{recorder: newRecorder(), answer: answer}
}

func (a *asker) ClientMode() string {
	if a.mode == "" {
		return protocol.ClientModeDesktop
	}
	return a.mode
}

func (a *asker) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.asked = append(a.asked, recorded{method, b})
	a.mu.Unlock()
	return a.answer(ctx, method, b)
}

func (a *asker) requests() []recorded {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]recorded(nil), a.asked...)
}

// reply answers every request with the JSON v.
func reply(v string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(v), nil
	}
}

// askTurn starts an ask-mode thread in a new repository with model and
// runs one turn to its end; it returns the turn's summary and toolCall
// items' statuses and outputs by id.
func askTurn(t *testing.T, e *env, sub Subscriber, repo, model string) (protocol.Turn, map[string]protocol.Item) {
	t.Helper()
	res, err := e.m.Start(context.Background(), sub, StartOptions{Cwd: repo, ApprovalMode: protocol.ApprovalAsk, Model: &ModelRef{Provider: "scripted", ID: model}})
	if err != nil {
		t.Fatal(err)
	}
	return runAsked(t, e, sub, res.Thread.ID)
}

func runAsked(t *testing.T, e *env, sub Subscriber, thread string) (protocol.Turn, map[string]protocol.Item) {
	t.Helper()
	var r *recorder
	switch s := sub.(type) {
	case *asker:
		r = s.recorder
	case *recorder:
		r = s
	}
	from := r.mark()
	if _, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(r.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &done); err != nil {
		t.Fatal(err)
	}
	items := map[string]protocol.Item{}
	r.mu.Lock()
	for _, n := range r.notes {
		if n.method != protocol.ItemCompleted.Name {
			continue
		}
		var p protocol.ItemCompletedParams
		if json.Unmarshal(n.params, &p) == nil && p.ThreadID == thread && p.Item.Type == protocol.ItemToolCall {
			items[p.Item.ID] = p.Item
		}
	}
	r.mu.Unlock()
	return done.Turn, items
}

func TestApprovalErrorAnswerDeclines(t *testing.T) {
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	gittest.CommitAll(t, repo, "base")
	e := newEnv(t, map[string]string{"m": scriptJSON(
		map[string]any{"toolCalls": []any{map[string]any{"id": "b1", "name": "bash", "arguments": map[string]any{"command": "touch made.txt"}}}},
		map[string]any{"text": "ok"},
	)}, 0)
	sub := newAsker(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "no"}
	})
	turn, items := askTurn(t, e, sub, repo, "m")
	if turn.Status != protocol.TurnCompleted || items["b1"].Status != "declined" {
		t.Errorf("turn %s, item %s", turn.Status, mustJSONT(items["b1"]))
	}
	if diff := cmp.Diff(len(sub.requests()), 1); diff != "" {
		t.Error(diff)
	}
}

func mustJSONT(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDialog asks ui/dialog of each kind and checks the answers: the
// value, a confirm, {} and the wrong shapes cancel; the thread waits on
// the dialog meanwhile; a terminal-mode thread has no dialogs.
func TestDialog(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, nil, 0)
	ctx := context.Background()
	var answer string
	sub := newAsker(func(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
		if method != protocol.UIDialog.Name {
			t.Errorf("asked %s", method)
		}
		return json.RawMessage(answer), nil
	})
	thread := e.start(t, sub, dir, "")
	cases := []struct {
		d      DialogRequest
		answer string
		want   DialogAnswer
	}{
		{DialogRequest{Kind: protocol.DialogSelect, Title: "Pick", Options: []string{"a", "b"}}, `{"value":"b"}`, DialogAnswer{Value: "b"}},
		{DialogRequest{Kind: protocol.DialogSelect, Title: "Pick", Options: []string{"a", "b"}}, `{"value":"c"}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogConfirm, Title: "Sure?", Message: "m"}, `{"confirmed":true}`, DialogAnswer{}},
		{DialogRequest{Kind: protocol.DialogConfirm, Title: "Sure?"}, `{"confirmed":false}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogConfirm, Title: "Sure?"}, `{"value":"yes"}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogInput, Title: "Name", Placeholder: "p"}, `{"value":"x"}`, DialogAnswer{Value: "x"}},
		{DialogRequest{Kind: protocol.DialogInput, Title: "Name"}, `{"confirmed":true}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogEditor, Title: "Edit", Prefill: "old"}, `{"value":"new"}`, DialogAnswer{Value: "new"}},
		{DialogRequest{Kind: protocol.DialogEditor, Title: "Edit"}, `{}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogEditor, Title: "Edit"}, `{"value":"x","more":1}`, DialogAnswer{Cancelled: true}},
		{DialogRequest{Kind: protocol.DialogEditor, Title: "Edit"}, `[]`, DialogAnswer{Cancelled: true}},
	}
	for _, c := range cases {
		answer = c.answer
		from := e.bcast.mark()
		got, err := e.m.Dialog(ctx, thread, c.d)
		if err != nil || got != c.want {
			t.Errorf("%s answered %s: %+v, %v; want %+v", c.d.Kind, c.answer, got, err, c.want)
		}
		e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, func(raw json.RawMessage) bool {
			var p protocol.ThreadStatusChangedParams
			_ = json.Unmarshal(raw, &p)
			return p.ThreadID == thread && p.Status.Type == protocol.ThreadStatusActive && len(p.Status.WaitingOn) == 1 && p.Status.WaitingOn[0] == protocol.WaitingOnDialog
		})
		e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusIdle))
	}
	var last recorded
	if reqs := sub.requests(); len(reqs) > 0 {
		last = reqs[0]
	}
	if want := `{"threadId":"` + thread + `","kind":"select","title":"Pick","options":["a","b"]}`; string(last.params) != want {
		t.Errorf("ui/dialog params %s, want %s", last.params, want)
	}
	if _, err := e.m.Dialog(ctx, thread, DialogRequest{Kind: "popup"}); !strings.Contains(errString(err), "kind") {
		t.Errorf("unknown kind: %v", err)
	}

	term := newAsker(reply(`{"value":"x"}`))
	term.mode = protocol.ClientModeTerminal
	res, err := e.m.Start(ctx, term, StartOptions{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Thread.ID == "" {
		t.Fatal("no thread")
	}
	got, err := e.m.Dialog(ctx, res.Thread.ID, DialogRequest{Kind: protocol.DialogInput, Title: "t"})
	if err != nil || !got.Cancelled || len(term.requests()) != 0 {
		t.Errorf("terminal thread: %+v, %v, asked %d", got, err, len(term.requests()))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestNotifyUI sends ui/notify to the thread's subscribers and refuses bad
// levels and empty messages.
func TestNotifyUI(t *testing.T) {
	e := newEnv(t, nil, 0)
	sub := newRecorder()
	thread := e.start(t, sub, t.TempDir(), "")
	ctx := context.Background()
	from := sub.mark()
	if err := e.m.NotifyUI(ctx, thread, protocol.NotifyWarning, "Downloaded model"); err != nil {
		t.Fatal(err)
	}
	got := sub.wait(t, &from, protocol.UINotify.Name, nil)
	if want := `{"threadId":"` + thread + `","level":"warning","message":"Downloaded model"}`; string(got) != want {
		t.Errorf("ui/notify %s, want %s", got, want)
	}
	for _, bad := range []struct{ level, msg, field string }{{"debug", "m", "level"}, {"info", " ", "message"}} {
		var pe *coreerr.ParamError
		if err := e.m.NotifyUI(ctx, thread, bad.level, bad.msg); !errors.As(err, &pe) || pe.Field != bad.field {
			t.Errorf("NotifyUI(%q, %q): %v", bad.level, bad.msg, err)
		}
	}
	if err := e.m.NotifyUI(ctx, "nope", "info", "m"); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("unknown thread: %v", err)
	}
}

// TestCheckAnswers checks ask_user answers against the questions.
func TestCheckAnswers(t *testing.T) {
	qs := []ext.Question{
		{ID: "a", Text: "A?", Options: []ext.QuestionOption{{Label: "Yes (Recommended)"}, {Label: "No"}}},
		{ID: "b", Text: "B?", Options: []ext.QuestionOption{{Label: "x"}}},
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name string
		in   map[string]protocol.UserInputAnswer
		want map[string]ext.Answer
	}{
		{"label and note", map[string]protocol.UserInputAnswer{"a": {Label: str("No"), Note: str("n")}}, map[string]ext.Answer{"a": {Label: "No", Note: "n"}}},
		{"other", map[string]protocol.UserInputAnswer{"b": {Other: str("mine")}}, map[string]ext.Answer{"b": {Other: "mine"}}},
		{"all skipped", map[string]protocol.UserInputAnswer{}, map[string]ext.Answer{}},
		{"unknown label", map[string]protocol.UserInputAnswer{"a": {Label: str("Yes")}}, nil},
		{"unknown question", map[string]protocol.UserInputAnswer{"c": {Label: str("x")}}, nil},
		{"label and other", map[string]protocol.UserInputAnswer{"b": {Label: str("x"), Other: str("y")}}, nil},
		{"note alone", map[string]protocol.UserInputAnswer{"b": {Note: str("y")}}, nil},
		{"other with note", map[string]protocol.UserInputAnswer{"b": {Other: str("y"), Note: str("z")}}, nil},
	}
	for _, c := range cases {
		got, err := checkAnswers(qs, c.in)
		if c.want == nil {
			if err == nil {
				t.Errorf("%s: accepted %v", c.name, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(got, c.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", c.name, diff)
		}
	}
}

// TestAskUserTerminal checks a terminal-mode thread: it defaults to
// fullAccess and ask_user answers the model that no UI is attached,
// without asking anyone.
func TestAskUserTerminal(t *testing.T) {
	e := newEnv(t, map[string]string{"m": scriptJSON(
		map[string]any{"toolCalls": []any{map[string]any{"id": "q", "name": "ask_user", "arguments": map[string]any{"questions": []any{
			map[string]any{"id": "a", "text": "A?", "options": []any{map[string]any{"label": "Yes"}}}}}}}},
		map[string]any{"text": "ok"},
	)}, 0)
	sub := newAsker(reply(`{"answers":{"a":{"label":"Yes"}}}`))
	sub.mode = protocol.ClientModeTerminal
	res, err := e.m.Start(context.Background(), sub, StartOptions{Cwd: t.TempDir(), Model: &ModelRef{Provider: "scripted", ID: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if th, err := e.m.lookup(res.Thread.ID); err != nil || th.approval.Load() != protocol.ApprovalFullAccess {
		t.Errorf("terminal thread is not in fullAccess (%v)", err)
	}
	turn, items := runAsked(t, e, sub, res.Thread.ID)
	out := ""
	if items["q"].Output != nil {
		out = *items["q"].Output
	}
	if turn.Status != protocol.TurnCompleted || items["q"].Status != "failed" || !strings.Contains(out, "no UI is attached") || len(sub.requests()) != 0 {
		t.Errorf("turn %s, q %s %q, asked %d", turn.Status, items["q"].Status, out, len(sub.requests()))
	}
}

// TestAskUserDismissed checks that {} to ask_user stops the turn
// (interrupted) and that the thread waited on the dialog.
func TestAskUserDismissed(t *testing.T) {
	e := newEnv(t, map[string]string{"m": scriptJSON(
		map[string]any{"toolCalls": []any{map[string]any{"id": "q", "name": "ask_user", "arguments": map[string]any{"questions": []any{
			map[string]any{"id": "a", "text": "A?", "options": []any{map[string]any{"label": "Yes"}}}}}}}},
		map[string]any{"text": "never"},
	)}, 0)
	sub := newAsker(reply(`{}`))
	from := e.bcast.mark()
	turn, items := askTurn(t, e, sub, t.TempDir(), "m")
	if turn.Status != protocol.TurnInterrupted || items["q"].Status != "failed" {
		t.Errorf("turn %s, q %s", turn.Status, mustJSONT(items["q"]))
	}
	if reqs := sub.requests(); len(reqs) != 1 || reqs[0].method != protocol.ItemToolCallRequestUserInput.Name {
		t.Errorf("asked %v", reqs)
	}
	e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, func(raw json.RawMessage) bool {
		var p protocol.ThreadStatusChangedParams
		_ = json.Unmarshal(raw, &p)
		return len(p.Status.WaitingOn) == 1 && p.Status.WaitingOn[0] == protocol.WaitingOnDialog
	})
}
