package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/builtin"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// Extensions (package threads/ext; EXTENSIBILITY.md §7): every thread load
// has one ext.Runner holding its extensions in load order, the built-ins
// of package builtin first (ask_user, background_shell), then
// Config.Extensions. The thread is their ext.Host (extHost): their
// warnings reach its subscribers, their dialogs go through its server
// requests (serverreq.go, dialog.go), their messages wait in extMsgs for
// the model. The runner is dispatched:
//   - at a start (admitStart): a registered command, or the input
//     handlers, run off the thread's goroutine while the start holds
//     admission (t.starting); an interrupt or unload cancels the start
//     (turn/start answers "cancelled"), a command or a "handled" answers
//     "handled" and starts nothing, a transform changes the input;
//   - in the turn (turn.go run): before_agent_start (system prompt and
//     messages after the input), agent_start, then through the agent's
//     hooks turn_start, message_start/update/end (a message_end
//     replacement is what is recorded: turn_events.go dropStale),
//     context before each model request, tool_call before each call's
//     approval (agent.Options.CheckTool: a failing handler blocks the
//     call), tool_result after it ran, turn_end before each steering
//     poll, and the registered tools beside the thread's own; agent_end
//     once the run ended, before the turn finishes (agentRun);
//   - at unload: the runner is disposed after the thread's goroutine
//     stopped (loop).

// builtinTools are the names of the thread's own tools (tools.All): no
// extension may register them.
var builtinTools = []string{tools.ReadName, tools.BashName, tools.EditName, tools.WriteName}

// newExtensions makes the thread load's background_shell extension, which
// starts with the notices pending on branch, and its first runner
// (register, before the thread's goroutine starts; loadExtensions loads
// them).
func (t *thread) newExtensions(branch []session.Entry) {
	t.bg = builtin.NewBackgroundShells(builtin.PendingNotices(branch))
	t.extRunner.Store(t.newRunner())
	t.extLoaded = make(chan struct{})
}

// newRunner makes a runner of the thread's extensions as they are found
// now (a project trusted since the last load loads its own): the
// built-ins, then Config.ExtensionsFor's, then Config.Extensions (MCP's
// among them).
func (t *thread) newRunner() *ext.Runner {
	exts := []ext.Extension{builtin.AskUser(), t.bg.Extension()}
	if f := t.m.cfg.ExtensionsFor; f != nil {
		exts = append(exts, f(t.cwd)...)
	}
	exts = append(exts, t.m.cfg.Extensions...)
	h := &extHost{t: t}
	h.r = ext.New(ext.Config{Host: h, Extensions: exts, ReservedTools: builtinTools})
	return h.r
}

// runner is the thread's current runner (any goroutine).
func (t *thread) runner() *ext.Runner { return t.extRunner.Load() }

// sessionStartTimeout bounds how long a load waits for its session_start
// handlers; a handler still running goes on unheard.
const sessionStartTimeout = 5 * time.Second

// loadExtensions loads the thread's first runner (register, once its
// goroutine runs: a Load may call back into the thread) and keeps its load
// warnings for the thread's start, resume and fork results.
func (t *thread) loadExtensions() {
	defer close(t.extLoaded)
	reason := t.sessionReason
	if reason == "" {
		reason = ext.SessionStartup
	}
	t.extWarnings = t.loadRunner(t.runner(), reason)
}

// loadRunner (not on the thread's goroutine) loads r, dispatches
// session_start with reason, and returns the load warnings: the
// extensions' and what the extension UI refused meanwhile (extui.go).
func (t *thread) loadRunner(r *ext.Runner, reason string) []protocol.Warning {
	var out []protocol.Warning
	for _, w := range r.Load() {
		t.m.log.Warn("an extension failed to load", "thread", t.id, "path", w.Path, "err", w.Message)
		out = append(out, protocol.Warning{Source: protocol.WarningSourceExtension, Path: w.Path, Message: w.Message, Line: w.Line, Column: w.Column})
	}
	if r.Handles(ext.EventSessionStart) {
		ctx, cancel := context.WithTimeout(t.m.base, sessionStartTimeout)
		r.SessionStart(ctx, ext.SessionStartEvent{Reason: reason})
		cancel()
	}
	_ = t.call(context.Background(), func() error {
		out = append(out, t.uiLoaded()...)
		return nil
	})
	return out
}

