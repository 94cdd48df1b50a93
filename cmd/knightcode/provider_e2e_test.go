package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// Secrets of the provider tests: they must appear in no log line.
const (
	e2eEnvKey   = "sk-e2e-env-secret-4242"
	e2eLoginKey = "sk-e2e-login-secret-7373"
)

// chatServer is an httptest server on 127.0.0.1 speaking OpenAI Chat
// Completions SSE (POST /v1/chat/completions, one scripted reply per
// request) and the models list (GET /v1/models, accepting only
// e2eLoginKey).
type chatServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []func(w http.ResponseWriter)
	auth    []string // Authorization of each chat request
	bodies  [][]byte // body of each chat request: what the model received
}

func newChatServer(t *testing.T, replies ...func(w http.ResponseWriter)) *chatServer {
	t.Helper()
	s := &chatServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
			if r.Header.Get("Authorization") != "Bearer "+e2eLoginKey {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[]}`)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			body, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.auth = append(s.auth, r.Header.Get("Authorization"))
			s.bodies = append(s.bodies, body)
			var reply func(http.ResponseWriter)
			if len(s.replies) > 0 {
				reply, s.replies = s.replies[0], s.replies[1:]
			}
			s.mu.Unlock()
			if reply == nil {
				http.Error(w, `{"error":{"message":"no more replies"}}`, http.StatusBadRequest)
				return
			}
			reply(w)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// sse writes chunks as a Chat Completions event stream ending in [DONE].
// writeLocalModel writes models.json in home: a custom OpenAI-compatible
// provider "local" at chat whose apiKey names KC_E2E_KEY, with the model m1.
func writeLocalModel(t *testing.T, home string, chat *chatServer) {
	t.Helper()
	models := `{"providers":{"local":{"baseUrl":"` + chat.URL + `/v1","api":"openai-completions","apiKey":"KC_E2E_KEY",` +
		`"models":[{"id":"m1","name":"Local M1","contextWindow":32000,"maxTokens":4096}]}}}`
	writeAgentFile(t, home, "models.json", []byte(models))
}

// onlyRequest is the body of the one model request chat got.
func (s *chatServer) onlyRequest(t *testing.T) []byte {
	t.Helper()
	s.mu.Lock()
	bodies := s.bodies
	s.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d model requests", len(bodies))
	}
	return bodies[0]
}

func sse(chunks ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// dropped streams a partial reply and cuts the connection mid-stream.
func dropped(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\n\n", chunk(`{"role":"assistant","content":"Partial "}`, ""))
	w.(http.Flusher).Flush()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// tooMany answers 429 with a 1 ms retry-after-ms.
func tooMany(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("retry-after-ms", "1")
	w.WriteHeader(http.StatusTooManyRequests)
	fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"rate_limit_exceeded"}}`)
}

func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func usageChunk(in, out int) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out)
}

// startProviderServer writes models.json (a custom OpenAI-compatible
// provider "local" whose apiKey names KC_E2E_KEY, and the built-in openai
// provider pointed at chat too) and starts the binary with KC_E2E_KEY set
// and no OPENAI_API_KEY.
func startProviderServer(t *testing.T, chat *chatServer, settings ...string) (*diffServer, *rpctest.SyncBuffer) {
	t.Helper()
	home := t.TempDir()
	for _, st := range settings {
		writeAgentFile(t, home, "settings.json", []byte(st))
	}
	writeLocalModels(t, home, chat)
	return startKeyed(t, home)
}

