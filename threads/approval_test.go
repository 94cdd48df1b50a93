package threads

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
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
	res, err := e.m.Start(context.Background(), sub, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalAsk, Model: &protocol.ModelRef{Provider: "scripted", ID: model}})
	if err != nil {
		t.Fatal(err)
	}
	return runAsked(t, e, sub, res.Thread.ID)
}

func runAsked(t *testing.T, e *env, sub Subscriber, thread string) (protocol.Turn, map[string]protocol.Item) {
	t.Helper()
	rec := sub.(interface{ mark() int })
	_ = rec
	var r *recorder
	switch s := sub.(type) {
	case *asker:
		r = s.recorder
	case *recorder:
		r = s
	}
	from := r.mark()
	if _, err := e.m.StartTurn(context.Background(), sub, protocol.TurnStartParams{ThreadID: thread, Text: "go"}); err != nil {
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
