package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/knightcode/knightcode/agent"
)

// Runner is one thread load's extensions and their dispatch (pi's
// ExtensionRunner, core/extensions/runner.ts). Every dispatch asks the
// extensions in load order and each extension's handlers in registration
// order, merging their answers as pi does; a failing handler (an error or
// a panic) becomes a warning through Host.Warn and the dispatch goes on,
// except that a failing tool_call handler blocks the call. Its methods are
// safe for concurrent use; handlers run on the caller's goroutine.
type Runner struct {
	host     Host
	reserved []string

	mu      sync.Mutex
	pending []Extension
	exts    []*extension // loaded, in load order
	shared  []sharedValue
	loaded  bool // Load ran: provider changes reach a ProviderHost
	// refused are the messages of the providers the ProviderHost refused
	// last time, by name (each is a warning once).
	refused  map[string]string
	disposed bool
	// stale is set once the load was replaced or disposed (Thread.Stale).
	stale atomic.Bool
}

// sharedValue is a value of API.Shared.
type sharedValue struct {
	key any
	v   any
}

// extension is one loaded extension's registrations (guarded by the
// runner's mu).
type extension struct {
	path    string
	failed  bool // its Load failed: nothing it registers counts
	loading bool // its Load runs: API.Warn keeps warnings as load warnings

	warnings []Warning // API.Warn's during Load

	input            []InputHandler
	beforeAgentStart []BeforeAgentStartHandler
	toolCall         []ToolCallHandler
	toolResult       []ToolResultHandler
	turnEnd          []TurnEndHandler
	sessionStart     []SessionStartHandler
	agentStart       []AgentStartHandler
	agentEnd         []AgentEndHandler
	turnStart        []TurnStartHandler
	messageStart     []MessageStartHandler
	messageUpdate    []MessageUpdateHandler
	messageEnd       []MessageEndHandler
	context          []ContextHandler
	dispose          []func()
	tools            []Tool
	commands         []Command
	providers        []Provider
}

// Config is what a Runner is made of: the thread's Host, the extensions in
// load order (the thread's built-ins first, then the later sources, each
// in its own order: EXTENSIBILITY.md §7), and the names of the tools the
// thread has itself, which no extension may register.
type Config struct {
	Host          Host
	Extensions    []Extension
	ReservedTools []string
}

// New returns the Runner of one thread load; Load loads its extensions.
func New(cfg Config) *Runner {
	return &Runner{host: cfg.Host, reserved: slices.Clone(cfg.ReservedTools), pending: slices.Clone(cfg.Extensions)}
}

// Load runs each extension's Load in order and returns the load warnings,
// each {Path, Message}: those the extensions reported while loading
// (API.Warn), and those of the extensions that failed; it is called once.
// A failed extension keeps nothing it registered.
func (r *Runner) Load() []Warning {
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	var warnings []Warning
	for _, e := range pending {
		x := &extension{path: e.Path, loading: true}
		r.mu.Lock()
		r.exts = append(r.exts, x)
		r.mu.Unlock()
		err := safely(func() error { return e.Load(&API{r: r, x: x}) })
		r.mu.Lock()
		x.loading = false
		warnings = append(warnings, x.warnings...)
		x.warnings = nil
		r.mu.Unlock()
		if err == nil {
			continue
		}
		r.mu.Lock()
		x.failed = true
		r.exts = slices.DeleteFunc(r.exts, func(o *extension) bool { return o == x })
		r.mu.Unlock()
		w := Warning{Path: e.Path, Message: fmt.Sprintf("extension %s failed to load: %v", e.Path, err)}
		if se := (*SourceError)(nil); errors.As(err, &se) {
			w.Path, w.Line, w.Column = se.File, se.Line, se.Column
		}
		warnings = append(warnings, w)
	}
	r.mu.Lock()
	r.loaded = true
	r.mu.Unlock()
	return append(warnings, r.providersChanged()...)
}

