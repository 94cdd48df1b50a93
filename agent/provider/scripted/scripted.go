package scripted

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/knightcode/knightcode/agent"
)

// Name is the provider name of every scripted model.
const Name = "scripted"

// DefaultContextWindow is the context window (tokens) listed for a scripted
// model that declares none.
const DefaultContextWindow = 200_000

// maxChunks bounds the deltas one thinking or text string streams as.
const maxChunks = 8

// Model is one scripted model: its id (unique within the provider), display
// name (the id when empty), whether it lists reasoning thinking levels, its
// context window in tokens (DefaultContextWindow when zero), and its script.
type Model struct {
	ID            string
	Name          string
	Reasoning     bool
	ContextWindow int
	Script        Script
}

//go:embed demo.json
var demoScript []byte

// DemoID is the id of the built-in demo model, listed as scripted/demo.
const DemoID = "demo"

// Demo returns the built-in scripted/demo model. Its agent, working in a clone
// of this repository, (1) reads testdata/demo/notes.md, (2) edits it in two
// places far apart with one edit call, (3) runs
// `wc -l testdata/demo/notes.md && git status --short` with bash, and (4)
// answers with a short summary. Its script is PerTurn: every turn of every
// thread plays it from the start. It reports reasoning levels and streams a
// little thinking. It panics if the embedded script is invalid, which a test
// rules out.
func Demo() Model {
	s, err := ParseScript(demoScript)
	if err != nil {
		panic(fmt.Sprintf("scripted: embedded demo script: %v", err))
	}
	return Model{ID: DemoID, Name: "Scripted demo", Reasoning: true, Script: s}
}

// Provider serves scripted models. Each model keeps its own position in its
// script, shared by every request for that model id on this Provider,
// unless its script is PerTurn (then the conversation gives the
// position); it is safe for concurrent use.
type Provider struct {
	mu     sync.Mutex
	models []*model // in the order given
}

type model struct {
	Model
	next int // index of the next response
}

// New returns a provider serving models, listed in the order given. A later
// model with the id of an earlier one replaces it in place.
func New(models ...Model) *Provider {
	p := &Provider{}
	for _, m := range models {
		if old := p.find(m.ID); old != nil {
			old.Model, old.next = m, 0
			continue
		}
		p.models = append(p.models, &model{Model: m})
	}
	return p
}

