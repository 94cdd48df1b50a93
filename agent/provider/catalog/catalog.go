// Package catalog describes the models of the real providers: the built-in
// catalogue of OpenAI's and Anthropic's current models (context window, output
// limit, reasoning, prices) and the Model and Price types custom providers of
// models.json use too. Prices are US dollars per million tokens, as the
// providers publish them.
//
// Thinking levels map to each API as follows (Model.ThinkingLevels lists the
// levels a model accepts; a non-reasoning model accepts only "off" and gets
// no reasoning parameter at all):
//
//	level    OpenAI reasoning.effort / reasoning_effort    Anthropic thinking
//	off      "minimal" ("none" when Model.EffortNone)      disabled
//	minimal  "minimal"                                     budget_tokens 1024
//	low      "low"                                         budget_tokens 4096
//	medium   "medium"                                      budget_tokens 10240
//	high     "high"                                        budget_tokens 32768
//	xhigh    "xhigh" (only models with Model.XHigh)        budget_tokens 65536 (only Model.XHigh)
//
// An Anthropic budget is clamped below the request's max_tokens (the model's
// MaxTokens), and never under the API's minimum of 1024.
//
// What the room must not know: HTTP, credentials, threads.
package catalog

import "github.com/knightcode/knightcode/agent"

// Price is what a model costs, in US dollars per million tokens of each kind.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Cost returns the price of usage u in US dollars.
func (p Price) Cost(u agent.Usage) float64 {
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output +
		float64(u.CacheRead)*p.CacheRead + float64(u.CacheWrite)*p.CacheWrite) / 1e6
}

// Model is one model of a real provider. ContextWindow and MaxTokens are token
// counts (MaxTokens: the most output tokens one reply may have); Input lists
// the input kinds it accepts ("text", "image").
type Model struct {
	ID            string
	Name          string
	Reasoning     bool
	XHigh         bool // accepts the "xhigh" thinking level
	EffortNone    bool // OpenAI: thinking "off" sends reasoning effort "none"
	Input         []string
	ContextWindow int
	MaxTokens     int
	Cost          Price
}

// Default limits for a model that declares none.
const (
	DefaultContextWindow = 128_000
	DefaultMaxTokens     = 16_384
)

// ThinkingLevels returns the levels the model accepts: ["off"] for a
// non-reasoning model, off…high for a reasoning one, plus "xhigh" when XHigh.
func (m Model) ThinkingLevels() []agent.ThinkingLevel {
	levels := agent.ThinkingLevels(m.Reasoning)
	if m.Reasoning && m.XHigh {
		levels = append(levels, agent.ThinkingXHigh)
	}
	return levels
}

// AcceptsImages reports whether Input lists "image".
func (m Model) AcceptsImages() bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}

