package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/credentials"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/internal/safefile"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Provider is a model provider: a Streamer (its Name and Stream) that also lists
// its models. Implementations are safe for concurrent use.
type Provider interface {
	agent.Streamer
	Models() []agent.Model
}

// ModelsFile is the name of the models configuration file in the agent
// directory.
const ModelsFile = "models.json"

// Registry holds the providers of one process and answers model/list and model
// lookups. Providers keep state across turns (a scripted model's position in
// its script), so build one Registry per process and keep it. Its own
// providers are fixed at construction; the providers threads' extensions
// register change while it is used (SetExtensionProviders). It is safe
// for concurrent use.
type Registry struct {
	providers []Provider // sorted by Name
	creds     *credentials.Store
	// keyCheckTimeout bounds ValidateKey; 0 means KeyCheckTimeout (tests
	// set it shorter).
	keyCheckTimeout time.Duration
	// httpClient is Options.HTTPClient, for extensions' providers.
	httpClient *http.Client

	// extensions are the providers threads' extensions registered
	// (extension.go), guarded by extMu.
	extMu      sync.Mutex
	extensions []*extProvider
}

// NewRegistry returns a registry of providers; a later provider with the name
// of an earlier one replaces it.
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{}
	for _, p := range providers {
		if i := slices.IndexFunc(r.providers, func(q Provider) bool { return q.Name() == p.Name() }); i >= 0 {
			r.providers[i] = p
			continue
		}
		r.providers = append(r.providers, p)
	}
	slices.SortStableFunc(r.providers, func(a, b Provider) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return r
}

// List returns every model of every provider: the registry's own
// providers in name order, each provider's models in its own order
// (built-in models first), then the providers threads' extensions
// registered, in name order (available or not: Available).
func (r *Registry) List() []agent.Model {
	var out []agent.Model
	for _, p := range r.providers {
		out = append(out, p.Models()...)
	}
	r.extMu.Lock()
	defer r.extMu.Unlock()
	for _, e := range r.extensions {
		out = append(out, e.current().Models()...)
	}
	return out
}

// Names returns the names of the registry's own providers (not those
// extensions registered), sorted.
func (r *Registry) Names() []string {
	names := make([]string, len(r.providers))
	for i, p := range r.providers {
		names[i] = p.Name()
	}
	return names
}

// Lookup returns the provider named provider and its model id; ok is false when
// either is unknown. A provider extensions registered is found while it is
// listed, even when the caller cannot use it (LookupFor says).
func (r *Registry) Lookup(provider, id string) (p Provider, m agent.Model, ok bool) {
	if p, m, ok := r.lookupOwn(provider, id); ok {
		return p, m, true
	}
	r.extMu.Lock()
	defer r.extMu.Unlock()
	if e, found := r.extension(provider); found {
		p := e.current()
		for _, m := range p.Models() {
			if m.ID == id {
				return p, m, true
			}
		}
	}
	return nil, agent.Model{}, false
}

// lookupOwn is Lookup among the registry's own providers.
func (r *Registry) lookupOwn(provider, id string) (p Provider, m agent.Model, ok bool) {
	for _, p := range r.providers {
		if p.Name() != provider {
			continue
		}
		for _, m := range p.Models() {
			if m.ID == id {
				return p, m, true
			}
		}
	}
	return nil, agent.Model{}, false
}

// scriptedConfig is the scripted part of models.json:
// {"providers": {"scripted": {"models": [{"id", "script", "name"?, "reasoning"?, "contextWindow"?}]}}}.
type scriptedConfig struct {
	Providers struct {
		Scripted struct {
			Models []modelConfig `json:"models"`
		} `json:"scripted"`
	} `json:"providers"`
}

type modelConfig struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Script        string `json:"script"`
	Reasoning     bool   `json:"reasoning"`
	ContextWindow int    `json:"contextWindow"`
}

// Load builds the registry of the agent directory agentDir (session.AgentDir):
// the built-in scripted/demo model, the built-in OpenAI and Anthropic
// catalogues (catalog.OpenAI, catalog.Anthropic), and what
// <agentDir>/models.json declares:
//
//	{"providers": {
//	  "scripted": {"models": [{"id", "script", "name"?, "reasoning"?, "contextWindow"?}]},
//	  "<name>": {"baseUrl", "api": "openai-responses" | "openai-completions" | "anthropic-messages",
//	             "apiKey"?, "headers"?: {...},
//	             "models": [{"id", "name"?, "reasoning"?, "input"?: ["text","image"],
//	                         "contextWindow"?, "maxTokens"?,
//	                         "cost"?: {"input", "output", "cacheRead", "cacheWrite"}}]}}}
//
// (see ProviderConfig and ModelConfig). A scripted script path should be
// absolute (a relative one is taken relative to agentDir); scripts are read
// and checked now. A configured scripted model with the id "demo" replaces the
// built-in one. An entry named "openai" or "anthropic" configures the built-in
// provider: its baseUrl and headers override the built-in ones and its models
// are added to the catalogue (replacing a built-in model of the same id).
// Credentials come from the registry's credentials.Store (Credentials):
// OPENAI_API_KEY / ANTHROPIC_API_KEY, or for another provider the
// environment variable its apiKey names, win over <agentDir>/auth.json; a
// custom provider's apiKey that names no set variable is the key itself.
//
// Nothing here fails: a missing models.json is no configuration; an
// unreadable or malformed file (with line and column), a malformed provider
// entry, a model without id or script, a duplicate id, and an unreadable or
// invalid script each give a warning and the offending part is left out.
// Warnings are in the wire shape (spec "Threads and turns"): source
// "settings", Path the file at fault, Line and Column 1-based (Column counts
// characters) and zero when unknown.
func Load(agentDir string) (*Registry, []protocol.Warning) {
	return LoadWith(agentDir, Options{})
}

