package provider

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/anthropic"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/credentials"
	"github.com/knightcode/knightcode/agent/provider/openai"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// ProviderConfig is one real provider entry of models.json:
// {"baseUrl", "api", "apiKey"?, "headers"?, "models": [ModelConfig...]}.
// Unknown fields are refused (the entry is then ignored with a warning).
type ProviderConfig struct {
	BaseURL string            `json:"baseUrl"`
	API     string            `json:"api"`
	APIKey  string            `json:"apiKey"`
	Headers map[string]string `json:"headers"`
	Models  []json.RawMessage `json:"models"`
}

// ModelConfig is one model of a real provider entry: {"id", "name"?,
// "reasoning"?, "input"?: ["text","image"], "contextWindow"?, "maxTokens"?,
// "cost"?: {"input", "output", "cacheRead", "cacheWrite"}} (cost in US
// dollars per million tokens; input defaults to ["text"]). Unknown fields are
// refused (the model is then ignored with a warning).
type ModelConfig struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Reasoning     bool           `json:"reasoning"`
	Input         []string       `json:"input"`
	ContextWindow int            `json:"contextWindow"`
	MaxTokens     int            `json:"maxTokens"`
	Cost          *catalog.Price `json:"cost"`
}

// builtin describes a built-in real provider.
type builtin struct {
	api     string
	baseURL string
	models  func() []catalog.Model
}

var builtins = map[string]builtin{
	openai.Name:    {openai.APIResponses, openai.DefaultBaseURL, catalog.OpenAI},
	anthropic.Name: {anthropic.API, anthropic.DefaultBaseURL, catalog.Anthropic},
}

// strict decodes data into v refusing unknown fields and trailing data.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the object")
	}
	return nil
}

// loadReal builds the real providers: the built-ins, configured or not, and
// the custom providers of models.json's entries (raw, by name).
func loadReal(agentDir, path string, raw map[string]json.RawMessage, opts Options) ([]Provider, []protocol.Warning, *credentials.Store) {
	var warnings []protocol.Warning
	warn := func(format string, args ...any) {
		warnings = append(warnings, protocol.Warning{
			Message: fmt.Sprintf(format, args...), Source: protocol.WarningSourceSettings, Path: path,
		})
	}
	names := []string{openai.Name, anthropic.Name}
	for name := range raw {
		if name != scripted.Name && builtins[name].api == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)

	type entry struct {
		name string
		cfg  ProviderConfig
		mods []catalog.Model
	}
	var entries []entry
	env := map[string]string{} // custom providers' key variables
	for _, name := range names {
		b, isBuiltin := builtins[name]
		var cfg ProviderConfig
		data, configured := raw[name]
		where := fmt.Sprintf("%s: providers.%s", ModelsFile, name)
		if configured {
			if err := strict(data, &cfg); err != nil {
				if isBuiltin {
					warn("%s is not valid (the built-in settings are used): %v", where, err)
					cfg = ProviderConfig{}
				} else {
					warn("%s is not valid (the provider is ignored): %v", where, err)
					continue
				}
			}
		}
		switch {
		case isBuiltin && cfg.API != "" && cfg.API != b.api:
			warn("%s: the api of the built-in provider %q is %q, not %q; %q is used", where, name, b.api, cfg.API, b.api)
			cfg.API = b.api
		case isBuiltin:
			cfg.API = b.api
		case cfg.API != openai.APIResponses && cfg.API != openai.APICompletions && cfg.API != anthropic.API:
			warn("%s: \"api\" must be %q, %q or %q, not %q; the provider is ignored", where, openai.APIResponses, openai.APICompletions, anthropic.API, cfg.API)
			continue
		case cfg.BaseURL == "":
			warn("%s: \"baseUrl\" is missing; the provider is ignored", where)
			continue
		}
		if cfg.BaseURL == "" {
			cfg.BaseURL = b.baseURL
		}
		var mods []catalog.Model
		if isBuiltin {
			mods = b.models()
		}
		seen := map[string]bool{}
		for i, rm := range cfg.Models {
			mwhere := fmt.Sprintf("%s.models[%d]", where, i)
			var mc ModelConfig
			if err := strict(rm, &mc); err != nil {
				warn("%s is not valid (the model is ignored): %v", mwhere, err)
				continue
			}
			if m, problem := mc.model(); problem != "" {
				warn("%s: %s; the model is ignored", mwhere, problem)
				continue
			} else if seen[m.ID] {
				warn("%s: model %q is declared twice; this one is ignored", mwhere, m.ID)
				continue
			} else {
				seen[m.ID] = true
				if j := slices.IndexFunc(mods, func(b catalog.Model) bool { return b.ID == m.ID }); j >= 0 {
					mods[j] = m
				} else {
					mods = append(mods, m)
				}
			}
		}
		if len(mods) == 0 {
			warn("%s: no valid models; the provider is ignored", where)
			continue
		}
		if !isBuiltin && cfg.APIKey != "" {
			env[name] = cfg.APIKey
		}
		entries = append(entries, entry{name, cfg, mods})
	}

	store := credentials.New(agentDir, env)
	var out []Provider
	for _, e := range entries {
		_, isBuiltin := builtins[e.name]
		p, err := newReal(e.name, e.cfg, e.mods, keyOf(store, e.name, e.cfg.APIKey), isBuiltin, opts.HTTPClient)
		if err != nil {
			warn("%s: providers.%s: %v", ModelsFile, e.name, err)
			continue
		}
		out = append(out, p)
	}
	return out, warnings, store
}

