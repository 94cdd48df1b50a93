package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/anthropic"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "sk-ant-test-SECRET-0987654321"

type step = providertest.Step

func newServer(t *testing.T, steps ...step) (*providertest.Server, string) {
	t.Helper()
	s, hs := providertest.NewServer(t, "/v1/messages", steps...)
	return s, hs.URL
}

func writeEvent(w http.ResponseWriter, data string) {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(data), &head)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, data)
	w.(http.Flusher).Flush()
}

func sse(events ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			writeEvent(w, e)
		}
	}
}

var claude = catalog.Model{ID: "claude-test", Reasoning: true, Input: []string{"text", "image"}, ContextWindow: 200_000, MaxTokens: 32_000,
	Cost: catalog.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}

func newProvider(url string) *anthropic.Provider {
	return anthropic.New(anthropic.Config{Name: "anthropic", BaseURL: url, APIKey: func() string { return secret }, KeyRequired: true, Models: []catalog.Model{claude}})
}

func request() agent.Request {
	return agent.Request{
		Model: "claude-test", SystemPrompt: "be brief", ThinkingLevel: agent.ThinkingMedium,
		Messages: []agent.Message{
			{Role: agent.RoleUser, Content: []agent.ContentBlock{agent.TextBlock("look"), {Type: agent.ContentImage, Data: "aGk=", MimeType: "image/png"}}},
			{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
				{Type: agent.ContentThinking, Thinking: "hmm", ThinkingSignature: "sig0"}, agent.ThinkingBlock("unsigned"),
				agent.ToolCallBlock(agent.ToolCall{ID: "toolu_0", Name: "read", Arguments: json.RawMessage(`{"path":"x"}`)}),
				agent.ToolCallBlock(agent.ToolCall{ID: "toolu_00", Name: "read", Arguments: json.RawMessage(`{"path":"y"}`)}),
			}},
			{Role: agent.RoleToolResult, ToolCallID: "toolu_0", ToolName: "read", Content: []agent.ContentBlock{agent.TextBlock("x text")}},
			{Role: agent.RoleToolResult, ToolCallID: "toolu_00", ToolName: "read", IsError: true, Content: []agent.ContentBlock{agent.TextBlock("no y")}},
			{Role: agent.RoleAssistant, StopReason: agent.StopReasonAborted, Content: []agent.ContentBlock{agent.TextBlock("aborted reply")}},
			agent.UserText("go on", 1),
		},
		Tools: []agent.ToolDefinition{{Name: "read", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
	}
}

// Recorded-shape Messages API events.
var stream = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":50,"cache_read_input_tokens":1000,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"ping"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Two files, "}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"read both."}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading "}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"them."}}`,
	`{"type":"content_block_stop","index":1}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"a\"}"}}`,
	`{"type":"content_block_stop","index":2}`,
	`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_b","name":"read","input":{}}}`,
	`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"b\"}"}}`,
	`{"type":"content_block_stop","index":3}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":200}}`,
	`{"type":"message_stop"}`,
}

func TestStream(t *testing.T) {
	s, url := newServer(t, sse(stream...))
	evs, msg, err := providertest.Collect(context.Background(), newProvider(url), request())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"thinkingDelta Two files, ", "thinkingDelta read both.", "textDelta Reading ", "textDelta them.",
		`toolCall toolu_a read {"path": "a"}`, `toolCall toolu_b read {"path":"b"}`}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	wantMsg := &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse,
		Content: []agent.ContentBlock{
			{Type: agent.ContentThinking, Thinking: "Two files, read both.", ThinkingSignature: "EqQBCgIYAhIM"},
			agent.TextBlock("Reading them."),
			agent.ToolCallBlock(agent.ToolCall{ID: "toolu_a", Name: "read", Arguments: json.RawMessage(`{"path": "a"}`)}),
			agent.ToolCallBlock(agent.ToolCall{ID: "toolu_b", Name: "read", Arguments: json.RawMessage(`{"path":"b"}`)}),
		},
		// 100·3 + 200·15 + 1000·0.3 + 50·3.75 dollars per million.
		Usage: agent.Usage{Input: 100, Output: 200, CacheRead: 1000, CacheWrite: 50, Cost: agent.Cost{Total: (300 + 3000 + 300 + 187.5) / 1e6}},
	}
	if diff := cmp.Diff(wantMsg, msg, cmp.Comparer(func(a, b float64) bool { return fmt.Sprintf("%.9f", a) == fmt.Sprintf("%.9f", b) })); diff != "" {
		t.Errorf("final message (-want +got):\n%s", diff)
	}

	body := s.Bodies[0]
	h := s.Headers[0]
	// The v2 SDK sends the key as a bearer token.
	if h.Get("Authorization") != "Bearer "+secret {
		t.Errorf("authorization %q", h.Get("Authorization"))
	}
	if diff := cmp.Diff(map[string]any{"type": "enabled", "budget_tokens": float64(10240)}, body["thinking"]); diff != "" {
		t.Errorf("thinking (-want +got):\n%s", diff)
	}
	if body["max_tokens"] != float64(32000) || body["stream"] != true {
		t.Errorf("max_tokens %v stream %v", body["max_tokens"], body["stream"])
	}
	msgs, _ := json.Marshal(body["messages"])
	for _, frag := range []string{
		`{"source":{"data":"aGk=","media_type":"image/png","type":"base64"},"type":"image"}`,
		`{"signature":"sig0","thinking":"hmm","type":"thinking"}`,
		`{"id":"toolu_0","input":{"path":"x"},"name":"read","type":"tool_use"}`,
		`{"role":"user","content":[{"tool_use_id":"toolu_0","is_error":false,"content":[{"text":"x text","type":"text"}],"type":"tool_result"},{"tool_use_id":"toolu_00","is_error":true,"content":[{"text":"no y","type":"text"}],"type":"tool_result"}]}`,
	} {
		var want any
		_ = json.Unmarshal([]byte(frag), &want)
		if !contains(body["messages"], want) {
			t.Errorf("messages lack %s:\n%s", frag, msgs)
		}
	}
	if strings.Contains(string(msgs), "unsigned") || strings.Contains(string(msgs), "aborted reply") {
		t.Errorf("messages hold unsigned thinking or an aborted reply:\n%s", msgs)
	}
	tools, _ := json.Marshal(body["tools"])
	if !strings.Contains(string(tools), `"required":["path"]`) || !strings.Contains(string(tools), `"description":"Read a file"`) {
		t.Errorf("tools = %s", tools)
	}
}

