// Package reply accumulates the content of a streaming assistant reply and
// yields the agent's stream events for it, so every provider builds the
// final message the same way the run loop builds the partial one.
package reply

import (
	"encoding/json"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
)

// Builder is one reply in progress. Yield is the stream's consumer; once it
// returns false every later call is a no-op returning false.
type Builder struct {
	Content []agent.ContentBlock
	Yield   func(agent.StreamEvent) bool
	stopped bool
}

// Delta extends the last block when it has type typ (text or thinking),
// else starts a new block, and yields the delta; an empty d does nothing.
// False means the consumer stopped.
func (b *Builder) Delta(typ agent.ContentType, d string) bool {
	if d == "" {
		return !b.stopped
	}
	n := len(b.Content)
	switch {
	case n > 0 && b.Content[n-1].Type == typ && typ == agent.ContentText:
		b.Content[n-1].Text += d
	case n > 0 && b.Content[n-1].Type == typ:
		b.Content[n-1].Thinking += d
	case typ == agent.ContentText:
		b.Content = append(b.Content, agent.TextBlock(d))
	default:
		b.Content = append(b.Content, agent.ThinkingBlock(d))
	}
	ev := agent.StreamTextDelta
	if typ == agent.ContentThinking {
		ev = agent.StreamThinkingDelta
	}
	return b.Send(agent.StreamEvent{Type: ev, Delta: d})
}

// Signature sets the signature of the last thinking block (Anthropic's
// signature_delta), starting an empty one when there is none.
func (b *Builder) Signature(sig string) {
	n := len(b.Content)
	if n == 0 || b.Content[n-1].Type != agent.ContentThinking {
		b.Content = append(b.Content, agent.ThinkingBlock(""))
		n++
	}
	b.Content[n-1].ThinkingSignature += sig
}

// ToolCall adds a complete tool call and yields it. args is the arguments
// JSON text as streamed (see Arguments).
func (b *Builder) ToolCall(id, name, args string) bool {
	call := agent.ToolCall{ID: id, Name: name, Arguments: Arguments(args)}
	b.Content = append(b.Content, agent.ToolCallBlock(call))
	return b.Send(agent.StreamEvent{Type: agent.StreamToolCall, ToolCall: call})
}

// Send yields ev unless the consumer stopped.
func (b *Builder) Send(ev agent.StreamEvent) bool {
	if b.stopped {
		return false
	}
	if !b.Yield(ev) {
		b.stopped = true
	}
	return !b.stopped
}

// Fail ends the stream with err.
func (b *Builder) Fail(err error) { b.Send(agent.StreamEvent{Type: agent.StreamError, Err: err}) }

// Done ends the stream with the final message: the content so far, stop
// ("stop" becomes "toolUse" when the reply has tool calls), and usage u with
// its cost at price.
func (b *Builder) Done(stop agent.StopReason, u agent.Usage, price catalog.Price) {
	for _, c := range b.Content {
		if c.Type == agent.ContentToolCall && stop == agent.StopReasonStop {
			stop = agent.StopReasonToolUse
		}
	}
	u.Cost.Total = price.Cost(u)
	content := b.Content
	if content == nil {
		content = []agent.ContentBlock{}
	}
	b.Send(agent.StreamEvent{Type: agent.StreamDone, Message: agent.Message{
		Role: agent.RoleAssistant, Content: content, StopReason: stop, Usage: u,
	}})
}

// Arguments returns a tool call's arguments as JSON: {} when empty, the text
// as a JSON string when it is not valid JSON (the tool then reports the bad
// arguments to the model).
func Arguments(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// Sendable reports whether a recorded message goes into a request: failed
// and aborted replies do not (their tool calls have no results).
func Sendable(m agent.Message) bool {
	return m.Role != agent.RoleAssistant ||
		(m.StopReason != agent.StopReasonError && m.StopReason != agent.StopReasonAborted)
}

// ToolResultText is the text a toolResult message sends back ("error" for a
// failed call without text).
func ToolResultText(m agent.Message) string {
	t := m.Text()
	if t == "" && m.IsError {
		return "error"
	}
	return t
}

// ImageOmitted replaces an image for a model that accepts none.
const ImageOmitted = "(image omitted: this model does not accept images)"

// StreamEnded is the cause of a stream that ended before its final event.
type StreamEnded struct{}

func (StreamEnded) Error() string { return "the stream ended before the response completed" }
