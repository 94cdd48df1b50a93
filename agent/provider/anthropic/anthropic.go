// Package anthropic is the model provider of Anthropic's Messages API
// ("anthropic-messages") through the official SDK
// (github.com/anthropics/anthropic-sdk-go/v2).
//
// It streams thinking (with its signature, kept on the thinking block and
// sent back on later requests), text and tool calls with their tool_use ids,
// sends user images as base64 image blocks and consecutive tool results in one
// user message, reports stop reasons and usage (input, output, cache read,
// cache write) with the cost from the model's prices, and maps thinking levels
// to a thinking budget (see agent/provider/catalog). The system prompt is
// marked for prompt caching. Failures are *agent.APIError values classified
// from the SDK's typed error (HTTP status, then error.type: rate_limit_error,
// overloaded_error, ...) first, its message second; the SDK's own retries are
// off (agent.Run retries), and no credential is read from the environment by
// the SDK: the key comes from Config.APIKey.
//
// What the room must not know: threads, JSON-RPC, session files, credentials
// storage.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/apierr"
	"github.com/knightcode/knightcode/agent/provider/internal/reply"
)

// API is the models.json "api" of this package.
const API = "anthropic-messages"

// Name is the provider name of Anthropic itself; DefaultBaseURL its API.
const (
	Name           = "anthropic"
	DefaultBaseURL = "https://api.anthropic.com"
)

// Config configures one provider.
type Config struct {
	// Name is the provider name ("anthropic", or a custom provider's name).
	Name string
	// BaseURL is the API root; DefaultBaseURL when empty.
	BaseURL string
	// Headers are sent with every request.
	Headers map[string]string
	// APIKey returns the key at request time ("" when there is none).
	APIKey func() string
	// KeyRequired makes a request without a key fail at once with an auth
	// error.
	KeyRequired bool
	// Models are the models offered, in list order.
	Models []catalog.Model
	// HTTPClient is used for requests (nil: the SDK's default).
	HTTPClient *http.Client
}

// Provider streams replies of one Messages API provider; safe for concurrent
// use.
type Provider struct {
	cfg Config
}

// New returns the provider cfg describes.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	return &Provider{cfg: cfg}
}

// Name returns the provider name.
func (p *Provider) Name() string { return p.cfg.Name }

// Models lists the models as model/list shows them.
func (p *Provider) Models() []agent.Model { return catalog.AgentModels(p.cfg.Name, p.cfg.Models) }

// Model returns the catalogue entry of id.
func (p *Provider) Model(id string) (catalog.Model, bool) { return catalog.Find(p.cfg.Models, id) }

func (p *Provider) client(key string) anthropic.Client {
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(p.cfg.BaseURL),
		option.WithMaxRetries(0),
	}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if p.cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(p.cfg.HTTPClient))
	}
	for k, v := range p.cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return anthropic.NewClient(opts...)
}

// Stream starts one request for req.Model (see the package doc). It fails at
// once for an unknown model and, when Config.KeyRequired, for a missing key
// (an auth *agent.APIError).
func (p *Provider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	m, ok := p.Model(req.Model)
	if !ok {
		return nil, fmt.Errorf("%s provider: unknown model %q", p.cfg.Name, req.Model)
	}
	key := ""
	if p.cfg.APIKey != nil {
		key = p.cfg.APIKey()
	}
	if key == "" && p.cfg.KeyRequired {
		return nil, &agent.APIError{Kind: agent.ErrorKindAuth, Message: fmt.Sprintf("%s: no API key (set ANTHROPIC_API_KEY or log in)", p.cfg.Name)}
	}
	c := p.client(key)
	params := Params(m, req)
	return func(yield func(agent.StreamEvent) bool) { p.play(ctx, c, m, params, key, yield) }, nil
}