func (p *Provider) find(id string) *model {
	for _, m := range p.models {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Name returns "scripted".
func (p *Provider) Name() string { return Name }

// Models lists the provider's models: non-reasoning ones accept thinking level
// ["off"], reasoning ones all five levels. Scripted replies ignore the level.
func (p *Provider) Models() []agent.Model {
	out := make([]agent.Model, 0, len(p.models))
	for _, m := range p.models {
		name := m.Name
		if name == "" {
			name = m.ID
		}
		cw := m.ContextWindow
		if cw <= 0 {
			cw = DefaultContextWindow
		}
		out = append(out, agent.Model{
			Provider: Name, ID: m.ID, Name: name,
			ThinkingLevels: agent.ThinkingLevels(m.Reasoning), ContextWindow: cw,
		})
	}
	return out
}

// Stream consumes the next response of req.Model's script and streams it (see
// Response). The request's messages, tools and thinking level are ignored. It
// fails at once for an unknown model id and for an exhausted script; the
// exhaustion message names the provider so ClassifyError gives "provider".
// Delays stop as soon as ctx is cancelled, and the stream then ends with a
// StreamError wrapping ctx.Err().
func (p *Provider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	p.mu.Lock()
	m := p.find(req.Model)
	if m == nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("scripted provider: unknown model %q", req.Model)
	}
	if m.Script.PerTurn {
		script := m.Script
		p.mu.Unlock()
		i, turn := turnPosition(req.Messages)
		if i >= len(script.Responses) {
			return nil, fmt.Errorf("scripted provider: the script of model %q is exhausted: this turn used all %d responses", req.Model, len(script.Responses))
		}
		r := script.Responses[i]
		if turn > 1 && len(r.ToolCalls) > 0 {
			calls := make([]ToolCall, len(r.ToolCalls))
			for j, c := range r.ToolCalls {
				c.ID = fmt.Sprintf("%s_t%d", c.ID, turn)
				calls[j] = c
			}
			r.ToolCalls = calls
		}
		return func(yield func(agent.StreamEvent) bool) { play(ctx, r, yield) }, nil
	}
	if m.next >= len(m.Script.Responses) {
		n := len(m.Script.Responses)
		p.mu.Unlock()
		return nil, fmt.Errorf("scripted provider: the script of model %q is exhausted: all %d responses were used", req.Model, n)
	}
	r := m.Script.Responses[m.next]
	m.next++
	p.mu.Unlock()
	return func(yield func(agent.StreamEvent) bool) { play(ctx, r, yield) }, nil
}

// play streams one response.
func play(ctx context.Context, r Response, yield func(agent.StreamEvent) bool) {
	type delta struct {
		typ  agent.StreamEventType
		text string
	}
	var deltas []delta
	for _, c := range chunks(r.Thinking) {
		deltas = append(deltas, delta{agent.StreamThinkingDelta, c})
	}
	for _, c := range chunks(r.Text) {
		deltas = append(deltas, delta{agent.StreamTextDelta, c})
	}
	total := time.Duration(r.DelayMs) * time.Millisecond
	steps := max(len(deltas), 1)
	// cancelled ends the stream with an error when ctx is done.
	cancelled := func() bool {
		err := ctx.Err()
		if err != nil {
			yield(agent.StreamEvent{Type: agent.StreamError, Err: fmt.Errorf("scripted provider: request cancelled: %w", err)})
		}
		return err != nil
	}
	// wait spends the step-th share of the delay; false means ctx was done
	// and the stream has ended.
	wait := func(step int) bool {
		d := total / time.Duration(steps)
		if step == 0 {
			d += total % time.Duration(steps)
		}
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
		return !cancelled()
	}
	if cancelled() {
		return
	}
	// The first delta comes at once and each share of the delay follows a
	// delta, so a reader can interrupt after the first delta.
	for i, d := range deltas {
		if !yield(agent.StreamEvent{Type: d.typ, Delta: d.text}) || !wait(i) {
			return
		}
	}
	if len(deltas) == 0 && !wait(0) {
		return
	}
	var content []agent.ContentBlock
	if r.Thinking != "" {
		content = append(content, agent.ThinkingBlock(r.Thinking))
	}
	if r.Text != "" {
		content = append(content, agent.TextBlock(r.Text))
	}
	if r.Error != "" {
		yield(agent.StreamEvent{Type: agent.StreamError, Err: errors.New(r.Error)})
		return
	}
	for _, c := range r.ToolCalls {
		call := agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		content = append(content, agent.ToolCallBlock(call))
		if !yield(agent.StreamEvent{Type: agent.StreamToolCall, ToolCall: call}) {
			return
		}
	}
	final := agent.Message{Role: agent.RoleAssistant, Content: content, StopReason: agent.StopReasonStop}
	if len(r.ToolCalls) > 0 {
		final.StopReason = agent.StopReasonToolUse
	}
	if u := r.Usage; u != nil {
		final.Usage = agent.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
	}
	yield(agent.StreamEvent{Type: agent.StreamDone, Message: final})
}

// chunks splits s at word boundaries into at most maxChunks pieces of about
// equal word counts, each keeping its trailing white space (leading white space
// goes with the first word); joined they give s.
func chunks(s string) []string {
	if s == "" {
		return nil
	}
	var words []string
	start := 0
	inSpace, seenWord := false, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if inSpace && !space && seenWord {
			words = append(words, s[start:i])
			start = i
		}
		inSpace = space
		seenWord = seenWord || !space
	}
	words = append(words, s[start:])
	n := min(len(words), maxChunks)
	out := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(words)/n, (i+1)*len(words)/n
		out = append(out, strings.Join(words[lo:hi], ""))
	}
	return out
}

// turnPosition reads a conversation for a PerTurn script: index is the
// number of assistant messages after its last user message (the replies
// this turn has had), turn the number of user messages (1 for a thread's
// first turn).
func turnPosition(msgs []agent.Message) (index, turn int) {
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			turn++
			index = 0
		case agent.RoleAssistant:
			index++
		}
	}
	return index, turn
}
