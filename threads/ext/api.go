package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/agent/tools"
)

// Extension is one extension as a thread loads it: Path names it in
// warnings (the absolute path of its entry file, or "builtin:<name>" for
// one written in Go), and Load registers its handlers, tools, commands and
// providers through api (pi's extension factory). Load is called once per
// thread load, in load order, on a goroutine that is not the thread's; a
// Load that fails (an error or a panic) is a load warning, and what it
// registered is dropped. What a Load keeps (closures over per-load state)
// lives until the load is disposed (API.OnDispose).
type Extension struct {
	Path string
	Load func(api *API) error
}

// BuiltinPathPrefix begins the Path of an extension written in Go that
// every thread loads ("builtin:ask_user"): tool/list names its tools
// builtin.
const BuiltinPathPrefix = "builtin:"

// The events of the seam, as pi names them (ExtensionAPI.on); warnings
// name the event of a failed handler.
const (
	EventInput            = "input"
	EventBeforeAgentStart = "before_agent_start"
	EventToolCall         = "tool_call"
	EventToolResult       = "tool_result"
	EventTurnEnd          = "turn_end"
	EventSessionStart     = "session_start"
	EventAgentStart       = "agent_start"
	EventAgentEnd         = "agent_end"
	EventTurnStart        = "turn_start"
	EventMessageStart     = "message_start"
	EventMessageUpdate    = "message_update"
	EventMessageEnd       = "message_end"
	EventContext          = "context"
)

// The handlers an extension registers. ctx ends when what the handler
// serves is interrupted (the turn, or the start of one); th is the
// thread. An error (or a panic) is a failure: a warning, and for a
// tool_call handler a blocked call.
type (
	InputHandler            func(ctx context.Context, th *Thread, e InputEvent) (InputResult, error)
	BeforeAgentStartHandler func(ctx context.Context, th *Thread, e BeforeAgentStartEvent) (BeforeAgentStartResult, error)
	ToolCallHandler         func(ctx context.Context, th *Thread, e ToolCallEvent) (ToolCallResult, error)
	ToolResultHandler       func(ctx context.Context, th *Thread, e ToolResultEvent) (ToolResultResult, error)
	TurnEndHandler          func(ctx context.Context, th *Thread, e TurnEndEvent) error
	SessionStartHandler     func(ctx context.Context, th *Thread, e SessionStartEvent) error
	AgentStartHandler       func(ctx context.Context, th *Thread, e AgentStartEvent) error
	AgentEndHandler         func(ctx context.Context, th *Thread, e AgentEndEvent) error
	TurnStartHandler        func(ctx context.Context, th *Thread, e TurnStartEvent) error
	MessageStartHandler     func(ctx context.Context, th *Thread, e MessageStartEvent) error
	MessageUpdateHandler    func(ctx context.Context, th *Thread, e MessageUpdateEvent) error
	MessageEndHandler       func(ctx context.Context, th *Thread, e MessageEndEvent) (MessageEndResult, error)
	ContextHandler          func(ctx context.Context, th *Thread, e ContextEvent) (ContextResult, error)
)

// ErrDisposed is returned by an API call after the thread load it belongs
// to was disposed, or made for an extension whose Load failed.
var ErrDisposed = errors.New("ext: the extension's thread load is over")

// API is what one extension acts through (pi's ExtensionAPI): it registers
// handlers, tools, commands and providers, and sends messages and session
// entries to its thread. It is valid from Load until the load is disposed;
// its methods are safe for concurrent use. Handlers of one extension run
// in registration order.
type API struct {
	r *Runner
	x *extension
}

// Path is the extension's Path.
func (a *API) Path() string { return a.x.path }

// Thread is the thread the extension is loaded in, for work outside a
// handler (a handler gets it as an argument).
func (a *API) Thread() *Thread { return a.r.threadFor(a.x.path) }

// OnInput registers h for pi's input event (Runner.Input).
func (a *API) OnInput(h InputHandler) { a.on(func(x *extension) { x.input = append(x.input, h) }) }

