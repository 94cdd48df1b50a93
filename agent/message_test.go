package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonValue decodes JSON text into a generic value for comparisons.
func jsonValue(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", data, err)
	}
	return v
}

// TestMessageJSONRoundTrip reads each pi-compatible message shape and writes it
// back: the JSON must come out the same, field for field.
func TestMessageJSONRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want Message
	}{
		{
			name: "user",
			json: `{"role":"user","content":[{"type":"text","text":"Fix it"},{"type":"image","data":"iVBORw0=","mimeType":"image/png"}],"timestamp":1700000000000}`,
			want: Message{Role: RoleUser, Timestamp: 1700000000000, Content: []ContentBlock{
				TextBlock("Fix it"), {Type: ContentImage, Data: "iVBORw0=", MimeType: "image/png"},
			}},
		},
		{
			name: "userExpanded",
			json: `{"role":"user","content":[{"type":"text","text":"Review a.go for bugs."}],"typed":"/review a.go","timestamp":1700000000000}`,
			want: Message{Role: RoleUser, Timestamp: 1700000000000, Typed: "/review a.go", Content: []ContentBlock{TextBlock("Review a.go for bugs.")}},
		},
		{
			name: "assistant",
			json: `{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":""},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.txt"}}],"provider":"scripted","model":"demo","usage":{"input":3,"output":4,"cacheRead":5,"cacheWrite":6,"cost":{"total":0.25}},"stopReason":"toolUse","timestamp":1700000000001,"durationMs":42}`,
			want: Message{
				Role: RoleAssistant, Provider: "scripted", Model: "demo", StopReason: StopReasonToolUse,
				Timestamp: 1700000000001, DurationMs: 42,
				Usage: Usage{Input: 3, Output: 4, CacheRead: 5, CacheWrite: 6, Cost: Cost{Total: 0.25}},
				Content: []ContentBlock{
					{Type: ContentThinking, Thinking: "hmm", ThinkingSignature: "sig"},
					TextBlock(""),
					{Type: ContentToolCall, ID: "call_1", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
				},
			},
		},
		{
			name: "assistantError",
			json: `{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}},"stopReason":"error","errorMessage":"boom","timestamp":1}`,
			want: Message{Role: RoleAssistant, Provider: "p", Model: "m", StopReason: StopReasonError, ErrorMessage: "boom", Timestamp: 1, Content: []ContentBlock{}},
		},
		{
			name: "toolResult",
			json: `{"role":"toolResult","toolCallId":"call_1","toolName":"edit","content":[{"type":"text","text":"ok"}],"details":{"fileChanges":[{"path":"a.txt","kind":"modify","diff":"--- a/a.txt\n"}]},"isError":false,"timestamp":2}`,
			want: Message{
				Role: RoleToolResult, ToolCallID: "call_1", ToolName: "edit", Timestamp: 2,
				Content: []ContentBlock{TextBlock("ok")},
				Details: json.RawMessage(`{"fileChanges":[{"path":"a.txt","kind":"modify","diff":"--- a/a.txt\n"}]}`),
			},
		},
		{
			name: "unknownBlockKept",
			json: `{"role":"user","content":[{"type":"audio","data":"AAA","seconds":3,"meta":{"x":[1,2]}}],"timestamp":3}`,
			want: Message{Role: RoleUser, Timestamp: 3, Content: []ContentBlock{
				{Type: "audio", Raw: json.RawMessage(`{"type":"audio","data":"AAA","seconds":3,"meta":{"x":[1,2]}}`)},
			}},
		},
		{
			name: "unknownRoleKept",
			json: `{"role":"bashExecution","content":[{"type":"text","text":"ls"}],"timestamp":4}`,
			want: Message{Role: "bashExecution", Timestamp: 4, Content: []ContentBlock{TextBlock("ls")}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got Message
			if err := json.Unmarshal([]byte(tc.json), &got); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("decoded (-got +want):\n%s", diff)
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if diff := cmp.Diff(jsonValue(t, out), jsonValue(t, []byte(tc.json))); diff != "" {
				t.Errorf("re-encoded (-got +want):\n%s", diff)
			}
		})
	}
}

// TestMessageMarshalShape pins the fields each role writes, including the ones
// pi always has: isError on tool results, usage and stopReason on replies,
// content as [] when empty, and an absent toolCall arguments as {}.
func TestMessageMarshalShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"userNilContent", Message{Role: RoleUser, Timestamp: 5}, `{"role":"user","content":[],"timestamp":5}`},
		{"toolResultOK", Message{Role: RoleToolResult, ToolCallID: "c", ToolName: "read", Content: []ContentBlock{TextBlock("x")}, Timestamp: 6},
			`{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":6}`},
		{"assistantMinimal", Message{Role: RoleAssistant, Provider: "p", Model: "m", StopReason: StopReasonStop, Content: []ContentBlock{ToolCallBlock(ToolCall{ID: "c", Name: "n"})}},
			`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{}}],"provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}},"stopReason":"stop","timestamp":0}`},
	}
	for _, tc := range tests {
		got, err := json.Marshal(tc.msg)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", tc.name, err)
		}
		if diff := cmp.Diff(jsonValue(t, got), jsonValue(t, []byte(tc.want))); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tc.name, diff)
		}
	}
}