// writeLocalModels writes home's models.json: a custom OpenAI-compatible
// provider "local" (model m1) on chat whose apiKey names KC_E2E_KEY, and
// the built-in openai provider pointed at chat too.
func writeLocalModels(t *testing.T, home string, chat *chatServer) {
	t.Helper()
	models := map[string]any{"providers": map[string]any{
		"local": map[string]any{
			"baseUrl": chat.URL + "/v1", "api": "openai-completions", "apiKey": "KC_E2E_KEY",
			"models": []map[string]any{{"id": "m1", "name": "Local M1", "contextWindow": 32000, "maxTokens": 4096,
				"cost": map[string]float64{"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}},
		},
		"openai": map[string]any{"baseUrl": chat.URL + "/v1"},
	}}
	b, _ := json.Marshal(models)
	writeAgentFile(t, home, "models.json", b)
}

// startKeyed starts the binary on home with KC_E2E_KEY set to e2eEnvKey
// and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY.
func startKeyed(t *testing.T, home string) (*diffServer, *rpctest.SyncBuffer) {
	t.Helper()
	var env []string
	for _, kv := range serverEnv(home) {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(env, "KC_E2E_KEY="+e2eEnvKey)
	return serveDiff(t, cmd, home)
}

// lookTurn starts a fullAccess thread in repo with model m1 of provider
// and runs the turn "how many lines has a.txt?", which must complete; it
// returns the thread, the turn's id and summary, and the thread's
// notifications from the turn's start to its turn/completed.
func (s *diffServer) lookTurn(t *testing.T, repo, provider string) (thread, turnID string, turn protocol.Turn, notes []note) {
	t.Helper()
	res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"})
	thread = res.Thread.ID
	mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: provider, ID: "m1"}})
	turnID, from := s.startTurn(t, thread, "how many lines has a.txt?")
	start := from
	turn = s.waitTurnCompleted(t, &from, thread)
	if turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn status %q, error %+v", turn.Status, turn.Error)
	}
	return thread, turnID, turn, s.threadNotes(t, start, thread, protocol.TurnCompletedNotification.Name)
}

// wantLookUsage checks the token usage notifications of the two-reply
// exchange the provider tests script (100 and 20, then 400 and 30 tokens,
// at $1 and $2 per million, in a 32,000-token window).
func wantLookUsage(t *testing.T, usages []protocol.TokenUsage) {
	t.Helper()
	ctx1, ctx2 := int64(120), int64(310)
	wantUsage := []protocol.TokenUsage{
		{Input: 100, Output: 20, Cost: 100*1e-6 + 20*2e-6, ContextTokens: &ctx1, ContextWindow: 32000},
		{Input: 400, Output: 30, Cost: 400*1e-6 + 30*2e-6, ContextTokens: &ctx2, ContextWindow: 32000},
	}
	approx := cmp.Comparer(func(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 })
	if diff := cmp.Diff(wantUsage, usages, approx); diff != "" {
		t.Errorf("thread/tokenUsage/updated (-want +got):\n%s", diff)
	}
}

// wantLookItems checks the completed items of that exchange: the agent
// messages "Let me look." and "It has ten lines.", and a read tool call
// with id callID, completed, whose output holds line 10. It returns the
// tool call item, nil when it is not so.
func wantLookItems(t *testing.T, notes []note, callID string) *protocol.Item {
	t.Helper()
	var texts []string
	var tool *protocol.Item
	for _, it := range completedItems(t, notes) {
		switch it.Type {
		case protocol.ItemAgentMessage:
			texts = append(texts, it.Text)
		case protocol.ItemToolCall:
			tool = &it
		}
	}
	if diff := cmp.Diff([]string{"Let me look.", "It has ten lines."}, texts); diff != "" {
		t.Errorf("agent messages (-want +got):\n%s", diff)
	}
	if tool == nil || tool.ID != callID || tool.Name != "read" || tool.Status != protocol.ToolCompleted ||
		tool.Output == nil || !strings.Contains(*tool.Output, "line 10") {
		t.Errorf("tool call item = %+v, want read completed with id %s", tool, callID)
		return nil
	}
	return tool
}

// noSecrets fails when a secret appears in the server's stderr.
func noSecrets(t *testing.T, stderr *rpctest.SyncBuffer) {
	t.Helper()
	for i, line := range strings.Split(stderr.String(), "\n") {
		for _, secret := range []string{e2eEnvKey, e2eLoginKey} {
			if strings.Contains(line, secret) {
				t.Errorf("stderr line %d holds a secret: %s", i+1, line)
			}
		}
	}
}

