package threads

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// notesSince returns the params of sub's notes with method from index from.
func notesSince(sub *recorder, from int, method string) []json.RawMessage {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	var out []json.RawMessage
	for _, n := range sub.notes[from:] {
		if n.method == method {
			out = append(out, n.params)
		}
	}
	return out
}

// shape is "role:text" per message, tool calls and results by call id.
func shape(msgs []agent.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role) + ":" + m.Text()
		switch {
		case m.Role == agent.RoleToolResult:
			s = "result " + m.ToolCallID
		case len(m.ToolCalls()) > 0:
			s += " call " + m.ToolCalls()[0].ID
		case m.StopReason == agent.StopReasonError:
			s += " (error)"
		}
		out = append(out, s)
	}
	return out
}

func usage(in, out int64) *scripted.Usage { return &scripted.Usage{Input: in, Output: out} }

// TestCompactionBeforeRequest checks compaction when the next request
// would exceed the window less compaction.reserveTokens: the model gets a
// summarizing request of the older messages, the run continues from the
// summary and the kept messages, the turn shows a compaction item (live
// and read back, in the same place), the summarizing request is billed,
// and the next turn starts from the summary too.
func TestCompactionBeforeRequest(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte(strings.Repeat("a long line of the file\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := scripted.Script{Responses: []scripted.Response{
		{ToolCalls: []scripted.ToolCall{{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}, Usage: usage(950, 10)},
		{Text: "SUMMARY-1", Usage: usage(50, 5)},
		{Text: "done", Usage: usage(100, 3)},
		{Text: "ok", Usage: usage(120, 2)},
	}}
	e := newRecordingEnv(t, scripted.Model{ID: "echo", ContextWindow: 1000, Script: script},
		`{"compaction": {"reserveTokens": 100, "keepRecentTokens": 10}}`)
	sub := newRecorder()
	from := sub.mark()
	thread, _ := e.turn(t, sub, "", cwd, "first task")

	reqs := e.prov.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (reply, summary, reply)", len(reqs))
	}
	sum := reqs[1]
	if !strings.Contains(sum.SystemPrompt, "summarization") || len(sum.Tools) != 0 || len(sum.Messages) != 1 ||
		!strings.Contains(sum.Messages[0].Text(), "[User]: first task") || strings.Contains(sum.Messages[0].Text(), "a long line") {
		t.Errorf("summarizing request = system %q, %d tools, messages %q", sum.SystemPrompt, len(sum.Tools), shape(sum.Messages))
	}
	summary := agent.SummaryMessage("SUMMARY-1", 0).Text()
	if diff := cmp.Diff(shape(reqs[2].Messages), []string{"user:" + summary, "assistant: call c1", "result c1"}); diff != "" {
		t.Errorf("the request after the compaction (-got +want):\n%s", diff)
	}

	var live []string
	for _, raw := range notesSince(sub, from, protocol.ItemCompleted.Name) {
		var p protocol.ItemCompletedParams
		_ = json.Unmarshal(raw, &p)
		live = append(live, p.Item.Type+":"+p.Item.Text)
	}
	wantItems := []string{"userMessage:first task", "toolCall:", "compaction:SUMMARY-1", "agentMessage:done"}
	if diff := cmp.Diff(live, wantItems); diff != "" {
		t.Errorf("live items (-got +want):\n%s", diff)
	}
	var usages []protocol.TokenUsage
	for _, raw := range notesSince(sub, from, protocol.ThreadTokenUsageUpdated.Name) {
		var p protocol.ThreadTokenUsageUpdatedParams
		_ = json.Unmarshal(raw, &p)
		usages = append(usages, p.Usage)
	}
	if len(usages) != 3 || usages[1].Input != 1000 || usages[1].Output != 15 || usages[1].ContextTokens != nil || usages[2].Input != 1100 {
		t.Errorf("thread/tokenUsage/updated = %+v, want the summary billed after the first reply, context unknown", usages)
	}

	e.turn(t, sub, thread, cwd, "second")
	reqs = e.prov.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	if diff := cmp.Diff(shape(reqs[3].Messages), []string{"user:" + summary, "assistant: call c1", "result c1", "assistant:done", "user:second"}); diff != "" {
		t.Errorf("the next turn's request (-got +want):\n%s", diff)
	}

	read, err := e.m.Read(context.Background(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Turns) != 2 {
		t.Fatalf("thread/read has %d turns", len(read.Turns))
	}
	var got []string
	for _, it := range read.Turns[0].Items {
		got = append(got, it.Type+":"+it.Text)
	}
	if diff := cmp.Diff(got, wantItems); diff != "" {
		t.Errorf("thread/read items (-got +want):\n%s", diff)
	}
	if u := read.Turns[0].Usage; u == nil || u.Input != 1100 || u.Output != 18 {
		t.Errorf("turn usage = %+v, want the summary's billed in", u)
	}
	// A resume recomputes the thread's usage from the branch: the
	// compaction entry's usage counts.
	th, err := e.m.lookup(thread)
	if err != nil {
		t.Fatal(err)
	}
	var branchU protocol.TokenUsage
	_ = th.call(context.Background(), func() error {
		branchU = branchUsage(th.sess.Transcript().Branch())
		return nil
	})
	if branchU.Input != 1220 || branchU.Output != 20 {
		t.Errorf("branchUsage = %+v, want input 1220 output 20 (the summary included)", branchU)
	}
}

// TestCompactionAfterOverflow checks that a contextOverflow error compacts
// the conversation and retries the request once, ending the turn
// completed; with compaction.enabled false the turn fails instead.
func TestCompactionAfterOverflow(t *testing.T) {
	overflow := "prompt is too long: 250000 tokens > 200000 maximum"
	for _, tc := range []struct {
		name     string
		settings string
		want     string
		requests int
	}{
		{"enabled", "", protocol.TurnCompleted, 4},
		{"disabled", `{"compaction": {"enabled": false}}`, protocol.TurnFailed, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := scripted.Script{Responses: []scripted.Response{
				{Text: "hi"},
				{Error: overflow},
				{Text: "SUMMARY-2"},
				{Text: "after"},
			}}
			e := newRecordingEnv(t, scripted.Model{ID: "echo", Script: script}, tc.settings)
			cwd := t.TempDir()
			sub := newRecorder()
			thread, _ := e.turn(t, sub, "", cwd, "hello")
			from := sub.mark()
			e.turn(t, sub, thread, cwd, "again")
			var done protocol.TurnCompletedParams
			_ = json.Unmarshal(notesSince(sub, from, protocol.TurnCompletedNotification.Name)[0], &done)
			if done.Turn.Status != tc.want {
				t.Errorf("turn status %q (error %+v), want %q", done.Turn.Status, done.Turn.Error, tc.want)
			}
			reqs := e.prov.requests()
			if len(reqs) != tc.requests {
				t.Fatalf("%d model requests, want %d", len(reqs), tc.requests)
			}
			if tc.want != protocol.TurnCompleted {
				return
			}
			summary := agent.SummaryMessage("SUMMARY-2", 0).Text()
			if diff := cmp.Diff(shape(reqs[3].Messages), []string{"user:" + summary, "assistant:hi", "user:again", "assistant: (error)"}); diff != "" {
				t.Errorf("the retried request (-got +want):\n%s", diff)
			}
		})
	}
}
