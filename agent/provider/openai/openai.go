// Package openai is the model provider of OpenAI's APIs through the official
// SDK (github.com/openai/openai-go/v3): the Responses API for OpenAI itself
// ("openai-responses") and Chat Completions for OpenAI-compatible servers
// such as Ollama, vLLM, llama.cpp, LM Studio and OpenRouter
// ("openai-completions").
//
// It streams reasoning (Responses: the reasoning summary; Chat Completions:
// the non-standard reasoning_content or reasoning delta field those servers
// send), text and tool calls with their call ids, sends user images as data
// URLs, reports stop reasons and usage (input without the cached part, output,
// cache read) with the cost from the model's prices, and maps thinking levels
// to reasoning effort (see agent/provider/catalog). Failures are
// *agent.APIError values classified from the SDK's typed error and HTTP status
// first, its message second; the SDK's own retries are off (agent.Run
// retries). Reasoning items are not sent back to the API (requests are
// stateless, store=false), so earlier turns' reasoning is not replayed.
//
// What the room must not know: threads, JSON-RPC, session files, credentials
// storage (the key comes from Config.APIKey).
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/internal/apierr"
)

// The APIs this package speaks (models.json "api").
const (
	APIResponses   = "openai-responses"
	APICompletions = "openai-completions"
)

// Name is the provider name of OpenAI itself; DefaultBaseURL its API.
const (
	Name           = "openai"
	DefaultBaseURL = "https://api.openai.com/v1"
)

// Config configures one provider.
type Config struct {
	// Name is the provider name ("openai", or a custom provider's name).
	Name string
	// API is APIResponses or APICompletions.
	API string
	// BaseURL is the API root ("https://api.openai.com/v1",
	// "http://localhost:11434/v1"); DefaultBaseURL when empty.
	BaseURL string
	// Headers are sent with every request.
	Headers map[string]string
	// APIKey returns the key at request time ("" when there is none); nil
	// means none.
	APIKey func() string
	// KeyRequired makes a request without a key fail at once with an auth
	// error (OpenAI itself); a custom server may need no key.
	KeyRequired bool
	// Models are the models offered, in list order.
	Models []catalog.Model
	// HTTPClient is used for requests (nil: the SDK's default).
	HTTPClient *http.Client
}

// Provider streams replies of one OpenAI or OpenAI-compatible provider. It is
// safe for concurrent use.
type Provider struct {
	cfg Config
}

// New returns the provider cfg describes. An API other than APIResponses
// and APICompletions is an error.
func New(cfg Config) (*Provider, error) {
	switch cfg.API {
	case APIResponses, APICompletions:
	default:
		return nil, fmt.Errorf("openai: unknown api %q (want %q or %q)", cfg.API, APIResponses, APICompletions)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	return &Provider{cfg: cfg}, nil
}

// Name returns the provider name.
func (p *Provider) Name() string { return p.cfg.Name }

// Models lists the models as model/list shows them.
func (p *Provider) Models() []agent.Model { return catalog.AgentModels(p.cfg.Name, p.cfg.Models) }

// Model returns the catalogue entry of id.
func (p *Provider) Model(id string) (catalog.Model, bool) { return catalog.Find(p.cfg.Models, id) }

func (p *Provider) key() string {
	if p.cfg.APIKey == nil {
		return ""
	}
	return p.cfg.APIKey()
}

// client returns an SDK client for one request: base URL, key and headers
// set explicitly (so OPENAI_BASE_URL never redirects a custom provider), SDK
// retries off.
func (p *Provider) client(key string) openai.Client {
	opts := []option.RequestOption{
		option.WithBaseURL(p.cfg.BaseURL),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	}
	if p.cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(p.cfg.HTTPClient))
	}
	if key == "" {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	if p.cfg.Name != Name {
		// OPENAI_ORG_ID and OPENAI_PROJECT_ID belong to OpenAI, not to a
		// custom server.
		opts = append(opts, option.WithHeaderDel("OpenAI-Organization"), option.WithHeaderDel("OpenAI-Project"))
	}
	for k, v := range p.cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return openai.NewClient(opts...)
}

// Stream starts one request for req.Model (see the package doc). It fails at
// once for an unknown model and, when Config.KeyRequired, for a missing key
// (an auth *agent.APIError).
func (p *Provider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	m, ok := p.Model(req.Model)
	if !ok {
		return nil, fmt.Errorf("%s provider: unknown model %q", p.cfg.Name, req.Model)
	}
	key := p.key()
	if key == "" && p.cfg.KeyRequired {
		return nil, &agent.APIError{Kind: agent.ErrorKindAuth, Message: fmt.Sprintf("%s: no API key (set OPENAI_API_KEY or log in)", p.cfg.Name)}
	}
	c := p.client(key)
	if p.cfg.API == APIResponses {
		return p.streamResponses(ctx, c, m, req, key), nil
	}
	return p.streamCompletions(ctx, c, m, req, key), nil
}

// failure converts an SDK error into the stream's error.
func (p *Provider) failure(ctx context.Context, err error, key string) error {
	if ctx.Err() != nil {
		return apierr.Transport(ctx, p.cfg.Name, err, key)
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		code := ae.Code
		if code == "" {
			code = ae.Type
		}
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(ae.StatusCode)
		}
		return apierr.New(p.cfg.Name, ae.StatusCode, code, msg, h, key)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return p.eventError(se.Event.Data, key)
	}
	return apierr.Transport(ctx, p.cfg.Name, err, key)
}

// eventError reads an error event's {"error": {"message", "type", "code"}}.
func (p *Provider) eventError(data []byte, key string) error {
	var e struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Error.Message == "" {
		return apierr.New(p.cfg.Name, 0, "", "error while streaming: "+string(data), nil, key)
	}
	code := e.Error.Type
	var s string
	if json.Unmarshal(e.Error.Code, &s) == nil && s != "" {
		code = s
	}
	var n int
	status := 0
	if json.Unmarshal(e.Error.Code, &n) == nil && n >= 400 && n < 600 {
		status = n
	}
	return apierr.New(p.cfg.Name, status, code, e.Error.Message, nil, key)
}

// schema decodes a tool's JSON Schema into the map the SDK wants.
func schema(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	if len(m) == 0 {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// dataURL returns an image block as a data: URL.
func dataURL(b agent.ContentBlock) string { return "data:" + b.MimeType + ";base64," + b.Data }

// HasKey reports whether a request can be made as far as the key goes.
func (p *Provider) HasKey() bool { return !p.cfg.KeyRequired || p.key() != "" }

// ValidateKey checks key with a cheap request (GET /models): nil when the
// API accepts it, else the classified *agent.APIError (auth for a refused
// key), the key never in its text.
func (p *Provider) ValidateKey(ctx context.Context, key string) error {
	c := p.client(key)
	if _, err := c.Models.List(ctx); err != nil {
		return p.failure(ctx, err, key)
	}
	return nil
}