// TestE2ERealProviderTurn runs a turn on a custom OpenAI-compatible provider
// from models.json: a stream cut after a delta is withdrawn (item/removed)
// and retried, so is a 429 (turn/retry each time), the reply streams text and
// a tool call, the tool runs, the second reply ends the turn, and the usage
// and cost reach the client.
func TestE2ERealProviderTurn(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	chat := newChatServer(t,
		dropped,
		tooMany,
		sse(chunk(`{"role":"assistant","content":"Let me "}`, ""), chunk(`{"content":"look."}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"), usageChunk(100, 20)),
		sse(chunk(`{"role":"assistant","content":"It has ten lines."}`, ""), chunk(`{}`, "stop"), usageChunk(300, 10)),
	)
	s, stderr := startProviderServer(t, chat)

	list := mustCall(t, s, protocol.ModelList, protocol.ModelListParams{})
	var local *protocol.ModelInfo
	for i, m := range list.Models {
		if m.Provider == "local" && m.ID == "m1" {
			local = &list.Models[i]
		}
	}
	want := &protocol.ModelInfo{Provider: "local", ID: "m1", Name: "Local M1", ThinkingLevels: []string{"off"}, ContextWindow: 32000,
		Input: []string{"text"}, MaxTokens: 4096, Cost: &protocol.ModelPrice{Input: 1, Output: 2}}
	if diff := cmp.Diff(want, local); diff != "" {
		t.Errorf("model/list local/m1 (-want +got):\n%s", diff)
	}

	thread, turnID, _, notes := s.lookTurn(t, repo, "local")

	var retries []protocol.TurnRetryParams
	var removed []protocol.ItemRemovedParams
	partial := map[string]bool{} // ids of items that streamed "Partial "
	var usages []protocol.TokenUsage
	for _, n := range notes {
		switch n.Method {
		case protocol.TurnRetry.Name:
			retries = append(retries, decode[protocol.TurnRetryParams](t, n.Params))
		case protocol.ItemRemoved.Name:
			removed = append(removed, decode[protocol.ItemRemovedParams](t, n.Params))
		case protocol.ItemAgentMessageDelta.Name:
			if d := decode[protocol.ItemDeltaParams](t, n.Params); d.Delta == "Partial " {
				partial[d.ItemID] = true
			}
		case protocol.ThreadTokenUsageUpdated.Name:
			usages = append(usages, decode[protocol.ThreadTokenUsageUpdatedParams](t, n.Params).Usage)
		}
	}
	if len(retries) != 2 {
		t.Fatalf("turn/retry notifications: %+v, want two", retries)
	}
	if r := retries[0]; r.ThreadID != thread || r.TurnID != turnID || r.Attempt != 1 || r.Error.Kind != "network" || r.Error.Message == "" {
		t.Errorf("first turn/retry = %+v, want attempt 1 of a network error", r)
	}
	if r := retries[1]; r.ThreadID != thread || r.TurnID != turnID || r.Attempt != 2 || r.DelayMs != 1 || r.Error.Kind != "rateLimit" || r.Error.Message == "" {
		t.Errorf("second turn/retry = %+v, want attempt 2 of a rateLimit after 1 ms", r)
	}
	if len(removed) != 1 || !partial[removed[0].ItemID] || removed[0].TurnID != turnID {
		t.Errorf("item/removed = %+v, want the partial item of %v", removed, partial)
	}
	wantLookUsage(t, usages)
	wantLookItems(t, notes, "call_1")
	chat.mu.Lock()
	for i, a := range chat.auth {
		if a != "Bearer "+e2eEnvKey {
			t.Errorf("chat request %d: Authorization %q, want the key of KC_E2E_KEY", i, a)
		}
	}
	if len(chat.auth) != 4 {
		t.Errorf("%d chat requests, want 4 (dropped, 429, tool call, answer)", len(chat.auth))
	}
	chat.mu.Unlock()

	noSecrets(t, stderr)
}

// TestE2EAccountLogin checks authRequired without a key, account/login/start
// (the key checked against the provider's models list, refused keys
// refused), account/read without the secret, account/updated, auth.json's
// mode, account/logout, and that no secret reaches the log.
func TestE2EAccountLogin(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	chat := newChatServer(t)
	s, stderr := startProviderServer(t, chat)

	list := mustCall(t, s, protocol.ModelList, protocol.ModelListParams{})
	var openaiModel *protocol.ModelInfo
	for i, m := range list.Models {
		if m.Provider == "openai" && len(m.ThinkingLevels) > 1 {
			openaiModel = &list.Models[i]
			break
		}
	}
	if openaiModel == nil {
		t.Fatal("model/list has no OpenAI reasoning model")
	}
	if openaiModel.ThinkingLevels[0] != "off" || openaiModel.ContextWindow == 0 || openaiModel.Cost == nil {
		t.Errorf("OpenAI catalogue model = %+v, want thinking levels from off, a context window and prices", openaiModel)
	}

	res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo})
	thread := res.Thread.ID
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "hi"}, wireErr{Code: protocol.CodeInvalidParams, Reason: "noModel"})
	mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "openai", ID: openaiModel.ID}})
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "hi"}, wireErr{Code: protocol.CodeAuthRequired})

	accounts := mustCall(t, s, protocol.AccountRead, protocol.AccountReadParams{})
	wantBefore := []protocol.Account{
		{Provider: "anthropic"},
		{Provider: "local", HasKey: true, Source: "env", EnvVar: "KC_E2E_KEY"},
		{Provider: "openai"},
	}
	if diff := cmp.Diff(wantBefore, accounts.Accounts); diff != "" {
		t.Errorf("account/read before login (-want +got):\n%s", diff)
	}

	s.wantErr(t, protocol.AccountLoginStart.Name, protocol.AccountLoginStartParams{Provider: "openai", APIKey: "sk-wrong"}, wireErr{Code: protocol.CodeInvalidParams, Field: "apiKey"})
	s.wantErr(t, protocol.AccountLoginStart.Name, protocol.AccountLoginStartParams{Provider: "nope", APIKey: e2eLoginKey}, wireErr{Code: protocol.CodeInvalidParams, Field: "provider"})
	s.wantErr(t, protocol.AccountLoginStart.Name, protocol.AccountLoginStartParams{Provider: "openai"}, wireErr{Code: protocol.CodeInvalidParams, Field: "apiKey"})

	from := s.mark()
	login := mustCall(t, s, protocol.AccountLoginStart, protocol.AccountLoginStartParams{Provider: "openai", APIKey: e2eLoginKey})
	wantOpenAI := protocol.Account{Provider: "openai", HasKey: true, Source: "authFile"}
	if diff := cmp.Diff(protocol.AccountLoginStartResult{Account: wantOpenAI, Validated: true}, login); diff != "" {
		t.Errorf("account/login/start (-want +got):\n%s", diff)
	}
	updated := decode[protocol.AccountUpdatedParams](t, s.waitNote(t, &from, protocol.AccountUpdated.Name, nil))
	wantAfter := []protocol.Account{wantBefore[0], wantBefore[1], wantOpenAI}
	if diff := cmp.Diff(wantAfter, updated.Accounts); diff != "" {
		t.Errorf("account/updated (-want +got):\n%s", diff)
	}
	var raw json.RawMessage
	s.must(t, protocol.AccountRead.Name, protocol.AccountReadParams{}, &raw)
	if strings.Contains(string(raw), e2eLoginKey) || strings.Contains(string(raw), e2eEnvKey) {
		t.Errorf("account/read holds a secret: %s", raw)
	}
	if diff := cmp.Diff(wantAfter, decode[protocol.AccountReadResult](t, raw).Accounts); diff != "" {
		t.Errorf("account/read after login (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(s.home, "agent", "auth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("auth.json mode %v, want 0600", fi.Mode().Perm())
	}

	logout := mustCall(t, s, protocol.AccountLogout, protocol.AccountLogoutParams{Provider: "openai"})
	if diff := cmp.Diff(protocol.AccountLogoutResult{Account: protocol.Account{Provider: "openai"}}, logout); diff != "" {
		t.Errorf("account/logout (-want +got):\n%s", diff)
	}
	s.waitNote(t, &from, protocol.AccountUpdated.Name, nil)
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "hi"}, wireErr{Code: protocol.CodeAuthRequired})
	noSecrets(t, stderr)
}

// TestE2EAccountLoginProviderUnreachable checks that a key check the
// provider cannot answer (its address refuses connections) is
// externalFailure providerUnavailable naming the provider, with the
// network error's words, and stores nothing.
func TestE2EAccountLoginProviderUnreachable(t *testing.T) {
	t.Parallel()
	chat := newChatServer(t)
	s, _ := startProviderServer(t, chat)
	chat.Close() // the provider's baseUrl now refuses connections
	_, err := gitCall(t, s, protocol.AccountLoginStart, protocol.AccountLoginStartParams{Provider: "openai", APIKey: e2eLoginKey})
	code, data := rawErr(t, err)
	if code != protocol.CodeExternalFailure || string(data) != `{"reason":"providerUnavailable","provider":"openai"}` {
		t.Errorf("account/login/start of an unreachable provider: %s %s", code, data)
	}
	if e, ok := errors.AsType[*client.Error](err); !ok || !strings.Contains(e.Message, "connection refused") {
		t.Errorf("message %v lacks the network error's words", err)
	}
	if _, err := os.Stat(filepath.Join(s.home, "agent", "auth.json")); err == nil {
		t.Error("auth.json was written")
	}
}

// TestE2EAccountLoginProviderSilent: a provider that accepts the
// connection and never answers is externalFailure providerUnavailable
// once the key check's 30 s pass (issue 22 QA, L5: after 600 s), saying
// no answer came; nothing is stored.
func TestE2EAccountLoginProviderSilent(t *testing.T) {
	t.Parallel()
	silent := &chatServer{Server: httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))}
	t.Cleanup(silent.Close)
	s, _ := startProviderServer(t, silent)
	ctx, cancel := context.WithTimeout(context.Background(), provider.KeyCheckTimeout+30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := client.Call(ctx, s.c, protocol.AccountLoginStart, protocol.AccountLoginStartParams{Provider: "openai", APIKey: e2eLoginKey})
	code, data := rawErr(t, err)
	if code != protocol.CodeExternalFailure || string(data) != `{"reason":"providerUnavailable","provider":"openai"}` {
		t.Fatalf("account/login/start of a silent provider after %v: %v", time.Since(start), err)
	}
	if e, ok := errors.AsType[*client.Error](err); !ok || !strings.Contains(e.Message, "no answer within 30s") {
		t.Errorf("message %v does not say no answer came", err)
	}
	if _, err := os.Stat(filepath.Join(s.home, "agent", "auth.json")); err == nil {
		t.Error("auth.json was written")
	}
}

// TestE2ERetrySettings checks that retry.provider.maxRetries 0 from
// settings.json turns a 429 into a failed turn of kind rateLimit without a
// turn/retry.
func TestE2ERetrySettings(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	chat := newChatServer(t, tooMany)
	s, stderr := startProviderServer(t, chat, `{"retry": {"provider": {"maxRetries": 0}}}`)
	res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"})
	thread := res.Thread.ID
	mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "local", ID: "m1"}})
	_, from := s.startTurn(t, thread, "hi")
	start := from
	turn := s.waitTurnCompleted(t, &from, thread)
	if turn.Status != protocol.TurnFailed || turn.Error == nil || turn.Error.Kind != "rateLimit" {
		t.Errorf("turn = status %q error %+v, want failed with kind rateLimit", turn.Status, turn.Error)
	}
	for _, n := range s.threadNotes(t, start, thread, protocol.TurnCompletedNotification.Name) {
		if n.Method == protocol.TurnRetry.Name {
			t.Errorf("unexpected turn/retry %s", n.Params)
		}
	}
	noSecrets(t, stderr)
}
