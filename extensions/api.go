package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// jsExtension is one JavaScript extension loaded in a thread load's
// runtime: its seam API, its pi object, and what the runtime knows of it.
// Fields marked (loop) are the loop goroutine's.
type jsExtension struct {
	rt   *runtime
	api  *ext.API
	path string

	events      []string              // (loop) the events of its pi.on calls, in order
	interrupted bool                  // (loop) its JavaScript was interrupted since its last handler call
	flags       map[string]goja.Value // (loop) registerFlag defaults
	shutdowns   []goja.Callable       // (loop) its session_shutdown handlers
	pi          *goja.Object          // (loop)
}

// load (not on the loop) runs the extension's bundle: the module's top
// level, then its factory with the pi object, awaiting a factory that
// returns a promise (pi's loader). Errors: *ext.SourceError for a throw
// with a position in the extension's source; a module without a factory.
func (x *jsExtension) load(prog *goja.Program) error {
	rt := x.rt
	err := rt.await(context.Background(), x, func() (goja.Value, error) {
		vm := rt.vm
		w, err := vm.RunProgram(prog)
		if err != nil {
			return nil, err
		}
		wrapper, ok := goja.AssertFunction(w)
		if !ok {
			return nil, errors.New("the bundle is not a module function")
		}
		module, exports := vm.NewObject(), vm.NewObject()
		_ = module.Set("exports", exports)
		if _, err := wrapper(goja.Undefined(), exports, vm.ToValue(rt.require), module, vm.ToValue(x.path), vm.ToValue(filepath.Dir(x.path))); err != nil {
			return nil, err
		}
		ex := module.Get("exports")
		factory, ok := goja.AssertFunction(ex.ToObject(vm).Get("default"))
		if !ok {
			if factory, ok = goja.AssertFunction(ex); !ok {
				return nil, errors.New("it exports no factory function (export default function (pi) { ... })")
			}
		}
		return factory(goja.Undefined(), x.piObject())
	}, func(goja.Value) error { return nil })
	var je *jsError
	if errors.As(err, &je) && je.file != "" {
		return &ext.SourceError{File: je.file, Line: je.line, Column: je.column, Err: errors.New(je.text)}
	}
	return err
}

// call (not on the loop) runs start, JavaScript of x, and waits for the
// value it returns to settle (runtime.await), then for the side effects
// it sent meanwhile (runtime.flush): what a handler set on the UI reaches
// the thread before its dispatch goes on (a session_start's widgets are
// in the start's ui snapshot; a view event handler's widget is sent
// before the ui/event's answer, EXTENSIBILITY.md §6). A handler call
// first adds the warning of an interrupt since the last one.
func (x *jsExtension) call(ctx context.Context, start func() (goja.Value, error), settle func(goja.Value) error) error {
	defer x.rt.flush()
	return x.rt.await(ctx, x, func() (goja.Value, error) {
		if x.interrupted {
			x.interrupted = false
			x.api.Warn(ext.Warning{Message: fmt.Sprintf("extension %s was interrupted; its state may be inconsistent: /reload", x.path)})
		}
		return start()
	}, settle)
}

// stackPos matches a position in a goja stack trace: file:line:col.
var stackPos = regexp.MustCompile(`([^\s()]+):(\d+):(\d+)`)

// position (loop) is where the throw of v (with ex, when it came as an
// exception) happened in the extension's sources: the first stack frame
// outside the runtime's own code, mapped through the bundle's source map
// (whose columns goja reports 0-based: the answer is 1-based).
func (x *jsExtension) position(rt *runtime, v goja.Value, ex *goja.Exception) (string, int, int) {
	ours := func(file string) (string, bool) {
		file = strings.TrimPrefix(file, "file://")
		if file == "" || strings.HasPrefix(file, "knightcode:") || strings.HasSuffix(file, ".bundle.js") {
			return "", false
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(x.path), file)
		}
		return file, true
	}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			for _, m := range stackPos.FindAllStringSubmatch(st.String(), -1) {
				if f, ok := ours(m[1]); ok {
					line, _ := strconv.Atoi(m[2])
					col, _ := strconv.Atoi(m[3])
					return f, line, col + 1
				}
			}
		}
	}
	if ex != nil {
		for _, fr := range ex.Stack() {
			p := fr.Position()
			if f, ok := ours(p.Filename); ok && p.Line > 0 {
				return f, p.Line, p.Column + 1
			}
		}
	}
	return "", 0, 0
}

// eventJSON is e's JSON with pi's "type" member first.
func eventJSON(event string, e any) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	head := `{"type":` + strconv.Quote(event)
	if string(b) == "{}" {
		return []byte(head + "}"), nil
	}
	return append([]byte(head+","), b[1:]...), nil
}

