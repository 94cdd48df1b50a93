package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/dop251/goja"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// registerProvider (loop) is pi.registerProvider(name, config) (pi's
// ProviderConfig, types.d.ts; EXTENSIBILITY.md §7 "Extension providers in
// model/list"). A config with streamSimple is a provider with functions:
// its models (config.models: id, name, reasoning, contextWindow, ...)
// stream through streamSimple in this runtime (jsStreamer), so only this
// thread can use them. Without streamSimple it is configuration-only: the
// config's JSON (functions left out: baseUrl, api, apiKey, headers,
// models) crosses the seam, and the thread runs it through its own
// provider clients. oauth is not used: a provider with functions gets
// no API key from it.
func (x *jsExtension) registerProvider(c goja.FunctionCall) goja.Value {
	rt, vm := x.rt, x.rt.vm
	name := c.Argument(0).String()
	cfg, ok := c.Argument(1).(*goja.Object)
	if !ok {
		panic(vm.NewTypeError("pi.registerProvider(name, config): config is not an object"))
	}
	raw, err := rt.toJSON(cfg)
	if err != nil {
		panic(err)
	}
	p := ext.Provider{Name: name}
	if stream, ok := goja.AssertFunction(cfg.Get("streamSimple")); ok {
		var pc struct {
			API     string            `json:"api"`
			BaseURL string            `json:"baseUrl"`
			Models  []json.RawMessage `json:"models"`
		}
		if err := json.Unmarshal([]byte(raw), &pc); err != nil {
			panic(vm.NewTypeError("pi.registerProvider: " + err.Error()))
		}
		s := &jsStreamer{x: x, name: name, stream: stream, models: map[string]json.RawMessage{}}
		for _, m := range pc.Models {
			var mc struct {
				ID            string `json:"id"`
				Name          string `json:"name"`
				Reasoning     bool   `json:"reasoning"`
				ContextWindow int    `json:"contextWindow"`
			}
			if err := json.Unmarshal(m, &mc); err != nil || mc.ID == "" {
				panic(vm.NewTypeError(fmt.Sprintf("pi.registerProvider: provider %q has a model without an id", name)))
			}
			// streamSimple gets pi's Model: the model's config with its
			// provider, and the provider's api and baseUrl unless the
			// model has its own.
			var obj map[string]any
			_ = json.Unmarshal(m, &obj)
			obj["provider"] = name
			for k, v := range map[string]string{"api": pc.API, "baseUrl": pc.BaseURL} {
				if _, has := obj[k]; !has && v != "" {
					obj[k] = v
				}
			}
			s.models[mc.ID], _ = json.Marshal(obj)
			if mc.Name == "" {
				mc.Name = mc.ID
			}
			p.Models = append(p.Models, agent.Model{ID: mc.ID, Name: mc.Name, ThinkingLevels: agent.ThinkingLevels(mc.Reasoning), ContextWindow: mc.ContextWindow})
		}
		p.Streamer = s
	} else {
		p.Config = json.RawMessage(raw)
	}
	if err := x.api.RegisterProvider(p); err != nil {
		panic(vm.NewGoError(fmt.Errorf("pi.registerProvider: %w", err)))
	}
	return goja.Undefined()
}

// unregisterProvider (loop) is pi.unregisterProvider(name): nothing
// happens when the extension registered no provider of that name.
func (x *jsExtension) unregisterProvider(c goja.FunctionCall) goja.Value {
	x.api.UnregisterProvider(c.Argument(0).String())
	return goja.Undefined()
}

// jsStreamer is a provider with functions: Stream calls its streamSimple
// in the extension's runtime and turns the AssistantMessageEvents of the
// stream it returns into the agent's stream events.
type jsStreamer struct {
	x      *jsExtension
	name   string
	stream goja.Callable
	models map[string]json.RawMessage // pi's Model of each id
}

// Name is the provider's name.
func (s *jsStreamer) Name() string { return s.name }

// piEvent is the part of pi's AssistantMessageEvent knightcode reads:
// text_delta and thinking_delta (delta), done (message), error (error,
// an assistant message with errorMessage).
type piEvent struct {
	Type    string          `json:"type"`
	Delta   string          `json:"delta"`
	Message json.RawMessage `json:"message"`
	Error   struct {
		ErrorMessage string `json:"errorMessage"`
		StopReason   string `json:"stopReason"`
	} `json:"error"`
}

