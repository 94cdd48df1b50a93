package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Script is a scripted model's conversation: {"responses": [R, ...],
// "perTurn"?: bool}. Each model request consumes the next response, in
// one sequence shared by every thread that uses the model. With PerTurn,
// every turn of every thread plays the responses from the first instead:
// a request gets the response at the index of the number of assistant
// messages since the conversation's last user message, and its tool call
// ids get the turn's number (its count of user messages) as a suffix
// from the second turn on, so they stay unique in the thread.
type Script struct {
	Responses []Response `json:"responses"`
	PerTurn   bool       `json:"perTurn,omitempty"`
}

// Response is one canned reply:
//
//	{"thinking"?: str, "text"?: str, "toolCalls"?: [{"id"?, "name", "arguments": {...}}],
//	 "usage"?: {"input", "output", "cacheRead"?, "cacheWrite"?}, "error"?: str, "delayMs"?: int}
//
// Thinking then text stream as several deltas (split at word boundaries, at most
// eight chunks each). The first delta comes at once and DelayMs milliseconds are
// spread evenly after the deltas (all of it before the end when there are
// none), so a reader can interrupt mid-reply. With Error set, the request
// fails with exactly that message after the thinking and text have streamed;
// otherwise the tool calls follow and the reply ends with stopReason "toolUse"
// when there are tool calls, "stop" when not. Absent usage is all zeros.
type Response struct {
	Thinking  string     `json:"thinking,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
	Error     string     `json:"error,omitempty"`
	DelayMs   int        `json:"delayMs,omitempty"`
}

// ToolCall is a scripted tool call. A missing ID becomes "call_<n>", n being the
// call's 1-based position among all the script's tool calls, so ids are
// deterministic and unique within the script's conversation. Arguments must be a
// JSON object; absent means {}.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a scripted reply's token usage (token counts).
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead,omitempty"`
	CacheWrite int64 `json:"cacheWrite,omitempty"`
}

// ParseScript decodes and checks a script. Unknown fields, a tool call without
// a name or with non-object arguments, a negative delay or token count, and two
// calls with the same id are errors naming the response and call
// ("responses[2].toolCalls[0]: ..."). JSON syntax and type errors wrap the
// *json.SyntaxError or *json.UnmarshalTypeError, whose Offset locates them in
// data.
func ParseScript(data []byte) (Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("script: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Script{}, errors.New("script: unexpected data after the top-level object")
	}
	if s.Responses == nil {
		return Script{}, errors.New(`script: "responses" is missing`)
	}
	seen := map[string]string{}
	n := 0
	for i := range s.Responses {
		r := &s.Responses[i]
		if r.DelayMs < 0 {
			return Script{}, fmt.Errorf("script: responses[%d]: delayMs %d is negative", i, r.DelayMs)
		}
		if u := r.Usage; u != nil && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0) {
			return Script{}, fmt.Errorf("script: responses[%d]: usage has a negative token count", i)
		}
		for j := range r.ToolCalls {
			n++
			c := &r.ToolCalls[j]
			where := fmt.Sprintf("responses[%d].toolCalls[%d]", i, j)
			if c.Name == "" {
				return Script{}, fmt.Errorf("script: %s: name is missing", where)
			}
			args := bytes.TrimSpace(c.Arguments)
			switch {
			case len(args) == 0 || string(args) == "null":
				c.Arguments = json.RawMessage("{}")
			case args[0] != '{':
				return Script{}, fmt.Errorf("script: %s: arguments must be a JSON object", where)
			}
			if c.ID == "" {
				c.ID = fmt.Sprintf("call_%d", n)
			}
			if prev, dup := seen[c.ID]; dup {
				return Script{}, fmt.Errorf("script: %s: id %q is already used by %s", where, c.ID, prev)
			}
			seen[c.ID] = where
		}
	}
	return s, nil
}
