package agent

import (
	"context"
	"encoding/json"
	"iter"
)

// ThinkingLevel is a reasoning effort picker value: "off", "minimal", "low",
// "medium", "high" or (for the models that support it) "xhigh".
type ThinkingLevel string

// The thinking levels a model can accept.
const (
	ThinkingOff     ThinkingLevel = "off"
	ThinkingMinimal ThinkingLevel = "minimal"
	ThinkingLow     ThinkingLevel = "low"
	ThinkingMedium  ThinkingLevel = "medium"
	ThinkingHigh    ThinkingLevel = "high"
	ThinkingXHigh   ThinkingLevel = "xhigh" // only models that list it accept it
)

// ThinkingLevels returns the picker values of a model: ["off"] for a
// non-reasoning model (spec "Threads and turns"), all five levels for a
// reasoning one. The slice is new on every call.
func ThinkingLevels(reasoning bool) []ThinkingLevel {
	if !reasoning {
		return []ThinkingLevel{ThinkingOff}
	}
	return []ThinkingLevel{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh}
}

// Model describes one model a provider offers, as model/list shows it:
// {provider, id, name, thinkingLevels, contextWindow} (contextWindow in tokens).
type Model struct {
	Provider       string          `json:"provider"`
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	ThinkingLevels []ThinkingLevel `json:"thinkingLevels"`
	ContextWindow  int             `json:"contextWindow"`
}

// ToolDefinition is what a model is told about a tool: its name, a description
// and the JSON Schema (an object schema) of its arguments.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model request: the model id (of the provider streaming it),
// the system prompt, the whole conversation so far in order, the tools the model
// may call, and the thinking level. Assistant messages whose StopReason is
// "error" or "aborted" are part of Messages as recorded; a provider building its
// API request should leave them out (as pi does), since their tool calls have no
// results.
type Request struct {
	Model         string
	SystemPrompt  string
	Messages      []Message
	Tools         []ToolDefinition
	ThinkingLevel ThinkingLevel
}

// StreamEventType tags a StreamEvent.
type StreamEventType string

// The events of a provider stream. A stream yields any number of deltas and tool
// calls, then exactly one StreamDone or StreamError, and ends.
const (
	StreamThinkingDelta StreamEventType = "thinkingDelta" // Delta extends the reasoning text
	StreamTextDelta     StreamEventType = "textDelta"     // Delta extends the reply text
	StreamToolCall      StreamEventType = "toolCall"      // ToolCall is complete
	StreamDone          StreamEventType = "done"          // Message is the final reply
	StreamError         StreamEventType = "error"         // Err says why the request failed
)

// StreamEvent is one event of a provider stream. For StreamDone, Message is the
// final assistant message: its Content, Usage and StopReason ("stop" or
// "toolUse") are the provider's; Run sets its Role, Provider, Model, Timestamp
// and DurationMs. For StreamError, Err is the failure; when the request's
// context was cancelled it wraps ctx.Err().
type StreamEvent struct {
	Type     StreamEventType
	Delta    string
	ToolCall ToolCall
	Message  Message
	Err      error
}

// Streamer is what Run needs from a model provider (agent/provider.Provider
// satisfies it). Name is the provider name recorded on assistant messages.
// Stream starts one request; an error return means it could not start. The
// sequence is single-use, must stop promptly when ctx is cancelled (yielding a
// StreamError that wraps ctx.Err()), and releases its resources when the
// consumer stops ranging early.
type Streamer interface {
	Name() string
	Stream(ctx context.Context, req Request) (iter.Seq[StreamEvent], error)
}