// Stream calls streamSimple(model, context, options) with pi's Model of
// req.Model, the context {systemPrompt, messages, tools} and the options
// {reasoning?, signal} (the signal aborts when ctx ends), and yields its
// text and thinking deltas, then the done message or the error. A stream
// that ends without either, or that throws, is a StreamError. Errors: a
// model the provider does not offer.
func (s *jsStreamer) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	model, ok := s.models[req.Model]
	if !ok {
		return nil, fmt.Errorf("provider %s has no model %q", s.name, req.Model)
	}
	msgs := req.Messages
	if msgs == nil {
		msgs = []agent.Message{}
	}
	tools := req.Tools
	if tools == nil {
		tools = []agent.ToolDefinition{}
	}
	sctx, err := json.Marshal(map[string]any{"systemPrompt": req.SystemPrompt, "messages": msgs, "tools": tools})
	if err != nil {
		return nil, err
	}
	return func(yield func(agent.StreamEvent) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := make(chan agent.StreamEvent, 64)
		finished := make(chan error, 1)
		go func() { finished <- s.run(ctx, model, sctx, req.ThinkingLevel, events) }()
		// give yields ev and reports whether the stream goes on.
		give := func(ev agent.StreamEvent) bool {
			return yield(ev) && ev.Type != agent.StreamDone && ev.Type != agent.StreamError
		}
		for {
			select {
			case ev := <-events:
				if !give(ev) {
					return
				}
				continue
			case err := <-finished:
				for len(events) > 0 { // what it sent before it finished
					if !give(<-events) {
						return
					}
				}
				if ctx.Err() != nil {
					err = ctx.Err()
				} else if err == nil {
					err = fmt.Errorf("provider %s: the stream ended without a done or error event", s.name)
				}
				yield(agent.StreamEvent{Type: agent.StreamError, Err: err})
				return
			}
		}
	}, nil
}

// run calls streamSimple and pumps its events into events until the
// stream ends (nil), or fails, or ctx ends.
func (s *jsStreamer) run(ctx context.Context, model, sctx []byte, level agent.ThinkingLevel, events chan<- agent.StreamEvent) error {
	x := s.x
	rt, vm := x.rt, x.rt.vm
	signal, stop := x.abortSignal(ctx)
	defer stop()
	return x.call(ctx, func() (goja.Value, error) {
		m, err := rt.value(model)
		if err != nil {
			return nil, err
		}
		c, err := rt.value(sctx)
		if err != nil {
			return nil, err
		}
		sig, err := signal()
		if err != nil {
			return nil, err
		}
		opts := vm.NewObject()
		_ = opts.Set("signal", sig)
		if level != "" && level != agent.ThinkingOff {
			_ = opts.Set("reasoning", string(level))
		}
		stream, err := s.stream(goja.Undefined(), m, c, opts)
		if err != nil {
			return nil, err
		}
		pump, _ := goja.AssertFunction(rt.internal.Get("pumpStream"))
		return pump(goja.Undefined(), stream, vm.ToValue(func(fc goja.FunctionCall) goja.Value {
			ev, last := s.event(fc.Argument(0))
			if ev == nil {
				return goja.Undefined()
			}
			select {
			case events <- *ev:
			case <-ctx.Done():
				return vm.ToValue(false)
			}
			if last {
				return vm.ToValue(false)
			}
			return goja.Undefined()
		}))
	}, func(goja.Value) error { return nil })
}

// event (loop) is the agent's stream event of pi's event v (nil for the
// events it does not need: start, *_start, *_end) and whether it is the
// last (done, error).
func (s *jsStreamer) event(v goja.Value) (*agent.StreamEvent, bool) {
	var e piEvent
	if err := s.x.rt.fromJS(v, &e); err != nil {
		return &agent.StreamEvent{Type: agent.StreamError, Err: fmt.Errorf("provider %s: an event of its stream is not valid: %v", s.name, err)}, true
	}
	switch e.Type {
	case "text_delta":
		return &agent.StreamEvent{Type: agent.StreamTextDelta, Delta: e.Delta}, false
	case "thinking_delta":
		return &agent.StreamEvent{Type: agent.StreamThinkingDelta, Delta: e.Delta}, false
	case "done":
		var m agent.Message
		if err := json.Unmarshal(e.Message, &m); err != nil {
			return &agent.StreamEvent{Type: agent.StreamError, Err: fmt.Errorf("provider %s: its done message is not valid: %v", s.name, err)}, true
		}
		if m.StopReason == "" {
			m.StopReason = agent.StopReasonStop
		}
		return &agent.StreamEvent{Type: agent.StreamDone, Message: m}, true
	case "error":
		msg := e.Error.ErrorMessage
		if msg == "" {
			msg = "the stream failed (" + e.Error.StopReason + ")"
		}
		return &agent.StreamEvent{Type: agent.StreamError, Err: errors.New(msg)}, true
	}
	return nil, false
}
