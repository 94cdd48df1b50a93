package session

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func TestBranchFollowsTheLeafAtAForkPoint(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	es := mustAppend(t, s, userMsg(t, "a", 1), assistantMsg(t, "b", 2), userMsg(t, "c", 3))
	a, b, c := es[0], es[1], es[2]
	if err := s.SetLeaf(a.ID); err != nil {
		t.Fatal(err)
	}
	d := mustAppend(t, s, assistantMsg(t, "d", 4))[0] // a has two children: b and d
	file := s.File()
	s.Close()

	tr := mustRead(t, file)
	if got, want := ids(tr.Branch()), []string{a.ID, d.ID}; !cmp.Equal(got, want) {
		t.Errorf("branch with leaf d = %v, want %v", got, want)
	}

	// Moving back to the other child: the new leaf decides again.
	s2, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.SetLeaf(c.ID); err != nil {
		t.Fatal(err)
	}
	e := mustAppend(t, s2, assistantMsg(t, "e", 5))[0]
	tr = mustRead(t, file)
	if got, want := ids(tr.Branch()), []string{a.ID, b.ID, c.ID, e.ID}; !cmp.Equal(got, want) {
		t.Errorf("branch with leaf e = %v, want %v", got, want)
	}
	var texts []string
	for _, turn := range tr.Turns("") {
		for _, it := range turn.Items {
			texts = append(texts, it.Text)
		}
	}
	if want := []string{"a", "b", "c", "e"}; !cmp.Equal(texts, want) {
		t.Errorf("item texts on the branch = %v, want %v (d is off the branch)", texts, want)
	}
}