// OnBeforeAgentStart registers h for pi's before_agent_start event
// (Runner.BeforeAgentStart).
func (a *API) OnBeforeAgentStart(h BeforeAgentStartHandler) {
	a.on(func(x *extension) { x.beforeAgentStart = append(x.beforeAgentStart, h) })
}

// OnToolCall registers h for pi's tool_call event (Runner.ToolCall).
func (a *API) OnToolCall(h ToolCallHandler) {
	a.on(func(x *extension) { x.toolCall = append(x.toolCall, h) })
}

// OnToolResult registers h for pi's tool_result event (Runner.ToolResult).
func (a *API) OnToolResult(h ToolResultHandler) {
	a.on(func(x *extension) { x.toolResult = append(x.toolResult, h) })
}

// OnTurnEnd registers h for pi's turn_end event (Runner.TurnEnd).
func (a *API) OnTurnEnd(h TurnEndHandler) {
	a.on(func(x *extension) { x.turnEnd = append(x.turnEnd, h) })
}

// OnSessionStart registers h for pi's session_start event
// (Runner.SessionStart).
func (a *API) OnSessionStart(h SessionStartHandler) {
	a.on(func(x *extension) { x.sessionStart = append(x.sessionStart, h) })
}

// OnAgentStart registers h for pi's agent_start event (Runner.AgentStart).
func (a *API) OnAgentStart(h AgentStartHandler) {
	a.on(func(x *extension) { x.agentStart = append(x.agentStart, h) })
}

// OnAgentEnd registers h for pi's agent_end event (Runner.AgentEnd).
func (a *API) OnAgentEnd(h AgentEndHandler) {
	a.on(func(x *extension) { x.agentEnd = append(x.agentEnd, h) })
}

// OnTurnStart registers h for pi's turn_start event (Runner.TurnStart).
func (a *API) OnTurnStart(h TurnStartHandler) {
	a.on(func(x *extension) { x.turnStart = append(x.turnStart, h) })
}

// OnMessageStart registers h for pi's message_start event
// (Runner.MessageStart).
func (a *API) OnMessageStart(h MessageStartHandler) {
	a.on(func(x *extension) { x.messageStart = append(x.messageStart, h) })
}

// OnMessageUpdate registers h for pi's message_update event
// (Runner.MessageUpdate).
func (a *API) OnMessageUpdate(h MessageUpdateHandler) {
	a.on(func(x *extension) { x.messageUpdate = append(x.messageUpdate, h) })
}

// OnMessageEnd registers h for pi's message_end event (Runner.MessageEnd).
func (a *API) OnMessageEnd(h MessageEndHandler) {
	a.on(func(x *extension) { x.messageEnd = append(x.messageEnd, h) })
}

// OnContext registers h for pi's context event (Runner.Context).
func (a *API) OnContext(h ContextHandler) {
	a.on(func(x *extension) { x.context = append(x.context, h) })
}

// OnDispose registers f to run when the thread load ends (unload, or the
// end of the process), after the thread stopped (pi's session_shutdown).
func (a *API) OnDispose(f func()) { a.on(func(x *extension) { x.dispose = append(x.dispose, f) }) }

func (a *API) on(add func(*extension)) {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	if a.r.disposed || a.x.failed {
		return
	}
	add(a.x)
}

// Shared returns the value this thread load keeps under key, made by mk
// when no extension of the load asked for key before: state that several
// extensions of one load share, such as the one JavaScript runtime of a
// thread load (package extensions). When the load is disposed, after every
// OnDispose function, each shared value that has a Dispose() method is
// disposed, in the order they were made. A failed Load does not drop
// what it made here. Errors: mk's (nothing is kept); ErrDisposed.
func (a *API) Shared(key any, mk func() (any, error)) (any, error) {
	r := a.r
	find := func() (any, bool) {
		for _, s := range r.shared {
			if s.key == key {
				return s.v, true
			}
		}
		return nil, false
	}
	r.mu.Lock()
	if r.disposed {
		r.mu.Unlock()
		return nil, ErrDisposed
	}
	if v, ok := find(); ok {
		r.mu.Unlock()
		return v, nil
	}
	r.mu.Unlock()
	v, err := mk()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	old, ok := find()
	if !ok && !r.disposed {
		r.shared = append(r.shared, sharedValue{key, v})
	}
	disposed := r.disposed
	r.mu.Unlock()
	if ok || disposed {
		// Another extension made it first, or the load ended meanwhile.
		if d, can := v.(interface{ Dispose() }); can {
			d.Dispose()
		}
		if disposed {
			return nil, ErrDisposed
		}
		return old, nil
	}
	return v, nil
}

