package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Tool is a tool the model may call. Definition is what the model is told;
// Execute runs one call with the call's JSON arguments object. Execute must honour
// ctx (cancellation is an interrupt: stop promptly, kill what was started) and
// report every failure — bad arguments included — as a result with IsError set,
// never as a panic (Run still turns a panic into an error result).
type Tool interface {
	Definition() ToolDefinition
	Execute(ctx context.Context, args json.RawMessage) ToolResult
}

// ToolResult is what a tool call produced: the content sent back to the model
// (text blocks), the details stored on the toolResult message, and whether the
// call failed. Run drops Details.FileChanges from failed results.
type ToolResult struct {
	Content []ContentBlock
	Details ToolDetails
	IsError bool
}

// ErrorResult returns a failed ToolResult whose content is the text msg.
func ErrorResult(msg string) ToolResult {
	return ToolResult{Content: []ContentBlock{TextBlock(msg)}, IsError: true}
}

// Decision is an approval hook's answer for one tool call. A declined call does
// not run; the model gets an error result whose text is Reason (or a default
// text when Reason is empty), and the call's status is "declined".
type Decision struct {
	Allow  bool
	Reason string
}

// EventType tags an Event.
type EventType string

// The events Run reports, in the order they happen.
const (
	// EventMessageStart: a message begins. For a user message (input or
	// steering) Message is complete and EventMessageEnd follows at once; for an
	// assistant reply Message has Role, Provider, Model and Timestamp and no
	// content yet.
	EventMessageStart EventType = "messageStart"
	// EventThinkingDelta / EventTextDelta: Delta extends the block at
	// ContentIndex of the reply in progress.
	EventThinkingDelta EventType = "thinkingDelta"
	EventTextDelta     EventType = "textDelta"
	// EventMessageEnd: Message is final (for a reply: content, usage,
	// stopReason, errorMessage, timestamp, durationMs). Every EventMessageStart
	// has exactly one EventMessageEnd.
	EventMessageEnd EventType = "messageEnd"
	// EventToolStart: ToolCall is about to be approved and run.
	EventToolStart EventType = "toolStart"
	// EventToolEnd: ToolCall finished; Message is its toolResult message and
	// ToolStatus is completed, failed or declined.
	EventToolEnd EventType = "toolEnd"
	// EventRetry: the model request failed with a retryable error (rateLimit,
	// network or an HTTP 5xx) and is retried after Delay; Attempt is the
	// retry's 1-based number and Err the failure. It comes between the
	// reply's EventMessageStart and EventMessageEnd (the thread layer's
	// turn/retry notification).
	EventRetry EventType = "retry"
	// EventReplyReset: the failed attempt had already streamed part of the
	// reply; that partial content is withdrawn (the thread layer removes the
	// items it started for it, item/removed) and the retry streams the reply
	// again from an empty content, ContentIndex starting at 0. Message is the
	// withdrawn partial reply. It comes just before the EventRetry.
	EventReplyReset EventType = "replyReset"
	// EventCompactionStart: the run begins compacting its conversation
	// (Options.Compaction), before a model request.
	EventCompactionStart EventType = "compactionStart"
	// EventCompactionEnd: the compaction ended. On success Compaction holds
	// the result and Err is nil; on failure Err says why, the conversation
	// is unchanged, and Compaction.Usage is what the failed request used.
	EventCompactionEnd EventType = "compactionEnd"
)

// Event is one thing that happened during Run; which fields are set depends on
// Type (see the EventType constants).
type Event struct {
	Type         EventType
	Message      Message
	Delta        string
	ContentIndex int
	ToolCall     ToolCall
	ToolStatus   ToolStatus

	// EventRetry only (Err also for EventCompactionEnd).
	Attempt int
	Delay   time.Duration
	Err     error

	// EventCompactionEnd only.
	Compaction *CompactionResult
}

