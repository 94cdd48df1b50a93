package provider

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
)

// TestExtensionProviders: what thread loads register is listed from the
// first registration on and stays listed; a configuration-only provider
// is usable by every owner while one registers it, one with a stream only
// by its owners; an unregistered one is unavailable and answers
// NotLoadedError; bad registrations are refused by name.
func TestExtensionProviders(t *testing.T) {
	t.Parallel()
	r := NewRegistry(scripted.New(scripted.Demo()))
	a, b := new(int), new(int) // two thread loads
	config := json.RawMessage(`{"baseUrl":"http://127.0.0.1:1/v1","api":"openai-completions","apiKey":"KC_NO_SUCH_VARIABLE",` +
		`"oauth":{"name":"ignored"},"models":[{"id":"m1","name":"M1","reasoning":false,"input":["text"],"contextWindow":32000,"maxTokens":4096,` +
		`"cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0},"compat":{}}]}`)
	fn := ExtensionProvider{Name: "fn", Streamer: scripted.New(), Models: []agent.Model{{ID: "echo", Name: "Echo", ThinkingLevels: allFive}}}
	errs := r.SetExtensionProviders(a, []ExtensionProvider{
		{Name: "cfg", Config: config}, fn,
		{Name: "scripted", Config: config},
		{Name: "bad", Config: json.RawMessage(`{"baseUrl":"http://x","api":"gitlab-duo-api","models":[{"id":"x"}]}`)},
		{Name: "nourl", Config: json.RawMessage(`{"api":"openai-completions","models":[{"id":"x"}]}`)},
		{Name: "nomodels", Config: json.RawMessage(`{"api":"openai-completions","baseUrl":"http://x"}`)},
		{Name: "empty"},
	})
	for name, want := range map[string]string{
		"scripted": "one of knightcode's own providers", "bad": `not "gitlab-duo-api"`, "nourl": "baseUrl is missing",
		"nomodels": "it has no models", "empty": "neither models",
	} {
		if err := errs[name]; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error of %s: %v, want %q", name, err, want)
		}
	}
	if len(errs) != 5 {
		t.Errorf("errors %v", errs)
	}
	want := []agent.Model{demo,
		{Provider: "cfg", ID: "m1", Name: "M1", ThinkingLevels: offOnly, ContextWindow: 32000},
		{Provider: "fn", ID: "echo", Name: "Echo", ThinkingLevels: allFive}}
	if diff := cmp.Diff(r.List(), want); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}
	if info, ok := r.ModelInfo("cfg", "m1"); !ok || info.MaxTokens != 4096 || info.Cost.Output != 2 {
		t.Errorf("ModelInfo(cfg, m1) = %+v, %v", info, ok)
	}
	for _, c := range []struct {
		owner         any
		provider, id  string
		wantNotLoaded bool
		wantUnknown   bool
	}{
		{a, "cfg", "m1", false, false},
		{b, "cfg", "m1", false, false}, // configuration-only: every thread
		{nil, "cfg", "m1", false, false},
		{a, "fn", "echo", false, false},
		{b, "fn", "echo", true, false}, // a stream: its owner only
		{a, "fn", "nope", false, true},
		{a, "nobody", "x", false, true},
		{b, "scripted", "demo", false, false},
	} {
		p, m, err := r.LookupFor(c.owner, c.provider, c.id)
		var nl *NotLoadedError
		switch {
		case c.wantNotLoaded:
			if !errors.As(err, &nl) || nl.Error() != c.provider+" comes from an extension this thread does not load" {
				t.Errorf("LookupFor(%v, %s/%s) = %v, want NotLoadedError", c.owner, c.provider, c.id, err)
			}
		case c.wantUnknown:
			if !errors.Is(err, ErrUnknownModel) {
				t.Errorf("LookupFor(%v, %s/%s) = %v, want ErrUnknownModel", c.owner, c.provider, c.id, err)
			}
		case err != nil || p.Name() != c.provider || m.ID != c.id:
			t.Errorf("LookupFor(%v, %s/%s) = %v, %+v, %v", c.owner, c.provider, c.id, p, m, err)
		}
	}

	// b registers fn too; a unloads: fn is b's, cfg unavailable but
	// listed, and Lookup still finds it (thread/start's check).
	if errs := r.SetExtensionProviders(b, []ExtensionProvider{fn}); len(errs) != 0 {
		t.Fatal(errs)
	}
	if errs := r.SetExtensionProviders(a, nil); len(errs) != 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff(r.List(), want); diff != "" {
		t.Errorf("List after a unloaded (-got +want):\n%s", diff)
	}
	if r.Available("cfg") || !r.Available("fn") || !r.Available("scripted") {
		t.Errorf("Available: cfg %v, fn %v, scripted %v", r.Available("cfg"), r.Available("fn"), r.Available("scripted"))
	}
	if _, _, err := r.LookupFor(b, "cfg", "m1"); !errors.As(err, new(*NotLoadedError)) {
		t.Errorf("LookupFor(b, cfg) after a unloaded: %v", err)
	}
	if _, _, err := r.LookupFor(a, "fn", "echo"); !errors.As(err, new(*NotLoadedError)) {
		t.Errorf("LookupFor(a, fn): %v", err)
	}
	if _, _, err := r.LookupFor(b, "fn", "echo"); err != nil {
		t.Errorf("LookupFor(b, fn): %v", err)
	}
	if _, _, ok := r.Lookup("cfg", "m1"); !ok {
		t.Error("Lookup(cfg, m1) after a unloaded: not found")
	}
}
