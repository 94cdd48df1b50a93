package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/providertest"
	"github.com/knightcode/knightcode/agent/provider/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "sk-test-SECRET-1234567890"

type step = providertest.Step

func newServer(t *testing.T, steps ...step) (*providertest.Server, *httptest.Server) {
	t.Helper()
	return providertest.NewServer(t, "", steps...)
}

// sse answers with the events (each "type" + data JSON; type "" writes only
// data, as Chat Completions does) then, when done is not empty, a final
// data line.
func sse(events []string, done string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			writeEvent(w, e)
		}
		if done != "" {
			fmt.Fprintf(w, "data: %s\n\n", done)
		}
	}
}

func writeEvent(w http.ResponseWriter, data string) {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(data), &head)
	if head.Type != "" && !strings.HasPrefix(head.Type, "chat.") {
		fmt.Fprintf(w, "event: %s\n", head.Type)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
	w.(http.Flusher).Flush()
}

var gpt = catalog.Model{ID: "gpt-test", Name: "GPT test", Reasoning: true, Input: []string{"text", "image"},
	ContextWindow: 100_000, MaxTokens: 8_000, Cost: catalog.Price{Input: 2, Output: 10, CacheRead: 0.5}}

func newProvider(t *testing.T, api, url string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{
		Name: "openai", API: api, BaseURL: url, APIKey: func() string { return secret }, KeyRequired: true,
		Models: []catalog.Model{gpt}, Headers: map[string]string{"X-Test": "yes"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func request() agent.Request {
	return agent.Request{
		Model: "gpt-test", SystemPrompt: "be brief", ThinkingLevel: agent.ThinkingHigh,
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: []agent.ContentBlock{agent.TextBlock("look"), {Type: agent.ContentImage, Data: "aGk=", MimeType: "image/png"}}},
			{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
				agent.ThinkingBlock("hmm"), agent.TextBlock("reading"),
				agent.ToolCallBlock(agent.ToolCall{ID: "call_0", Name: "read", Arguments: json.RawMessage(`{"path":"x"}`)}),
			}},
			{Role: agent.RoleToolResult, ToolCallID: "call_0", ToolName: "read", Content: []agent.ContentBlock{agent.TextBlock("x's text")}},
			{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, Content: []agent.ContentBlock{agent.TextBlock("failed reply")}},
			agent.UserText("go on", 1),
		},
		Tools: []agent.ToolDefinition{{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
}

// Recorded-shape Responses API events.
var responsesStream = []string{
	`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`,
	`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Plan: "}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"read two files"}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"then answer"}`,
	`{"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}`,
	`{"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Reading "}`,
	`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"both."}`,
	`{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_a","name":"read","arguments":"","status":"in_progress"}}`,
	`{"type":"response.output_item.added","sequence_number":9,"output_index":3,"item":{"type":"function_call","id":"fc_2","call_id":"call_b","name":"read","arguments":"","status":"in_progress"}}`,
	`{"type":"response.function_call_arguments.delta","sequence_number":10,"item_id":"fc_1","output_index":2,"delta":"{\"path\":"}`,
	`{"type":"response.function_call_arguments.delta","sequence_number":11,"item_id":"fc_2","output_index":3,"delta":"{\"path\":\"b\"}"}`,
	`{"type":"response.function_call_arguments.delta","sequence_number":12,"item_id":"fc_1","output_index":2,"delta":"\"a\"}"}`,
	`{"type":"response.function_call_arguments.done","sequence_number":13,"item_id":"fc_1","output_index":2,"arguments":"{\"path\":\"a\"}"}`,
	`{"type":"response.output_item.done","sequence_number":14,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_a","name":"read","arguments":"{\"path\":\"a\"}","status":"completed"}}`,
	`{"type":"response.output_item.done","sequence_number":15,"output_index":3,"item":{"type":"function_call","id":"fc_2","call_id":"call_b","name":"read","arguments":"{\"path\":\"b\"}","status":"completed"}}`,
	`{"type":"response.completed","sequence_number":16,"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":200},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":100},"total_tokens":1500}}}`,
}

func TestResponsesStream(t *testing.T) {
	s, hs := newServer(t, sse(responsesStream, ""))
	p := newProvider(t, openai.APIResponses, hs.URL)
	evs, msg, err := providertest.Collect(context.Background(), p, request())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"thinkingDelta Plan: ", "thinkingDelta read two files", "thinkingDelta \n\nthen answer",
		"textDelta Reading ", "textDelta both.",
		`toolCall call_a read {"path":"a"}`, `toolCall call_b read {"path":"b"}`,
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantMsg := &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse,
		Content: []agent.ContentBlock{
			agent.ThinkingBlock("Plan: read two files\n\nthen answer"), agent.TextBlock("Reading both."),
			agent.ToolCallBlock(agent.ToolCall{ID: "call_a", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}),
			agent.ToolCallBlock(agent.ToolCall{ID: "call_b", Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)}),
		},
		// 1000 uncached input at $2/M + 300 output at $10/M + 200 cached at $0.5/M.
		Usage: agent.Usage{Input: 1000, Output: 300, CacheRead: 200, Cost: agent.Cost{Total: 0.002 + 0.003 + 0.0001}},
	}
	if diff := cmp.Diff(wantMsg, msg, cmp.Comparer(func(a, b float64) bool { return fmt.Sprintf("%.9f", a) == fmt.Sprintf("%.9f", b) })); diff != "" {
		t.Errorf("final message (-want +got):\n%s", diff)
	}

	body := s.Bodies[0]
	if body["model"] != "gpt-test" || body["instructions"] != "be brief" || body["stream"] != true || body["store"] != false {
		t.Errorf("request model/instructions/stream/store = %v %v %v %v", body["model"], body["instructions"], body["stream"], body["store"])
	}
	if diff := cmp.Diff(map[string]any{"effort": "high", "summary": "auto"}, body["reasoning"]); diff != "" {
		t.Errorf("reasoning (-want +got):\n%s", diff)
	}
	input, _ := json.Marshal(body["input"])
	for _, frag := range []string{
		`"image_url":"data:image/png;base64,aGk="`, `"type":"input_text","text":"look"`,
		`"type":"function_call","arguments":"{\"path\":\"x\"}","call_id":"call_0","name":"read"`,
		`"type":"function_call_output","output":"x's text","call_id":"call_0"`,
	} {
		if !strings.Contains(string(input), frag) && !containsJSON(body["input"], frag) {
			t.Errorf("request input lacks %s:\n%s", frag, input)
		}
	}
	if strings.Contains(string(input), "failed reply") || strings.Contains(string(input), "hmm") {
		t.Errorf("request input holds a failed reply or thinking:\n%s", input)
	}
	if s.Headers[0].Get("Authorization") != "Bearer "+secret || s.Headers[0].Get("X-Test") != "yes" {
		t.Errorf("authorization %q, X-Test %q", s.Headers[0].Get("Authorization"), s.Headers[0].Get("X-Test"))
	}
}

// containsJSON reports whether some object of v has every key:value of the
// fragment frag (an object's members without braces).
func containsJSON(v any, frag string) bool {
	var want map[string]any
	if json.Unmarshal([]byte("{"+frag+"}"), &want) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			all := true
			for k, w := range want {
				if !cmp.Equal(v[k], w) {
					all = false
				}
			}
			if all {
				return true
			}
			for _, c := range v {
				if walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range v {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

func TestResponsesFailures(t *testing.T) {
	tests := []struct {
		name  string
		step  step
		kind  string
		retry time.Duration
	}{
		{"rateLimitWithRetryAfter", providertest.Status(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "7"), agent.ErrorKindRateLimit, 7 * time.Second},
		{"retryAfterMs", providertest.Status(429, `{"error":{"message":"slow down","type":"requests","code":null}}`, "Retry-After-Ms", "250", "Retry-After", "1"), agent.ErrorKindRateLimit, 250 * time.Millisecond},
		{"serverError", providertest.Status(500, `{"error":{"message":"The server had an error","type":"server_error","code":null}}`), agent.ErrorKindProvider, 0},
		{"contextOverflow", providertest.Status(400, `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}`), agent.ErrorKindContextOverflow, 0},
		{"auth", providertest.Status(401, `{"error":{"message":"Incorrect API key provided: `+secret+`.","type":"invalid_request_error","code":"invalid_api_key"}}`), agent.ErrorKindAuth, 0},
		{"errorEvent", sse([]string{`{"type":"response.created","sequence_number":0,"response":{"id":"r","status":"in_progress","output":[]}}`, `{"type":"error","sequence_number":1,"code":"server_error","message":"An error occurred while processing your request.","param":null}`}, ""), agent.ErrorKindProvider, 0},
		{"failedResponse", sse([]string{`{"type":"response.failed","sequence_number":1,"response":{"id":"r","status":"failed","output":[],"error":{"code":"rate_limit_exceeded","message":"Rate limit exceeded"}}}`}, ""), agent.ErrorKindRateLimit, 0},
		{"droppedConnection", providertest.Drop(writeEvent, responsesStream[:3]...), agent.ErrorKindNetwork, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, hs := newServer(t, tt.step)
			p := newProvider(t, openai.APIResponses, hs.URL)
			_, _, err := providertest.Collect(context.Background(), p, request())
			providertest.WantAPIError(t, err, tt.kind, tt.retry, secret)
		})
	}
}

// TestRunRetriesAndWithdraws runs agent.Run against a server that first drops
// the stream after deltas, then answers 429 (Retry-After-Ms), then 500, then
// succeeds: the partial reply is withdrawn once and each retry announced.
func TestRunRetriesAndWithdraws(t *testing.T) {
	final := []string{
		`{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"Done."}`,
		`{"type":"response.completed","sequence_number":2,"response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":12}}}`,
	}
	s, hs := newServer(t,
		providertest.Drop(writeEvent, responsesStream[:7]...),
		providertest.Status(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After-Ms", "1"),
		providertest.Status(503, `{"error":{"message":"Service unavailable","type":"server_error","code":null}}`),
		sse(final, ""),
	)
	p := newProvider(t, openai.APIResponses, hs.URL)
	var evs []string
	var usage agent.Usage
	opts := agent.Options{Provider: p, Model: "gpt-test", ThinkingLevel: agent.ThinkingLow,
		Retry:   agent.RetryPolicy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Second},
		OnUsage: func(u agent.Usage) { usage = usage.Add(u) },
		OnEvent: func(e agent.Event) {
			switch e.Type {
			case agent.EventRetry:
				evs = append(evs, fmt.Sprintf("retry %d %s", e.Attempt, agent.ErrorKind(e.Err)))
			case agent.EventReplyReset:
				evs = append(evs, "reset "+e.Message.Text())
			case agent.EventTextDelta:
				evs = append(evs, "text "+e.Delta)
			}
		}}
	out, err := agent.Run(context.Background(), opts, nil, []agent.Message{agent.UserText("hi", 1)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"text Reading ", "reset Reading ", "retry 1 network", "retry 2 rateLimit", "retry 3 provider", "text Done."}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := out[len(out)-1].Text(); got != "Done." {
		t.Errorf("reply = %q", got)
	}
	if len(s.Bodies) != 4 {
		t.Errorf("%d requests, want 4", len(s.Bodies))
	}
	if usage.Input != 10 || usage.Output != 2 || usage.Cost.Total != (10*2+2*10)/1e6 {
		t.Errorf("usage = %+v", usage)
	}
}

// TestInterruptClosesTheRequest cancels the run mid-stream: the server sees
// its request end and the run ends interrupted, not with a network error.
func TestInterruptClosesTheRequest(t *testing.T) {
	closed := make(chan struct{})
	_, hs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvent(w, responsesStream[6])
		<-r.Context().Done()
		close(closed)
	})
	p := newProvider(t, openai.APIResponses, hs.URL)
	out := providertest.RunInterrupted(t, p, "gpt-test")
	<-closed
	last := out[len(out)-1]
	if last.StopReason != agent.StopReasonAborted || last.Text() != "Reading " {
		t.Errorf("reply = %q %q, want aborted with its partial text", last.StopReason, last.Text())
	}
}

func TestMissingKey(t *testing.T) {
	p, err := openai.New(openai.Config{Name: "openai", API: openai.APIResponses, BaseURL: "http://127.0.0.1:1", KeyRequired: true, APIKey: func() string { return "" }, Models: []catalog.Model{gpt}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), agent.Request{Model: "gpt-test"})
	if agent.ErrorKind(err) != agent.ErrorKindAuth {
		t.Errorf("error = %v, want an auth error", err)
	}
	if _, err := p.Stream(context.Background(), agent.Request{Model: "nope"}); err == nil {
		t.Error("unknown model: no error")
	}
}

// Recorded-shape Chat Completions chunks of a compatible server (reasoning in
// reasoning_content, two parallel tool calls, a usage chunk).
var completionsStream = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Let me "},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"reasoning_content":"look."},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"content":"Checking."},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":"}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"ls\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"qwen3","choices":[],"usage":{"prompt_tokens":500,"completion_tokens":40,"total_tokens":540,"prompt_tokens_details":{"cached_tokens":100}}}`,
}

func TestCompletionsStream(t *testing.T) {
	s, hs := newServer(t, sse(completionsStream, "[DONE]"))
	p, err := openai.New(openai.Config{Name: "ollama", API: openai.APICompletions, BaseURL: hs.URL + "/v1",
		Models: []catalog.Model{{ID: "qwen3", Reasoning: true, Input: []string{"text", "image"}, Cost: catalog.Price{Input: 1, Output: 2}}}})
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	req.Model = "qwen3"
	req.ThinkingLevel = agent.ThinkingOff
	evs, msg, err := providertest.Collect(context.Background(), p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"thinkingDelta Let me ", "thinkingDelta look.", "textDelta Checking.",
		`toolCall call_1 read {"path":"a"}`, `toolCall call_2 bash {"command":"ls"}`}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if msg.StopReason != agent.StopReasonToolUse || msg.Usage.Input != 400 || msg.Usage.CacheRead != 100 || msg.Usage.Output != 40 {
		t.Errorf("final = %s %+v", msg.StopReason, msg.Usage)
	}
	if got, want := msg.Usage.Cost.Total, (400*1+40*2)/1e6; fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", want) {
		t.Errorf("cost = %v, want %v", got, want)
	}
	body := s.Bodies[0]
	if body["reasoning_effort"] != "minimal" {
		t.Errorf("reasoning_effort = %v, want minimal (thinking off)", body["reasoning_effort"])
	}
	if !containsJSON(body["messages"], `"role":"system","content":"be brief"`) ||
		!containsJSON(body["messages"], `"role":"tool","tool_call_id":"call_0","content":"x's text"`) ||
		!containsJSON(body["messages"], `"type":"image_url","image_url":{"url":"data:image/png;base64,aGk="}`) ||
		!containsJSON(body["messages"], `"id":"call_0","type":"function","function":{"name":"read","arguments":"{\"path\":\"x\"}"}`) {
		b, _ := json.Marshal(body["messages"])
		t.Errorf("messages lack an expected part:\n%s", b)
	}
	if s.Headers[0].Get("Authorization") != "" {
		t.Errorf("a provider without a key sent Authorization %q", s.Headers[0].Get("Authorization"))
	}
}

func TestCompletionsTextOnlyModelOmitsImages(t *testing.T) {
	s, hs := newServer(t, sse(completionsStream[2:3], "[DONE]"))
	p, _ := openai.New(openai.Config{Name: "local", API: openai.APICompletions, BaseURL: hs.URL, Models: []catalog.Model{{ID: "m"}}})
	req := request()
	req.Model = "m"
	_, _, err := providertest.Collect(context.Background(), p, req)
	if err == nil {
		t.Fatal("a stream without finish_reason ended without an error")
	}
	if !containsJSON(s.Bodies[0]["messages"], `"role":"user","content":"look\n(image omitted: this model does not accept images)"`) {
		b, _ := json.Marshal(s.Bodies[0]["messages"])
		t.Errorf("messages = %s", b)
	}
	if _, ok := s.Bodies[0]["reasoning_effort"]; ok {
		t.Error("a non-reasoning model was sent reasoning_effort")
	}
}

func TestCompletionsErrorChunk(t *testing.T) {
	_, hs := newServer(t, sse([]string{completionsStream[2], `{"error":{"message":"model is overloaded","type":"server_error","code":null}}`}, ""))
	p, _ := openai.New(openai.Config{Name: "vllm", API: openai.APICompletions, BaseURL: hs.URL, Models: []catalog.Model{{ID: "m"}}})
	_, _, err := providertest.Collect(context.Background(), p, agent.Request{Model: "m", Messages: []agent.Message{agent.UserText("hi", 1)}})
	if agent.ErrorKind(err) != agent.ErrorKindProvider {
		t.Errorf("error = %v (kind %s), want provider", err, agent.ErrorKind(err))
	}
}
