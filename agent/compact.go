package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Compaction configures automatic compaction of a run's conversation
// (issue 12; the settings compaction.enabled, compaction.reserveTokens and
// compaction.keepRecentTokens). The zero value never compacts.
//
// Before each model request, when the conversation's estimated size
// exceeds ContextWindow - ReserveTokens, and once per Run when a request
// fails with a contextOverflow error, Run asks the model for a summary of
// the older messages and goes on with [SummaryMessage] of it followed by
// the recent messages, about KeepRecentTokens of them. After an overflow
// the failed request is retried once on the compacted conversation.
type Compaction struct {
	Enabled          bool
	ContextWindow    int // tokens; 0 turns the size check off (overflows still compact)
	ReserveTokens    int
	KeepRecentTokens int
}

// CompactionResult is a successful compaction as EventCompactionEnd reports
// it: the summary, how many of the conversation's last messages were kept
// verbatim (the first kept one is the first message after the summary),
// the estimated size of the conversation before (tokens), and the usage of
// the summarizing request (billed like a reply).
type CompactionResult struct {
	Summary      string
	Kept         int
	TokensBefore int64
	Usage        Usage
}

// SummaryPrefix and SummarySuffix wrap a compaction summary in the user
// message that replaces the compacted history (pi's compaction summary
// message).
const (
	SummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	SummarySuffix = "\n</summary>"
)

// SummaryMessage is the user message standing for the compacted history:
// summary wrapped in SummaryPrefix and SummarySuffix, stamped timestamp.
func SummaryMessage(summary string, timestamp int64) Message {
	return UserText(SummaryPrefix+summary+SummarySuffix, timestamp)
}

// summarySystemPrompt is the system prompt of a summarizing request.
const summarySystemPrompt = `You are a context summarization assistant. Read the conversation between a user and an AI coding agent and write a structured summary that another instance of the agent can use to continue the work. Do not continue the conversation and do not answer questions in it: only output the summary.`

// summaryInstructions follow the serialized conversation in the
// summarizing request.
const summaryInstructions = `Summarize the conversation above with these sections:

## Goal
What the user is trying to accomplish.

## Progress
What has been done, with the files read or changed and the commands run.

## Key decisions and facts
Decisions made, constraints, and facts discovered that matter for what follows.

## Next steps
What remains to be done.

Be concise; keep exact file paths, function names and error messages.`

// imageTokens is the estimated size of an image in a conversation.
const imageTokens = 1200

// estimateMessage estimates the tokens of m: a quarter of its characters
// (text, thinking, tool call names and arguments), images imageTokens each.
func estimateMessage(m Message) int64 {
	chars := 0
	for _, b := range m.Content {
		switch b.Type {
		case ContentText:
			chars += len(b.Text)
		case ContentThinking:
			chars += len(b.Thinking)
		case ContentToolCall:
			chars += len(b.Name) + len(b.Arguments)
		case ContentImage:
			chars += 4 * imageTokens
		}
	}
	return int64((chars + 3) / 4)
}

// estimate returns the estimated tokens of the conversation: the usage of
// the latest successful reply of this run since the last compaction (its
// prompt plus output) plus the estimate of the messages after it; without
// such a reply, the estimate of every message.
func (r *run) estimate() int64 {
	for i := len(r.conversation) - 1; i >= r.usageFrom; i-- {
		m := r.conversation[i]
		if m.Role != RoleAssistant || m.StopReason == StopReasonError || m.StopReason == StopReasonAborted {
			continue
		}
		if n := m.Usage.ContextTokens(); n > 0 {
			for _, later := range r.conversation[i+1:] {
				n += estimateMessage(later)
			}
			return n
		}
	}
	var n int64
	for _, m := range r.conversation {
		n += estimateMessage(m)
	}
	return n
}

// needsCompaction reports whether the next request would exceed the
// context window less the reserve.
func (r *run) needsCompaction() bool {
	c := r.opts.Compaction
	return c.Enabled && c.ContextWindow > 0 && r.estimate() > int64(c.ContextWindow-c.ReserveTokens)
}