// reloadCommand is the thread's own command (spec "Dialogs and extension
// UI"; pi's /reload): it reloads the thread's extensions.
const reloadCommand = "/reload"

// isReload reports whether text is the /reload command.
func isReload(text string) bool {
	return text == reloadCommand || strings.HasPrefix(text, reloadCommand+" ")
}

// reload (off the thread's goroutine, while a start holds admission)
// reloads the thread's extensions (/reload): the old runner is disposed
// (session_shutdown, its runtime stopped, its contexts stale); then,
// on the thread's goroutine, everything the old extensions showed is
// cleared (one removal per widget, then one ui/state: clearUI) and their
// view event handlers dropped; then a new runner of the extensions as they
// are found now loads (MCP servers connect again, a project trusted since
// loads its own) with session_start reason "reload". Its load warnings
// reach the subscribers and the later resume results.
func (t *thread) reload() {
	t.runner().Dispose()
	nr := t.newRunner()
	err := t.call(context.Background(), func() error {
		if t.unloading {
			return t.gone()
		}
		t.clearUI()
		t.uiHandlers.clear()
		t.extRunner.Store(nr)
		return nil
	})
	if err != nil {
		nr.Dispose()
		return
	}
	warnings := t.loadRunner(nr, ext.SessionReload)
	_ = t.call(context.Background(), func() error {
		t.extWarnings = warnings
		for _, w := range warnings {
			t.notify(protocol.WarningNotification.With(protocol.WarningParams{ThreadID: t.id, Warning: w}))
		}
		return nil
	})
}

