package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
)

func mustParse(t *testing.T, s string) Script {
	t.Helper()
	sc, err := ParseScript([]byte(s))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	return sc
}

// collect streams one request and returns its events.
func collect(t *testing.T, ctx context.Context, p *Provider, model string) []agent.StreamEvent {
	t.Helper()
	seq, err := p.Stream(ctx, agent.Request{Model: model})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	var evs []agent.StreamEvent
	for ev := range seq {
		evs = append(evs, ev)
	}
	return evs
}

func TestParseScriptErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, script, want string
	}{
		{"syntax", `{"responses": [`, "unexpected EOF"},
		{"unknownField", `{"responses": [{"txt": "hi"}]}`, `unknown field "txt"`},
		{"noResponses", `{}`, `"responses" is missing`},
		{"noName", `{"responses": [{"toolCalls": [{"arguments": {}}]}]}`, "responses[0].toolCalls[0]: name is missing"},
		{"argsNotObject", `{"responses": [{}, {"toolCalls": [{"name": "read", "arguments": [1]}]}]}`, "responses[1].toolCalls[0]: arguments must be a JSON object"},
		{"negativeDelay", `{"responses": [{"delayMs": -1}]}`, "delayMs -1 is negative"},
		{"negativeUsage", `{"responses": [{"usage": {"input": -1, "output": 0}}]}`, "negative token count"},
		{"duplicateID", `{"responses": [{"toolCalls": [{"name": "a"}, {"id": "call_1", "name": "b"}]}]}`, `id "call_1" is already used by responses[0].toolCalls[0]`},
		{"trailing", `{"responses": []} {}`, "unexpected data"},
		{"wrongType", `{"responses": [{"text": 3}]}`, "cannot unmarshal number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseScript([]byte(tc.script))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseScript error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseScriptAssignsCallIDs(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `{"responses": [
		{"toolCalls": [{"name": "read", "arguments": {"path": "a"}}, {"id": "mine", "name": "bash"}]},
		{"text": "x"},
		{"toolCalls": [{"name": "write", "arguments": null}]}
	]}`)
	var got []ToolCall
	for _, r := range s.Responses {
		got = append(got, r.ToolCalls...)
	}
	want := []ToolCall{
		{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path": "a"}`)},
		{ID: "mine", Name: "bash", Arguments: json.RawMessage(`{}`)},
		{ID: "call_3", Name: "write", Arguments: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("tool calls (-got +want):\n%s", diff)
	}
}

func TestStreamPlaysResponsesInOrder(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"responses": [
		{"thinking": "I should look at the file first.", "text": "Reading the file now, then I will report back.",
		 "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}],
		 "usage": {"input": 10, "output": 5, "cacheRead": 2, "cacheWrite": 1}},
		{"text": "Done."}
	]}`)})

	evs := collect(t, context.Background(), p, "m")
	var thinking, text strings.Builder
	var nThinking, nText int
	var calls []agent.ToolCall
	for _, ev := range evs[:len(evs)-1] {
		switch ev.Type {
		case agent.StreamThinkingDelta:
			nThinking++
			thinking.WriteString(ev.Delta)
		case agent.StreamTextDelta:
			if nText == 0 && nThinking == 0 {
				t.Errorf("text delta before any thinking delta")
			}
			nText++
			text.WriteString(ev.Delta)
		case agent.StreamToolCall:
			calls = append(calls, ev.ToolCall)
		default:
			t.Fatalf("unexpected event %+v before the end", ev)
		}
	}
	if got, want := thinking.String(), "I should look at the file first."; got != want {
		t.Errorf("thinking = %q, want %q", got, want)
	}
	if got, want := text.String(), "Reading the file now, then I will report back."; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if nThinking < 2 || nText < 2 {
		t.Errorf("got %d thinking and %d text deltas, want several of each", nThinking, nText)
	}
	call := agent.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path": "a.txt"}`)}
	if diff := cmp.Diff(calls, []agent.ToolCall{call}); diff != "" {
		t.Errorf("tool calls (-got +want):\n%s", diff)
	}
	last := evs[len(evs)-1]
	if last.Type != agent.StreamDone {
		t.Fatalf("last event = %+v, want done", last)
	}
	want := agent.Message{
		Role: agent.RoleAssistant,
		Content: []agent.ContentBlock{
			agent.ThinkingBlock("I should look at the file first."),
			agent.TextBlock("Reading the file now, then I will report back."),
			agent.ToolCallBlock(call),
		},
		Usage:      agent.Usage{Input: 10, Output: 5, CacheRead: 2, CacheWrite: 1},
		StopReason: agent.StopReasonToolUse,
	}
	if diff := cmp.Diff(last.Message, want); diff != "" {
		t.Errorf("final message (-got +want):\n%s", diff)
	}

	evs = collect(t, context.Background(), p, "m")
	want = agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock("Done.")}, StopReason: agent.StopReasonStop}
	if diff := cmp.Diff(evs[len(evs)-1].Message, want); diff != "" {
		t.Errorf("second reply (-got +want):\n%s", diff)
	}
}