func TestTurnGrouping(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	mustAppend(t, s,
		NewModelChange("scripted", "demo"),
		NewTurnStart("t1", 100),
		userMsg(t, "one", 101),
		assistantMsg(t, "reply one", 102),
		NewTurnEnd(TurnEnd{TurnID: "t1", Status: protocol.TurnCompleted, CompletedAt: 150,
			Usage: &protocol.TurnUsage{Input: 3, Output: 4}, Files: []protocol.FileTotal{{Path: "x", Additions: 1}}}),
		NewTurnStart("t2", 200), // never ended: the process died
		userMsg(t, "two", 201),
		NewTurnStart("t3", 300),
		userMsg(t, "three", 301),
		msg(t, `{"role":"assistant","content":[],"stopReason":"error","errorMessage":"429 rate limited","timestamp":302}`),
		NewTurnEnd(TurnEnd{TurnID: "t3", Status: protocol.TurnFailed, CompletedAt: 350,
			Error: &protocol.TurnError{Message: "429 rate limited", Kind: protocol.ErrorKindRateLimit}}),
		NewTurnEnd(TurnEnd{TurnID: "stray", Status: protocol.TurnCompleted, CompletedAt: 360}),
		NewTurnStart("t4", 400), // the running turn of a loaded thread
		userMsg(t, "four", 401),
	)
	tr := s.Transcript()

	type summary struct {
		ID, Status           string
		StartedAt, Completed int64
		Items                int
		Err                  *protocol.TurnError
	}
	summarize := func(turns []protocol.Turn) []summary {
		var out []summary
		for _, tn := range turns {
			out = append(out, summary{tn.ID, tn.Status, tn.StartedAt, tn.CompletedAt, len(tn.Items), tn.Error})
		}
		return out
	}
	want := []summary{
		{"t1", protocol.TurnCompleted, 100, 150, 2, nil},
		{"t2", protocol.TurnInterrupted, 200, 0, 1, nil},
		{"t3", protocol.TurnFailed, 300, 350, 1, &protocol.TurnError{Message: "429 rate limited", Kind: protocol.ErrorKindRateLimit}},
		{"t4", protocol.TurnInterrupted, 400, 0, 1, nil},
	}
	turns := tr.Turns("")
	if diff := cmp.Diff(summarize(turns), want); diff != "" {
		t.Errorf("turns (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(turns[0].Usage, &protocol.TurnUsage{Input: 3, Output: 4}); diff != "" {
		t.Errorf("usage (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(turns[0].Files, []protocol.FileTotal{{Path: "x", Additions: 1}}); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	running := tr.Turns("t4")
	if got := running[3].Status; got != protocol.TurnInProgress {
		t.Errorf("running turn status = %q, want inProgress", got)
	}
	if got := running[1].Status; got != protocol.TurnInterrupted {
		t.Errorf("an older unterminated turn with a running turn named = %q, want interrupted", got)
	}
	if got, want := tr.ItemCount(), 5; got != want {
		t.Errorf("ItemCount() = %d, want %d", got, want)
	}
	// The wire JSON of an interrupted turn has no completedAt.
	b, _ := json.Marshal(turns[1])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["completedAt"]; ok {
		t.Errorf("interrupted turn JSON has completedAt: %s", b)
	}
}

func TestLegacyTurnsWithoutMarkers(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	es := mustAppend(t, s,
		userMsg(t, "one", 10),
		assistantMsg(t, "reply", 20),
		userMsg(t, "two", 30),
		msg(t, `{"role":"assistant","content":[{"type":"text","text":"partial"}],"stopReason":"aborted","timestamp":40,"durationMs":5}`),
		userMsg(t, "three", 50),
		msg(t, `{"role":"assistant","content":[],"stopReason":"error","errorMessage":"boom","timestamp":60}`),
	)
	got := s.Transcript().Turns("")
	want := []struct {
		id, status         string
		started, completed int64
	}{
		{es[0].ID, protocol.TurnCompleted, 10, 30},
		{es[2].ID, protocol.TurnInterrupted, 30, 45},
		{es[4].ID, protocol.TurnFailed, 50, 60},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d turns, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.Status != w.status || g.StartedAt != w.started || g.CompletedAt != w.completed {
			t.Errorf("turn %d = {%s %s %d %d}, want %+v", i, g.ID, g.Status, g.StartedAt, g.CompletedAt, w)
		}
	}
	if diff := cmp.Diff(got[2].Error, &protocol.TurnError{Message: "boom", Kind: protocol.ErrorKindOther}); diff != "" {
		t.Errorf("legacy error (-got +want):\n%s", diff)
	}
}

func intp(i int) *int              { return &i }
func strp(s string) *string        { return &s }
func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestItemsOfAToolTurn(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	appendTurn(t, s, "t0", 10) // two items before: ordinals continue across turns
	mustAppend(t, s,
		NewTurnStart("t1", 1000),
		msg(t, `{"role":"user","content":[{"type":"text","text":"fix "},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"it"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1001}`),
		msg(t, `{"role":"assistant","content":[
			{"type":"thinking","thinking":"look first"},
			{"type":"thinking","thinking":""},
			{"type":"thinking","thinking":"then edit"},
			{"type":"text","text":"I will "},{"type":"text","text":"edit."},
			{"type":"toolCall","id":"call_1","name":"edit","arguments":{"path":"a.txt"}},
			{"type":"toolCall","id":"call_2","name":"bash","arguments":{"command":"make"}},
			{"type":"toolCall","id":"call_3","name":"write","arguments":{"path":"b.txt"}},
			{"type":"toolCall","id":"call_4","name":"ext","arguments":{}},
			{"type":"toolCall","id":"call_5","name":"read"}
		],"provider":"scripted","model":"demo","stopReason":"toolUse","timestamp":2000,"durationMs":500}`),
		msg(t, `{"role":"toolResult","toolCallId":"call_1","toolName":"edit","content":[{"type":"text","text":"edited"}],"details":{"fileChanges":[{"path":"a.txt","kind":"modify","diff":"@@ -1 +1 @@\n-a\n+b\n"}]},"isError":false,"timestamp":3000}`),
		msg(t, `{"role":"toolResult","toolCallId":"call_2","toolName":"bash","content":[{"type":"text","text":"declined: ask mode"}],"details":{"declined":true},"isError":true,"timestamp":3100}`),
		msg(t, `{"role":"toolResult","toolCallId":"call_3","toolName":"write","content":[{"type":"text","text":"EACCES"}],"details":{"fileChanges":[{"path":"b.txt","kind":"add"}]},"isError":true,"timestamp":3200}`),
		msg(t, `{"role":"toolResult","toolCallId":"call_4","toolName":"ext","content":[{"type":"text","text":"ok"}],"details":{"fileChanges":[{"path":"c.txt","kind":"add"},{"path":"d.txt","kind":"rename"}]},"isError":false,"timestamp":3300}`),
		msg(t, `{"role":"toolResult","toolCallId":"call_unknown","toolName":"x","content":[],"isError":false,"timestamp":3350}`),
		msg(t, `{"role":"assistant","content":[{"type":"text","text":"Done."}],"stopReason":"stop","timestamp":4000,"durationMs":100}`),
		NewTurnEnd(TurnEnd{TurnID: "t1", Status: protocol.TurnCompleted, CompletedAt: 4200}),
	)
	turns := s.Transcript().Turns("")
	if len(turns) != 2 {
		t.Fatalf("got %d turns, want 2", len(turns))
	}
	want := []protocol.Item{
		{ID: "item-2", Type: protocol.ItemUserMessage, Index: intp(0), CompletedAt: 1001, Text: "fix it", Images: 2},
		{ID: "item-3", Type: protocol.ItemReasoning, Index: intp(1), StartedAt: 2000, CompletedAt: 2500, Text: "look first"},
		{ID: "item-4", Type: protocol.ItemReasoning, Index: intp(2), StartedAt: 2000, CompletedAt: 2500, Text: "then edit"},
		{ID: "item-5", Type: protocol.ItemAgentMessage, Index: intp(3), StartedAt: 2000, CompletedAt: 2500, Text: "I will edit."},
		{ID: "call_1", Type: protocol.ItemToolCall, Index: intp(4), StartedAt: 2500, CompletedAt: 3000, Name: "edit",
			Arguments: raw(`{"path":"a.txt"}`), Status: protocol.ToolCompleted, Output: strp("edited"),
			FileChanges: []protocol.FileChange{{Path: "a.txt", Kind: protocol.FileModify, Diff: "@@ -1 +1 @@\n-a\n+b\n"}}},
		{ID: "call_2", Type: protocol.ItemToolCall, Index: intp(5), StartedAt: 2500, CompletedAt: 3100, Name: "bash",
			Arguments: raw(`{"command":"make"}`), Status: protocol.ToolDeclined, Output: strp("declined: ask mode")},
		{ID: "call_3", Type: protocol.ItemToolCall, Index: intp(6), StartedAt: 2500, CompletedAt: 3200, Name: "write",
			Arguments: raw(`{"path":"b.txt"}`), Status: protocol.ToolFailed, Output: strp("EACCES")},
		{ID: "call_4", Type: protocol.ItemToolCall, Index: intp(7), StartedAt: 2500, CompletedAt: 3300, Name: "ext",
			Arguments: raw(`{}`), Status: protocol.ToolCompleted, Output: strp("ok")},
		{ID: "call_5", Type: protocol.ItemToolCall, Index: intp(8), StartedAt: 2500, Name: "read",
			Arguments: raw(`{}`), Status: protocol.ToolFailed},
		{ID: "item-11", Type: protocol.ItemAgentMessage, Index: intp(9), StartedAt: 4000, CompletedAt: 4100, Text: "Done."},
	}
	if diff := cmp.Diff(turns[1].Items, want); diff != "" {
		t.Errorf("items (-got +want):\n%s", diff)
	}
	if got := turns[1]; got.Status != protocol.TurnCompleted || got.StartedAt != 1000 || got.CompletedAt != 4200 {
		t.Errorf("turn = %s %d %d", got.Status, got.StartedAt, got.CompletedAt)
	}
}

func TestItemWireJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		item protocol.Item
		want string
	}{
		{protocol.Item{ID: "item-0", Type: protocol.ItemAgentMessage, Index: intp(0), StartedAt: 1, CompletedAt: 2},
			`{"id":"item-0","type":"agentMessage","index":0,"startedAt":1,"completedAt":2,"text":""}`},
		{protocol.Item{ID: "item-1", Type: protocol.ItemUserMessage, CompletedAt: 5, Text: "hi", Images: 1},
			`{"id":"item-1","type":"userMessage","completedAt":5,"text":"hi","images":1}`},
		{protocol.Item{ID: "c", Type: protocol.ItemToolCall, Name: "read", Status: protocol.ToolInProgress},
			`{"id":"c","type":"toolCall","name":"read","arguments":{},"status":"inProgress"}`},
		{protocol.Item{ID: "c", Type: protocol.ItemToolCall, Name: "read", Arguments: raw(`{"a":1}`), Status: protocol.ToolCompleted, Output: strp("")},
			`{"id":"c","type":"toolCall","name":"read","arguments":{"a":1},"status":"completed","output":""}`},
	} {
		b, err := json.Marshal(tc.item)
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		_ = json.Unmarshal(b, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("Marshal(%+v) (-got +want):\n%s", tc.item, diff)
		}
	}
	for _, tc := range []struct {
		s    protocol.ThreadStatus
		want string
	}{
		{protocol.ThreadStatus{Type: protocol.ThreadStatusActive}, `{"type":"active","waitingOn":[]}`},
		{protocol.ThreadStatus{Type: protocol.ThreadStatusActive, WaitingOn: []string{"approval"}}, `{"type":"active","waitingOn":["approval"]}`},
		{protocol.ThreadStatus{Type: protocol.ThreadStatusIdle, Message: "x"}, `{"type":"idle"}`},
		{protocol.ThreadStatus{Type: protocol.ThreadStatusSystemError, Message: "lost"}, `{"type":"systemError","message":"lost"}`},
	} {
		b, _ := json.Marshal(tc.s)
		if string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, want %s", tc.s, b, tc.want)
		}
	}
}