// keyOf returns the API key function of the provider name: the key store
// has (the provider's environment variable, auth.json), else the
// environment variable apiKey names, else apiKey itself.
func keyOf(store *credentials.Store, name, apiKey string) func() string {
	return func() string {
		if store != nil {
			if k := store.Key(name); k != "" {
				return k
			}
		}
		if apiKey != "" {
			if v := os.Getenv(apiKey); v != "" {
				return v
			}
			return apiKey
		}
		return ""
	}
}

// newReal builds the client of a real provider of cfg.API (one of
// openai.APIResponses, openai.APICompletions, anthropic.API) serving mods.
// Errors: the client's (an invalid base URL).
func newReal(name string, cfg ProviderConfig, mods []catalog.Model, key func() string, keyRequired bool, client *http.Client) (Provider, error) {
	if cfg.API == anthropic.API {
		return anthropic.New(anthropic.Config{
			Name: name, BaseURL: cfg.BaseURL, Headers: cfg.Headers, APIKey: key,
			KeyRequired: keyRequired, Models: mods, HTTPClient: client,
		}), nil
	}
	return openai.New(openai.Config{
		Name: name, API: cfg.API, BaseURL: cfg.BaseURL, Headers: cfg.Headers, APIKey: key,
		KeyRequired: keyRequired, Models: mods, HTTPClient: client,
	})
}

// model checks a model entry and returns its catalogue model, or the
// problem.
func (mc ModelConfig) model() (catalog.Model, string) {
	switch {
	case mc.ID == "":
		return catalog.Model{}, `"id" is missing`
	case mc.ContextWindow < 0 || mc.MaxTokens < 0:
		return catalog.Model{}, fmt.Sprintf("model %q has a negative contextWindow or maxTokens", mc.ID)
	case mc.Cost != nil && (mc.Cost.Input < 0 || mc.Cost.Output < 0 || mc.Cost.CacheRead < 0 || mc.Cost.CacheWrite < 0):
		return catalog.Model{}, fmt.Sprintf("model %q has a negative cost", mc.ID)
	}
	input := mc.Input
	if input == nil {
		input = []string{"text"}
	}
	for _, in := range input {
		if in != "text" && in != "image" {
			return catalog.Model{}, fmt.Sprintf("model %q has an unknown input %q (want \"text\" or \"image\")", mc.ID, in)
		}
	}
	m := catalog.Model{ID: mc.ID, Name: mc.Name, Reasoning: mc.Reasoning, Input: input, ContextWindow: mc.ContextWindow, MaxTokens: mc.MaxTokens}
	if mc.Cost != nil {
		m.Cost = *mc.Cost
	}
	return m, ""
}

// Credentials returns the credentials store of the registry's agent
// directory (account/read, account/login/start, account/logout); nil for a
// registry built with NewRegistry.
func (r *Registry) Credentials() *credentials.Store { return r.creds }