// RegisterTool registers t for the model (pi's registerTool), from the
// next model request of a turn that starts afterwards. Registering a name
// the extension registered before replaces that tool. Errors: an empty
// name or a nil Execute; parameters that are not a JSON object; a name
// the thread's own tools or another extension's tool already use (the
// first registration keeps it, as in pi); ErrDisposed.
func (a *API) RegisterTool(t Tool) error {
	switch {
	case t.Name == "":
		return errors.New("ext: a tool needs a name")
	case t.Execute == nil:
		return fmt.Errorf("ext: tool %q has no Execute", t.Name)
	}
	if len(t.Parameters) == 0 {
		t.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if !isObject(t.Parameters) {
		return fmt.Errorf("ext: the parameters of tool %q are not a JSON Schema object: %.200s", t.Name, t.Parameters)
	}
	return register(a, "tool", t, t.Name, func(x *extension) *[]Tool { return &x.tools }, func(o Tool) string { return o.Name })
}

// UnregisterTool removes the extension's tool name (an MCP server's tool
// that went away); it reports whether there was one.
func (a *API) UnregisterTool(name string) bool {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	n := len(a.x.tools)
	a.x.tools = slices.DeleteFunc(a.x.tools, func(t Tool) bool { return t.Name == name })
	return len(a.x.tools) < n
}

// RegisterCommand registers c (pi's registerCommand). Registering a name
// the extension registered before replaces that command. Errors: an empty
// name, one starting with "/" or holding a space, a nil Handler; a name
// another extension registered; ErrDisposed.
func (a *API) RegisterCommand(c Command) error {
	switch {
	case c.Name == "" || strings.HasPrefix(c.Name, "/") || strings.ContainsAny(c.Name, " \t\n"):
		return fmt.Errorf("ext: %q is not a command name (a word, without the leading /)", c.Name)
	case c.Handler == nil:
		return fmt.Errorf("ext: command %q has no Handler", c.Name)
	}
	return register(a, "command", c, c.Name, func(x *extension) *[]Command { return &x.commands }, func(o Command) string { return o.Name })
}

// RegisterProvider registers p (pi's registerProvider; see Provider);
// its models' Provider is set to p.Name. Registering a name the extension
// registered before replaces that provider. Errors: an empty name;
// neither Config nor Streamer, or both; a name another extension
// registered; ErrDisposed.
func (a *API) RegisterProvider(p Provider) error {
	switch {
	case p.Name == "":
		return errors.New("ext: a provider needs a name")
	case p.Streamer == nil && len(p.Config) == 0:
		return fmt.Errorf("ext: provider %q has neither a configuration nor a Streamer", p.Name)
	case p.Streamer != nil && len(p.Config) > 0:
		return fmt.Errorf("ext: provider %q has both a configuration and a Streamer", p.Name)
	}
	p.Models = slices.Clone(p.Models)
	for i := range p.Models {
		p.Models[i].Provider = p.Name
	}
	if err := register(a, "provider", p, p.Name, func(x *extension) *[]Provider { return &x.providers }, func(o Provider) string { return o.Name }); err != nil {
		return err
	}
	a.r.warnAll(a.r.providersChanged())
	return nil
}

// UnregisterProvider removes the extension's provider name (pi's
// unregisterProvider); it reports whether there was one.
func (a *API) UnregisterProvider(name string) bool {
	a.r.mu.Lock()
	n := len(a.x.providers)
	a.x.providers = slices.DeleteFunc(a.x.providers, func(p Provider) bool { return p.Name == name })
	removed := len(a.x.providers) < n
	a.r.mu.Unlock()
	if removed {
		a.r.warnAll(a.r.providersChanged())
	}
	return removed
}

// register adds v, the kind named name, to the list of a's extension that
// list picks, replacing the one of that name the extension registered
// before. Errors: a tool name of the thread's own tools; a name another
// extension registered (the first keeps it, as in pi); ErrDisposed.
func register[T any](a *API, kind string, v T, name string, list func(*extension) *[]T, nameOf func(T) string) error {
	r := a.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := a.usableLocked(); err != nil {
		return err
	}
	if kind == "tool" && slices.Contains(r.reserved, name) {
		return fmt.Errorf("ext: tool %q is one of the thread's own tools", name)
	}
	named := func(o T) bool { return nameOf(o) == name }
	for _, x := range r.exts {
		if x != a.x && slices.ContainsFunc(*list(x), named) {
			return fmt.Errorf("ext: %s %q is already registered by %s", kind, name, x.path)
		}
	}
	own := list(a.x)
	if i := slices.IndexFunc(*own, named); i >= 0 {
		(*own)[i] = v
	} else {
		*own = append(*own, v)
	}
	return nil
}

// usableLocked refuses registrations of a failed or disposed load.
func (a *API) usableLocked() error {
	if a.r.disposed || a.x.failed {
		return ErrDisposed
	}
	return nil
}

// Warn reports a problem of the extension that does not stop it (an MCP
// server that failed to connect): while its Load runs, a load warning (the
// thread's start, resume and fork results carry it, as a failed Load's);
// afterwards a subscriber warning (Host.Warn). w.Path "" is the
// extension's Path. Nothing happens once the load is disposed.
func (a *API) Warn(w Warning) {
	if w.Path == "" {
		w.Path = a.x.path
	}
	a.r.mu.Lock()
	if a.r.disposed || a.x.failed {
		a.r.mu.Unlock()
		return
	}
	if a.x.loading {
		a.x.warnings = append(a.x.warnings, w)
		a.r.mu.Unlock()
		return
	}
	a.r.mu.Unlock()
	a.r.host.Warn(w)
}

// SendMessage gives m to the thread (pi's sendMessage), delivered as d
// says. It does not wait for the delivery. Errors: an empty CustomType or
// an unknown delivery; ErrDisposed; the thread's (it unloaded).
func (a *API) SendMessage(m Message, d Delivery) error {
	if m.CustomType == "" {
		return errors.New("ext: a message needs a customType")
	}
	if d != DeliverSteer && d != DeliverNextTurn {
		return fmt.Errorf("ext: unknown delivery %q", d)
	}
	if err := a.usable(); err != nil {
		return err
	}
	return a.r.host.SendMessage(m, d)
}

// AppendEntry writes a custom entry {customType, data} to the thread's
// session file (pi's appendEntry): state an extension keeps across loads,
// which the model never reads. It returns once the entry is written.
// Errors: an empty customType, data that is not JSON; ErrDisposed; the
// session's.
func (a *API) AppendEntry(customType string, data json.RawMessage) error {
	if customType == "" {
		return errors.New("ext: an entry needs a customType")
	}
	if len(data) > 0 && !json.Valid(data) {
		return fmt.Errorf("ext: the data of entry %q is not JSON", customType)
	}
	if err := a.usable(); err != nil {
		return err
	}
	return a.r.host.AppendEntry(customType, data)
}

func (a *API) usable() error {
	a.r.mu.Lock()
	defer a.r.mu.Unlock()
	return a.usableLocked()
}

// The modes of Thread.Mode.
const (
	ModeDesktop  = "desktop"
	ModeTerminal = "terminal"
)

// Thread is what a handler knows of the thread it runs in and can do to it
// (pi's ExtensionContext): its id, its cwd, its mode (ModeDesktop, or
// ModeTerminal for a thread a terminal-mode connection loaded, which has
// no UI: HasUI false), and its UI. It is made for each dispatch.
type Thread struct {
	ID    string
	Cwd   string
	Mode  string
	HasUI bool
	UI    UI
	host  Host
	r     *Runner
	path  string // the extension the Thread was made for
}

// ErrStale is the error of what an extension asks through a Thread of a
// thread load that was reloaded or replaced (pi 0.73's assertActive:
// "stale extension context").
var ErrStale = errors.New("stale extension context")

// Stale reports whether the thread load th belongs to was reloaded
// (/reload), replaced (a session-replacing command) or disposed: a
// context an extension captured from it is stale, and every call on it
// throws ErrStale (spec "Subscriptions and replacement").
func (th *Thread) Stale() bool { return th.r != nil && th.r.stale.Load() }

// The Kinds of a ReplaceRequest: a new session (ctx.newSession), a fork
// (ctx.fork).
const (
	ReplaceNew  = "new"
	ReplaceFork = "fork"
)

// ForkAt is the ReplaceRequest.Position of pi's fork(entryId, {position:
// "at"}); its default is "before".
const ForkAt = "at"

// ReplaceRequest asks the thread to be replaced by another (pi's
// ctx.newSession and ctx.fork of a command context): Kind ReplaceNew is a
// new empty session in the same cwd, with the thread's settings; Kind
// ReplaceFork is the thread forked at the session entry EntryID: before
// it (Position "" or "before"; the entry must be a user message opening a
// turn) or at it (ForkAt; the entry must end a turn), as thread/fork
// forks through a turn.
type ReplaceRequest struct {
	Kind              string
	EntryID, Position string
}

// Replacer is implemented by a Host whose thread can be replaced by a
// session-replacing command: Replace makes the new thread, moves the
// subscribers there (thread/replaced, spec "Subscriptions and
// replacement"), marks this load stale and returns the new thread load's
// Runner, whose extensions are loaded.
type Replacer interface {
	Replace(ctx context.Context, req ReplaceRequest) (*Runner, error)
}

// ErrNoReplace is returned by Thread.Replace when the thread cannot be
// replaced (its Host is no Replacer).
var ErrNoReplace = errors.New("ext: this thread cannot be replaced")

// Replace replaces the thread (see Replacer) and returns the new thread as
// the same extension sees it (pi's ReplacedSessionContext). Errors:
// ErrStale; ErrNoReplace; the Host's.
func (th *Thread) Replace(ctx context.Context, req ReplaceRequest) (*Thread, error) {
	if th.Stale() {
		return nil, ErrStale
	}
	rep, ok := th.host.(Replacer)
	if !ok {
		return nil, ErrNoReplace
	}
	nr, err := rep.Replace(ctx, req)
	if err != nil {
		return nil, err
	}
	return nr.threadFor(th.path), nil
}

// Abort stops the running turn, as turn/interrupt does (pi's ctx.abort):
// it ends interrupted and its queued inputs are dropped. Nothing happens
// when no turn runs.
func (th *Thread) Abort() { th.host.Abort() }

// IsIdle reports whether no turn runs (pi's ctx.isIdle).
func (th *Thread) IsIdle() bool { return th.host.IsIdle() }

// ProcessHost is implemented by a Host whose thread contains the
// processes its extensions start (child_process): they run in the
// thread's process groups, so they end with the thread as its bash
// commands do (tools.ProcessGroups.Start).
type ProcessHost interface {
	Processes() *tools.ProcessGroups
}

// Processes returns the thread's process groups, or nil when its host has
// none (ProcessHost).
func (th *Thread) Processes() *tools.ProcessGroups {
	if p, ok := th.host.(ProcessHost); ok {
		return p.Processes()
	}
	return nil
}

// Host is the thread's side of the seam, implemented by package threads
// once per thread load. Its methods are safe for concurrent use and are
// never called on the thread's own goroutine by the Runner.
type Host interface {
	// ThreadID and Cwd are the thread's id and working directory.
	ThreadID() string
	Cwd() string
	// HasUI is false for a thread a terminal-mode connection loaded.
	HasUI() bool
	// UI is the thread's UI (see UI).
	UI() UI
	// Warn reports w to the thread's subscribers (a warning notification
	// of source "extension" with the threadId) and logs it.
	Warn(w Warning)
	// SendMessage queues m for delivery as d says.
	SendMessage(m Message, d Delivery) error
	// AppendEntry writes a custom session entry.
	AppendEntry(customType string, data json.RawMessage) error
	// Abort stops the running turn; IsIdle reports that none runs.
	Abort()
	IsIdle() bool
}