func TestStreamExhaustedScriptFails(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"responses": [{"text": "only"}]}`)})
	collect(t, context.Background(), p, "m")
	_, err := p.Stream(context.Background(), agent.Request{Model: "m"})
	if err == nil {
		t.Fatal("Stream on an exhausted script succeeded")
	}
	if !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("error = %q, want it to say the script is exhausted", err)
	}
	if got := agent.ClassifyError(err.Error()); got != agent.ErrorKindProvider {
		t.Errorf("ClassifyError(%q) = %q, want provider", err, got)
	}
}

// A PerTurn script plays from its first response in every turn of every
// thread, whatever other threads did meanwhile, with tool call ids unique
// in a thread; a turn that used every response fails as exhausted.
func TestStreamPerTurn(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"perTurn": true, "responses": [
		{"toolCalls": [{"name": "read", "arguments": {"path": "a"}}]},
		{"text": "done"}]}`)})
	user := agent.Message{Role: agent.RoleUser, Content: []agent.ContentBlock{agent.TextBlock("go")}}
	reply := agent.Message{Role: agent.RoleAssistant}
	result := agent.Message{Role: agent.RoleToolResult}
	play := func(msgs ...agent.Message) agent.Message {
		t.Helper()
		seq, err := p.Stream(context.Background(), agent.Request{Model: "m", Messages: msgs})
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		var last agent.StreamEvent
		for ev := range seq {
			last = ev
		}
		if last.Type != agent.StreamDone {
			t.Fatalf("stream ended with %+v", last)
		}
		return last.Message
	}
	callID := func(m agent.Message) string {
		for _, b := range m.Content {
			if b.Type == agent.ContentToolCall {
				return b.ID
			}
		}
		return ""
	}
	text := func(m agent.Message) string {
		for _, b := range m.Content {
			if b.Type == agent.ContentText {
				return b.Text
			}
		}
		return ""
	}
	// Two threads' first turns, interleaved.
	if id := callID(play(user)); id != "call_1" {
		t.Errorf("thread A's first reply: call id %q, want call_1", id)
	}
	if id := callID(play(user)); id != "call_1" {
		t.Errorf("thread B's first reply: call id %q, want call_1", id)
	}
	if got := text(play(user, reply, result)); got != "done" {
		t.Errorf("thread A's second reply %q, want done", got)
	}
	// Thread A's second turn starts over, with its own call ids.
	if id := callID(play(user, reply, result, reply, user)); id != "call_1_t2" {
		t.Errorf("second turn's call id %q, want call_1_t2", id)
	}
	_, err := p.Stream(context.Background(), agent.Request{Model: "m", Messages: []agent.Message{user, reply, result, reply}})
	if err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("a third reply in one turn: %v, want exhausted", err)
	}
}

func TestStreamUnknownModel(t *testing.T) {
	t.Parallel()
	_, err := New().Stream(context.Background(), agent.Request{Model: "nope"})
	if err == nil || !strings.Contains(err.Error(), `unknown model "nope"`) {
		t.Fatalf("Stream error = %v, want unknown model", err)
	}
}

func TestStreamScriptedError(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"responses": [{"text": "partial answer", "error": "429 rate limit exceeded"}]}`)})
	evs := collect(t, context.Background(), p, "m")
	last := evs[len(evs)-1]
	if last.Type != agent.StreamError || last.Err == nil || last.Err.Error() != "429 rate limit exceeded" {
		t.Fatalf("last event = %+v, want the scripted error", last)
	}
	var text string
	for _, ev := range evs[:len(evs)-1] {
		text += ev.Delta
	}
	if text != "partial answer" {
		t.Errorf("text before the error = %q, want %q", text, "partial answer")
	}
}

// TestStreamCancelMidReply cancels after the first delta of a reply whose
// delay is far longer than any test: the stream must end at once with an
// error wrapping context.Canceled.
func TestStreamCancelMidReply(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"responses": [{"text": "one two three four", "delayMs": 3600000}]}`)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seq, err := p.Stream(ctx, agent.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var evs []agent.StreamEvent
	for ev := range seq {
		evs = append(evs, ev)
		cancel()
	}
	if len(evs) != 2 || evs[0].Type != agent.StreamTextDelta || evs[1].Type != agent.StreamError {
		t.Fatalf("events = %+v, want one text delta then an error", evs)
	}
	if !errors.Is(evs[1].Err, context.Canceled) {
		t.Errorf("error = %v, want it to wrap context.Canceled", evs[1].Err)
	}
}

