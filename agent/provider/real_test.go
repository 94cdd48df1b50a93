package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/credentials"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// clearKeys unsets the built-in providers' key variables for the test.
func clearKeys(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
}

func TestLoadListsTheCatalogues(t *testing.T) {
	clearKeys(t)
	r, warnings := Load(t.TempDir())
	if warnings != nil {
		t.Errorf("warnings = %+v", warnings)
	}
	byID := map[string]agent.Model{}
	for _, m := range r.List() {
		byID[m.Provider+"/"+m.ID] = m
	}
	for _, tc := range []struct {
		id     string
		levels []agent.ThinkingLevel
		window int
	}{
		{"openai/gpt-5.2", append(allFive, "xhigh"), 400_000},
		{"openai/gpt-5-mini", allFive, 400_000},
		{"openai/gpt-4.1", offOnly, 1_047_576},
		{"anthropic/claude-sonnet-4-5", allFive, 200_000},
		{"scripted/demo", allFive, 200_000},
	} {
		m, ok := byID[tc.id]
		if !ok {
			t.Errorf("model/list lacks %s", tc.id)
			continue
		}
		if diff := cmp.Diff(tc.levels, m.ThinkingLevels); diff != "" || m.ContextWindow != tc.window {
			t.Errorf("%s: levels (-want +got):\n%s contextWindow %d, want %d", tc.id, diff, m.ContextWindow, tc.window)
		}
	}
	if r.HasKey("openai") || r.HasKey("anthropic") {
		t.Error("HasKey is true without any key")
	}
	if !r.HasKey("scripted") {
		t.Error("scripted needs no key")
	}
	if info, ok := r.ModelInfo("anthropic", "claude-sonnet-4-5"); !ok || info.Cost.Output != 15 {
		t.Errorf("ModelInfo = %+v, %v", info, ok)
	}
}

// recorder is an OpenAI-compatible server answering one Chat Completions
// stream and recording the requests.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (rec *recorder) server(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Clone(context.Background()))
		rec.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func chatStream(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range []string{
		`{"id":"1","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`,
		`{"id":"1","object":"chat.completion.chunk","created":1,"model":"llama","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100}}`,
		`[DONE]`,
	} {
		fmt.Fprintf(w, "data: %s\n\n", d)
	}
}

func run(t *testing.T, r *Registry, provider, model string) (agent.Message, error) {
	t.Helper()
	p, _, ok := r.Lookup(provider, model)
	if !ok {
		t.Fatalf("Lookup(%s, %s) failed; list %v", provider, model, r.List())
	}
	out, err := agent.Run(context.Background(), agent.Options{Provider: p, Model: model}, nil, []agent.Message{agent.UserText("hi", 1)})
	if len(out) == 0 {
		t.Fatalf("Run: %v", err)
	}
	return out[len(out)-1], err
}

func TestCustomCompatibleProvider(t *testing.T) {
	clearKeys(t)
	t.Setenv("KNIGHTCODE_TEST_LOCAL_KEY", "sk-from-env")
	rec := &recorder{}
	hs := rec.server(t, chatStream)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "models.json"), `{"providers": {
		"local": {"baseUrl": "`+hs.URL+`/v1", "api": "openai-completions", "apiKey": "KNIGHTCODE_TEST_LOCAL_KEY",
			"headers": {"X-Client": "knightcode"},
			"models": [{"id": "llama", "name": "Llama", "contextWindow": 8192, "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]},
		"literal": {"baseUrl": "`+hs.URL+`", "api": "openai-completions", "apiKey": "plain-key", "models": [{"id": "llama"}]},
		"keyless": {"baseUrl": "`+hs.URL+`", "api": "openai-completions", "models": [{"id": "llama", "reasoning": true}]}
	}}`)
	r, warnings := Load(dir)
	if warnings != nil {
		t.Errorf("warnings = %+v", warnings)
	}
	var local agent.Model
	for _, m := range r.List() {
		if m.Provider == "local" {
			local = m
		}
	}
	if diff := cmp.Diff(agent.Model{Provider: "local", ID: "llama", Name: "Llama", ThinkingLevels: offOnly, ContextWindow: 8192}, local); diff != "" {
		t.Errorf("local model (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ provider, auth string }{
		{"local", "Bearer sk-from-env"}, {"literal", "Bearer plain-key"}, {"keyless", ""},
	} {
		reply, err := run(t, r, tc.provider, "llama")
		if err != nil {
			t.Fatalf("%s: %v", tc.provider, err)
		}
		if reply.Text() != "Hello" || reply.Usage.Input != 1000 || reply.Usage.Output != 100 {
			t.Errorf("%s: reply %q usage %+v", tc.provider, reply.Text(), reply.Usage)
		}
		req := rec.reqs[len(rec.reqs)-1]
		if got := req.Header.Get("Authorization"); got != tc.auth {
			t.Errorf("%s: Authorization = %q, want %q", tc.provider, got, tc.auth)
		}
		if tc.provider == "local" {
			if reply.Usage.Cost.Total != (1000*1+100*2)/1e6 {
				t.Errorf("cost = %v", reply.Usage.Cost.Total)
			}
			if req.URL.Path != "/v1/chat/completions" || req.Header.Get("X-Client") != "knightcode" {
				t.Errorf("request %s, X-Client %q", req.URL.Path, req.Header.Get("X-Client"))
			}
		}
	}
	// A key logged in for the custom provider loses to its set variable.
	if err := r.Credentials().Set("local", "sk-from-file"); err != nil {
		t.Fatal(err)
	}
	if k, src, _ := r.Credentials().Get("local"); k != "sk-from-env" || src != credentials.SourceEnv {
		t.Errorf("Get(local) = %q %q, want the variable's key", k, src)
	}
}