// Params builds the Messages API request of req for model m.
func Params(m catalog.Model, req agent.Request) anthropic.MessageNewParams {
	var msgs []anthropic.MessageParam
	var results []anthropic.ContentBlockParamUnion // consecutive tool results
	flush := func() {
		if len(results) > 0 {
			msgs = append(msgs, anthropic.NewUserMessage(results...))
			results = nil
		}
	}
	for _, msg := range req.Messages {
		if !reply.Sendable(msg) {
			continue
		}
		if msg.Role != agent.RoleToolResult {
			flush()
		}
		switch msg.Role {
		case agent.RoleUser:
			var blocks []anthropic.ContentBlockParamUnion
			for _, b := range msg.Content {
				switch {
				case b.Type == agent.ContentText && b.Text != "":
					blocks = append(blocks, anthropic.NewTextBlock(b.Text))
				case b.Type == agent.ContentImage && m.AcceptsImages():
					blocks = append(blocks, anthropic.NewImageBlockBase64(b.MimeType, b.Data))
				case b.Type == agent.ContentImage:
					blocks = append(blocks, anthropic.NewTextBlock(reply.ImageOmitted))
				}
			}
			if len(blocks) > 0 {
				msgs = append(msgs, anthropic.NewUserMessage(blocks...))
			}
		case agent.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			for _, b := range msg.Content {
				switch b.Type {
				case agent.ContentThinking:
					// Unsigned thinking (another provider's) cannot be
					// sent back as thinking.
					if b.ThinkingSignature != "" {
						blocks = append(blocks, anthropic.NewThinkingBlock(b.ThinkingSignature, b.Thinking))
					}
				case agent.ContentText:
					if b.Text != "" {
						blocks = append(blocks, anthropic.NewTextBlock(b.Text))
					}
				case agent.ContentToolCall:
					args := b.Arguments
					if len(args) == 0 {
						args = json.RawMessage("{}")
					}
					blocks = append(blocks, anthropic.NewToolUseBlock(b.ID, args, b.Name))
				}
			}
			if len(blocks) > 0 {
				msgs = append(msgs, anthropic.NewAssistantMessage(blocks...))
			}
		case agent.RoleToolResult:
			results = append(results, anthropic.NewToolResultBlock(msg.ToolCallID, reply.ToolResultText(msg), msg.IsError))
		}
	}
	flush()
	_, maxTokens := m.Limits()
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(maxTokens), Messages: msgs}
	if req.SystemPrompt != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.SystemPrompt, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		var s map[string]any
		_ = json.Unmarshal(t.Parameters, &s)
		schema := anthropic.ToolInputSchemaParam{Properties: s["properties"], ExtraFields: map[string]any{}}
		if s["properties"] == nil {
			schema.Properties = map[string]any{}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					schema.Required = append(schema.Required, name)
				}
			}
		}
		for k, v := range s {
			if k != "type" && k != "properties" && k != "required" {
				schema.ExtraFields[k] = v
			}
		}
		tool := anthropic.ToolUnionParamOfTool(schema, t.Name)
		if t.Description != "" {
			tool.OfTool.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	if budget := m.AnthropicBudget(req.ThinkingLevel, maxTokens); budget > 0 {
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(budget))
	}
	return params
}

