package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// notices are the ui/notify messages among notes.
func notices(t *testing.T, notes []note) []string {
	t.Helper()
	var out []string
	for _, n := range notes {
		if n.Method == protocol.UINotify.Name {
			out = append(out, decode[protocol.UINotifyParams](t, n.Params).Message)
		}
	}
	return out
}

// TestE2EExtensionEventOrder: the events of one turn with a tool call
// reach an extension (testdata/extensions/events.ts) in pi's order.
// pi 0.73.1's order, from agent-session.js (prompt: input, then
// before_agent_start; _emitExtensionEvent) and pi-agent-core's
// agent-loop.js (runAgentLoop, runLoop, streamAssistantResponse,
// executeToolCalls), without the tool_execution_* events, which knightcode
// does not dispatch: agent_start; turn_start 0; the input's message_start
// and message_end; before each request the context, then the reply's
// message_start, message_update…, message_end; per call tool_call,
// tool_result, then the toolResult's message_start and message_end;
// turn_end; the next turn_start; …; agent_end with the run's messages.
func TestE2EExtensionEventOrder(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"ev": script(
		toolReply(bashCall("c1", "true")),
		map[string]any{"text": "all done"},
	)}, "-e", jsFixture(t, "events.ts"))
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "ev"}}).Thread.ID
	from := s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "run it"}); res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start %+v", res)
	}
	got := notices(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name))
	want := []string{
		"input", "before_agent_start", "agent_start",
		"turn_start 0",
		"message_start user", "message_end user",
		"context 1",
		"message_start assistant", "message_update toolcall_end", "message_end assistant",
		"tool_call c1", "tool_result c1",
		"message_start toolResult", "message_end toolResult",
		"turn_end 0 1",
		"turn_start 1",
		"context 3",
		"message_start assistant", "message_update text_delta", "message_end assistant",
		"turn_end 1 0",
		"agent_end user,assistant,toolResult,assistant",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// TestE2EExtensionAgentEndKeepsAdmission: an agent_end handler that waits
// 1 s (testdata/extensions/settle.ts) keeps the turn running: a turn/start
// sent meanwhile answers turnInProgress, turn/completed comes after the
// handler returned, and a turn/start sent after it starts (EXTENSIBILITY.md
// §7).
func TestE2EExtensionAgentEndKeepsAdmission(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"settle": script(
		map[string]any{"text": "first"},
		map[string]any{"text": "second"},
	)}, "-e", jsFixture(t, "settle.ts"))
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "settle"}}).Thread.ID
	_, from := s.startTurn(t, thread, "one")
	began := from
	s.waitNote(t, &began, protocol.UINotify.Name, func(raw json.RawMessage) bool {
		return decode[protocol.UINotifyParams](t, raw).Message == "agent_end began"
	})
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "too early"}, wireErr{Code: protocol.CodeTurnInProgress})
	notes := s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	if got := notices(t, notes); !cmp.Equal(got, []string{"agent_end began", "agent_end returned"}) {
		t.Errorf("notices before turn/completed: %q", got)
	}
	if turn := decode[protocol.TurnCompletedParams](t, notes[len(notes)-1].Params).Turn; turn.Status != protocol.TurnCompleted {
		t.Errorf("the turn ended %+v", turn)
	}
	from = s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "two"}); res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start after agent_end returned: %+v", res)
	}
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Errorf("the second turn ended %+v", turn)
	}
	var texts []string
	for _, turn := range s.readThread(t, thread).Turns {
		for _, it := range turn.Items {
			if it.Type == protocol.ItemUserMessage || it.Type == protocol.ItemAgentMessage {
				texts = append(texts, it.Text)
			}
		}
	}
	if want := []string{"one", "first", "two", "second"}; !cmp.Equal(texts, want) {
		t.Errorf("thread/read texts %q, want %q (the early start must not have queued)", texts, want)
	}
}