// Options configures one Run. Provider and Model are required; every hook is
// optional. Hooks are called synchronously from the goroutine calling Run, so a
// slow hook delays the run.
type Options struct {
	Provider      Streamer      // streams the replies
	Model         string        // model id, sent in Request.Model and recorded on replies
	ThinkingLevel ThinkingLevel // sent in Request.ThinkingLevel
	SystemPrompt  string
	Tools         []Tool // the tools the model may call, by Definition().Name
	// LiveTools, when set, returns tools that come and go during the run
	// (the thread's extensions' tools: an MCP server connects late, or
	// its tools change). It is called before each model request, whose
	// tools are Tools then these, and again when a call starts and once
	// it is approved: a call of a tool the request offered that is gone by
	// then answers the model an error (withdrawnText) and does not run;
	// a tool replaced under its name runs as it is now. Names must not repeat
	// Tools'. It is called from the goroutine calling Run.
	LiveTools func() []Tool

	// CheckTool is asked before each call of a known tool is approved and
	// run (nil lets every call through unchanged): the thread's extensions'
	// tool_call handlers. It receives Run's ctx and must return when ctx
	// is cancelled.
	CheckTool func(ctx context.Context, call ToolCall) ToolCheck
	// Approve is asked before each tool call runs (nil allows every call),
	// with the arguments CheckTool left. It receives Run's ctx and must
	// return when ctx is cancelled.
	Approve func(ctx context.Context, call ToolCall) Decision
	// AfterTool may replace the result of each call that ran (nil keeps
	// it): the thread's extensions' tool_result handlers. It receives
	// Run's ctx.
	AfterTool func(ctx context.Context, call ToolCall, res ToolResult) ToolResult
	// TurnEnd is told each reply that ended with the results of the calls
	// it asked for (none for a reply that asked for none), just before
	// Steer is polled, unless the run was interrupted (pi's turn_end). It
	// is called synchronously: steering it queues is taken by that poll.
	TurnEnd func(ctx context.Context, reply Message, results []Message)
	// TurnStart is told that a turn begins (pi's turn_start: one model
	// reply and the calls it asks for), before its messages: the first
	// before the input, each later one before the steering it takes and
	// its model request. It is not told when the run was interrupted.
	TurnStart func(ctx context.Context)
	// MessageStart is told each message as it begins (pi's
	// message_start): a user or custom message of the input or of
	// steering, complete; an assistant reply before its request is sent,
	// with Role, Provider, Model and Timestamp and no content; a
	// toolResult message once its call ended.
	MessageStart func(ctx context.Context, m Message)
	// MessageUpdate is told each stream event that extended the reply in
	// progress (pi's message_update): partial is the reply so far,
	// contentIndex the block the event extended (a text or thinking
	// delta, or a whole tool call). partial shares memory with the reply:
	// it is valid only during the call and must not be changed.
	MessageUpdate func(ctx context.Context, partial Message, contentIndex int, update StreamEvent)
	// MessageEnd is asked for each message as it ends, before it is
	// recorded (pi's message_end with MessageEndEventResult): what it
	// returns, of the same role, replaces the message in the conversation,
	// in the run's output and in EventMessageEnd (EventToolEnd for a
	// toolResult); a reply's tool calls are those of the replacement. A
	// replacement without a timestamp keeps the message's.
	MessageEnd func(ctx context.Context, m Message) Message
	// Context is asked, before each model request, for the messages the
	// model gets (pi's context event): it receives a copy of the
	// conversation and returns the messages to send in its place, for that
	// request only; the conversation is unchanged.
	Context func(ctx context.Context, msgs []Message) []Message
	// Steer returns user messages to add to the running turn (nil means none).
	// Run polls it before each model request — so after each tool batch — and
	// once more after a reply without tool calls, continuing the run when it
	// returns messages. Steering is therefore never left for a later Run unless
	// the run is interrupted first.
	Steer func() []Message
	// OnEvent receives every Event.
	OnEvent func(Event)
	// OnUsage receives the usage of each finalized assistant reply (including
	// failed and aborted ones, whose usage may be zero), right after its
	// EventMessageEnd. Summing is the caller's job.
	OnUsage func(Usage)
	// Retry says how failed model requests are retried within the run; the
	// zero value never retries (DefaultRetryPolicy has the spec's defaults).
	Retry RetryPolicy
	// Compaction says when the conversation is compacted (zero: never).
	Compaction Compaction
}

