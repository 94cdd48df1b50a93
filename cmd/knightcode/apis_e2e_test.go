package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// apiServer is an httptest server on 127.0.0.1 answering POSTs to path with
// one recorded-shape SSE stream per request (each event written as
// "event: <its type>" and "data: <json>"), keeping each request's body and
// headers.
type apiServer struct {
	*httptest.Server
	mu      sync.Mutex
	streams [][]string
	bodies  []map[string]any
	headers []http.Header
}

func newAPIServer(t *testing.T, path string, streams ...[]string) *apiServer {
	t.Helper()
	s := &apiServer{streams: streams}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.headers = append(s.headers, r.Header.Clone())
		var events []string
		if len(s.streams) > 0 {
			events, s.streams = s.streams[0], s.streams[1:]
		}
		s.mu.Unlock()
		if events == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no more replies"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			var head struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal([]byte(e), &head)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", head.Type, e)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// Anthropic Messages events: a reply streaming text then a tool call
// (call id toolu_e2e_1), and a text-only answer.
var (
	anthropicToolReply = []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"ping"}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"look."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_e2e_1","name":"read","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`,
		`{"type":"message_stop"}`,
	}
	anthropicAnswer = []string{
		`{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"m1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"It has ten lines."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":10}}`,
		`{"type":"message_stop"}`,
	}
)

// OpenAI Responses events: the same two replies (call id call_e2e_1).
var (
	responsesToolReply = []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Let me "}`,
		`{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"look."}`,
		`{"type":"response.output_item.added","sequence_number":4,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_e2e_1","name":"read","arguments":"","status":"in_progress"}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":5,"item_id":"fc_1","output_index":1,"delta":"{\"path\":"}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":6,"item_id":"fc_1","output_index":1,"delta":"\"a.txt\"}"}`,
		`{"type":"response.function_call_arguments.done","sequence_number":7,"item_id":"fc_1","output_index":1,"arguments":"{\"path\":\"a.txt\"}"}`,
		`{"type":"response.output_item.done","sequence_number":8,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_e2e_1","name":"read","arguments":"{\"path\":\"a.txt\"}","status":"completed"}}`,
		`{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":0},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":120}}}`,
	}
	responsesAnswer = []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_2","role":"assistant","status":"in_progress","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_2","output_index":0,"content_index":0,"delta":"It has ten lines."}`,
		`{"type":"response.completed","sequence_number":3,"response":{"id":"resp_2","status":"completed","output":[],"usage":{"input_tokens":300,"input_tokens_details":{"cached_tokens":0},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":310}}}`,
	}
)

// startAPIServer starts the binary with models.json naming one custom
// provider "p" of api at baseURL (model m1: 32,000-token window, $1 / $2
// per million input / output tokens) whose apiKey names KC_E2E_KEY.
func startAPIServer(t *testing.T, api, baseURL string) *diffServer {
	t.Helper()
	home := t.TempDir()
	models := map[string]any{"providers": map[string]any{
		"p": map[string]any{
			"baseUrl": baseURL, "api": api, "apiKey": "KC_E2E_KEY",
			"models": []map[string]any{{"id": "m1", "contextWindow": 32000, "maxTokens": 4096,
				"cost": map[string]float64{"input": 1, "output": 2}}},
		},
	}}
	b, _ := json.Marshal(models)
	writeAgentFile(t, home, "models.json", b)
	s, stderr := startKeyed(t, home)
	t.Cleanup(func() { noSecrets(t, stderr) })
	return s
}

// TestE2EProviderAPIs runs a turn through the binary against 127.0.0.1
// servers speaking the Anthropic Messages and OpenAI Responses streaming
// formats: the reply's text streams into an agentMessage, its tool call
// runs as a toolCall item carrying the provider's call id, the result goes
// back to the model under that id, the second reply ends the turn, and
// the usage and cost of each reply reach the client.
func TestE2EProviderAPIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, api, path, suffix string
		streams                 [][]string
		callID                  string
		auth                    func(h http.Header) string
		// toolResult is a fragment the second request must hold: the tool
		// result sent back under the call id.
		toolResult string
	}{
		{
			name: "anthropic-messages", api: "anthropic-messages", path: "/v1/messages",
			streams: [][]string{anthropicToolReply, anthropicAnswer}, callID: "toolu_e2e_1",
			auth: func(h http.Header) string {
				if k := h.Get("X-Api-Key"); k != "" {
					return k
				}
				return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
			},
			toolResult: `"tool_use_id":"toolu_e2e_1"`,
		},
		{
			name: "openai-responses", api: "openai-responses", path: "/v1/responses", suffix: "/v1",
			streams: [][]string{responsesToolReply, responsesAnswer}, callID: "call_e2e_1",
			auth:       func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
			toolResult: `"call_id":"call_e2e_1"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := threadsRepo(t)
			srv := newAPIServer(t, tc.path, tc.streams...)
			s := startAPIServer(t, tc.api, srv.URL+tc.suffix)

			_, _, turn, notes := s.lookTurn(t, repo, "p")

			var deltas []string
			var usages []protocol.TokenUsage
			for _, n := range notes {
				switch n.Method {
				case protocol.ItemAgentMessageDelta.Name:
					deltas = append(deltas, decode[protocol.ItemDeltaParams](t, n.Params).Delta)
				case protocol.ThreadTokenUsageUpdated.Name:
					usages = append(usages, decode[protocol.ThreadTokenUsageUpdatedParams](t, n.Params).Usage)
				}
			}
			if got := strings.Join(deltas, ""); got != "Let me look.It has ten lines." {
				t.Errorf("agentMessage deltas joined = %q", got)
			}
			if tool := wantLookItems(t, notes, tc.callID); tool != nil {
				var args map[string]string
				if err := json.Unmarshal(tool.Arguments, &args); err != nil || args["path"] != "a.txt" {
					t.Errorf("tool call arguments = %s", tool.Arguments)
				}
			}
			wantLookUsage(t, usages)
			if turn.Usage == nil || turn.Usage.Input != 400 || turn.Usage.Output != 30 {
				t.Errorf("turn usage = %+v, want input 400 output 30", turn.Usage)
			}

			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.bodies) != 2 {
				t.Fatalf("%d model requests, want 2", len(srv.bodies))
			}
			for i, h := range srv.headers {
				if got := tc.auth(h); got != e2eEnvKey {
					t.Errorf("request %d: API key %q, want the key of KC_E2E_KEY", i, got)
				}
			}
			for i, body := range srv.bodies {
				if body["model"] != "m1" || body["stream"] != true {
					t.Errorf("request %d: model %v stream %v", i, body["model"], body["stream"])
				}
			}
			second, _ := json.Marshal(srv.bodies[1])
			if !strings.Contains(string(second), tc.toolResult) || !strings.Contains(string(second), "line 10") {
				t.Errorf("second request lacks the tool result under %s:\n%s", tc.callID, second)
			}
		})
	}
}