// cutPoint returns the index of the first message kept verbatim: the
// smallest valid index whose messages from it on fit KeepRecentTokens, else
// the largest valid one; -1 when no message can be cut. A valid index is
// at least 1 (something is summarized) and holds a user or assistant
// message, never a tool result, so every kept tool result follows its call.
func (r *run) cutPoint() int {
	conv := r.conversation
	keep := int64(r.opts.Compaction.KeepRecentTokens)
	suffix := make([]int64, len(conv)+1)
	for i := len(conv) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + estimateMessage(conv[i])
	}
	last := -1
	for i := 1; i < len(conv); i++ {
		if conv[i].Role == RoleToolResult {
			continue
		}
		if suffix[i] <= keep {
			return i
		}
		last = i
	}
	return last
}

// errNothingToCompact: the conversation has no message that can be cut.
var errNothingToCompact = errors.New("agent: nothing to compact")

// compact summarizes the messages before the cut point with one request to
// the run's provider and replaces them with SummaryMessage. It reports
// EventCompactionStart and EventCompactionEnd (with the result, or Err);
// on failure the conversation is left as it was. Interruption cancels the
// summarizing request (ctx's error is returned).
func (r *run) compact(ctx context.Context) error {
	cut := r.cutPoint()
	if cut < 0 {
		return errNothingToCompact
	}
	before := r.estimate()
	r.emit(Event{Type: EventCompactionStart})
	summary, usage, err := r.summarize(ctx, r.conversation[:cut])
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		r.emit(Event{Type: EventCompactionEnd, Err: err, Compaction: &CompactionResult{Usage: usage}})
		return err
	}
	kept := r.conversation[cut:]
	conv := make([]Message, 0, 1+len(kept))
	conv = append(conv, SummaryMessage(summary, 0))
	r.conversation = append(conv, kept...)
	r.usageFrom = len(r.conversation)
	res := &CompactionResult{Summary: summary, Kept: len(kept), TokensBefore: before, Usage: usage}
	r.emit(Event{Type: EventCompactionEnd, Compaction: res})
	return nil
}

// summarize asks the model for a summary of msgs (serialized as text in one
// user message, without tools) and returns its text and usage.
func (r *run) summarize(ctx context.Context, msgs []Message) (string, Usage, error) {
	var b strings.Builder
	b.WriteString("<conversation>\n")
	for _, m := range msgs {
		writeTranscript(&b, m)
	}
	b.WriteString("</conversation>\n\n")
	b.WriteString(summaryInstructions)
	req := Request{
		Model: r.opts.Model, SystemPrompt: summarySystemPrompt,
		Messages:      []Message{UserText(b.String(), 0)},
		ThinkingLevel: ThinkingOff,
	}
	seq, err := r.opts.Provider.Stream(ctx, req)
	if err != nil {
		return "", Usage{}, err
	}
	if seq == nil {
		return "", Usage{}, fmt.Errorf("provider %s: no stream", r.opts.Provider.Name())
	}
	var text strings.Builder
	for ev := range seq {
		switch ev.Type {
		case StreamTextDelta:
			text.WriteString(ev.Delta)
		case StreamDone:
			summary := ev.Message.Text()
			if summary == "" {
				summary = text.String()
			}
			if strings.TrimSpace(summary) == "" {
				return "", ev.Message.Usage, errors.New("agent: the model returned an empty summary")
			}
			return strings.TrimSpace(summary), ev.Message.Usage, nil
		case StreamError:
			if ev.Err == nil {
				return "", Usage{}, errors.New("provider stream failed without an error message")
			}
			return "", Usage{}, ev.Err
		}
	}
	if ctx.Err() != nil {
		return "", Usage{}, ctx.Err()
	}
	return "", Usage{}, fmt.Errorf("provider %s: stream ended without a final message", r.opts.Provider.Name())
}

// writeTranscript writes m as "[Role]: text" lines for a summarizing
// request: text and tool calls of replies, tool results, user text.
func writeTranscript(b *strings.Builder, m Message) {
	switch m.Role {
	case RoleUser:
		fmt.Fprintf(b, "[User]: %s\n", m.Text())
	case RoleAssistant:
		if m.StopReason == StopReasonError || m.StopReason == StopReasonAborted {
			return
		}
		if t := m.Text(); t != "" {
			fmt.Fprintf(b, "[Assistant]: %s\n", t)
		}
		for _, c := range m.ToolCalls() {
			fmt.Fprintf(b, "[Assistant tool call]: %s(%s)\n", c.Name, c.Arguments)
		}
	case RoleToolResult:
		fmt.Fprintf(b, "[Tool result %s]: %s\n", m.ToolName, m.Text())
	}
}