// handle (not on the loop) calls handler h of event with e (its JSON is
// pi's event) and a context for th; settle reads the handler's answer
// with the event object (which a handler may change in place).
func (x *jsExtension) handle(ctx context.Context, th *ext.Thread, event string, h goja.Callable, e any, settle func(res, ev goja.Value) error) error {
	data, err := eventJSON(event, e)
	if err != nil {
		return err
	}
	var ev goja.Value
	return x.call(ctx, func() (goja.Value, error) {
		if ev, err = x.rt.value(data); err != nil {
			return nil, err
		}
		return h(goja.Undefined(), ev, x.context(ctx, th, false))
	}, func(v goja.Value) error { return settle(v, ev) })
}

// on (loop) is pi.on(event, handler): the seam's events register typed
// handlers; session_shutdown runs at unload; others are accepted and
// logged once as not dispatched.
func (x *jsExtension) on(c goja.FunctionCall) goja.Value {
	rt := x.rt
	event := c.Argument(0).String()
	h, ok := goja.AssertFunction(c.Argument(1))
	if !ok {
		panic(rt.vm.NewTypeError("pi.on(" + strconv.Quote(event) + ", handler): the handler is not a function"))
	}
	x.events = append(x.events, event)
	switch event {
	case ext.EventInput:
		x.api.OnInput(func(ctx context.Context, th *ext.Thread, e ext.InputEvent) (r ext.InputResult, err error) {
			err = x.handle(ctx, th, event, h, e, func(v, _ goja.Value) error { return rt.inputResult(v, &r) })
			return r, err
		})
	case ext.EventBeforeAgentStart:
		x.api.OnBeforeAgentStart(func(ctx context.Context, th *ext.Thread, e ext.BeforeAgentStartEvent) (r ext.BeforeAgentStartResult, err error) {
			ev := struct {
				ext.BeforeAgentStartEvent
				SystemPromptOptions struct{} `json:"systemPromptOptions"`
			}{BeforeAgentStartEvent: e}
			err = x.handle(ctx, th, event, h, ev, func(v, _ goja.Value) error {
				var out struct {
					Message      *jsMessage `json:"message"`
					SystemPrompt *string    `json:"systemPrompt"`
				}
				if err := rt.fromJS(v, &out); err != nil {
					return err
				}
				r.SystemPrompt = out.SystemPrompt
				if out.Message != nil {
					m, err := out.Message.message()
					if err != nil {
						return err
					}
					r.Message = &m
				}
				return nil
			})
			return r, err
		})
	case ext.EventToolCall:
		x.api.OnToolCall(func(ctx context.Context, th *ext.Thread, e ext.ToolCallEvent) (r ext.ToolCallResult, err error) {
			data, err := eventJSON(event, e)
			if err != nil {
				return r, err
			}
			var ev *goja.Object
			var before string
			err = x.call(ctx, func() (goja.Value, error) {
				v, err := rt.value(data)
				if err != nil {
					return nil, err
				}
				ev = v.ToObject(rt.vm)
				if before, err = rt.toJSON(ev.Get("input")); err != nil {
					return nil, err
				}
				return h(goja.Undefined(), ev, x.context(ctx, th, false))
			}, func(v goja.Value) error {
				if err := rt.fromJS(v, &r); err != nil {
					return err
				}
				// A handler changes the input in place (pi: "Mutate it in
				// place"); the change counts once it settled.
				after, err := rt.toJSON(ev.Get("input"))
				if err != nil {
					return err
				}
				if !r.Block && after != before {
					r.Input = json.RawMessage(after)
				}
				return nil
			})
			return r, err
		})
	case ext.EventToolResult:
		x.api.OnToolResult(func(ctx context.Context, th *ext.Thread, e ext.ToolResultEvent) (r ext.ToolResultResult, err error) {
			err = x.handle(ctx, th, event, h, e, func(v, _ goja.Value) error {
				var out struct {
					Content json.RawMessage `json:"content"`
					Details json.RawMessage `json:"details"`
					IsError *bool           `json:"isError"`
				}
				if err := rt.fromJS(v, &out); err != nil {
					return err
				}
				if len(out.Content) > 0 && string(out.Content) != "null" {
					blocks, err := contentBlocks(out.Content)
					if err != nil {
						return err
					}
					r.Content = blocks
				}
				r.Details, r.IsError = out.Details, out.IsError
				return nil
			})
			return r, err
		})
	case ext.EventTurnEnd:
		x.api.OnTurnEnd(informed[ext.TurnEndEvent](x, event, h))
	case ext.EventSessionStart:
		x.api.OnSessionStart(informed[ext.SessionStartEvent](x, event, h))
	case ext.EventAgentStart:
		x.api.OnAgentStart(informed[ext.AgentStartEvent](x, event, h))
	case ext.EventAgentEnd:
		x.api.OnAgentEnd(informed[ext.AgentEndEvent](x, event, h))
	case ext.EventTurnStart:
		x.api.OnTurnStart(informed[ext.TurnStartEvent](x, event, h))
	case ext.EventMessageStart:
		x.api.OnMessageStart(informed[ext.MessageStartEvent](x, event, h))
	case ext.EventMessageUpdate:
		x.api.OnMessageUpdate(func(ctx context.Context, th *ext.Thread, e ext.MessageUpdateEvent) error {
			data, err := eventJSON(event, e)
			if err != nil {
				return err
			}
			return x.call(ctx, func() (goja.Value, error) {
				v, err := rt.value(data)
				if err != nil {
					return nil, err
				}
				// pi-ai's event carries the partial reply: the event's
				// message, sent once.
				ev := v.ToObject(rt.vm)
				_ = ev.Get("assistantMessageEvent").ToObject(rt.vm).Set("partial", ev.Get("message"))
				return h(goja.Undefined(), ev, x.context(ctx, th, false))
			}, func(goja.Value) error { return nil })
		})
	case ext.EventMessageEnd:
		x.api.OnMessageEnd(func(ctx context.Context, th *ext.Thread, e ext.MessageEndEvent) (r ext.MessageEndResult, err error) {
			err = x.handle(ctx, th, event, h, e, func(v, _ goja.Value) error { return rt.fromJS(v, &r) })
			return r, err
		})
	case ext.EventContext:
		x.api.OnContext(func(ctx context.Context, th *ext.Thread, e ext.ContextEvent) (r ext.ContextResult, err error) {
			err = x.handle(ctx, th, event, h, e, func(v, _ goja.Value) error { return rt.fromJS(v, &r) })
			return r, err
		})
	case "session_shutdown":
		x.shutdowns = append(x.shutdowns, h)
	default:
		rt.logOnce("event:"+x.path+":"+event, "an extension's handlers of this event are not dispatched by knightcode yet", "path", x.path, "event", event)
	}
	return goja.Undefined()
}