// ToolCheck is a CheckTool hook's answer for one tool call: Block stops it
// (it does not run; the model gets an error result whose text is Reason,
// or a default text when Reason is empty, and the call's status is
// failed); otherwise Arguments, when set, replace the call's arguments for
// the approval and the run.
type ToolCheck struct {
	Block     bool
	Reason    string
	Arguments json.RawMessage
}

// ErrInterrupted is returned by Run when its context was cancelled: the turn
// was interrupted, not failed.
var ErrInterrupted = errors.New("agent: run interrupted")

// ProviderError is returned by Run when a model request failed (the reply is
// recorded with stopReason "error" and errorMessage Err.Error()).
type ProviderError struct {
	Err error
}

// Error returns the provider's error text, the errorMessage of the failed reply.
func (e *ProviderError) Error() string { return e.Err.Error() }

// Unwrap returns the provider's error.
func (e *ProviderError) Unwrap() error { return e.Err }

// Kind classifies the failure with ErrorKind (an *APIError's kind or HTTP
// status first, the text second): auth, rateLimit, contextOverflow, network,
// provider or other.
func (e *ProviderError) Kind() string { return ErrorKind(e.Err) }

// declinedText is the result text of a declined call whose hook gave no reason.
const declinedText = "The user declined this tool call."

// blockedText is the result text of a call CheckTool blocked without a
// reason.
const blockedText = "The call was blocked before it ran."

// withdrawnText is the result text of a call of a tool the request offered
// that was withdrawn (Options.LiveTools) before the call ran.
const withdrawnText = "Tool %q is no longer available: it was withdrawn after this request was made (its MCP server or extension removed it). Do not call it again."

// interruptedText is the result text of a call the interrupt kept from running.
const interruptedText = "Tool call not run: the turn was interrupted."

// Run runs the agent loop for one turn. history is the conversation so far (not
// modified); input holds the new user messages. Run streams a reply, runs its
// tool calls in order (each through opts.Approve), feeds the results back and
// repeats until a reply asks for no tool and no steering is waiting.
//
// It returns the new messages in order — input, steering, replies and tool
// results — and nil, ErrInterrupted, or a *ProviderError. Interruption is ctx's
// cancellation: the reply in progress is kept with stopReason "aborted" (its
// tool calls never run), a running tool is stopped by its ctx and its result
// recorded, the calls not yet run get error results, and Run returns promptly.
// Every tool call of a reply that was not aborted or failed gets exactly one
// toolResult message. Messages with a zero Timestamp get the current time.
func Run(ctx context.Context, opts Options, history, input []Message) ([]Message, error) {
	if opts.Provider == nil {
		return nil, errors.New("agent: Run without a provider")
	}
	r := &run{opts: opts, conversation: slices.Clip(history), usageFrom: len(history)}
	r.turnStart(ctx)
	for _, m := range input {
		r.addUser(ctx, m)
	}
	overflowCompacted := false
	newTurn := false   // the next request begins a turn (pi's turn_start)
	var held []Message // steering taken after a reply, for the next turn
	for {
		if newTurn {
			newTurn = false
			r.turnStart(ctx)
		}
		// Steering taken is recorded even when the run was interrupted
		// meanwhile: it left the caller's queue.
		for _, m := range held {
			r.addUser(ctx, m)
		}
		held = nil
		if ctx.Err() != nil {
			return r.out, ErrInterrupted
		}
		r.pollSteer(ctx)
		if r.needsCompaction() {
			// A failed compaction leaves the conversation as it was: the
			// request still runs, and an overflow compacts again below.
			if err := r.compact(ctx); err != nil && ctx.Err() != nil {
				return r.out, ErrInterrupted
			}
		}
		reply, err := r.stream(ctx)
		if err != nil && ErrorKind(err) == ErrorKindContextOverflow && opts.Compaction.Enabled && !overflowCompacted {
			// Compact and retry the request once (issue 12).
			overflowCompacted = true
			cerr := r.compact(ctx)
			if ctx.Err() != nil {
				return r.out, ErrInterrupted
			}
			if cerr == nil {
				continue
			}
		}
		if err != nil {
			return r.out, &ProviderError{Err: err}
		}
		if reply.StopReason == StopReasonAborted {
			return r.out, ErrInterrupted
		}
		calls := reply.ToolCalls()
		if len(calls) == 0 {
			if ctx.Err() != nil {
				return r.out, ErrInterrupted
			}
			r.turnEnd(ctx, reply, nil)
			if r.opts.Steer != nil {
				held = r.opts.Steer()
			}
			if len(held) > 0 {
				newTurn = true
				continue
			}
			return r.out, nil
		}
		results := make([]Message, 0, len(calls))
		for _, call := range calls {
			results = append(results, r.runTool(ctx, call))
		}
		r.turnEnd(ctx, reply, results)
		newTurn = true
	}
}