// keyed is implemented by the providers that may need an API key.
type keyed interface {
	HasKey() bool
}

// HasKey reports whether a request to provider can be made as far as
// credentials go: false only for a provider that requires a key and has none
// (turn/start then answers authRequired). Unknown providers report true (the
// caller's model lookup fails first).
func (r *Registry) HasKey(provider string) bool {
	for _, p := range r.providers {
		if p.Name() == provider {
			if k, ok := p.(keyed); ok {
				return k.HasKey()
			}
			return true
		}
	}
	return true
}

// validator is implemented by providers with a cheap request that checks a
// key.
type validator interface {
	ValidateKey(ctx context.Context, key string) error
}

// ErrNoValidation is returned by ValidateKey for a provider that offers no
// cheap check; the key is then accepted as it is.
var ErrNoValidation = errors.New("provider: this provider cannot check a key")

// ErrUnknownProvider is returned for a provider name the registry lacks.
var ErrUnknownProvider = errors.New("provider: unknown provider")

// UnavailableError is a key check the provider could not answer: it
// could not be reached (agent.ErrorKindNetwork: connection refused, DNS,
// TLS, timeouts) or failed on its side (agent.ErrorKindProvider: 5xx,
// overloaded). Provider names it; Err is its error, whose words (never
// the key) the message carries. rpc maps it to externalFailure with
// data {reason: "providerUnavailable", provider}.
type UnavailableError struct {
	Provider string
	Err      error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the provider %s could not be reached to check the key: %v", e.Provider, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// KeyCheckTimeout bounds [Registry.ValidateKey]: a provider that accepts
// the connection and never answers is unavailable after it (issue 22 QA,
// L5: the answer came after the SDK's own 10 minutes).
const KeyCheckTimeout = 30 * time.Second

// errKeyCheckTimedOut is the cause of a key check stopped at its deadline.
var errKeyCheckTimedOut = errors.New("the key check ran past its deadline")

// ValidateKey checks key against provider with a cheap request (the models
// list), bounded by [KeyCheckTimeout]: nil when accepted, an
// *agent.APIError (auth for a refused key) when not, an [*UnavailableError]
// when the provider could not be reached, failed on its side or gave no
// answer in time (ctx still live), ErrNoValidation when the provider has
// no such check and ErrUnknownProvider for an unknown name. The key never
// appears in the error.
func (r *Registry) ValidateKey(ctx context.Context, provider, key string) error {
	for _, p := range r.providers {
		if p.Name() == provider {
			v, ok := p.(validator)
			if !ok {
				return ErrNoValidation
			}
			limit := cmp.Or(r.keyCheckTimeout, KeyCheckTimeout)
			checkCtx, cancel := context.WithTimeoutCause(ctx, limit, errKeyCheckTimedOut)
			defer cancel()
			err := v.ValidateKey(checkCtx, key)
			if err != nil && ctx.Err() == nil && errors.Is(context.Cause(checkCtx), errKeyCheckTimedOut) {
				return &UnavailableError{Provider: provider, Err: fmt.Errorf("no answer within %v", limit)}
			}
			if err != nil && ctx.Err() == nil {
				switch agent.ErrorKind(err) {
				case agent.ErrorKindNetwork, agent.ErrorKindProvider:
					return &UnavailableError{Provider: provider, Err: err}
				}
			}
			return err
		}
	}
	return fmt.Errorf("%w %q", ErrUnknownProvider, strings.TrimSpace(provider))
}

// cataloged is implemented by the real providers.
type cataloged interface {
	Model(id string) (catalog.Model, bool)
}

// ModelInfo returns the catalogue entry (limits, prices, thinking) of a
// real provider's model; ok is false for scripted models and unknown ones.
func (r *Registry) ModelInfo(provider, id string) (catalog.Model, bool) {
	for _, p := range r.providers {
		if p.Name() == provider {
			if c, ok := p.(cataloged); ok {
				return c.Model(id)
			}
		}
	}
	r.extMu.Lock()
	defer r.extMu.Unlock()
	if e, ok := r.extension(provider); ok {
		if c, ok := e.current().(cataloged); ok {
			return c.Model(id)
		}
	}
	return catalog.Model{}, false
}