// awaitExtensions waits until the thread's extensions are loaded.
// Errors: the thread unloaded first; ctx's.
func (t *thread) awaitExtensions(ctx context.Context) error {
	select {
	case <-t.extLoaded:
		return nil
	case <-t.done:
		return t.gone()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// warnings are the warnings every start, resume and fork result of the
// thread carries: the startup warnings, then its extensions' load
// warnings (read once they are loaded).
func (t *thread) warnings() []protocol.Warning {
	return append(t.m.settings.startup(), t.extWarnings...)
}

// extMessage is a message an extension sent (ext.API.SendMessage) that the
// model has not got yet; steer says it may go into the running turn.
type extMessage struct {
	msg   agent.Message
	steer bool
}

// takeExtMessages (owner goroutine) returns the messages extensions sent
// for the model (all of them, or with steerOnly those that may be steered
// into a running turn), in order, and forgets them.
func (t *thread) takeExtMessages(steerOnly bool) []agent.Message {
	var out []agent.Message
	t.extMsgs = slices.DeleteFunc(t.extMsgs, func(m extMessage) bool {
		if steerOnly && !m.steer {
			return false
		}
		out = append(out, m.msg)
		return true
	})
	return out
}

// extHost is the thread as its extensions' ext.Host. Its methods are never
// called on the thread's goroutine (the runner is dispatched elsewhere, and
// disposed once that goroutine stopped, when they no longer reach it).
// r is the runner it is the Host of: once that runner is stale (reloaded,
// replaced), what its extensions set on the UI is dropped.
type extHost struct {
	t *thread
	r *ext.Runner
}

func (h *extHost) ThreadID() string { return h.t.id }
func (h *extHost) Cwd() string      { return h.t.cwd }
func (h *extHost) HasUI() bool      { return !h.t.asks.terminal.Load() }
func (h *extHost) UI() ext.UI       { return extUI{t: h.t, r: h.r} }

// ProvidersChanged gives the providers the load's extensions register to
// the process's registry, under this load (ext.ProviderHost): they are in
// model/list from now on, the configuration-only ones usable by every
// thread while they stay registered, the others by this load's thread
// only (resolveModel).
func (h *extHost) ProvidersChanged(ps []ext.Provider) map[string]error {
	eps := make([]provider.ExtensionProvider, len(ps))
	for i, p := range ps {
		eps[i] = provider.ExtensionProvider{Name: p.Name, Config: p.Config, Streamer: p.Streamer, Models: p.Models}
	}
	return h.t.m.cfg.Models.SetExtensionProviders(h.r, eps)
}

// Processes are the thread's process groups: the child processes of its
// extensions end with it, as its bash commands' do (ext.ProcessHost).
func (h extHost) Processes() *tools.ProcessGroups { return h.t.procs }

// DrawsApps and ApprovalMode make the thread an ext.AppsHost (MCP Apps).
func (h extHost) DrawsApps() bool { return h.t.asks.apps.Load() }
func (h extHost) ApprovalMode() string {
	mode, _ := h.t.approval.Load().(string)
	return mode
}

// Warn logs w and sends it to the thread's subscribers: a warning
// notification of source "extension" with the threadId (spec: "Later
// extension errors send a subscriber-only warning with threadId"). One
// given before the thread's first subscriber waits for the start, resume
// or fork result that subscribes it (takeUnheard): nobody would hear it.
func (h *extHost) Warn(w ext.Warning) {
	t := h.t
	t.m.log.Warn("extension warning", "thread", t.id, "path", w.Path, "message", w.Message)
	pw := protocol.Warning{Source: protocol.WarningSourceExtension, Path: w.Path, Message: w.Message, Line: w.Line, Column: w.Column}
	n := protocol.WarningNotification.With(protocol.WarningParams{ThreadID: t.id, Warning: pw})
	t.post(func() {
		if !t.heard {
			t.unheard = append(t.unheard, pw)
			return
		}
		t.notify(n)
	})
}

// takeUnheard (owner goroutine) returns the warnings extensions gave
// before the thread's first subscriber, for the result that subscribes
// it, and forgets them.
func (t *thread) takeUnheard() []protocol.Warning {
	w := t.unheard
	t.unheard = nil
	return w
}

// errUnloadingThread refuses what an extension asks of a thread that is
// unloading.
var errUnloadingThread = errors.New("threads: the thread is unloading")

// SendMessage keeps m for the model: with the next turn, or, for
// ext.DeliverSteer, at the running turn's next steering poll (takeSteering)
// if it comes before the turn ends.
func (h *extHost) SendMessage(m ext.Message, d ext.Delivery) error {
	t := h.t
	return t.call(context.Background(), func() error {
		if t.unloading {
			return errUnloadingThread
		}
		t.extMsgs = append(t.extMsgs, extMessage{msg: t.checkMessageView(m).AgentMessage(), steer: d == ext.DeliverSteer})
		return nil
	})
}

// AppendEntry writes a custom entry to the session file. A failure is
// logged and returned.
func (h *extHost) AppendEntry(customType string, data json.RawMessage) error {
	t := h.t
	err := t.call(context.Background(), func() error {
		if t.unloading {
			return errUnloadingThread
		}
		_, err := t.append(session.NewCustom(customType, data))
		return err
	})
	if err != nil && !errors.Is(err, errUnloadingThread) {
		t.m.log.Warn("writing an extension's session entry failed", "thread", t.id, "customType", customType, "err", err)
	}
	return err
}

// Abort ends the running turn interrupted, as turn/interrupt does.
func (h *extHost) Abort() {
	t := h.t
	_ = t.call(context.Background(), func() error {
		if t.turn != nil {
			t.dropQueues()
			t.turn.interrupt()
		}
		return nil
	})
}

// IsIdle reports whether no turn runs (true once the thread is gone).
func (h *extHost) IsIdle() bool {
	t := h.t
	idle := true
	_ = t.call(context.Background(), func() error {
		idle = t.turn == nil
		return nil
	})
	return idle
}

// extUI is the thread's UI as its extensions reach it (ext.UI); path is
// the extension acting through it ("" when unknown), named in the
// warnings of what it is refused.
type extUI struct {
	t    *thread
	r    *ext.Runner
	path string
}

// ExtensionUI is the UI of the extension at path (ext.ExtensionUIHost).
func (h *extHost) ExtensionUI(path string) ext.UI { return extUI{t: h.t, r: h.r, path: path} }

// Dialog asks d with ui/dialog (thread.dialog).
func (u extUI) Dialog(ctx context.Context, d ext.Dialog) (ext.DialogAnswer, error) {
	a, err := u.t.dialog(ctx, DialogRequest{Kind: d.Kind, Title: d.Title, Options: d.Options,
		Message: d.Message, Placeholder: d.Placeholder, Prefill: d.Prefill})
	return ext.DialogAnswer{Cancelled: a.Cancelled, Value: a.Value}, err
}

// Questions asks ask_user's questions (thread.questions).
func (u extUI) Questions(ctx context.Context, callID string, qs []ext.Question) (map[string]ext.Answer, error) {
	return u.t.questions(ctx, callID, qs)
}

// Notify sends ui/notify; a bad level or an empty message is logged and
// dropped, and so is every notice of a thread without UI (a terminal-mode
// connection's: spec, "Terminal-mode connections' threads get no dialogs
// or extension UI").
func (u extUI) Notify(level, message string) {
	t := u.t
	if t.asks.terminal.Load() {
		return
	}
	if err := checkNotice(level, message); err != nil {
		t.m.log.Info("an extension's notice was dropped", "thread", t.id, "err", err)
		return
	}
	_ = t.notifyUI(context.Background(), level, message)
}

// The setters change the thread's extension UI and send ui/state or
// ui/widget (extui.go); each returns once the change is sent.

func (u extUI) SetStatus(key, text string) {
	u.t.uiChange(u.r, func() bool { return u.t.setUIStatus(u.path, key, text) })
}

func (u extUI) SetWidget(key string, w *ext.Widget) {
	u.t.uiChange(u.r, func() bool { u.t.setUIWidget(u.path, key, w); return false })
}

func (u extUI) SetTitle(title string) {
	u.t.uiChange(u.r, func() bool { return setText(&u.t.ui.title, title) })
}

func (u extUI) SetWorkingMessage(message string) {
	u.t.uiChange(u.r, func() bool { return setText(&u.t.ui.working, message) })
}

func (u extUI) SetWorkingVisible(visible bool) {
	u.t.uiChange(u.r, func() bool {
		changed := u.t.ui.workingHidden == visible
		u.t.ui.workingHidden = !visible
		return changed
	})
}

// OnViewEvent registers h for the thread load's ui/event requests.
func (u extUI) OnViewEvent(h ext.ViewEventHandler) func() {
	if u.r != nil && u.r.Stale() {
		return func() {}
	}
	return u.t.uiHandlers.add(u.path, h)
}

// TerminalOnly logs a call that draws only in the terminal, once per
// method per thread load.
func (u extUI) TerminalOnly(method string) {
	u.t.uiChange(u.r, func() bool { u.t.logTerminalOnly(u.path, method); return false })
}

// pendingStart is a start whose input is in its extensions' hands (a
// command or the input handlers) while it holds the thread's admission.
// done answers the start once, on the thread's goroutine, with the input
// as the handlers left it.
type pendingStart struct {
	requestID string
	in        input
	cancel    context.CancelFunc
	done      func(in input, status string, err error)
}

// interception is what the extensions made of an input: handled (a
// command ran, or a handler consumed it), else the input to start.
type interception struct {
	handled bool
	in      input
}

// intercepts reports whether the input goes through the extensions before
// it starts: a command names a registered command, or an input handler is
// registered.
func (t *thread) intercepts(in input) bool {
	if in.intercepted {
		return false
	}
	if isReload(in.text) {
		return true
	}
	if _, _, ok := t.runner().Command(in.text); ok {
		return true
	}
	return t.runner().Handles(ext.EventInput)
}

// admitStart (owner goroutine) starts a turn of in, first through the
// extensions when they intercept it, and answers done with
// protocol.TurnStartStarted, TurnStartHandled or TurnStartCancelled, or
// the refusal (startTurn's errors; ErrTurnInProgress while a turn runs or
// another start holds admission). Without interception done is called
// before admitStart returns.
func (t *thread) admitStart(in input, requestID string, done func(in input, status string, err error)) {
	switch {
	case t.unloading:
		done(in, "", t.gone())
		return
	case t.turn != nil:
		done(in, "", fmt.Errorf("%w: turn %s is running", ErrTurnInProgress, t.turn.id))
		return
	case t.starting != nil:
		done(in, "", fmt.Errorf("%w: another input is being started", ErrTurnInProgress))
		return
	}
	if !t.intercepts(in) {
		if err := t.startTurn(in, requestID); err != nil {
			done(in, "", err)
			return
		}
		done(in, protocol.TurnStartStarted, nil)
		return
	}
	ctx, cancel := context.WithCancel(t.m.base)
	ps := &pendingStart{requestID: requestID, in: in, cancel: cancel, done: done}
	t.starting = ps
	t.disarmIdle()
	// The interception's goroutine ends when the handlers return; its
	// outcome is dropped when the start was cancelled meanwhile.
	go func() {
		out := t.intercept(ctx, in)
		t.post(func() { t.intercepted(ps, out) })
	}()
}

// intercept runs the command in.text names, or the input handlers (off
// the thread's goroutine). ctx ends when the start is cancelled.
func (t *thread) intercept(ctx context.Context, in input) interception {
	if isReload(in.text) {
		t.reload()
		return interception{handled: true, in: in}
	}
	if t.runner().RunCommand(ctx, in.text) {
		return interception{handled: true, in: in}
	}
	res := t.runner().Input(ctx, ext.InputEvent{Text: in.text, Images: in.images, Source: ext.SourceInteractive})
	in.intercepted = true
	switch res.Action {
	case ext.InputHandled:
		return interception{handled: true, in: in}
	case ext.InputTransform:
		in.text, in.images = res.Text, res.Images
	}
	return interception{in: in}
}

// intercepted (owner goroutine) ends the start ps with what the
// extensions made of its input, unless it was cancelled: handled answers
// "handled", else the turn starts. Then the queue goes on.
func (t *thread) intercepted(ps *pendingStart, out interception) {
	if t.starting != ps {
		return
	}
	t.starting = nil
	ps.cancel()
	switch {
	case out.handled:
		ps.done(out.in, protocol.TurnStartHandled, nil)
	default:
		if err := t.startTurn(out.in, ps.requestID); err != nil {
			ps.done(out.in, "", err)
		} else {
			ps.done(out.in, protocol.TurnStartStarted, nil)
		}
	}
	if t.replacedBy != "" {
		// A session-replacing command moved its subscribers away.
		t.beginUnload("")
		return
	}
	t.startNextQueued()
	t.checkIdle()
}

// cancelStart (owner goroutine) cancels the start holding admission, if
// any: it answers "cancelled" at once and launches nothing; a handler
// already running finishes, unheard (spec: "An interrupt answers at
// once...").
func (t *thread) cancelStart() {
	ps := t.starting
	if ps == nil {
		return
	}
	t.starting = nil
	ps.cancel()
	ps.done(ps.in, protocol.TurnStartCancelled, nil)
}

// extTools are the tools the thread's extensions registered, as the agent
// runs them.
func (t *thread) extTools() []agent.Tool {
	var out []agent.Tool
	for _, et := range t.runner().Tools() {
		out = append(out, extTool{t: t, tool: et})
	}
	return out
}

// extTool is a registered tool as the agent runs it.
type extTool struct {
	t    *thread
	tool ext.Tool
}

func (x extTool) Definition() agent.ToolDefinition { return x.tool.Definition() }

func (x extTool) Execute(ctx context.Context, args json.RawMessage) agent.ToolResult {
	return x.t.agentResult(x.tool.Name, x.t.runner().Execute(ctx, x.tool, ext.ToolCall{ID: agent.CallID(ctx), Name: x.tool.Name, Input: args}))
}

// agentResult is the result of a call of the tool name as the agent
// records it: the details members the thread knows (fileChanges, view,
// ...) are read, malformed details are ignored as a whole, and a view
// (details.view) that is invalid or over 64 KiB is dropped with a warning
// (once per tool per load), so the raw output shows.
func (t *thread) agentResult(name string, res ext.ToolResult) agent.ToolResult {
	out := agent.ToolResult{Content: res.Content, IsError: res.IsError}
	if len(res.Details) > 0 {
		var d agent.ToolDetails
		if json.Unmarshal(res.Details, &d) == nil {
			d.View = t.checkItemView("tool "+name, fmt.Sprintf("the view of a result of tool %q", name), d.View)
			out.Details = d
		}
	}
	return out
}

// checkMessageView returns m with its view checked: one that is invalid
// or over 64 KiB is dropped with a warning (once per customType per
// load), so the text shows.
func (t *thread) checkMessageView(m ext.Message) ext.Message {
	m.View = t.checkItemView("message "+m.CustomType, fmt.Sprintf("the view of a %q message", m.CustomType), m.View)
	return m
}

// checkItemView returns the view of a toolCall or extensionMessage item
// as a client gets it (ext.CheckView, at most MaxItemViewBytes), or nil
// when there is none or it is dropped: the warning names what, once per
// key per load.
func (t *thread) checkItemView(key, what string, view json.RawMessage) json.RawMessage {
	if len(view) == 0 || string(view) == "null" {
		return nil
	}
	v, err := ext.CheckView(view, ext.MaxItemViewBytes)
	if err != nil {
		msg := fmt.Sprintf("%s was dropped: %v", what, err)
		t.post(func() { t.uiWarn("", "item view "+key, msg) })
		return nil
	}
	return v.JSON
}

// extensionHooks sets the extension hooks of a turn's agent options: the
// registered tools after the thread's own, taken again before each model
// request (LiveTools: an MCP server that connects, or whose tools change,
// during the turn reaches its next request; a tool withdrawn meanwhile
// answers its call an error), and CheckTool, AfterTool and TurnEnd for
// the handlers registered.
func (tr *turnRun) extensionHooks(opts *agent.Options) {
	r := tr.t.runner()
	opts.LiveTools = tr.t.extTools
	if r.Handles(ext.EventToolCall) {
		opts.CheckTool = func(ctx context.Context, call agent.ToolCall) agent.ToolCheck {
			res := r.ToolCall(ctx, ext.ToolCallEvent{ToolCallID: call.ID, ToolName: call.Name, Input: argsObject(call.Arguments)})
			return agent.ToolCheck{Block: res.Block, Reason: res.Reason, Arguments: res.Input}
		}
	}
	if r.Handles(ext.EventToolResult) {
		opts.AfterTool = func(ctx context.Context, call agent.ToolCall, res agent.ToolResult) agent.ToolResult {
			var details json.RawMessage
			if d, err := json.Marshal(res.Details); err == nil && string(d) != "{}" {
				details = d
			}
			out, changed := r.ToolResult(ctx, ext.ToolResultEvent{ToolCallID: call.ID, ToolName: call.Name,
				Input: argsObject(call.Arguments), Content: res.Content, Details: details, IsError: res.IsError})
			if !changed {
				return res
			}
			return tr.t.agentResult(call.Name, ext.ToolResult{Content: out.Content, Details: out.Details, IsError: out.IsError})
		}
	}
	// pi's turnIndex counts the run's turns from 0 (agent-session.ts:
	// reset at agent_start); the hooks run on the turn's goroutine.
	turnIndex := -1
	opts.TurnStart = func(ctx context.Context) {
		turnIndex++
		if r.Handles(ext.EventTurnStart) {
			r.TurnStart(ctx, ext.TurnStartEvent{TurnIndex: turnIndex, Timestamp: time.Now().UnixMilli()})
		}
	}
	if r.Handles(ext.EventTurnEnd) {
		opts.TurnEnd = func(ctx context.Context, reply agent.Message, results []agent.Message) {
			r.TurnEnd(ctx, ext.TurnEndEvent{TurnIndex: turnIndex, Message: reply, ToolResults: results})
		}
	}
	if r.Handles(ext.EventMessageStart) {
		opts.MessageStart = func(ctx context.Context, m agent.Message) {
			r.MessageStart(ctx, ext.MessageStartEvent{Message: m})
		}
	}
	if r.Handles(ext.EventMessageUpdate) {
		// Only with a handler: the event carries the whole reply so far,
		// once per stream event.
		opts.MessageUpdate = func(ctx context.Context, partial agent.Message, i int, ev agent.StreamEvent) {
			u := ext.AssistantMessageEvent{ContentIndex: i, Delta: ev.Delta}
			switch ev.Type {
			case agent.StreamTextDelta:
				u.Type = ext.UpdateTextDelta
			case agent.StreamThinkingDelta:
				u.Type = ext.UpdateThinkingDelta
			case agent.StreamToolCall:
				u.Type = ext.UpdateToolCallEnd
				b := partial.Content[i]
				u.ToolCall = &b
			default:
				return
			}
			r.MessageUpdate(ctx, ext.MessageUpdateEvent{Message: partial, AssistantMessageEvent: u})
		}
	}
	if r.Handles(ext.EventMessageEnd) {
		opts.MessageEnd = func(ctx context.Context, m agent.Message) agent.Message {
			out, _ := r.MessageEnd(ctx, ext.MessageEndEvent{Message: m})
			return out
		}
	}
	if r.Handles(ext.EventContext) {
		opts.Context = func(ctx context.Context, msgs []agent.Message) []agent.Message {
			return r.Context(ctx, ext.ContextEvent{Messages: msgs})
		}
	}
}

// agentEndTimeout bounds how long a turn's settlement waits for its
// agent_end handlers; a handler still running goes on unheard.
const agentEndTimeout = 30 * time.Second

// agentRun dispatches pi's agent_start before run and agent_end after it
// with the messages the run added (agent-session.ts), on the turn's
// goroutine, and returns run's answer. The turn keeps admission until the
// agent_end handlers return (EXTENSIBILITY.md §7: a turn/start meanwhile
// answers turnInProgress): they run before the turn is finished, even
// after an interrupt, on a context of their own (the server's, at most
// agentEndTimeout).
func (tr *turnRun) agentRun(run func() ([]agent.Message, error)) error {
	r := tr.t.runner()
	if r.Handles(ext.EventAgentStart) && tr.ctx.Err() == nil {
		r.AgentStart(tr.ctx, ext.AgentStartEvent{})
	}
	msgs, err := run()
	if r.Handles(ext.EventAgentEnd) {
		ctx, cancel := context.WithTimeout(tr.t.m.base, agentEndTimeout)
		r.AgentEnd(ctx, ext.AgentEndEvent{Messages: msgs})
		cancel()
	}
	return err
}

// argsObject is a call's arguments, {} when it has none.
func argsObject(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return args
}

// agentStart runs the before_agent_start handlers for the turn's input
// and returns the system prompt the turn runs with and the messages after
// its input: those extensions sent for it (taken at its start), then the
// handlers'.
func (tr *turnRun) agentStart(ctx context.Context, systemPrompt string, input agent.Message) (string, []agent.Message) {
	msgs := append([]agent.Message{input}, tr.extIn...)
	r := tr.t.runner()
	if !r.Handles(ext.EventBeforeAgentStart) {
		return systemPrompt, msgs
	}
	start := r.BeforeAgentStart(ctx, ext.BeforeAgentStartEvent{Prompt: input.Text(), Images: tr.in.images, SystemPrompt: systemPrompt})
	for _, m := range start.Messages {
		msgs = append(msgs, tr.t.checkMessageView(m).AgentMessage())
	}
	return start.SystemPrompt, msgs
}

// Tools returns a loaded thread's live tools (tool/list {threadId},
// EXTENSIBILITY.md §8): its own tools as the model is told them, then the
// tools its extensions registered (MCP servers' included), each with its
// extension's path, in load and registration order. Errors:
// ErrThreadNotFound for a thread that is not loaded.
func (m *Manager) Tools(threadID string) ([]agent.ToolDefinition, []ext.Registered[ext.Tool], error) {
	t, err := m.lookup(threadID)
	if err != nil {
		return nil, nil, err
	}
	var own []agent.ToolDefinition
	for _, tool := range tools.All(t.cwd) {
		own = append(own, tool.Definition())
	}
	return own, t.runner().ListTools(), nil
}

// Commands returns the commands a loaded thread's extensions registered
// (command/list {threadId}), in load and registration order. Errors:
// ErrThreadNotFound for a thread that is not loaded.
func (m *Manager) Commands(threadID string) ([]ext.Command, error) {
	t, err := m.lookup(threadID)
	if err != nil {
		return nil, err
	}
	return t.runner().Commands(), nil
}