// TestE2EExtensionMessageEnd: a message_end handler
// (testdata/extensions/redact.ts) that replaces an assistant reply's text
// changes what item/completed and thread/read show; one that replaces a
// reply by one without content drops its item: item/removed with the id
// item/started gave it, no item/completed, and thread/read lacks it.
func TestE2EExtensionMessageEnd(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"red": script(
		map[string]any{"text": "the secret sauce is ketchup"},
		map[string]any{"text": "please drop me now"},
	)}, "-e", jsFixture(t, "redact.ts"))
	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "red"}}).Thread.ID
	agentItems := func(items []protocol.Item) []string {
		var out []string
		for _, it := range items {
			if it.Type == protocol.ItemAgentMessage {
				out = append(out, it.ID+" "+it.Text)
			}
		}
		return out
	}

	_, from := s.startTurn(t, thread, "tell me")
	notes := s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	completed := agentItems(completedItems(t, notes))
	if len(completed) != 1 || !strings.HasSuffix(completed[0], " the [redacted] is ketchup") {
		t.Fatalf("item/completed agentMessage %q", completed)
	}
	replacedID, _, _ := strings.Cut(completed[0], " ")

	_, from = s.startTurn(t, thread, "again")
	notes = s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)
	var started, removed []string
	for _, n := range notes {
		switch n.Method {
		case protocol.ItemStarted.Name:
			if it := decode[protocol.ItemStartedParams](t, n.Params).Item; it.Type == protocol.ItemAgentMessage {
				started = append(started, it.ID)
			}
		case protocol.ItemRemoved.Name:
			removed = append(removed, decode[protocol.ItemRemovedParams](t, n.Params).ItemID)
		}
	}
	if len(started) != 1 || !cmp.Equal(removed, started) {
		t.Errorf("agentMessage item/started %q, item/removed %q: want the streamed item removed", started, removed)
	}
	if got := agentItems(completedItems(t, notes)); len(got) != 0 {
		t.Errorf("the dropped reply completed items %q", got)
	}

	turns := s.readThread(t, thread).Turns
	if len(turns) != 2 {
		t.Fatalf("thread/read: %d turns", len(turns))
	}
	if got := agentItems(turns[0].Items); !cmp.Equal(got, []string{replacedID + " the [redacted] is ketchup"}) {
		t.Errorf("thread/read turn 1 agentMessage items %q", got)
	}
	if got := agentItems(turns[1].Items); len(got) != 0 {
		t.Errorf("thread/read turn 2 has the dropped item: %q", got)
	}
	if n := len(turns[1].Items); n != 1 || turns[1].Items[0].Type != protocol.ItemUserMessage {
		t.Errorf("thread/read turn 2 items %+v, want the userMessage only", turns[1].Items)
	}
}