// turnStart calls the TurnStart hook unless the run was interrupted.
func (r *run) turnStart(ctx context.Context) {
	if r.opts.TurnStart != nil && ctx.Err() == nil {
		r.opts.TurnStart(ctx)
	}
}

// messageStart calls the MessageStart hook.
func (r *run) messageStart(ctx context.Context, m Message) {
	if r.opts.MessageStart != nil {
		r.opts.MessageStart(ctx, m)
	}
}

// messageEnd returns m as the MessageEnd hook leaves it: a replacement of
// another role is ignored; one without a timestamp keeps m's.
func (r *run) messageEnd(ctx context.Context, m Message) Message {
	if r.opts.MessageEnd == nil {
		return m
	}
	out := r.opts.MessageEnd(ctx, m)
	if out.Role != m.Role {
		return m
	}
	if out.Timestamp == 0 {
		out.Timestamp = m.Timestamp
	}
	return out
}

// turnEnd calls the TurnEnd hook unless the run was interrupted.
func (r *run) turnEnd(ctx context.Context, reply Message, results []Message) {
	if r.opts.TurnEnd != nil && ctx.Err() == nil {
		r.opts.TurnEnd(ctx, reply, results)
	}
}

// run is the state of one Run.
type run struct {
	opts         Options
	conversation []Message // history plus everything added, compacted
	out          []Message // what this run added
	// usageFrom is the index of the first conversation message whose
	// reported usage measures the current conversation (this run's, since
	// the last compaction).
	usageFrom int
	// offered are the names of the tools the last model request offered.
	offered []string
}

// tools are the tools the model may call now: Options.Tools, then
// Options.LiveTools'.
func (r *run) tools() []Tool {
	if r.opts.LiveTools == nil {
		return r.opts.Tools
	}
	return append(slices.Clip(r.opts.Tools), r.opts.LiveTools()...)
}

func (r *run) emit(e Event) {
	if r.opts.OnEvent != nil {
		r.opts.OnEvent(e)
	}
}

func (r *run) add(m Message) {
	r.conversation = append(r.conversation, m)
	r.out = append(r.out, m)
}

// addUser records a user (or custom) message of the input or of
// steering: it begins and ends at once (MessageStart, MessageEnd).
func (r *run) addUser(ctx context.Context, m Message) {
	if m.Role == "" {
		m.Role = RoleUser
	}
	if m.Timestamp == 0 {
		m.Timestamp = time.Now().UnixMilli()
	}
	r.emit(Event{Type: EventMessageStart, Message: m})
	r.messageStart(ctx, m)
	m = r.messageEnd(ctx, m)
	r.add(m)
	r.emit(Event{Type: EventMessageEnd, Message: m})
}

// pollSteer adds the waiting steering messages.
func (r *run) pollSteer(ctx context.Context) {
	if r.opts.Steer == nil {
		return
	}
	for _, m := range r.opts.Steer() {
		r.addUser(ctx, m)
	}
}