func TestBuiltinBaseURLOverrideAndLogin(t *testing.T) {
	clearKeys(t)
	rec := &recorder{}
	hs := rec.server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"Hi"}`,
			`{"type":"response.completed","sequence_number":2,"response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":1000000,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1000000}}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	})
	dir := t.TempDir()
	write(t, filepath.Join(dir, "models.json"), `{"providers": {"openai": {"baseUrl": "`+hs.URL+`"}}}`)
	r, warnings := Load(dir)
	if warnings != nil {
		t.Errorf("warnings = %+v", warnings)
	}
	if r.HasKey("openai") {
		t.Fatal("HasKey before login")
	}
	_, err := run(t, r, "openai", "gpt-5-mini")
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.Kind() != agent.ErrorKindAuth || len(rec.reqs) != 0 {
		t.Fatalf("without a key: %v (%d requests), want an auth failure and no request", err, len(rec.reqs))
	}
	if err := r.Credentials().Set("openai", "sk-logged-in"); err != nil {
		t.Fatal(err)
	}
	if !r.HasKey("openai") {
		t.Error("HasKey after login is false")
	}
	reply, err := run(t, r, "openai", "gpt-5-mini")
	if err != nil {
		t.Fatal(err)
	}
	// One million uncached input tokens of gpt-5-mini cost $0.25.
	if reply.Text() != "Hi" || reply.Usage.Cost.Total != 0.25 {
		t.Errorf("reply %q cost %v", reply.Text(), reply.Usage.Cost.Total)
	}
	if got := rec.reqs[0].Header.Get("Authorization"); got != "Bearer sk-logged-in" || rec.reqs[0].URL.Path != "/responses" {
		t.Errorf("Authorization %q path %s", got, rec.reqs[0].URL.Path)
	}
	st, err := os.Stat(filepath.Join(dir, credentials.File))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("auth.json: %v %v, want mode 0600", st, err)
	}
}

func TestValidateKey(t *testing.T) {
	clearKeys(t)
	const secret = "sk-bad-SECRET-42"
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") == "Bearer "+secret || r.Header.Get("X-Api-Key") == secret {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+secret+`","type":"authentication_error","code":"invalid_api_key"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[],"has_more":false}`)
	}))
	defer hs.Close()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "models.json"), `{"providers": {"openai": {"baseUrl": "`+hs.URL+`"}, "anthropic": {"baseUrl": "`+hs.URL+`"}}}`)
	r, _ := Load(dir)
	for _, p := range []string{"openai", "anthropic"} {
		if err := r.ValidateKey(context.Background(), p, "sk-good"); err != nil {
			t.Errorf("%s: good key: %v", p, err)
		}
		err := r.ValidateKey(context.Background(), p, secret)
		if agent.ErrorKind(err) != agent.ErrorKindAuth || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: bad key: %v, want an auth error without the key", p, err)
		}
	}
	if err := r.ValidateKey(context.Background(), "scripted", "x"); !errors.Is(err, ErrNoValidation) {
		t.Errorf("scripted: %v", err)
	}
	if err := r.ValidateKey(context.Background(), "nope", "x"); !errors.Is(err, ErrUnknownProvider) {
		t.Errorf("unknown: %v", err)
	}
}

// TestValidateKeyUnavailable: a provider that refuses connections or
// answers 5xx is an *UnavailableError naming it, with the error's words;
// the key is in neither.
func TestValidateKeyUnavailable(t *testing.T) {
	clearKeys(t)
	const secret = "sk-SECRET-unavailable-9"
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"upstream overloaded","type":"server_error"}}`)
	}))
	defer down.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its address now refuses connections
	for _, tt := range []struct {
		url, words string
	}{
		{gone.URL, "connection refused"},
		{down.URL, "overloaded"},
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "models.json"), `{"providers": {"openai": {"baseUrl": "`+tt.url+`"}}}`)
		r, _ := Load(dir)
		err := r.ValidateKey(context.Background(), "openai", secret)
		ue, ok := errors.AsType[*UnavailableError](err)
		if !ok || ue.Provider != "openai" || !strings.Contains(err.Error(), tt.words) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v (%T), want an UnavailableError with %q and without the key", tt.url, err, err, tt.words)
		}
	}
}