// play streams one request.
func (p *Provider) play(ctx context.Context, c anthropic.Client, m catalog.Model, params anthropic.MessageNewParams, key string, yield func(agent.StreamEvent) bool) {
	stream := c.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	r := &reply.Builder{Yield: yield}
	type call struct{ id, name, args string }
	calls := map[int64]*call{}
	var usage agent.Usage
	stop := agent.StopReasonStop
	for stream.Next() {
		ev := stream.Current()
		ok := true
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = agent.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
		case "content_block_start":
			cb := ev.ContentBlock
			switch cb.Type {
			case "tool_use":
				calls[ev.Index] = &call{id: cb.ID, name: cb.Name}
			case "thinking":
				// A new thinking block: keep it apart from an earlier one.
				if n := len(r.Content); n > 0 && r.Content[n-1].Type == agent.ContentThinking {
					r.Content = append(r.Content, agent.ThinkingBlock(""))
				}
			}
		case "content_block_delta":
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				ok = r.Delta(agent.ContentText, d.Text)
			case "thinking_delta":
				ok = r.Delta(agent.ContentThinking, d.Thinking)
			case "signature_delta":
				r.Signature(d.Signature)
			case "input_json_delta":
				if c := calls[ev.Index]; c != nil {
					c.args += d.PartialJSON
				}
			}
		case "content_block_stop":
			if c := calls[ev.Index]; c != nil {
				ok = r.ToolCall(c.id, c.name, c.args)
				delete(calls, ev.Index)
			}
		case "message_delta":
			u := ev.Usage
			usage.Output = u.OutputTokens
			if u.InputTokens > 0 {
				usage.Input = u.InputTokens
			}
			if u.CacheReadInputTokens > 0 {
				usage.CacheRead = u.CacheReadInputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				usage.CacheWrite = u.CacheCreationInputTokens
			}
			switch ev.Delta.StopReason {
			case anthropic.StopReasonMaxTokens:
				stop = agent.StopReasonLength
			case anthropic.StopReasonToolUse:
				stop = agent.StopReasonToolUse
			case anthropic.StopReasonModelContextWindowExceeded:
				r.Fail(&agent.APIError{Kind: agent.ErrorKindContextOverflow, Message: p.cfg.Name + ": the model's context window was exceeded"})
				return
			case anthropic.StopReasonRefusal:
				r.Fail(apierr.New(p.cfg.Name, 0, "refusal", "the model refused to answer", nil, key))
				return
			}
		case "message_stop":
			r.Done(stop, usage, m.Cost)
			return
		}
		if !ok {
			return
		}
	}
	err := stream.Err()
	if err == nil {
		err = reply.StreamEnded{}
	}
	r.Fail(p.failure(ctx, err, key))
}

// failure converts an SDK error into the stream's error.
func (p *Provider) failure(ctx context.Context, err error, key string) error {
	if ctx.Err() != nil {
		return apierr.Transport(ctx, p.cfg.Name, err, key)
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		status := ae.StatusCode
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		typ := string(ae.Type())
		if status < 400 {
			// An error event inside a 200 stream.
			status, h = statusOfType(typ), nil
		}
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(status)
		}
		return apierr.New(p.cfg.Name, status, typ, msg, h, key)
	}
	const prefix = "received error while streaming: "
	if s := err.Error(); strings.HasPrefix(s, prefix) {
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(s, prefix)), &e) == nil && e.Error.Type != "" {
			return apierr.New(p.cfg.Name, statusOfType(e.Error.Type), e.Error.Type, e.Error.Message, nil, key)
		}
	}
	return apierr.Transport(ctx, p.cfg.Name, err, key)
}

// statusOfType gives the HTTP status an error type stands for (so an
// overloaded or api_error event is retried like its 5xx answer), 0 when none.
func statusOfType(typ string) int {
	switch typ {
	case "overloaded_error":
		return 529
	case "api_error":
		return 500
	case "rate_limit_error":
		return 429
	case "authentication_error":
		return 401
	case "permission_error":
		return 403
	}
	return 0
}

// HasKey reports whether a request can be made as far as the key goes.
func (p *Provider) HasKey() bool {
	return !p.cfg.KeyRequired || (p.cfg.APIKey != nil && p.cfg.APIKey() != "")
}

// ValidateKey checks key with a cheap request (GET /v1/models): nil when the
// API accepts it, else the classified *agent.APIError (auth for a refused
// key), the key never in its text.
func (p *Provider) ValidateKey(ctx context.Context, key string) error {
	c := p.client(key)
	if _, err := c.Models.List(ctx, anthropic.ModelListParams{}); err != nil {
		return p.failure(ctx, err, key)
	}
	return nil
}
