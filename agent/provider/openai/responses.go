package openai

import (
	"context"
	"iter"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/apierr"
	"github.com/knightcode/knightcode/agent/provider/internal/reply"
)

// responsesParams builds a Responses API request.
func responsesParams(m catalog.Model, req agent.Request) responses.ResponseNewParams {
	var input responses.ResponseInputParam
	for _, msg := range req.Messages {
		if !reply.Sendable(msg) {
			continue
		}
		switch msg.Role {
		case agent.RoleUser:
			var parts responses.ResponseInputMessageContentListParam
			for _, b := range msg.Content {
				switch {
				case b.Type == agent.ContentText:
					parts = append(parts, responses.ResponseInputContentParamOfInputText(b.Text))
				case b.Type == agent.ContentImage && m.AcceptsImages():
					img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
					img.OfInputImage.ImageURL = param.NewOpt(dataURL(b))
					parts = append(parts, img)
				case b.Type == agent.ContentImage:
					parts = append(parts, responses.ResponseInputContentParamOfInputText(reply.ImageOmitted))
				}
			}
			if len(parts) > 0 {
				input = append(input, responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser))
			}
		case agent.RoleAssistant:
			for _, b := range msg.Content {
				switch b.Type {
				case agent.ContentText:
					if b.Text != "" {
						input = append(input, responses.ResponseInputItemParamOfMessage(b.Text, responses.EasyInputMessageRoleAssistant))
					}
				case agent.ContentToolCall:
					args := string(b.Arguments)
					if args == "" {
						args = "{}"
					}
					input = append(input, responses.ResponseInputItemParamOfFunctionCall(args, b.ID, b.Name))
				}
			}
		case agent.RoleToolResult:
			out := responses.ResponseInputItemParamOfFunctionCallOutput(reply.ToolResultText(msg))
			out.OfFunctionCallOutput.CallID = param.NewOpt(msg.ToolCallID)
			input = append(input, out)
		}
	}
	params := responses.ResponseNewParams{
		Model: req.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Store: param.NewOpt(false),
	}
	if req.SystemPrompt != "" {
		params.Instructions = param.NewOpt(req.SystemPrompt)
	}
	for _, t := range req.Tools {
		tool := responses.ToolParamOfFunction(t.Name, schema(t.Parameters), false)
		if t.Description != "" {
			tool.OfFunction.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	if effort := m.OpenAIEffort(req.ThinkingLevel); effort != "" {
		params.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffort(effort), Summary: shared.ReasoningSummaryAuto}
	}
	return params
}

// responsesUsage maps the Responses API usage: input_tokens counts the cached
// tokens too, so Input is the uncached part.
func responsesUsage(u responses.ResponseUsage) agent.Usage {
	cached := u.InputTokensDetails.CachedTokens
	written := u.InputTokensDetails.CacheWriteTokens
	return agent.Usage{
		Input:      max(u.InputTokens-cached-written, 0),
		Output:     u.OutputTokens,
		CacheRead:  cached,
		CacheWrite: written,
	}
}

// streamResponses streams one Responses API request.
func (p *Provider) streamResponses(ctx context.Context, c openai.Client, m catalog.Model, req agent.Request, key string) iter.Seq[agent.StreamEvent] {
	params := responsesParams(m, req)
	return func(yield func(agent.StreamEvent) bool) {
		stream := c.Responses.NewStreaming(ctx, params)
		defer stream.Close()
		r := &reply.Builder{Yield: yield}
		type call struct{ callID, name, args string }
		calls := map[string]*call{} // by item id
		summary := map[string]int64{}
		for stream.Next() {
			ev := stream.Current()
			ok := true
			switch ev.Type {
			case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
				d := ev.Delta
				if last, seen := summary[ev.ItemID]; seen && last != ev.SummaryIndex {
					d = "\n\n" + d
				}
				summary[ev.ItemID] = ev.SummaryIndex
				ok = r.Delta(agent.ContentThinking, d)
			case "response.output_text.delta", "response.refusal.delta":
				ok = r.Delta(agent.ContentText, ev.Delta)
			case "response.output_item.added":
				if ev.Item.Type == "function_call" {
					calls[ev.Item.ID] = &call{callID: ev.Item.CallID, name: ev.Item.Name}
				}
			case "response.function_call_arguments.delta":
				if c := calls[ev.ItemID]; c != nil {
					c.args += ev.Delta
				}
			case "response.function_call_arguments.done":
				if c := calls[ev.ItemID]; c != nil {
					c.args = ev.Arguments
				}
			case "response.output_item.done":
				if ev.Item.Type == "function_call" {
					c := calls[ev.Item.ID]
					if c == nil {
						c = &call{callID: ev.Item.CallID, name: ev.Item.Name}
					}
					if c.callID == "" {
						c.callID = ev.Item.CallID
					}
					if c.name == "" {
						c.name = ev.Item.Name
					}
					if c.args == "" {
						c.args = ev.Item.Arguments.OfString
					}
					ok = r.ToolCall(c.callID, c.name, c.args)
				}
			case "response.completed", "response.incomplete":
				stop := agent.StopReasonStop
				if ev.Type == "response.incomplete" {
					reason := ev.Response.IncompleteDetails.Reason
					if reason != "max_output_tokens" {
						r.Fail(apierr.New(p.cfg.Name, 0, "incomplete", "the response is incomplete: "+reason, nil, key))
						return
					}
					stop = agent.StopReasonLength
				}
				r.Done(stop, responsesUsage(ev.Response.Usage), m.Cost)
				return
			case "response.failed":
				e := ev.Response.Error
				msg := e.Message
				if msg == "" {
					msg = "the response failed"
				}
				r.Fail(apierr.New(p.cfg.Name, statusOfCode(string(e.Code)), string(e.Code), msg, nil, key))
				return
			case "error":
				r.Fail(apierr.New(p.cfg.Name, statusOfCode(ev.Code), ev.Code, ev.Message, nil, key))
				return
			}
			if !ok {
				return
			}
		}
		if err := stream.Err(); err != nil {
			r.Fail(p.failure(ctx, err, key))
			return
		}
		r.Fail(apierr.Transport(ctx, p.cfg.Name, reply.StreamEnded{}, key))
	}
}

// statusOfCode gives the HTTP status an in-stream error code stands for, so
// server errors are retried like a 5xx answer; 0 when none.
func statusOfCode(code string) int {
	switch strings.ToLower(code) {
	case "server_error", "internal_error", "api_error":
		return 500
	case "overloaded_error":
		return 529
	}
	return 0
}