// providersChanged tells a ProviderHost the load's providers (nil once it
// is disposed; nothing while its extensions load) and returns what it
// refuses, as warnings of the extensions that registered them.
func (r *Runner) providersChanged() []Warning {
	h, ok := r.host.(ProviderHost)
	if !ok {
		return nil
	}
	r.mu.Lock()
	loaded, disposed := r.loaded, r.disposed
	r.mu.Unlock()
	if !loaded {
		return nil
	}
	var ps []Provider
	if !disposed {
		ps = r.Providers()
	}
	var out []Warning
	refused := map[string]string{}
	for name, err := range h.ProvidersChanged(ps) {
		path := r.pathOf(func(x *extension) bool {
			return slices.ContainsFunc(x.providers, func(p Provider) bool { return p.Name == name })
		})
		w := Warning{Path: path, Message: fmt.Sprintf("extension %s: %v", path, err)}
		refused[name] = w.Message
		r.mu.Lock()
		told := r.refused[name] == w.Message
		r.mu.Unlock()
		if !told { // a refusal is told once, not at every later change
			out = append(out, w)
		}
	}
	r.mu.Lock()
	r.refused = refused
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Warning) int { return strings.Compare(a.Message, b.Message) })
	return out
}

// Dispose ends the load: each extension's OnDispose functions run, in load
// and registration order, and every later API call answers ErrDisposed.
// A panicking function is logged as a warning. It runs once; later calls
// do nothing.
func (r *Runner) Dispose() {
	r.mu.Lock()
	if r.disposed {
		r.mu.Unlock()
		return
	}
	r.disposed = true
	type fn struct {
		path string
		f    func()
	}
	var fns []fn
	for _, x := range r.exts {
		for _, f := range x.dispose {
			fns = append(fns, fn{x.path, f})
		}
	}
	shared := r.shared
	r.shared = nil
	r.mu.Unlock()
	r.providersChanged()
	for _, f := range fns {
		if err := safely(func() error { f.f(); return nil }); err != nil {
			r.warn(f.path, "dispose", err)
		}
	}
	for _, s := range shared {
		if d, ok := s.v.(interface{ Dispose() }); ok {
			if err := safely(func() error { d.Dispose(); return nil }); err != nil {
				r.warn(fmt.Sprint(s.key), "dispose", err)
			}
		}
	}
	r.stale.Store(true)
}

// MarkStale makes the load's contexts stale (Thread.Stale) before it is
// disposed: its thread was replaced, and what an extension still asks
// through a context it captured throws ErrStale.
func (r *Runner) MarkStale() { r.stale.Store(true) }

// Stale reports whether the load was replaced or disposed (MarkStale,
// Dispose).
func (r *Runner) Stale() bool { return r.stale.Load() }

// thread is the Thread handed to one dispatch.
func (r *Runner) thread() *Thread {
	th := &Thread{ID: r.host.ThreadID(), Cwd: r.host.Cwd(), HasUI: r.host.HasUI(), UI: r.host.UI(), host: r.host, r: r, Mode: ModeDesktop}
	if !th.HasUI {
		th.Mode = ModeTerminal
	}
	return th
}

// threadFor is the Thread handed to a handler of the extension at path:
// its UI names that extension when the Host is an ExtensionUIHost.
func (r *Runner) threadFor(path string) *Thread {
	th := r.thread()
	th.path = path
	if h, ok := r.host.(ExtensionUIHost); ok {
		th.UI = h.ExtensionUI(path)
	}
	return th
}

// warn reports a failed handler of the extension at path.
func (r *Runner) warn(path, event string, err error) {
	r.host.Warn(Warning{Path: path, Message: fmt.Sprintf("extension %s: its %s handler failed: %v", path, event, err)})
}