// stream makes one model request and records the reply. The error is the
// provider's failure (the reply then has stopReason "error"); an interrupted
// reply has stopReason "aborted" and no error.
func (r *run) stream(ctx context.Context) (Message, error) {
	start := time.Now()
	msg := Message{
		Role: RoleAssistant, Provider: r.opts.Provider.Name(), Model: r.opts.Model,
		Timestamp: start.UnixMilli(),
	}
	r.emit(Event{Type: EventMessageStart, Message: msg})

	tools := r.tools()
	defs := make([]ToolDefinition, len(tools))
	r.offered = r.offered[:0]
	for i, t := range tools {
		defs[i] = t.Definition()
		r.offered = append(r.offered, defs[i].Name)
	}
	msgs := r.conversation
	if r.opts.Context != nil {
		msgs = r.opts.Context(ctx, cloneMessages(msgs))
	}
	req := Request{
		Model: r.opts.Model, SystemPrompt: r.opts.SystemPrompt,
		Messages: slices.Clip(ForModel(msgs)), Tools: defs, ThinkingLevel: r.opts.ThinkingLevel,
	}
	r.messageStart(ctx, msg)
	var (
		final *Message
		err   error
	)
	for attempt := 1; ; attempt++ {
		final, err = r.attempt(ctx, req, &msg)
		if final != nil || err == nil || ctx.Err() != nil {
			break
		}
		ok, after := retryable(err)
		if !ok {
			break
		}
		delay, ok := r.opts.Retry.Delay(attempt, after, jitter())
		if !ok {
			break
		}
		if len(msg.Content) > 0 {
			r.emit(Event{Type: EventReplyReset, Message: msg})
			msg.Content = nil
		}
		r.emit(Event{Type: EventRetry, Attempt: attempt, Delay: delay, Err: err})
		if !sleep(ctx, delay) {
			break
		}
	}
	switch {
	case final != nil:
		if final.Content != nil {
			msg.Content = final.Content
		}
		msg.Usage = final.Usage
		msg.StopReason = final.StopReason
		if msg.StopReason == "" {
			msg.StopReason = StopReasonStop
			if len(msg.ToolCalls()) > 0 {
				msg.StopReason = StopReasonToolUse
			}
		}
	case ctx.Err() != nil:
		msg.StopReason = StopReasonAborted
		err = nil
	default:
		if err == nil {
			err = fmt.Errorf("provider %s: stream ended without a final message", msg.Provider)
		}
		msg.StopReason = StopReasonError
		msg.ErrorMessage = err.Error()
	}
	msg.DurationMs = time.Since(start).Milliseconds()
	msg = r.messageEnd(ctx, msg)
	r.add(msg)
	r.emit(Event{Type: EventMessageEnd, Message: msg})
	if r.opts.OnUsage != nil {
		r.opts.OnUsage(msg.Usage)
	}
	return msg, err
}

// attempt streams one request into msg and returns the final message or the
// failure (both nil when the stream ended without either).
func (r *run) attempt(ctx context.Context, req Request, msg *Message) (*Message, error) {
	seq, err := r.opts.Provider.Stream(ctx, req)
	if err == nil && seq == nil {
		err = fmt.Errorf("provider %s: no stream", msg.Provider)
	}
	if err != nil {
		return nil, err
	}
	for ev := range seq {
		switch ev.Type {
		case StreamThinkingDelta:
			i := extend(msg, ContentThinking, ev.Delta)
			r.emit(Event{Type: EventThinkingDelta, Delta: ev.Delta, ContentIndex: i})
			r.messageUpdate(ctx, *msg, i, ev)
		case StreamTextDelta:
			i := extend(msg, ContentText, ev.Delta)
			r.emit(Event{Type: EventTextDelta, Delta: ev.Delta, ContentIndex: i})
			r.messageUpdate(ctx, *msg, i, ev)
		case StreamToolCall:
			msg.Content = append(msg.Content, ToolCallBlock(ev.ToolCall))
			r.messageUpdate(ctx, *msg, len(msg.Content)-1, ev)
		case StreamDone:
			return &ev.Message, nil
		case StreamError:
			if ev.Err == nil {
				return nil, errors.New("provider stream failed without an error message")
			}
			return nil, ev.Err
		}
	}
	return nil, nil
}

// messageUpdate calls the MessageUpdate hook.
func (r *run) messageUpdate(ctx context.Context, partial Message, i int, ev StreamEvent) {
	if r.opts.MessageUpdate != nil {
		r.opts.MessageUpdate(ctx, partial, i, ev)
	}
}

// cloneMessages copies msgs and their content blocks, so a Context hook
// cannot change the conversation through them.
func cloneMessages(msgs []Message) []Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].Content = slices.Clone(out[i].Content)
	}
	return out
}