// informed is the seam handler calling h, a handler of event, an event
// whose handlers answer nothing (pi's runner.emit).
func informed[E any](x *jsExtension, event string, h goja.Callable) func(context.Context, *ext.Thread, E) error {
	return func(ctx context.Context, th *ext.Thread, e E) error {
		return x.handle(ctx, th, event, h, e, func(goja.Value, goja.Value) error { return nil })
	}
}

// shutdown (not on the loop) runs the extension's session_shutdown
// handlers until ctx ends; failures are logged.
func (x *jsExtension) shutdown(ctx context.Context) {
	var hs []goja.Callable
	if err := x.rt.do(x, func() error { hs = x.shutdowns; return nil }); err != nil {
		return
	}
	th := x.api.Thread()
	for _, h := range hs {
		err := x.handle(ctx, th, "session_shutdown", h, struct {
			Reason string `json:"reason"`
		}{"quit"}, func(goja.Value, goja.Value) error { return nil })
		if err != nil {
			x.rt.log.Warn("an extension's session_shutdown handler failed", "path", x.path, "err", err)
		}
	}
}

// jsMessage is a message as an extension gives it (pi's CustomMessage
// fields): content is a string or content blocks.
type jsMessage struct {
	CustomType string          `json:"customType"`
	Content    json.RawMessage `json:"content"`
	Display    bool            `json:"display"`
	Details    json.RawMessage `json:"details,omitempty"`
	View       json.RawMessage `json:"view,omitempty"`
}

func (m jsMessage) message() (ext.Message, error) {
	blocks, err := contentBlocks(m.Content)
	if err != nil {
		return ext.Message{}, err
	}
	return ext.Message{CustomType: m.CustomType, Content: blocks, Display: m.Display, Details: m.Details, View: m.View}, nil
}

// contentBlocks reads pi's content: a string (one text block) or content
// blocks.
func contentBlocks(raw json.RawMessage) ([]agent.ContentBlock, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []agent.ContentBlock{agent.TextBlock(s)}, nil
	}
	var blocks []agent.ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("content is neither a string nor content blocks: %v", err)
	}
	return blocks, nil
}