// Limits returns the context window and output limit, defaults filled in.
func (m Model) Limits() (contextWindow, maxTokens int) {
	contextWindow, maxTokens = m.ContextWindow, m.MaxTokens
	if contextWindow <= 0 {
		contextWindow = DefaultContextWindow
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	return contextWindow, maxTokens
}

// AgentModels returns ms as model/list shows them, under provider (Agent of
// each, in order).
func AgentModels(provider string, ms []Model) []agent.Model {
	out := make([]agent.Model, len(ms))
	for i, m := range ms {
		out[i] = m.Agent(provider)
	}
	return out
}

// Find returns the entry of ms whose ID is id, and whether there is one.
func Find(ms []Model, id string) (Model, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Agent returns the model as model/list shows it, under provider.
func (m Model) Agent(provider string) agent.Model {
	name := m.Name
	if name == "" {
		name = m.ID
	}
	cw, _ := m.Limits()
	return agent.Model{Provider: provider, ID: m.ID, Name: name, ThinkingLevels: m.ThinkingLevels(), ContextWindow: cw}
}

// OpenAIEffort returns the OpenAI reasoning effort of level for this model (see
// the package table), "" for a non-reasoning model.
func (m Model) OpenAIEffort(level agent.ThinkingLevel) string {
	if !m.Reasoning {
		return ""
	}
	switch level {
	case agent.ThinkingMinimal, agent.ThinkingLow, agent.ThinkingMedium, agent.ThinkingHigh:
		return string(level)
	case agent.ThinkingXHigh:
		if m.XHigh {
			return "xhigh"
		}
		return "high"
	}
	if m.EffortNone {
		return "none"
	}
	return "minimal"
}

// AnthropicBudget returns the thinking budget (tokens) of level for a request
// whose max_tokens is maxTokens, 0 meaning thinking disabled (see the package
// table).
func (m Model) AnthropicBudget(level agent.ThinkingLevel, maxTokens int) int {
	if !m.Reasoning {
		return 0
	}
	var b int
	switch level {
	case agent.ThinkingMinimal:
		b = 1024
	case agent.ThinkingLow:
		b = 4096
	case agent.ThinkingMedium:
		b = 10240
	case agent.ThinkingHigh:
		b = 32768
	case agent.ThinkingXHigh:
		b = 32768
		if m.XHigh {
			b = 65536
		}
	default:
		return 0
	}
	// The API wants 1024 <= budget_tokens < max_tokens.
	b = min(b, maxTokens-1024)
	if b < 1024 {
		return 0
	}
	return b
}

var textImage = []string{"text", "image"}

// OpenAI returns the built-in OpenAI models (Responses API), newest first.
// Prices as published by OpenAI.
func OpenAI() []Model {
	return []Model{
		{ID: "gpt-5.2", Name: "GPT-5.2", Reasoning: true, XHigh: true, EffortNone: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 1.75, Output: 14, CacheRead: 0.175}},
		{ID: "gpt-5.1", Name: "GPT-5.1", Reasoning: true, EffortNone: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{ID: "gpt-5.1-codex", Name: "GPT-5.1 Codex", Reasoning: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{ID: "gpt-5.1-codex-max", Name: "GPT-5.1 Codex Max", Reasoning: true, XHigh: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{ID: "gpt-5", Name: "GPT-5", Reasoning: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{ID: "gpt-5-mini", Name: "GPT-5 mini", Reasoning: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 0.25, Output: 2, CacheRead: 0.025}},
		{ID: "gpt-5-nano", Name: "GPT-5 nano", Reasoning: true, Input: textImage, ContextWindow: 400_000, MaxTokens: 128_000, Cost: Price{Input: 0.05, Output: 0.4, CacheRead: 0.005}},
		{ID: "gpt-4.1", Name: "GPT-4.1", Input: textImage, ContextWindow: 1_047_576, MaxTokens: 32_768, Cost: Price{Input: 2, Output: 8, CacheRead: 0.5}},
		{ID: "gpt-4.1-mini", Name: "GPT-4.1 mini", Input: textImage, ContextWindow: 1_047_576, MaxTokens: 32_768, Cost: Price{Input: 0.4, Output: 1.6, CacheRead: 0.1}},
	}
}

// Anthropic returns the built-in Anthropic models (Messages API), newest
// first. Prices as published by Anthropic (cache writes at the 5-minute rate).
func Anthropic() []Model {
	return []Model{
		{ID: "claude-opus-4-5", Name: "Claude Opus 4.5", Reasoning: true, Input: textImage, ContextWindow: 200_000, MaxTokens: 64_000, Cost: Price{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25}},
		{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", Reasoning: true, Input: textImage, ContextWindow: 200_000, MaxTokens: 64_000, Cost: Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
		{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", Reasoning: true, Input: textImage, ContextWindow: 200_000, MaxTokens: 64_000, Cost: Price{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25}},
		{ID: "claude-opus-4-1", Name: "Claude Opus 4.1", Reasoning: true, Input: textImage, ContextWindow: 200_000, MaxTokens: 32_000, Cost: Price{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75}},
		{ID: "claude-sonnet-4-0", Name: "Claude Sonnet 4", Reasoning: true, Input: textImage, ContextWindow: 200_000, MaxTokens: 64_000, Cost: Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}},
	}
}
