package ext_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// providerHost is a host that records the providers the Runner tells it
// of (ext.ProviderHost) and refuses those named "refused".
type providerHost struct {
	host
	pmu   sync.Mutex
	calls [][]string // provider names of each ProvidersChanged
}

func (h *providerHost) ProvidersChanged(ps []ext.Provider) map[string]error {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	names := []string{}
	errs := map[string]error{}
	for _, p := range ps {
		names = append(names, p.Name)
		if p.Name == "refused" {
			errs[p.Name] = errors.New(`provider "refused": api must be one of three`)
		}
	}
	h.calls = append(h.calls, names)
	return errs
}

func (h *providerHost) changes() [][]string {
	h.pmu.Lock()
	defer h.pmu.Unlock()
	return append([][]string(nil), h.calls...)
}

type nullStreamer struct{}

func (nullStreamer) Name() string { return "null" }
func (nullStreamer) Stream(context.Context, agent.Request) (iter.Seq[agent.StreamEvent], error) {
	return nil, errors.New("no stream")
}

// TestProviderHost: a ProviderHost hears the load's providers once its
// extensions are loaded (nothing a failed Load registered, a refused one
// as a load warning of its extension), each later registration and
// unregistration (a refusal then a subscriber warning), and nil at
// Dispose.
func TestProviderHost(t *testing.T) {
	t.Parallel()
	h := &providerHost{}
	var api *ext.API
	cfg := json.RawMessage(`{"baseUrl":"http://x","api":"openai-completions","models":[{"id":"m"}]}`)
	r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{
		{Path: "A", Load: func(a *ext.API) error {
			api = a
			if err := a.RegisterProvider(ext.Provider{Name: "cfg", Config: cfg}); err != nil {
				return err
			}
			if err := a.RegisterProvider(ext.Provider{Name: "both", Config: cfg, Streamer: nullStreamer{}}); err == nil {
				t.Error("a provider with a configuration and a Streamer was registered")
			}
			return a.RegisterProvider(ext.Provider{Name: "refused", Config: json.RawMessage(`{}`)})
		}},
		{Path: "B", Load: func(a *ext.API) error {
			_ = a.RegisterProvider(ext.Provider{Name: "lost", Streamer: nullStreamer{}})
			return errors.New("fails")
		}},
	}})
	warnings := r.Load()
	if len(warnings) != 2 || warnings[1].Path != "A" || !strings.Contains(warnings[1].Message, `extension A: provider "refused": api must be`) {
		t.Errorf("load warnings %+v", warnings)
	}
	if err := api.RegisterProvider(ext.Provider{Name: "fn", Streamer: nullStreamer{}, Models: []agent.Model{{ID: "e"}}}); err != nil {
		t.Fatal(err)
	}
	if p := r.Providers(); len(p) != 3 || p[2].Models[0].Provider != "fn" {
		t.Errorf("providers %+v", p)
	}
	if !api.UnregisterProvider("cfg") || api.UnregisterProvider("cfg") {
		t.Error("UnregisterProvider(cfg) twice: want true, then false")
	}
	r.Dispose()
	want := [][]string{{"cfg", "refused"}, {"cfg", "refused", "fn"}, {"refused", "fn"}, {}}
	if diff := cmp.Diff(h.changes(), want); diff != "" {
		t.Errorf("ProvidersChanged calls (-got +want):\n%s", diff)
	}
	if w := h.warned(); len(w) != 0 { // the refusal was a load warning, once
		t.Errorf("subscriber warnings %q", w)
	}
	if err := api.RegisterProvider(ext.Provider{Name: "refused", Config: json.RawMessage(`{"again":true}`)}); err != ext.ErrDisposed {
		t.Errorf("a registration after Dispose: %v", err)
	}
}

// TestProviderHostLateRefusal: a provider registered after the load that
// the host refuses is a subscriber warning, once.
func TestProviderHostLateRefusal(t *testing.T) {
	t.Parallel()
	h := &providerHost{}
	var api *ext.API
	r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{{Path: "A", Load: func(a *ext.API) error { api = a; return nil }}}})
	if w := r.Load(); len(w) != 0 {
		t.Fatal(w)
	}
	defer r.Dispose()
	for _, name := range []string{"refused", "other"} {
		if err := api.RegisterProvider(ext.Provider{Name: name, Streamer: nullStreamer{}}); err != nil {
			t.Fatal(err)
		}
	}
	if w := h.warned(); len(w) != 1 || !strings.Contains(w[0], `A: extension A: provider "refused"`) {
		t.Errorf("subscriber warnings %q", w)
	}
}