// extend appends delta to the last block of msg when it has type typ, else adds
// a new block, and returns the block's index.
func extend(msg *Message, typ ContentType, delta string) int {
	n := len(msg.Content)
	if n > 0 && msg.Content[n-1].Type == typ {
		if typ == ContentText {
			msg.Content[n-1].Text += delta
		} else {
			msg.Content[n-1].Thinking += delta
		}
		return n - 1
	}
	b := ContentBlock{Type: typ, Text: delta}
	if typ == ContentThinking {
		b = ContentBlock{Type: typ, Thinking: delta}
	}
	msg.Content = append(msg.Content, b)
	return n
}

// runTool approves and runs one call and records its result, which it
// returns.
func (r *run) runTool(ctx context.Context, call ToolCall) Message {
	r.emit(Event{Type: EventToolStart, ToolCall: call})
	res, status := r.execute(ctx, call)
	if res.IsError {
		res.Details.FileChanges = nil
	}
	msg := Message{
		Role: RoleToolResult, ToolCallID: call.ID, ToolName: call.Name, Content: res.Content,
		IsError: res.IsError, Timestamp: time.Now().UnixMilli(),
	}
	if !res.Details.isZero() {
		d, err := json.Marshal(res.Details)
		if err == nil {
			msg.Details = d
		}
	}
	r.messageStart(ctx, msg)
	if r.opts.MessageEnd != nil {
		msg = r.messageEnd(ctx, msg)
		status = msg.ToolStatus()
	}
	r.add(msg)
	r.emit(Event{Type: EventToolEnd, ToolCall: call, Message: msg, ToolStatus: status})
	return msg
}

func (r *run) execute(ctx context.Context, call ToolCall) (ToolResult, ToolStatus) {
	if ctx.Err() != nil {
		return ErrorResult(interruptedText), ToolFailed
	}
	tool := r.find(call.Name)
	if tool == nil {
		if slices.Contains(r.offered, call.Name) {
			return ErrorResult(fmt.Sprintf(withdrawnText, call.Name)), ToolFailed
		}
		return ErrorResult(fmt.Sprintf("Tool %q not found.", call.Name)), ToolFailed
	}
	if r.opts.CheckTool != nil {
		chk := r.opts.CheckTool(ctx, call)
		if ctx.Err() != nil {
			return ErrorResult(interruptedText), ToolFailed
		}
		if chk.Block {
			reason := chk.Reason
			if reason == "" {
				reason = blockedText
			}
			return ErrorResult(reason), ToolFailed
		}
		if chk.Arguments != nil {
			call.Arguments = chk.Arguments
		}
	}
	if r.opts.Approve != nil {
		d := r.opts.Approve(ctx, call)
		if ctx.Err() != nil {
			return ErrorResult(interruptedText), ToolFailed
		}
		if !d.Allow {
			reason := d.Reason
			if reason == "" {
				reason = declinedText
			}
			res := ErrorResult(reason)
			res.Details.Declined = true
			return res, ToolDeclined
		}
	}
	if r.opts.LiveTools != nil {
		// The hooks may have waited long (an approval): run the tool as
		// it is now, or not at all when it was withdrawn meanwhile.
		if tool = r.find(call.Name); tool == nil {
			return ErrorResult(fmt.Sprintf(withdrawnText, call.Name)), ToolFailed
		}
	}
	res := safeExecute(ctx, tool, call)
	if r.opts.AfterTool != nil {
		res = r.opts.AfterTool(ctx, call, res)
	}
	if res.IsError {
		return res, ToolFailed
	}
	return res, ToolCompleted
}

// find is the tool named name among the tools now, or nil.
func (r *run) find(name string) Tool {
	for _, t := range r.tools() {
		if t.Definition().Name == name {
			return t
		}
	}
	return nil
}

// safeExecute runs the tool and turns a panic into an error result.
func safeExecute(ctx context.Context, tool Tool, call ToolCall) (res ToolResult) {
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult(fmt.Sprintf("Tool %s failed unexpectedly: %v", call.Name, p))
		}
	}()
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return tool.Execute(context.WithValue(ctx, callIDKey{}, call.ID), args)
}

type callIDKey struct{}

// CallID returns the id of the tool call a tool's Execute runs for (its ctx
// carries it), and "" outside a call.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