// Options tunes LoadWith.
type Options struct {
	// HTTPClient is used by the real providers (nil: the SDKs' default).
	HTTPClient *http.Client
}

// LoadWith is Load with options.
func LoadWith(agentDir string, opts Options) (*Registry, []protocol.Warning) {
	path := filepath.Join(agentDir, ModelsFile)
	models := []scripted.Model{scripted.Demo()}
	var warnings []protocol.Warning
	warn := func(path string, line, col int, format string, args ...any) {
		warnings = append(warnings, protocol.Warning{
			Message: fmt.Sprintf(format, args...), Source: protocol.WarningSourceSettings, Path: path, Line: line, Column: col,
		})
	}

	data, err := safefile.ReadFile(path, safefile.ConfigLimit)
	var top struct {
		Providers map[string]json.RawMessage `json:"providers"`
	}
	var scfg scriptedConfig
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		warn(path, 0, 0, "%s: cannot read: %v", ModelsFile, err)
	default:
		if err := json.Unmarshal(data, &top); err != nil {
			line, col := position(data, err)
			warn(path, line, col, "%s is not valid (its models are ignored): %v", ModelsFile, err)
			top.Providers = nil
		} else if _, ok := top.Providers[scripted.Name]; ok {
			if err := json.Unmarshal(data, &scfg); err != nil {
				line, col := position(data, err)
				warn(path, line, col, "%s: providers.%s is not valid (its models are ignored): %v", ModelsFile, scripted.Name, err)
				scfg = scriptedConfig{}
			}
		}
	}

	seen := map[string]bool{}
	for i, mc := range scfg.Providers.Scripted.Models {
		where := fmt.Sprintf("%s: providers.%s.models[%d]", ModelsFile, scripted.Name, i)
		switch {
		case mc.ID == "":
			warn(path, 0, 0, "%s: \"id\" is missing; the model is ignored", where)
			continue
		case seen[mc.ID]:
			warn(path, 0, 0, "%s: model %q is declared twice; this one is ignored", where, mc.ID)
			continue
		case mc.Script == "":
			warn(path, 0, 0, "%s: model %q has no \"script\"; it is ignored", where, mc.ID)
			continue
		}
		seen[mc.ID] = true
		script := mc.Script
		if !filepath.IsAbs(script) {
			script = filepath.Join(agentDir, script)
		}
		data, err := safefile.ReadFile(script, safefile.ConfigLimit)
		if err != nil {
			warn(script, 0, 0, "%s: cannot read the script of model %q: %v", where, mc.ID, err)
			continue
		}
		s, err := scripted.ParseScript(data)
		if err != nil {
			line, col := position(data, err)
			warn(script, line, col, "%s: the script of model %q is invalid; the model is ignored: %v", where, mc.ID, err)
			continue
		}
		if mc.ContextWindow < 0 {
			warn(path, 0, 0, "%s: model %q has a negative contextWindow; the default is used", where, mc.ID)
			mc.ContextWindow = 0
		}
		models = append(models, scripted.Model{
			ID: mc.ID, Name: mc.Name, Reasoning: mc.Reasoning, ContextWindow: mc.ContextWindow, Script: s,
		})
	}

	real, realWarnings, creds := loadReal(agentDir, path, top.Providers, opts)
	warnings = append(warnings, realWarnings...)
	r := NewRegistry(append([]Provider{scripted.New(models...)}, real...)...)
	r.creds, r.httpClient = creds, opts.HTTPClient
	return r, warnings
}

// position returns the 1-based line and column (in characters) of a JSON syntax
// or type error in data, or zeros when err carries no offset.
func position(data []byte, err error) (line, col int) {
	var off int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	default:
		return 0, 0
	}
	// The error occurred after reading off bytes: point at the last byte read.
	off = min(max(off-1, 0), int64(len(data)))
	prefix := data[:off]
	line = bytes.Count(prefix, []byte("\n")) + 1
	col = utf8.RuneCount(prefix[bytes.LastIndexByte(prefix, '\n')+1:]) + 1
	return line, col
}
