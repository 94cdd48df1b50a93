package openai

import (
	"context"
	"encoding/json"
	"iter"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/apierr"
	"github.com/knightcode/knightcode/agent/provider/internal/reply"
)

// completionsParams builds a Chat Completions request.
func completionsParams(m catalog.Model, req agent.Request) openai.ChatCompletionNewParams {
	var msgs []openai.ChatCompletionMessageParamUnion
	if req.SystemPrompt != "" {
		msgs = append(msgs, openai.SystemMessage(req.SystemPrompt))
	}
	for _, msg := range req.Messages {
		if !reply.Sendable(msg) {
			continue
		}
		switch msg.Role {
		case agent.RoleUser:
			var parts []openai.ChatCompletionContentPartUnionParam
			var texts []string
			images := false
			for _, b := range msg.Content {
				switch {
				case b.Type == agent.ContentText:
					parts = append(parts, openai.TextContentPart(b.Text))
					texts = append(texts, b.Text)
				case b.Type == agent.ContentImage && m.AcceptsImages():
					parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(b)}))
					images = true
				case b.Type == agent.ContentImage:
					parts = append(parts, openai.TextContentPart(reply.ImageOmitted))
					texts = append(texts, reply.ImageOmitted)
				}
			}
			switch {
			case len(parts) == 0:
			case images:
				msgs = append(msgs, openai.UserMessage(parts))
			default:
				// Plain text content is what every compatible server reads.
				msgs = append(msgs, openai.UserMessage(strings.Join(texts, "\n")))
			}
		case agent.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if t := msg.Text(); t != "" {
				a.Content.OfString = param.NewOpt(t)
			}
			for _, c := range msg.ToolCalls() {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			if !a.Content.OfString.Valid() && len(a.ToolCalls) == 0 {
				continue
			}
			msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case agent.RoleToolResult:
			msgs = append(msgs, openai.ToolMessage(reply.ToolResultText(msg), msg.ToolCallID))
		}
	}
	params := openai.ChatCompletionNewParams{
		Model:         req.Model,
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema(t.Parameters))}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if effort := m.OpenAIEffort(req.ThinkingLevel); effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(effort)
	}
	return params
}

// completionsUsage maps Chat Completions usage: prompt_tokens counts the
// cached tokens too.
func completionsUsage(u openai.CompletionUsage) agent.Usage {
	cached := u.PromptTokensDetails.CachedTokens
	written := u.PromptTokensDetails.CacheWriteTokens
	return agent.Usage{
		Input:      max(u.PromptTokens-cached-written, 0),
		Output:     u.CompletionTokens,
		CacheRead:  cached,
		CacheWrite: written,
	}
}

// reasoningDelta reads the reasoning text compatible servers put beside
// content: reasoning_content (DeepSeek, vLLM, llama.cpp) or reasoning
// (Ollama, OpenRouter).
func reasoningDelta(raw string) string {
	if raw == "" {
		return ""
	}
	var d struct {
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
	}
	if json.Unmarshal([]byte(raw), &d) != nil {
		return ""
	}
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
}

// streamCompletions streams one Chat Completions request.
func (p *Provider) streamCompletions(ctx context.Context, c openai.Client, m catalog.Model, req agent.Request, key string) iter.Seq[agent.StreamEvent] {
	params := completionsParams(m, req)
	return func(yield func(agent.StreamEvent) bool) {
		stream := c.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		r := &reply.Builder{Yield: yield}
		type call struct{ id, name, args string }
		calls := map[int64]*call{}
		finish := ""
		var usage agent.Usage
		for stream.Next() {
			chunk := stream.Current()
			if chunk.JSON.Usage.Valid() && chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
				usage = completionsUsage(chunk.Usage)
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				d := ch.Delta
				if !r.Delta(agent.ContentThinking, reasoningDelta(d.RawJSON())) ||
					!r.Delta(agent.ContentText, d.Content) || !r.Delta(agent.ContentText, d.Refusal) {
					return
				}
				for _, tc := range d.ToolCalls {
					c := calls[tc.Index]
					if c == nil {
						c = &call{}
						calls[tc.Index] = c
					}
					if tc.ID != "" {
						c.id = tc.ID
					}
					if tc.Function.Name != "" {
						c.name = tc.Function.Name
					}
					c.args += tc.Function.Arguments
				}
				if ch.FinishReason != "" {
					finish = ch.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			r.Fail(p.failure(ctx, err, key))
			return
		}
		if finish == "" {
			r.Fail(p.failure(ctx, reply.StreamEnded{}, key))
			return
		}
		idx := make([]int64, 0, len(calls))
		for i := range calls {
			idx = append(idx, i)
		}
		sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
		for _, i := range idx {
			c := calls[i]
			if !r.ToolCall(c.id, c.name, c.args) {
				return
			}
		}
		stop := agent.StopReasonStop
		switch finish {
		case "length":
			stop = agent.StopReasonLength
		case "content_filter":
			r.Fail(apierrNew(p, "content_filter", "the reply was stopped by the content filter", key))
			return
		}
		r.Done(stop, usage, m.Cost)
	}
}

// apierrNew returns an in-stream failure without HTTP status.
func apierrNew(p *Provider, code, msg, key string) error {
	return apierr.New(p.cfg.Name, 0, code, msg, nil, key)
}
