package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/anthropic"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/agent/provider/openai"
)

// Providers that threads' extensions register (pi's registerProvider;
// EXTENSIBILITY.md §7 "Extension providers in model/list"). Each thread
// load is an owner: SetExtensionProviders replaces what one owner
// registers. A provider is listed (List) from its first registration on
// and stays listed; Available reports whether a loaded owner still
// registers it. A configuration-only provider (a baseUrl, an api, models,
// an API key; no functions) runs through the real clients of this
// package and is usable by every thread while an owner registers it; one
// with functions (its own stream) is usable only by its owners
// (LookupFor).

// ExtensionProvider is one provider an extension registered: Name, and
// either Config, pi's ProviderConfig as JSON without its functions
// ({"baseUrl", "api": "openai-completions" | "openai-responses" |
// "anthropic-messages", "apiKey"?: an environment variable's name or the
// key, "headers"?, "models": [{"id", "name"?, "reasoning"?, "input"?,
// "contextWindow"?, "maxTokens"?, "cost"?, ...}]}: the configuration-only
// form), or Streamer and Models (the form with a custom stream).
type ExtensionProvider struct {
	Name     string
	Config   json.RawMessage
	Streamer agent.Streamer
	Models   []agent.Model
}

// NotLoadedError is the error of LookupFor for a provider an extension
// registered that the asking thread load cannot use: it has functions and
// that load's extensions do not register it, or no loaded thread
// registers it any more. threads answers invalidParams {field: "model",
// reason: "providerNotLoaded"}.
type NotLoadedError struct {
	Provider string
}

func (e *NotLoadedError) Error() string {
	return fmt.Sprintf("%s comes from an extension this thread does not load", e.Provider)
}

// ErrUnknownModel is the error of LookupFor for a provider or model that
// model/list does not list.
var ErrUnknownModel = errors.New("provider: unknown model")

// extProvider is one provider name extensions registered.
type extProvider struct {
	name string
	regs []extReg // the owners registering it, in registration order
	last Provider // the latest registration's, kept once none remain
}

// extReg is one owner's registration.
type extReg struct {
	owner  any
	p      Provider
	shared bool // configuration-only: every thread may use it
}

// funcProvider is a provider with a custom stream.
type funcProvider struct {
	name   string
	s      agent.Streamer
	models []agent.Model
}

func (f *funcProvider) Name() string          { return f.name }
func (f *funcProvider) Models() []agent.Model { return slices.Clone(f.models) }
func (f *funcProvider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	return f.s.Stream(ctx, req)
}

// SetExtensionProviders makes ps what owner (a thread load) registers,
// replacing what it registered before; nil when it unloads. It returns
// the problem of each provider left out, by name: a name of the
// registry's own providers, a configuration that is not valid
// (FromConfig's errors), a provider with neither configuration nor
// stream.
func (r *Registry) SetExtensionProviders(owner any, ps []ExtensionProvider) map[string]error {
	type built struct {
		name   string
		p      Provider
		shared bool
	}
	errs := map[string]error{}
	var add []built
	for _, ep := range ps {
		if slices.ContainsFunc(r.providers, func(p Provider) bool { return p.Name() == ep.Name }) {
			errs[ep.Name] = fmt.Errorf("provider %q has the name of one of knightcode's own providers; it is ignored", ep.Name)
			continue
		}
		switch {
		case ep.Streamer != nil:
			models := slices.Clone(ep.Models)
			for i := range models {
				models[i].Provider = ep.Name
				if len(models[i].ThinkingLevels) == 0 {
					models[i].ThinkingLevels = agent.ThinkingLevels(false)
				}
			}
			add = append(add, built{ep.Name, &funcProvider{ep.Name, ep.Streamer, models}, false})
		case len(ep.Config) > 0:
			p, err := r.FromConfig(ep.Name, ep.Config)
			if err != nil {
				errs[ep.Name] = err
				continue
			}
			add = append(add, built{ep.Name, p, true})
		default:
			errs[ep.Name] = fmt.Errorf("provider %q has neither models with a baseUrl and an api nor a stream function", ep.Name)
		}
	}
	r.extMu.Lock()
	defer r.extMu.Unlock()
	for _, e := range r.extensions {
		e.regs = slices.DeleteFunc(e.regs, func(g extReg) bool { return g.owner == owner })
	}
	for _, b := range add {
		i := slices.IndexFunc(r.extensions, func(e *extProvider) bool { return e.name == b.name })
		if i < 0 {
			r.extensions = append(r.extensions, &extProvider{name: b.name})
			slices.SortFunc(r.extensions, func(a, b *extProvider) int { return strings.Compare(a.name, b.name) })
			i = slices.IndexFunc(r.extensions, func(e *extProvider) bool { return e.name == b.name })
		}
		e := r.extensions[i]
		e.regs = append(e.regs, extReg{owner, b.p, b.shared})
		e.last = b.p
	}
	return errs
}