// TestValidateKeyNoAnswer: a provider that accepts the connection and
// never answers is an *UnavailableError naming it once the key check's
// deadline passes (issue 22 QA, L5: after the SDK's 10 minutes).
func TestValidateKeyNoAnswer(t *testing.T) {
	clearKeys(t)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer silent.Close()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "models.json"), `{"providers": {"openai": {"baseUrl": "`+silent.URL+`"}, "anthropic": {"baseUrl": "`+silent.URL+`"}}}`)
	r, _ := Load(dir)
	r.keyCheckTimeout = 300 * time.Millisecond
	for _, p := range []string{"openai", "anthropic"} {
		start := time.Now()
		err := r.ValidateKey(context.Background(), p, "sk-x")
		ue, ok := errors.AsType[*UnavailableError](err)
		if !ok || ue.Provider != p || !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("%s: %v (%T), want an UnavailableError saying no answer came", p, err, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: the check took %v", p, took)
		}
	}
}

func TestLoadMalformedProviderEntries(t *testing.T) {
	clearKeys(t)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "models.json"), `{"providers": {
		"extra": {"baseUrl": "http://127.0.0.1:1", "api": "openai-completions", "models": [{"id": "m"}], "colour": "red"},
		"noapi": {"baseUrl": "http://127.0.0.1:1", "models": [{"id": "m"}]},
		"nourl": {"api": "anthropic-messages", "models": [{"id": "m"}]},
		"good": {"baseUrl": "http://127.0.0.1:1", "api": "anthropic-messages", "models": [
			{"id": "a"}, {"name": "no id"}, {"id": "a"}, {"id": "b", "contextWindow": -1}, {"id": "c", "input": ["audio"]},
			{"id": "d", "cost": {"input": "cheap"}}, {"id": "e", "unknown": 1}]},
		"openai": {"api": "anthropic-messages", "models": [{"id": "gpt-local"}]}
	}}`)
	r, warnings := Load(dir)
	p := filepath.Join(dir, "models.json")
	var got []string
	for _, w := range warnings {
		if w.Source != protocol.WarningSourceSettings || w.Path != p {
			t.Errorf("warning %+v: want source settings, path %s", w, p)
		}
		got = append(got, w.Message)
	}
	want := []string{
		`models.json: providers.extra is not valid (the provider is ignored): json: unknown field "colour"`,
		`models.json: providers.good.models[1]: "id" is missing; the model is ignored`,
		`models.json: providers.good.models[2]: model "a" is declared twice; this one is ignored`,
		`models.json: providers.good.models[3]: model "b" has a negative contextWindow or maxTokens; the model is ignored`,
		`models.json: providers.good.models[4]: model "c" has an unknown input "audio" (want "text" or "image"); the model is ignored`,
		`models.json: providers.good.models[5] is not valid (the model is ignored): json: cannot unmarshal string into Go struct field Price.cost.input of type float64`,
		`models.json: providers.good.models[6] is not valid (the model is ignored): json: unknown field "unknown"`,
		`models.json: providers.noapi: "api" must be "openai-responses", "openai-completions" or "anthropic-messages", not ""; the provider is ignored`,
		`models.json: providers.nourl: "baseUrl" is missing; the provider is ignored`,
		`models.json: providers.openai: the api of the built-in provider "openai" is "openai-responses", not "anthropic-messages"; "openai-responses" is used`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	var listed []string
	for _, m := range r.List() {
		if m.Provider != "anthropic" && m.Provider != "scripted" && (m.Provider != "openai" || m.ID == "gpt-local") {
			listed = append(listed, m.Provider+"/"+m.ID)
		}
	}
	if diff := cmp.Diff([]string{"good/a", "openai/gpt-local"}, listed); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
}