// handlers returns, under the lock, the handlers that pick selects from
// each loaded extension, in load and registration order, with their
// extension's path.
func handlers[H any](r *Runner, pick func(*extension) []H) []pathed[H] {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disposed {
		return nil
	}
	var out []pathed[H]
	for _, x := range r.exts {
		for _, h := range pick(x) {
			out = append(out, pathed[H]{x.path, h})
		}
	}
	return out
}

type pathed[H any] struct {
	path string
	h    H
}

// Handles reports whether a handler is registered for event (one of the
// Event constants), so a caller can skip preparing a dispatch nobody
// hears.
func (r *Runner) Handles(event string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disposed {
		return false
	}
	for _, x := range r.exts {
		n := 0
		switch event {
		case EventInput:
			n = len(x.input)
		case EventBeforeAgentStart:
			n = len(x.beforeAgentStart)
		case EventToolCall:
			n = len(x.toolCall)
		case EventToolResult:
			n = len(x.toolResult)
		case EventTurnEnd:
			n = len(x.turnEnd)
		case EventSessionStart:
			n = len(x.sessionStart)
		case EventAgentStart:
			n = len(x.agentStart)
		case EventAgentEnd:
			n = len(x.agentEnd)
		case EventTurnStart:
			n = len(x.turnStart)
		case EventMessageStart:
			n = len(x.messageStart)
		case EventMessageUpdate:
			n = len(x.messageUpdate)
		case EventMessageEnd:
			n = len(x.messageEnd)
		case EventContext:
			n = len(x.context)
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// Input dispatches pi's input event (runner.ts emitInput): each handler
// sees the input as the previous one left it; a transform changes the text
// (and the images, when it gives some); the first "handled" ends the
// dispatch and consumes the input. The answer is InputHandled,
// InputTransform with the final text and images when any handler
// transformed it, else InputContinue. When ctx ends the dispatch stops
// (a handler already running finishes) and the answer is meaningless:
// the caller reports the start cancelled.
func (r *Runner) Input(ctx context.Context, e InputEvent) InputResult {
	cur, changed := e, false
	for _, p := range handlers(r, func(x *extension) []InputHandler { return x.input }) {
		if ctx.Err() != nil {
			break
		}
		var res InputResult
		err := safely(func() (err error) { res, err = p.h(ctx, r.threadFor(p.path), cur); return err })
		if err != nil {
			if ctx.Err() == nil { // a handler cut short by the cancellation finishes unheard
				r.warn(p.path, EventInput, err)
			}
			continue
		}
		switch res.Action {
		case "", InputContinue:
		case InputHandled:
			return InputResult{Action: InputHandled}
		case InputTransform:
			cur.Text, changed = res.Text, true
			if res.Images != nil {
				cur.Images = res.Images
			}
		default:
			r.warn(p.path, EventInput, fmt.Errorf("unknown action %q", res.Action))
		}
	}
	if !changed {
		return InputResult{Action: InputContinue}
	}
	return InputResult{Action: InputTransform, Text: cur.Text, Images: cur.Images}
}

// Command returns the registered command text invokes ("/name args") and
// its args; ok is false when text names none.
func (r *Runner) Command(text string) (c Command, args string, ok bool) {
	name, ok := strings.CutPrefix(text, "/")
	if !ok {
		return Command{}, "", false
	}
	name, args, _ = strings.Cut(name, " ")
	for _, cmd := range r.Commands() {
		if cmd.Name == name {
			return cmd, args, true
		}
	}
	return Command{}, "", false
}

// RunCommand runs the command text invokes, if any, and reports whether
// it did (the input is then handled, pi's _tryExecuteExtensionCommand). A
// failing command is a warning; it still handled the input.
func (r *Runner) RunCommand(ctx context.Context, text string) bool {
	c, args, ok := r.Command(text)
	if !ok {
		return false
	}
	path := r.pathOf(func(x *extension) bool {
		return slices.ContainsFunc(x.commands, func(o Command) bool { return o.Name == c.Name })
	})
	if err := safely(func() error { return c.Handler(ctx, r.threadFor(path), args) }); err != nil {
		r.host.Warn(Warning{Path: path, Message: fmt.Sprintf("extension %s: command /%s failed: %v", path, c.Name, err)})
	}
	return true
}

// warnAll reports ws to the thread's subscribers.
func (r *Runner) warnAll(ws []Warning) {
	for _, w := range ws {
		r.host.Warn(w)
	}
}

// pathOf is the path of the first loaded extension that has.
func (r *Runner) pathOf(has func(*extension) bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.exts {
		if has(x) {
			return x.path
		}
	}
	return ""
}

// BeforeAgentStart dispatches pi's before_agent_start event (runner.ts
// emitBeforeAgentStart): each handler sees the system prompt as the
// previous one left it; every message a handler returns is added, in
// order. The answer's SystemPrompt is e.SystemPrompt when no handler
// changed it.
func (r *Runner) BeforeAgentStart(ctx context.Context, e BeforeAgentStartEvent) AgentStart {
	out := AgentStart{SystemPrompt: e.SystemPrompt}
	for _, p := range handlers(r, func(x *extension) []BeforeAgentStartHandler { return x.beforeAgentStart }) {
		ev := e
		ev.SystemPrompt = out.SystemPrompt
		var res BeforeAgentStartResult
		err := safely(func() (err error) { res, err = p.h(ctx, r.threadFor(p.path), ev); return err })
		if err != nil {
			r.warn(p.path, EventBeforeAgentStart, err)
			continue
		}
		if res.Message != nil {
			if res.Message.CustomType == "" {
				r.warn(p.path, EventBeforeAgentStart, fmt.Errorf("its message has no customType: left out"))
			} else {
				out.Messages = append(out.Messages, *res.Message)
			}
		}
		if res.SystemPrompt != nil {
			out.SystemPrompt = *res.SystemPrompt
		}
	}
	return out
}

// ToolCall dispatches pi's tool_call event (runner.ts emitToolCall): each
// handler sees the input as the previous one left it; the first block
// ends the dispatch. A failing handler blocks the call (fail closed, as
// pi's agent session does), with a reason naming the extension and the
// failure, and is a warning; so is an input that is not a JSON object.
// The answer is {Block, Reason}, or {Input} with the final input when a
// handler changed it, or the zero value.
func (r *Runner) ToolCall(ctx context.Context, e ToolCallEvent) ToolCallResult {
	cur, changed := e, false
	for _, p := range handlers(r, func(x *extension) []ToolCallHandler { return x.toolCall }) {
		var res ToolCallResult
		err := safely(func() (err error) { res, err = p.h(ctx, r.threadFor(p.path), cur); return err })
		if err == nil && !res.Block && res.Input != nil && !isObject(res.Input) {
			err = fmt.Errorf("the input it gave is not a JSON object: %.200s", res.Input)
		}
		if err != nil {
			r.warn(p.path, EventToolCall, err)
			return ToolCallResult{Block: true, Reason: fmt.Sprintf("The call was blocked: extension %s failed while checking it: %v", p.path, err)}
		}
		if res.Block {
			reason := res.Reason
			if reason == "" {
				reason = fmt.Sprintf("The call was blocked by extension %s.", p.path)
			}
			return ToolCallResult{Block: true, Reason: reason}
		}
		if res.Input != nil {
			cur.Input, changed = res.Input, true
		}
	}
	if changed {
		return ToolCallResult{Input: cur.Input}
	}
	return ToolCallResult{}
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// ToolResult dispatches pi's tool_result event (runner.ts emitToolResult):
// each handler sees the result as the previous one left it and may
// replace its content, details or isError. It returns the final result and
// whether a handler changed it.
func (r *Runner) ToolResult(ctx context.Context, e ToolResultEvent) (ToolResultEvent, bool) {
	cur, changed := e, false
	for _, p := range handlers(r, func(x *extension) []ToolResultHandler { return x.toolResult }) {
		var res ToolResultResult
		err := safely(func() (err error) { res, err = p.h(ctx, r.threadFor(p.path), cur); return err })
		if err == nil && res.Details != nil && !json.Valid(res.Details) {
			err = fmt.Errorf("the details it gave are not JSON")
		}
		if err != nil {
			r.warn(p.path, EventToolResult, err)
			continue
		}
		if res.Content != nil {
			cur.Content, changed = res.Content, true
		}
		if res.Details != nil {
			cur.Details, changed = res.Details, true
		}
		if res.IsError != nil {
			cur.IsError, changed = *res.IsError, true
		}
	}
	return cur, changed
}

// TurnEnd dispatches pi's turn_end event to every handler; nil
// ToolResults are sent as [] (pi's toolResults is an array).
func (r *Runner) TurnEnd(ctx context.Context, e TurnEndEvent) {
	if e.ToolResults == nil {
		e.ToolResults = []agent.Message{}
	}
	emit(r, ctx, EventTurnEnd, e, func(x *extension) []TurnEndHandler { return x.turnEnd })
}

// SessionStart dispatches pi's session_start event to every handler, once
// the load's extensions are loaded (reason: startup, reload, new, resume
// or fork).
func (r *Runner) SessionStart(ctx context.Context, e SessionStartEvent) {
	emit(r, ctx, EventSessionStart, e, func(x *extension) []SessionStartHandler { return x.sessionStart })
}

// AgentStart dispatches pi's agent_start event to every handler.
func (r *Runner) AgentStart(ctx context.Context, e AgentStartEvent) {
	emit(r, ctx, EventAgentStart, e, func(x *extension) []AgentStartHandler { return x.agentStart })
}

// AgentEnd dispatches pi's agent_end event to every handler; it returns
// once they all returned. Nil Messages are sent as [].
func (r *Runner) AgentEnd(ctx context.Context, e AgentEndEvent) {
	if e.Messages == nil {
		e.Messages = []agent.Message{}
	}
	emit(r, ctx, EventAgentEnd, e, func(x *extension) []AgentEndHandler { return x.agentEnd })
}

// TurnStart dispatches pi's turn_start event to every handler.
func (r *Runner) TurnStart(ctx context.Context, e TurnStartEvent) {
	emit(r, ctx, EventTurnStart, e, func(x *extension) []TurnStartHandler { return x.turnStart })
}

// MessageStart dispatches pi's message_start event to every handler.
func (r *Runner) MessageStart(ctx context.Context, e MessageStartEvent) {
	emit(r, ctx, EventMessageStart, e, func(x *extension) []MessageStartHandler { return x.messageStart })
}

// MessageUpdate dispatches pi's message_update event to every handler.
func (r *Runner) MessageUpdate(ctx context.Context, e MessageUpdateEvent) {
	emit(r, ctx, EventMessageUpdate, e, func(x *extension) []MessageUpdateHandler { return x.messageUpdate })
}

// emit dispatches e, an event whose handlers answer nothing (pi's
// runner.emit), to the handlers pick selects, in load and registration
// order; a failing one is a warning naming event. Once ctx ends (an
// interrupt) the dispatch stops, and a handler still running finishes
// unheard (no warning).
func emit[E any, H ~func(context.Context, *Thread, E) error](r *Runner, ctx context.Context, event string, e E, pick func(*extension) []H) {
	for _, p := range handlers(r, pick) {
		if ctx.Err() != nil {
			return
		}
		if err := safely(func() error { return p.h(ctx, r.threadFor(p.path), e) }); err != nil && ctx.Err() == nil {
			r.warn(p.path, event, err)
		}
	}
}

// MessageEnd dispatches pi's message_end event (runner.ts emitMessageEnd):
// each handler sees the message as the previous one left it, and a
// replacement it returns replaces it for the later handlers; one of
// another role is a warning and ignored. It returns the final message and
// whether a handler replaced it. Once ctx ends (an interrupt) the dispatch
// stops with the message as it is, and a handler still running finishes
// unheard.
func (r *Runner) MessageEnd(ctx context.Context, e MessageEndEvent) (agent.Message, bool) {
	cur, changed := e.Message, false
	for _, p := range handlers(r, func(x *extension) []MessageEndHandler { return x.messageEnd }) {
		if ctx.Err() != nil {
			break
		}
		var res MessageEndResult
		err := safely(func() (err error) {
			res, err = p.h(ctx, r.threadFor(p.path), MessageEndEvent{Message: cur})
			return err
		})
		if ctx.Err() != nil {
			break
		}
		if err == nil && res.Message != nil && res.Message.Role != cur.Role {
			err = fmt.Errorf("message_end handlers must return a message with the same role (%s, got %q)", cur.Role, res.Message.Role)
		}
		if err != nil {
			r.warn(p.path, EventMessageEnd, err)
			continue
		}
		if res.Message != nil {
			cur, changed = *res.Message, true
		}
	}
	return cur, changed
}

// Context dispatches pi's context event (runner.ts emitContext): each
// handler sees the messages as the previous one left them, and messages it
// returns (an empty list included) replace them. It returns the final
// messages: those the model gets for this request. Once ctx ends (an
// interrupt: no request follows) the dispatch stops.
func (r *Runner) Context(ctx context.Context, e ContextEvent) []agent.Message {
	cur := e.Messages
	for _, p := range handlers(r, func(x *extension) []ContextHandler { return x.context }) {
		if ctx.Err() != nil {
			break
		}
		var res ContextResult
		err := safely(func() (err error) { res, err = p.h(ctx, r.threadFor(p.path), ContextEvent{Messages: cur}); return err })
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			r.warn(p.path, EventContext, err)
			continue
		}
		if res.Messages != nil {
			cur = res.Messages
		}
	}
	return cur
}

// Tools returns the registered tools in load and registration order.
func (r *Runner) Tools() []Tool {
	return flatten(r, func(x *extension) []Tool { return x.tools })
}

// Registered is one registration with the Path of the extension that
// made it (tool/list's path).
type Registered[T any] struct {
	Value T
	Path  string
}

// ListTools returns the registered tools with their extensions' paths, in
// load and registration order (tool/list {threadId}).
func (r *Runner) ListTools() []Registered[Tool] {
	var out []Registered[Tool]
	for _, p := range handlers(r, func(x *extension) []Tool { return x.tools }) {
		out = append(out, Registered[Tool]{Value: p.h, Path: p.path})
	}
	return out
}

// Commands returns the registered commands in load and registration
// order.
func (r *Runner) Commands() []Command {
	return flatten(r, func(x *extension) []Command { return x.commands })
}

// Providers returns the registered providers in load and registration
// order.
func (r *Runner) Providers() []Provider {
	return flatten(r, func(x *extension) []Provider { return x.providers })
}

func flatten[T any](r *Runner, pick func(*extension) []T) []T {
	var out []T
	for _, p := range handlers(r, pick) {
		out = append(out, p.h)
	}
	return out
}

// Execute runs one call of the registered tool t (see Tool): a failure
// returned as an error, or a panic, is an error result whose text the
// model reads.
func (r *Runner) Execute(ctx context.Context, t Tool, call ToolCall) ToolResult {
	var res ToolResult
	path := r.pathOf(func(x *extension) bool {
		return slices.ContainsFunc(x.tools, func(o Tool) bool { return o.Name == t.Name })
	})
	err := safely(func() (err error) { res, err = t.Execute(ctx, r.threadFor(path), call); return err })
	if err != nil {
		return ErrorResult(fmt.Sprintf("%s: %v", t.Name, err))
	}
	return res
}

// safely runs f and turns its panic into an error.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}