// extension returns the provider extensions registered under name and
// whether one did.
func (r *Registry) extension(name string) (*extProvider, bool) {
	for _, e := range r.extensions {
		if e.name == name {
			return e, true
		}
	}
	return nil, false
}

// current is the provider e lists: the latest registration's.
func (e *extProvider) current() Provider {
	if n := len(e.regs); n > 0 {
		return e.regs[n-1].p
	}
	return e.last
}

// Available reports whether provider can be used by some thread: one of
// the registry's own providers, or one a loaded thread's extension
// registers (model/list's available: false otherwise).
func (r *Registry) Available(provider string) bool {
	r.extMu.Lock()
	defer r.extMu.Unlock()
	if e, ok := r.extension(provider); ok {
		return len(e.regs) > 0
	}
	return true
}

// LookupFor is Lookup for the thread load owner: a provider extensions
// registered is found when owner registers it, or when it is
// configuration-only and another loaded thread registers it. Errors:
// ErrUnknownModel; *NotLoadedError for a listed provider owner cannot
// use.
func (r *Registry) LookupFor(owner any, provider, id string) (Provider, agent.Model, error) {
	if p, m, ok := r.lookupOwn(provider, id); ok {
		return p, m, nil
	}
	r.extMu.Lock()
	defer r.extMu.Unlock()
	e, ok := r.extension(provider)
	if !ok {
		return nil, agent.Model{}, ErrUnknownModel
	}
	var found Provider
	for _, g := range slices.Backward(e.regs) {
		if g.owner == owner && owner != nil {
			found = g.p
			break
		}
		if g.shared && found == nil {
			found = g.p
		}
	}
	cur := e.current()
	if found != nil {
		cur = found
	}
	i := slices.IndexFunc(cur.Models(), func(m agent.Model) bool { return m.ID == id })
	if i < 0 {
		return nil, agent.Model{}, ErrUnknownModel
	}
	if found == nil {
		return nil, agent.Model{}, &NotLoadedError{Provider: provider}
	}
	return found, found.Models()[i], nil
}

// FromConfig builds the configuration-only provider name of pi's
// ProviderConfig config (see ExtensionProvider; members knightcode does
// not use are ignored), through this package's real clients with the
// registry's HTTP client and credentials: the key is the provider's
// environment variable or auth.json's, else the environment variable
// apiKey names, else apiKey itself. Errors: JSON that is not an object;
// an api other than the three; no baseUrl; no valid models (each model's
// problem is named).
func (r *Registry) FromConfig(name string, config json.RawMessage) (Provider, error) {
	var cfg struct {
		BaseURL string            `json:"baseUrl"`
		API     string            `json:"api"`
		APIKey  string            `json:"apiKey"`
		Headers map[string]string `json:"headers"`
		Models  []ModelConfig     `json:"models"`
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("provider %q: the configuration is not valid: %v", name, err)
	}
	switch {
	case cfg.API != openai.APIResponses && cfg.API != openai.APICompletions && cfg.API != anthropic.API:
		return nil, fmt.Errorf("provider %q: api must be %q, %q or %q (or give streamSimple), not %q", name, openai.APICompletions, openai.APIResponses, anthropic.API, cfg.API)
	case cfg.BaseURL == "":
		return nil, fmt.Errorf("provider %q: baseUrl is missing", name)
	case len(cfg.Models) == 0:
		return nil, fmt.Errorf("provider %q: it has no models", name)
	}
	mods := make([]catalog.Model, 0, len(cfg.Models))
	for _, mc := range cfg.Models {
		m, problem := mc.model()
		if problem != "" {
			return nil, fmt.Errorf("provider %q: %s", name, problem)
		}
		mods = append(mods, m)
	}
	pc := ProviderConfig{BaseURL: cfg.BaseURL, API: cfg.API, APIKey: cfg.APIKey, Headers: cfg.Headers}
	p, err := newReal(name, pc, mods, keyOf(r.creds, name, cfg.APIKey), false, r.httpClient)
	if err != nil {
		return nil, fmt.Errorf("provider %q: %v", name, err)
	}
	return p, nil
}