// TestE2EExtensionContext: a context handler (testdata/extensions/context.ts)
// that removes a message from the requests after the one it was sent in:
// the model's second request lacks it, while thread/read still has it.
func TestE2EExtensionContext(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	reply := func(text string) func(w http.ResponseWriter) {
		return sse(chunk(`{"role":"assistant","content":"`+text+`"}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
	}
	chat := newChatServer(t, reply("noted"), reply("hello"))
	s, thread := chatExtensionThread(t, chat, repo, "context.ts")
	for _, text := range []string{"[private] my notes", "hi again"} {
		_, from := s.startTurn(t, thread, text)
		if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
			t.Fatalf("turn %q: %+v", text, turn)
		}
	}
	chat.mu.Lock()
	bodies := chat.bodies
	chat.mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d model requests", len(bodies))
	}
	first, second := chatMessages(t, bodies[0]), chatMessages(t, bodies[1])
	if len(first) != 2 || first[1] != [2]string{"user", "[private] my notes"} {
		t.Errorf("first request %q", first)
	}
	if len(second) != 3 || second[1] != [2]string{"assistant", "noted"} || second[2] != [2]string{"user", "hi again"} {
		t.Errorf("second request %q, want it without the [private] message", second)
	}
	var users []string
	for _, turn := range s.readThread(t, thread).Turns {
		for _, it := range turn.Items {
			if it.Type == protocol.ItemUserMessage {
				users = append(users, it.Text)
			}
		}
	}
	if want := []string{"[private] my notes", "hi again"}; !cmp.Equal(users, want) {
		t.Errorf("thread/read userMessage items %q, want %q", users, want)
	}
}

// TestE2EExtensionSteerThroughInput: turn/steer goes through the input
// handlers (testdata/extensions/steer.ts), as pi's prompt does while it
// streams: a transform steers the handler's text, a consumed steer never
// reaches the model. A steer still held by a handler belongs to its turn
// (EXTENSIBILITY.md §7): turn/interrupt cancels it, the steer answers
// invalidParams, and the next turn's model request lacks its text.
func TestE2EExtensionSteerThroughInput(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	release, hang := make(chan struct{}), make(chan struct{})
	waiting := func(c chan struct{}, reply func(http.ResponseWriter)) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) { <-c; reply(w) }
	}
	text := func(s string) func(http.ResponseWriter) {
		return sse(chunk(`{"role":"assistant","content":"`+s+`"}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
	}
	chat := newChatServer(t, waiting(release, chatCalls([3]string{"c1", "bash", `{"command":"true"}`})), text("steered"),
		waiting(hang, text("never")), text("last"))
	t.Cleanup(func() { close(hang) }) // before the chat server closes: it waits for its handlers
	s, thread := chatExtensionThread(t, chat, repo, "steer.ts")

	turnID, from := s.startTurn(t, thread, "go")
	for _, steer := range []string{"upper:abc", "eat"} {
		s.must(t, protocol.TurnSteer.Name, protocol.TurnSteerParams{ThreadID: thread, Text: steer, ExpectedTurnID: turnID}, nil)
	}
	close(release)
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("the steered turn: %+v", turn)
	}

	turnID, from = s.startTurn(t, thread, "again")
	// Its model request waits (hang): the interrupt then ends a turn that
	// asked the model, and the next turn gets the next reply.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		chat.mu.Lock()
		n := len(chat.bodies)
		chat.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d model requests, want the interrupted turn's third", n)
		}
	}
	held := make(chan error, 1)
	go func() {
		held <- s.call(t, protocol.TurnSteer.Name, protocol.TurnSteerParams{ThreadID: thread, Text: "hold", ExpectedTurnID: turnID}, nil)
	}()
	s.waitNote(t, &from, protocol.UINotify.Name, func(r json.RawMessage) bool {
		return decode[protocol.UINotifyParams](t, r).Message == "holding"
	})
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turnID}, nil)
	if got, want := toWireErr(t, <-held), (wireErr{Code: protocol.CodeInvalidParams, Field: "text"}); !cmp.Equal(got, want) {
		t.Errorf("the held steer answered %+v, want %+v", got, want)
	}
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnInterrupted {
		t.Fatalf("the interrupted turn: %+v", turn)
	}
	_, from = s.startTurn(t, thread, "last")
	if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
		t.Fatalf("the last turn: %+v", turn)
	}

	chat.mu.Lock()
	bodies := chat.bodies
	chat.mu.Unlock()
	if len(bodies) != 4 {
		t.Fatalf("%d model requests, want 4", len(bodies))
	}
	var users [][]string
	for _, b := range bodies {
		var u []string
		for _, m := range chatMessages(t, b) {
			if m[0] == "user" {
				u = append(u, m[1])
			}
		}
		users = append(users, u)
	}
	if want := []string{"go", "ABC"}; !cmp.Equal(users[1], want) {
		t.Errorf("the user messages of the request after the steers: %q, want %q", users[1], want)
	}
	if want := []string{"go", "ABC", "again", "last"}; !cmp.Equal(users[3], want) {
		t.Errorf("the user messages of the next turn's request: %q, want %q (no held steer)", users[3], want)
	}
}