// build (loop) sets on o the members of iface: impl holds what an
// implemented member is (a function, a value, or a func() goja.Value
// getter for a property), and what a log-only or no-op one answers; a
// not-yet member throws an Error naming it. A log-only member also writes
// its log line once per thread load: through th.UI.TerminalOnly for a
// member of ctx.ui (the thread's log line, spec "Dialogs and extension
// UI"), else the runtime's. With th (a context's members), every member
// throws Error("stale extension context") once th is stale (pi 0.73's
// assertActive).
func (x *jsExtension) build(o *goja.Object, iface string, impl map[string]any, th *ext.Thread) {
	rt, vm := x.rt, x.rt.vm
	guard := func(f func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
		if th == nil {
			return f
		}
		return func(c goja.FunctionCall) goja.Value {
			if th.Stale() {
				panic(vm.NewGoError(ext.ErrStale))
			}
			return f(c)
		}
	}
	getter := func(name string, f func(goja.FunctionCall) goja.Value) {
		_ = o.DefineAccessorProperty(name, vm.ToValue(guard(f)), nil, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	for _, m := range Members {
		if m.Interface != iface {
			continue
		}
		name := memberPrefix(iface) + m.Name
		v, has := impl[m.Name]
		switch m.Status {
		case NotYet:
			msg := name + " is not provided by knightcode yet"
			thrower := func(goja.FunctionCall) goja.Value { panic(vm.NewGoError(errors.New(msg))) }
			if m.Property {
				getter(m.Name, thrower)
			} else {
				_ = o.Set(m.Name, guard(thrower))
			}
			continue
		case LogOnly:
			f, _ := v.(func(goja.FunctionCall) goja.Value)
			member := m.Name
			_ = o.Set(m.Name, guard(func(c goja.FunctionCall) goja.Value {
				if iface == ExtensionUIContext && th != nil {
					ui := th.UI
					rt.send(func() { ui.TerminalOnly(member) })
				} else {
					rt.logOnce("member:"+name, "an extension called a member that draws only in the terminal; nothing is drawn", "path", x.path, "member", name)
				}
				if f != nil {
					return f(c)
				}
				return goja.Undefined()
			}))
			continue
		}
		switch f := v.(type) {
		case func() goja.Value:
			getter(m.Name, func(goja.FunctionCall) goja.Value { return f() })
		case func(goja.FunctionCall) goja.Value:
			_ = o.Set(m.Name, guard(f))
		case nil:
			if m.Status == Implemented || has {
				panic(fmt.Sprintf("extensions: %s is implemented but has no implementation", name))
			}
			if !m.Property {
				_ = o.Set(m.Name, guard(func(goja.FunctionCall) goja.Value { return goja.Undefined() }))
			}
		default:
			if th != nil && m.Property {
				val := vm.ToValue(f)
				getter(m.Name, func(goja.FunctionCall) goja.Value { return val })
			} else {
				_ = o.Set(m.Name, f)
			}
		}
	}
}

// piObject (loop) is the extension's ExtensionAPI object, made once.
func (x *jsExtension) piObject() *goja.Object {
	if x.pi != nil {
		return x.pi
	}
	rt, vm := x.rt, x.rt.vm
	x.flags = map[string]goja.Value{}
	busFn, _ := goja.AssertFunction(rt.internal.Get("eventBus"))
	bus, err := busFn(goja.Undefined(), rt.bus)
	if err != nil {
		panic(err)
	}
	x.pi = vm.NewObject()
	x.build(x.pi, ExtensionAPI, map[string]any{
		"on":                 x.on,
		"registerTool":       x.registerTool,
		"registerCommand":    x.registerCommand,
		"registerProvider":   x.registerProvider,
		"unregisterProvider": x.unregisterProvider,
		"registerFlag": func(c goja.FunctionCall) goja.Value {
			if o, ok := c.Argument(1).(*goja.Object); ok {
				x.flags[c.Argument(0).String()] = o.Get("default")
			}
			return goja.Undefined()
		},
		"getFlag": func(c goja.FunctionCall) goja.Value {
			if v, ok := x.flags[c.Argument(0).String()]; ok && v != nil {
				return v
			}
			return goja.Undefined()
		},
		"exec": func(c goja.FunctionCall) goja.Value {
			f, _ := goja.AssertFunction(rt.internal.Get("piExec"))
			v, err := f(goja.Undefined(), c.Argument(0), c.Argument(1), vm.ToValue(rt.cwd), c.Argument(2))
			if err != nil {
				panic(err)
			}
			return v
		},
		"sendMessage": x.sendMessage,
		"appendEntry": func(c goja.FunctionCall) goja.Value {
			customType := c.Argument(0).String()
			if goja.IsUndefined(c.Argument(0)) || customType == "" {
				panic(vm.NewTypeError("pi.appendEntry(customType, data): customType is empty"))
			}
			data, err := rt.toJSON(c.Argument(1))
			if err != nil {
				panic(err)
			}
			rt.send(func() {
				if err := x.api.AppendEntry(customType, json.RawMessage(data)); err != nil && !errors.Is(err, ext.ErrDisposed) {
					rt.log.Warn("an extension's session entry was not written", "path", x.path, "customType", customType, "err", err)
				}
			})
			return goja.Undefined()
		},
		"events": bus,
	}, nil)
	return x.pi
}

// sendMessage (loop) is pi.sendMessage(message, options).
func (x *jsExtension) sendMessage(c goja.FunctionCall) goja.Value {
	rt := x.rt
	var m jsMessage
	if err := rt.fromJS(c.Argument(0), &m); err != nil {
		panic(rt.vm.NewTypeError("pi.sendMessage: " + err.Error()))
	}
	msg, err := m.message()
	if err == nil && msg.CustomType == "" {
		err = errors.New("the message has no customType")
	}
	if err != nil {
		panic(rt.vm.NewTypeError("pi.sendMessage: " + err.Error()))
	}
	var opts struct {
		DeliverAs   string `json:"deliverAs"`
		TriggerTurn bool   `json:"triggerTurn"`
	}
	_ = rt.fromJS(c.Argument(1), &opts)
	if opts.TriggerTurn {
		rt.logOnce("triggerTurn:"+x.path, "pi.sendMessage: triggerTurn is not supported yet; the message waits for the next turn", "path", x.path)
	}
	if opts.DeliverAs == "followUp" {
		rt.logOnce("followUp:"+x.path, "pi.sendMessage: deliverAs followUp is delivered with the next turn", "path", x.path)
	}
	rt.send(func() {
		d := ext.DeliverNextTurn
		switch opts.DeliverAs {
		case "steer":
			d = ext.DeliverSteer
		case "":
			if !x.api.Thread().IsIdle() { // pi steers into a running turn
				d = ext.DeliverSteer
			}
		}
		if err := x.api.SendMessage(msg, d); err != nil && !errors.Is(err, ext.ErrDisposed) {
			rt.log.Warn("an extension's message was not delivered", "path", x.path, "customType", msg.CustomType, "err", err)
		}
	})
	return goja.Undefined()
}

// registerTool (loop) is pi.registerTool(definition).
func (x *jsExtension) registerTool(c goja.FunctionCall) goja.Value {
	rt, vm := x.rt, x.rt.vm
	def, ok := c.Argument(0).(*goja.Object)
	if !ok {
		panic(vm.NewTypeError("pi.registerTool: the tool definition is not an object"))
	}
	str := func(k string) string {
		v := def.Get(k)
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return ""
		}
		return v.String()
	}
	execute, ok := goja.AssertFunction(def.Get("execute"))
	if !ok {
		panic(vm.NewTypeError("pi.registerTool: tool " + strconv.Quote(str("name")) + " has no execute function"))
	}
	params, err := rt.toJSON(def.Get("parameters"))
	if err != nil {
		panic(err)
	}
	t := ext.Tool{Name: str("name"), Label: str("label"), Description: str("description"), Parameters: json.RawMessage(params)}
	t.Execute = func(ctx context.Context, th *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
		var res ext.ToolResult
		signal, stop := x.abortSignal(ctx)
		defer stop()
		err := x.call(ctx, func() (goja.Value, error) {
			input, err := rt.value(call.Input)
			if err != nil {
				return nil, err
			}
			sig, err := signal()
			if err != nil {
				return nil, err
			}
			onUpdate := vm.ToValue(func(goja.FunctionCall) goja.Value { return goja.Undefined() })
			return execute(def, vm.ToValue(call.ID), input, sig, onUpdate, x.context(ctx, th, false))
		}, func(v goja.Value) error {
			var out struct {
				Content json.RawMessage `json:"content"`
				Details json.RawMessage `json:"details"`
				IsError bool            `json:"isError"`
			}
			if err := rt.fromJS(v, &out); err != nil {
				return err
			}
			blocks, err := contentBlocks(out.Content)
			if err != nil {
				return err
			}
			res = ext.ToolResult{Content: blocks, Details: out.Details, IsError: out.IsError}
			return nil
		})
		return res, err
	}
	if err := x.api.RegisterTool(t); err != nil {
		panic(vm.NewGoError(fmt.Errorf("pi.registerTool: %w", err)))
	}
	return goja.Undefined()
}

// abortSignal returns, for a call serving ctx, signal (loop), which makes
// an AbortSignal that aborts when ctx ends (once made), and stop, which
// releases the watch on ctx once the call is over.
func (x *jsExtension) abortSignal(ctx context.Context) (signal func() (goja.Value, error), stop func() bool) {
	rt := x.rt
	var abort func() // (loop)
	stop = context.AfterFunc(ctx, func() {
		rt.post(func() {
			if abort != nil {
				rt.run(x, abort)
			}
		})
	})
	return func() (goja.Value, error) {
		ac, _ := goja.AssertConstructor(rt.internal.Get("AbortController"))
		ctrl, err := ac(nil)
		if err != nil {
			return nil, err
		}
		abortFn, _ := goja.AssertFunction(ctrl.Get("abort"))
		abort = func() { _, _ = abortFn(ctrl) }
		return ctrl.Get("signal"), nil
	}, stop
}

// registerCommand (loop) is pi.registerCommand(name, {description,
// handler}).
func (x *jsExtension) registerCommand(c goja.FunctionCall) goja.Value {
	vm := x.rt.vm
	name := c.Argument(0).String()
	opts, ok := c.Argument(1).(*goja.Object)
	if !ok {
		panic(vm.NewTypeError("pi.registerCommand(name, options): options is not an object"))
	}
	h, ok := goja.AssertFunction(opts.Get("handler"))
	if !ok {
		panic(vm.NewTypeError("pi.registerCommand: command " + strconv.Quote(name) + " has no handler function"))
	}
	desc := ""
	if d := opts.Get("description"); d != nil && !goja.IsUndefined(d) {
		desc = d.String()
	}
	err := x.api.RegisterCommand(ext.Command{Name: name, Description: desc, Handler: func(ctx context.Context, th *ext.Thread, args string) error {
		return x.call(ctx, func() (goja.Value, error) {
			return h(goja.Undefined(), vm.ToValue(args), x.context(ctx, th, true))
		}, func(goja.Value) error { return nil })
	}})
	if err != nil {
		panic(vm.NewGoError(fmt.Errorf("pi.registerCommand: %w", err)))
	}
	return goja.Undefined()
}

// context (loop) is pi's ExtensionContext for a handler serving ctx in
// thread th; with command, the ExtensionCommandContext.
func (x *jsExtension) context(ctx context.Context, th *ext.Thread, command bool) *goja.Object {
	rt, vm := x.rt, x.rt.vm
	o := vm.NewObject()
	var ui, signal goja.Value
	x.build(o, ExtensionContext, map[string]any{
		"ui": func() goja.Value {
			if ui == nil {
				ui = x.ui(ctx, th)
			}
			return ui
		},
		"hasUI": th.HasUI,
		"cwd":   th.Cwd,
		"isIdle": func(goja.FunctionCall) goja.Value {
			return vm.ToValue(th.IsIdle())
		},
		"signal": func() goja.Value {
			if signal == nil {
				ac, _ := goja.AssertConstructor(rt.internal.Get("AbortController"))
				ctrl, _ := ac(nil)
				signal = ctrl.Get("signal")
				abortFn, _ := goja.AssertFunction(ctrl.Get("abort"))
				abort := func() { _, _ = abortFn(ctrl) }
				if ctx.Err() != nil {
					abort()
				} else {
					context.AfterFunc(ctx, func() { rt.post(func() { rt.run(x, abort) }) })
				}
			}
			return signal
		},
		"abort": func(goja.FunctionCall) goja.Value {
			rt.send(th.Abort)
			return goja.Undefined()
		},
	}, th)
	if command {
		x.build(o, ExtensionCommandContext, map[string]any{
			"waitForIdle": func(goja.FunctionCall) goja.Value {
				p, resolve, _ := vm.NewPromise()
				rt.async(func() (any, error) {
					for !th.IsIdle() {
						select {
						case <-time.After(50 * time.Millisecond):
						case <-rt.quit:
							return nil, nil
						}
					}
					return nil, nil
				}, func(any, error) { _ = resolve(goja.Undefined()) })
				return vm.ToValue(p)
			},
			"newSession": func(c goja.FunctionCall) goja.Value {
				return x.replace(ctx, th, ext.ReplaceRequest{Kind: ext.ReplaceNew}, c.Argument(0))
			},
			"fork": func(c goja.FunctionCall) goja.Value {
				req := ext.ReplaceRequest{Kind: ext.ReplaceFork, EntryID: c.Argument(0).String()}
				if o, ok := c.Argument(1).(*goja.Object); ok {
					if p := o.Get("position"); p != nil && !goja.IsUndefined(p) {
						req.Position = p.String()
					}
				}
				if req.Position != "" && req.Position != "before" && req.Position != ext.ForkAt {
					panic(vm.NewTypeError(fmt.Sprintf("ctx.fork: position %q is not \"before\" or \"at\"", req.Position)))
				}
				return x.replace(ctx, th, req, c.Argument(1))
			},
		}, th)
	}
	return o
}

// onViewEvent (loop) is ctx.ui.onViewEvent(handler), knightcode's own
// member: handler({widgetKey, id, value?}) gets every ui/event of the
// thread's widgets (ext.UI.OnViewEvent; it may return a promise, which
// the ui/event waits for, and what it set reaches the thread first); the
// answer is the function that unregisters it.
func (x *jsExtension) onViewEvent(th *ext.Thread) func(goja.FunctionCall) goja.Value {
	rt, vm := x.rt, x.rt.vm
	return func(c goja.FunctionCall) goja.Value {
		if th.Stale() {
			panic(vm.NewGoError(ext.ErrStale))
		}
		h, ok := goja.AssertFunction(c.Argument(0))
		if !ok {
			panic(vm.NewTypeError("ctx.ui.onViewEvent(handler): the handler is not a function"))
		}
		unregister := th.UI.OnViewEvent(func(ctx context.Context, e ext.ViewEvent) error {
			data, err := json.Marshal(e)
			if err != nil {
				return err
			}
			err = x.call(ctx, func() (goja.Value, error) {
				ev, err := rt.value(data)
				if err != nil {
					return nil, err
				}
				return h(goja.Undefined(), ev)
			}, func(goja.Value) error { return nil })
			// What the handler set reaches the thread before the
			// ui/event is answered (EXTENSIBILITY.md §6).
			rt.flush()
			return err
		})
		return vm.ToValue(func(goja.FunctionCall) goja.Value {
			unregister()
			return goja.Undefined()
		})
	}
}

// replace (loop) is ctx.newSession(options) or ctx.fork(entryId,
// options) of a command context (req.Kind): after the UI calls sent before it, the
// thread is replaced (ext.Thread.Replace: thread/replaced with the start's
// requestId); the promise resolves {cancelled: false} once the
// options.withSession callback, given the command context of the new
// thread, settled (or rejects with the replacement's failure). The
// captured context is stale afterwards.
func (x *jsExtension) replace(ctx context.Context, th *ext.Thread, req ext.ReplaceRequest, options goja.Value) goja.Value {
	rt, vm := x.rt, x.rt.vm
	var withSession goja.Callable
	if o, ok := options.(*goja.Object); ok {
		withSession, _ = goja.AssertFunction(o.Get("withSession"))
	}
	p, resolve, reject := vm.NewPromise()
	rt.async(func() (any, error) {
		rt.flush()
		return th.Replace(ctx, req)
	}, func(v any, err error) {
		if err != nil {
			name := "ctx.newSession"
			if req.Kind == ext.ReplaceFork {
				name = "ctx.fork"
			}
			_ = reject(vm.NewGoError(fmt.Errorf("%s: %w", name, err)))
			return
		}
		done := vm.ToValue(map[string]any{"cancelled": false})
		if withSession == nil {
			_ = resolve(done)
			return
		}
		r, err := withSession(goja.Undefined(), x.context(ctx, v.(*ext.Thread), true))
		if err != nil {
			_ = reject(rt.jsValue(err))
			return
		}
		ok := vm.ToValue(func(goja.FunctionCall) goja.Value { _ = resolve(done); return goja.Undefined() })
		fail := vm.ToValue(func(c goja.FunctionCall) goja.Value { _ = reject(c.Argument(0)); return goja.Undefined() })
		if _, err := rt.settleFn(goja.Undefined(), r, ok, fail); err != nil {
			_ = reject(rt.jsValue(err))
		}
	})
	return vm.ToValue(p)
}

// ui (loop) is pi's ExtensionUIContext for a handler serving ctx in th.
func (x *jsExtension) ui(ctx context.Context, th *ext.Thread) *goja.Object {
	rt, vm := x.rt, x.rt.vm
	str := func(v goja.Value) string {
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return ""
		}
		return v.String()
	}
	dialog := func(kind string) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			d := ext.Dialog{Kind: kind, Title: str(c.Argument(0))}
			opts := c.Argument(2)
			switch kind {
			case ext.DialogSelect:
				if err := rt.fromJS(c.Argument(1), &d.Options); err != nil {
					panic(vm.NewTypeError("ctx.ui.select: options are not strings"))
				}
			case ext.DialogConfirm:
				d.Message = str(c.Argument(1))
			case ext.DialogInput:
				d.Placeholder = str(c.Argument(1))
			case ext.DialogEditor:
				d.Prefill = str(c.Argument(1))
				opts = goja.Undefined()
			}
			dctx, cancel := context.WithCancel(ctx)
			if o, ok := opts.(*goja.Object); ok {
				if t := o.Get("timeout"); t != nil && !goja.IsUndefined(t) && t.ToFloat() > 0 {
					time.AfterFunc(time.Duration(t.ToFloat()*float64(time.Millisecond)), cancel)
				}
				if s, ok := o.Get("signal").(*goja.Object); ok {
					if s.Get("aborted").ToBoolean() {
						cancel()
					} else if add, ok := goja.AssertFunction(s.Get("addEventListener")); ok {
						_, _ = add(s, vm.ToValue("abort"), vm.ToValue(func(goja.FunctionCall) goja.Value { cancel(); return goja.Undefined() }))
					}
				}
			}
			p, resolve, reject := vm.NewPromise()
			go func() {
				a, err := th.UI.Dialog(dctx, d)
				cancelled := dctx.Err() != nil
				cancel()
				rt.post(func() {
					rt.run(x, func() {
						switch {
						case err != nil && !cancelled:
							_ = reject(vm.NewGoError(fmt.Errorf("ctx.ui.%s: %w", kind, err)))
						case err != nil || a.Cancelled:
							if kind == ext.DialogConfirm {
								_ = resolve(false)
							} else {
								_ = resolve(goja.Undefined())
							}
						case kind == ext.DialogConfirm:
							_ = resolve(true)
						default:
							_ = resolve(a.Value)
						}
					})
				})
			}()
			return vm.ToValue(p)
		}
	}
	o := vm.NewObject()
	x.build(o, ExtensionUIContext, map[string]any{
		"select":  dialog(ext.DialogSelect),
		"confirm": dialog(ext.DialogConfirm),
		"input":   dialog(ext.DialogInput),
		"editor":  dialog(ext.DialogEditor),
		"notify": func(c goja.FunctionCall) goja.Value {
			level := str(c.Argument(1))
			if level == "" {
				level = "info"
			}
			msg := str(c.Argument(0))
			rt.send(func() { th.UI.Notify(level, msg) })
			return goja.Undefined()
		},
		"setStatus": func(c goja.FunctionCall) goja.Value {
			key, text := str(c.Argument(0)), str(c.Argument(1))
			rt.send(func() { th.UI.SetStatus(key, text) })
			return goja.Undefined()
		},
		"setWorkingMessage": func(c goja.FunctionCall) goja.Value {
			msg := str(c.Argument(0))
			rt.send(func() { th.UI.SetWorkingMessage(msg) })
			return goja.Undefined()
		},
		"setWorkingVisible": func(c goja.FunctionCall) goja.Value {
			v := c.Argument(0).ToBoolean()
			rt.send(func() { th.UI.SetWorkingVisible(v) })
			return goja.Undefined()
		},
		"setWidget": func(c goja.FunctionCall) goja.Value {
			key, content := str(c.Argument(0)), c.Argument(1)
			if _, isFn := goja.AssertFunction(content); isFn {
				ui := th.UI
				rt.send(func() { ui.TerminalOnly("setWidget with a component factory") })
				return goja.Undefined()
			}
			var w *ext.Widget
			if !goja.IsUndefined(content) && !goja.IsNull(content) {
				w = &ext.Widget{Placement: ext.AboveEditor, Lines: []string{}}
				if o, ok := content.(*goja.Object); ok && o.ClassName() != "Array" && o.Get("type") != nil {
					view, err := rt.toJSON(o)
					if err != nil {
						panic(err)
					}
					w.View = json.RawMessage(view)
				} else if err := rt.fromJS(content, &w.Lines); err != nil {
					panic(vm.NewTypeError("ctx.ui.setWidget: content is neither lines, a view nor a component factory"))
				}
				if w.Lines == nil {
					w.Lines = []string{}
				}
				var opts struct {
					Placement string `json:"placement"`
				}
				_ = rt.fromJS(c.Argument(2), &opts)
				if opts.Placement == ext.BelowEditor {
					w.Placement = ext.BelowEditor
				}
			}
			rt.send(func() { th.UI.SetWidget(key, w) })
			return goja.Undefined()
		},
		"setTitle": func(c goja.FunctionCall) goja.Value {
			title := str(c.Argument(0))
			rt.send(func() { th.UI.SetTitle(title) })
			return goja.Undefined()
		},
		"onTerminalInput": func(goja.FunctionCall) goja.Value {
			return vm.ToValue(func(goja.FunctionCall) goja.Value { return goja.Undefined() })
		},
		"custom": func(goja.FunctionCall) goja.Value {
			p, resolve, _ := vm.NewPromise()
			_ = resolve(goja.Undefined())
			return vm.ToValue(p)
		},
		"getEditorText": func(goja.FunctionCall) goja.Value { return vm.ToValue("") },
		"theme":         func() goja.Value { return rt.internal.Get("theme") },
		"getAllThemes":  func(goja.FunctionCall) goja.Value { return vm.NewArray() },
		"setTheme": func(goja.FunctionCall) goja.Value {
			return vm.ToValue(map[string]any{"success": false, "error": "knightcode does not support themes"})
		},
		"getToolsExpanded": func(goja.FunctionCall) goja.Value { return vm.ToValue(false) },
	}, th)
	// knightcode's own member (issue 26): pi has no data views.
	_ = o.Set("onViewEvent", x.onViewEvent(th))
	return o
}

// inputResult (loop) decodes an input handler's answer v into r. Errors
// (the handler's warning; the runner keeps the input as it was): a
// "transform" whose text is missing, null or not a string (pi's
// InputEventResult requires it; taking it as "" would empty the input),
// fromJS's.
func (rt *runtime) inputResult(v goja.Value, r *ext.InputResult) error {
	var out struct {
		ext.InputResult
		Text json.RawMessage `json:"text"`
	}
	if err := rt.fromJS(v, &out); err != nil {
		return err
	}
	*r = out.InputResult
	if len(out.Text) == 0 || string(out.Text) == "null" {
		if r.Action == ext.InputTransform {
			return errors.New(`it answered "transform" without a string text`)
		}
		return nil
	}
	if err := json.Unmarshal(out.Text, &r.Text); err != nil {
		if r.Action != ext.InputTransform {
			return fmt.Errorf("the value it returned does not have the expected shape: text: %v", err)
		}
		return errors.New(`it answered "transform" without a string text`)
	}
	return nil
}