// contains reports whether want equals v or some value nested in v, ignoring
// key order (tool_result content may be a string or blocks: both forms match
// when the SDK chooses either).
func contains(v, want any) bool {
	if cmp.Equal(v, want) {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		for _, c := range v {
			if contains(c, want) {
				return true
			}
		}
	case []any:
		for _, c := range v {
			if contains(c, want) {
				return true
			}
		}
	}
	return false
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name  string
		step  step
		kind  string
		retry time.Duration
	}{
		{"rateLimit", providertest.Status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, "Retry-After", "30"), agent.ErrorKindRateLimit, 30 * time.Second},
		{"overloaded", providertest.Status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), agent.ErrorKindProvider, 0},
		{"contextOverflow", providertest.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`), agent.ErrorKindContextOverflow, 0},
		{"auth", providertest.Status(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+secret+`"}}`), agent.ErrorKindAuth, 0},
		{"errorEvent", sse(stream[0], `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), agent.ErrorKindProvider, 0},
		{"dropped", providertest.Drop(writeEvent, stream[:5]...), agent.ErrorKindNetwork, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := newServer(t, tt.step)
			_, _, err := providertest.Collect(context.Background(), newProvider(url), request())
			providertest.WantAPIError(t, err, tt.kind, tt.retry, secret)
		})
	}
}

// TestRunRetriesOverloadedStream: an overloaded error event after deltas
// withdraws the partial reply and the retry succeeds.
func TestRunRetriesOverloadedStream(t *testing.T) {
	_, url := newServer(t,
		sse(append(append([]string{}, stream[:9]...), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)...),
		sse(stream[0], stream[7], stream[8], stream[10], `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`, `{"type":"message_stop"}`),
	)
	var evs []string
	opts := agent.Options{Provider: newProvider(url), Model: "claude-test",
		Retry: agent.RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond},
		OnEvent: func(e agent.Event) {
			switch e.Type {
			case agent.EventRetry:
				evs = append(evs, fmt.Sprintf("retry %d %s", e.Attempt, agent.ErrorKind(e.Err)))
			case agent.EventReplyReset:
				evs = append(evs, fmt.Sprintf("reset %d blocks", len(e.Message.Content)))
			}
		}}
	out, err := agent.Run(context.Background(), opts, nil, []agent.Message{agent.UserText("hi", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"reset 2 blocks", "retry 1 provider"}, evs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	last := out[len(out)-1]
	if last.Text() != "Reading " || last.StopReason != agent.StopReasonStop || len(last.Content) != 1 {
		t.Errorf("reply = %+v", last)
	}
}

func TestInterruptClosesTheRequest(t *testing.T) {
	closed := make(chan struct{})
	_, url := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range stream[:9] {
			writeEvent(w, e)
		}
		<-r.Context().Done()
		close(closed)
	})
	providertest.RunInterrupted(t, newProvider(url), "claude-test")
	<-closed
}

func TestThinkingOffAndMissingKey(t *testing.T) {
	s, url := newServer(t, sse(stream[0], stream[7], stream[8], stream[10], `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":5}}`, `{"type":"message_stop"}`))
	req := request()
	req.ThinkingLevel = agent.ThinkingOff
	_, msg, err := providertest.Collect(context.Background(), newProvider(url), req)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != agent.StopReasonLength {
		t.Errorf("stopReason = %q, want length", msg.StopReason)
	}
	if _, ok := s.Bodies[0]["thinking"]; ok {
		t.Errorf("thinking off sent %v", s.Bodies[0]["thinking"])
	}
	p := anthropic.New(anthropic.Config{Name: "anthropic", BaseURL: url, KeyRequired: true, APIKey: func() string { return "" }, Models: []catalog.Model{claude}})
	if _, err := p.Stream(context.Background(), req); agent.ErrorKind(err) != agent.ErrorKindAuth {
		t.Errorf("missing key: error = %v, want auth", err)
	}
}