func TestStreamStopsWhenConsumerBreaks(t *testing.T) {
	t.Parallel()
	p := New(Model{ID: "m", Script: mustParse(t, `{"responses": [{"text": "a b c d e f"}, {"text": "next"}]}`)})
	seq, err := p.Stream(context.Background(), agent.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for range seq {
		break
	}
	evs := collect(t, context.Background(), p, "m")
	if got := evs[len(evs)-1].Message.Text(); got != "next" {
		t.Errorf("the request after an abandoned stream got %q, want the next response", got)
	}
}

func TestChunksJoinToTheText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"word", 1},
		{"two words", 2},
		{"  leading and trailing  ", 3},
		{"line one\nline two\r\n\tindented", 5},
		{strings.Repeat("many words here ", 20), maxChunks},
	}
	for _, tc := range tests {
		got := chunks(tc.in)
		if len(got) != tc.want {
			t.Errorf("chunks(%q) gave %d chunks %q, want %d", tc.in, len(got), got, tc.want)
		}
		if joined := strings.Join(got, ""); joined != tc.in {
			t.Errorf("chunks(%q) joined = %q", tc.in, joined)
		}
	}
}

func TestModelsListing(t *testing.T) {
	t.Parallel()
	p := New(
		Model{ID: "a", Script: Script{Responses: []Response{}}},
		Model{ID: "b", Name: "Bee", Reasoning: true, ContextWindow: 1000},
		Model{ID: "a", Name: "A again"},
	)
	want := []agent.Model{
		{Provider: "scripted", ID: "a", Name: "A again", ThinkingLevels: []agent.ThinkingLevel{"off"}, ContextWindow: DefaultContextWindow},
		{Provider: "scripted", ID: "b", Name: "Bee", ThinkingLevels: []agent.ThinkingLevel{"off", "minimal", "low", "medium", "high"}, ContextWindow: 1000},
	}
	if diff := cmp.Diff(p.Models(), want); diff != "" {
		t.Errorf("Models (-got +want):\n%s", diff)
	}
}

// TestDemoScriptMatchesNotes checks the embedded demo against the file it
// edits: four replies (read, edit with two edits, bash, summary), each edit's
// oldText occurring exactly once in testdata/demo/notes.md, far enough apart to
// make two hunks.
func TestDemoScriptMatchesNotes(t *testing.T) {
	t.Parallel()
	notes, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "demo", "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := Demo()
	var names []string
	for _, r := range d.Script.Responses {
		for _, c := range r.ToolCalls {
			names = append(names, c.Name)
		}
	}
	if diff := cmp.Diff(names, []string{"read", "edit", "bash"}); diff != "" {
		t.Fatalf("demo tool calls (-got +want):\n%s", diff)
	}
	if last := d.Script.Responses[len(d.Script.Responses)-1]; last.Text == "" || len(last.ToolCalls) != 0 {
		t.Errorf("the demo's last reply should be a text summary, got %+v", last)
	}
	var edit struct {
		Path  string `json:"path"`
		Edits []struct {
			OldText string `json:"oldText"`
			NewText string `json:"newText"`
		} `json:"edits"`
	}
	if err := json.Unmarshal(d.Script.Responses[1].ToolCalls[0].Arguments, &edit); err != nil {
		t.Fatal(err)
	}
	if edit.Path != "testdata/demo/notes.md" || len(edit.Edits) != 2 {
		t.Fatalf("demo edit = %+v, want two edits of testdata/demo/notes.md", edit)
	}
	var lines []int
	for i, e := range edit.Edits {
		if n := strings.Count(string(notes), e.OldText); n != 1 {
			t.Errorf("edits[%d].oldText %q occurs %d times in notes.md, want 1", i, e.OldText, n)
			continue
		}
		lines = append(lines, strings.Count(string(notes[:strings.Index(string(notes), e.OldText)]), "\n")+1)
	}
	if len(lines) == 2 && lines[1]-lines[0] <= 7 {
		t.Errorf("the demo edits lines %v: too close for two hunks", lines)
	}
}