func TestMessageUnmarshalStringContent(t *testing.T) {
	t.Parallel()
	var got Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"plain \"text\"","timestamp":7}`), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, UserText(`plain "text"`, 7)); diff != "" {
		t.Errorf("decoded (-got +want):\n%s", diff)
	}
}

func TestMessageUnmarshalMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, json, want string }{
		{"blockNotObject", `{"role":"user","content":["hi"]}`, "content block"},
		{"blockTypeNotString", `{"role":"user","content":[{"type":3}]}`, "content block"},
		{"textWrongType", `{"role":"user","content":[{"type":"text","text":1}]}`, "text content block"},
		{"contentNumber", `{"role":"user","content":3}`, "cannot unmarshal"},
	}
	for _, tc := range tests {
		var m Message
		err := json.Unmarshal([]byte(tc.json), &m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Unmarshal error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestMessageHelpers(t *testing.T) {
	t.Parallel()
	m := Message{Role: RoleAssistant, Content: []ContentBlock{
		ThinkingBlock("think"), TextBlock("Hello, "), ToolCallBlock(ToolCall{ID: "c1", Name: "read"}),
		TextBlock("world"), ToolCallBlock(ToolCall{ID: "c2", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}),
	}}
	if got := m.Text(); got != "Hello, world" {
		t.Errorf("Text = %q", got)
	}
	want := []ToolCall{{ID: "c1", Name: "read"}, {ID: "c2", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}}
	if diff := cmp.Diff(m.ToolCalls(), want); diff != "" {
		t.Errorf("ToolCalls (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(UserText("hi", 9), Message{Role: RoleUser, Content: []ContentBlock{TextBlock("hi")}, Timestamp: 9}); diff != "" {
		t.Errorf("UserText (-got +want):\n%s", diff)
	}
	got := Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Cost: Cost{Total: 0.5}}.Add(Usage{Input: 10, Output: 20, CacheRead: 30, CacheWrite: 40, Cost: Cost{Total: 0.25}})
	if diff := cmp.Diff(got, Usage{Input: 11, Output: 22, CacheRead: 33, CacheWrite: 44, Cost: Cost{Total: 0.75}}); diff != "" {
		t.Errorf("Usage.Add (-got +want):\n%s", diff)
	}
}

func TestFileChangesAndToolStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		msg        Message
		wantFiles  []FileChange
		wantStatus ToolStatus
	}{
		{"valid", Message{Role: RoleToolResult, Details: json.RawMessage(`{"fileChanges":[{"path":"a","kind":"add","diff":"d"},{"path":"b","kind":"delete"}],"other":1}`)},
			[]FileChange{{Path: "a", Kind: FileAdd, Diff: "d"}, {Path: "b", Kind: FileDelete}}, ToolCompleted},
		{"failedReportsNone", Message{Role: RoleToolResult, IsError: true, Details: json.RawMessage(`{"fileChanges":[{"path":"a","kind":"add"}]}`)},
			nil, ToolFailed},
		{"unknownKindIgnoresAll", Message{Role: RoleToolResult, Details: json.RawMessage(`{"fileChanges":[{"path":"a","kind":"add"},{"path":"b","kind":"rename"}]}`)},
			nil, ToolCompleted},
		{"emptyPathIgnoresAll", Message{Role: RoleToolResult, Details: json.RawMessage(`{"fileChanges":[{"path":"","kind":"add"}]}`)},
			nil, ToolCompleted},
		{"notAnArray", Message{Role: RoleToolResult, Details: json.RawMessage(`{"fileChanges":"a"}`)}, nil, ToolCompleted},
		{"detailsNotObject", Message{Role: RoleToolResult, Details: json.RawMessage(`[1]`)}, nil, ToolCompleted},
		{"declined", Message{Role: RoleToolResult, IsError: true, Details: json.RawMessage(`{"declined":true}`)}, nil, ToolDeclined},
		{"notToolResult", Message{Role: RoleAssistant, Details: json.RawMessage(`{"fileChanges":[{"path":"a","kind":"add"}]}`)}, nil, ToolCompleted},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.msg.FileChanges(), tc.wantFiles); diff != "" {
			t.Errorf("%s: FileChanges (-got +want):\n%s", tc.name, diff)
		}
		if got := tc.msg.ToolStatus(); got != tc.wantStatus {
			t.Errorf("%s: ToolStatus = %q, want %q", tc.name, got, tc.wantStatus)
		}
	}
}

func TestThinkingLevels(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(ThinkingLevels(false), []ThinkingLevel{"off"}); diff != "" {
		t.Errorf("non-reasoning (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(ThinkingLevels(true), []ThinkingLevel{"off", "minimal", "low", "medium", "high"}); diff != "" {
		t.Errorf("reasoning (-got +want):\n%s", diff)
	}
}
