package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EExtensionProviders (EXTENSIBILITY.md §7 "Extension providers in
// model/list", "Turns"): testdata/extensions/provider.ts registers a
// configuration-only provider (ext-config, an OpenAI-compatible test
// server) and one with streamSimple (ext-func, an echo). The fixture is a
// trusted project's .knightcode/extensions entry, so that only threads in
// that project (A) load it and a thread in another project (B) does not:
// every thread of a binary loads its -e paths. model/list lists the
// providers once A loaded them (["off"] for the non-reasoning model); a
// turn on each gets its reply; B may use ext-config but selecting ext-func
// answers providerNotLoaded; once A unloads, their models are available:
// false, B's turn/start answers providerNotLoaded and its queued input is
// dropped with an error carrying its clientMessageId, B's settings are
// kept: a new thread loading the extension makes B's turn work again;
// unregisterProvider (/drop-config) makes ext-config unavailable again.
func TestE2EExtensionProviders(t *testing.T) {
	t.Parallel()
	repoA, repoB := threadsRepo(t), threadsRepo(t)
	dir := filepath.Join(repoA, ".knightcode", "extensions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(jsFixture(t, "provider.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "provider.ts"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	reply := sse(chunk(`{"role":"assistant","content":"Arr"}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
	chat := newChatServer(t, reply, reply, reply)
	home := t.TempDir()
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(serverEnv(home), "KC_E2E_KEY="+e2eEnvKey, "KC_E2E_PROVIDER_URL="+chat.URL+"/v1")
	s, _ := serveDiff(t, cmd, home)
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repoA, Trusted: true})

	extModels := func() map[string]protocol.ModelInfo {
		out := map[string]protocol.ModelInfo{}
		for _, m := range mustCall(t, s, protocol.ModelList, protocol.ModelListParams{}).Models {
			if strings.HasPrefix(m.Provider, "ext-") {
				out[m.Provider+"/"+m.ID] = m
			}
		}
		return out
	}
	start := func(repo string) string {
		return mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess}).Thread.ID
	}
	selectModel := func(thread, prov, id string) error {
		return s.call(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: prov, ID: id}}, nil)
	}
	answer := func(thread, text string) string {
		t.Helper()
		from := s.mark()
		if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: text}); res.Status != protocol.TurnStartStarted {
			t.Fatalf("turn/start %+v", res)
		}
		var out []string
		for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
			if it.Type == protocol.ItemAgentMessage {
				out = append(out, it.Text)
			}
		}
		return strings.Join(out, "|")
	}
	notLoaded := func(what string, err error) {
		t.Helper()
		var e *client.Error
		w := toWireErr(t, err)
		if w.Code != protocol.CodeInvalidParams || w.Field != "model" || w.Reason != "providerNotLoaded" || !errors.As(err, &e) ||
			!strings.Contains(e.Message, "ext-func comes from an extension this thread does not load") && !strings.Contains(e.Message, "ext-config comes from an extension this thread does not load") {
			t.Errorf("%s: %v (%+v), want providerNotLoaded", what, err, w)
		}
	}
	waitAvailable := func(key string, want bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			m, ok := extModels()[key]
			if ok && (m.Available == nil) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("model/list %s: %+v (listed %v), want available %v", key, m, ok, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	threadB := start(repoB)
	if got := extModels(); len(got) != 0 {
		t.Fatalf("model/list before a thread loaded the extension: %+v", got)
	}
	threadA := start(repoA)
	got := extModels()
	cfg, fn := got["ext-config/m1"], got["ext-func/echo"]
	if !slices.Equal(cfg.ThinkingLevels, []string{"off"}) || cfg.Name != "Config M1" || cfg.ContextWindow != 32000 || cfg.MaxTokens != 4096 || cfg.Available != nil {
		t.Errorf("ext-config/m1 in model/list: %+v", cfg)
	}
	if len(fn.ThinkingLevels) != 5 || fn.Name != "Echo" || fn.ContextWindow != 8000 || fn.Available != nil {
		t.Errorf("ext-func/echo in model/list: %+v", fn)
	}

	// A uses both.
	if err := selectModel(threadA, "ext-func", "echo"); err != nil {
		t.Fatal(err)
	}
	if got := answer(threadA, "hello"); got != "echo (ext-func/echo): hello" {
		t.Errorf("ext-func reply %q", got)
	}
	if err := selectModel(threadA, "ext-config", "m1"); err != nil {
		t.Fatal(err)
	}
	if got := answer(threadA, "ahoy"); got != "Arr" {
		t.Errorf("ext-config reply %q", got)
	}

	// B may use the configuration-only provider, not the other.
	notLoaded("B selects ext-func", selectModel(threadB, "ext-func", "echo"))
	if err := selectModel(threadB, "ext-config", "m1"); err != nil {
		t.Fatal(err)
	}
	if got := answer(threadB, "ahoy from B"); got != "Arr" {
		t.Errorf("B's ext-config reply %q", got)
	}
	chat.mu.Lock()
	auth := slices.Clone(chat.auth)
	chat.mu.Unlock()
	if len(auth) != 2 || auth[1] != "Bearer "+e2eEnvKey {
		t.Errorf("Authorization of the chat requests %q", auth)
	}

	// A unloads: its providers stay listed, unavailable.
	mustCall(t, s, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: threadA})
	waitAvailable("ext-config/m1", false)
	waitAvailable("ext-func/echo", false)
	notLoaded("B's turn/start", s.call(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: threadB, Text: "anyone?"}, nil))
	efrom := s.mark()
	mustCall(t, s, protocol.TurnQueueAdd, protocol.TurnQueueAddParams{ThreadID: threadB, Text: "queued", ClientMessageID: "cm-provider"})
	if n := decode[protocol.ErrorParams](t, s.waitNote(t, &efrom, protocol.ErrorNotification.Name, nil)); n.ClientMessageID != "cm-provider" ||
		n.ThreadID != threadB || n.Code != protocol.CodeInvalidParams || !strings.Contains(n.Message, "ext-config comes from an extension this thread does not load") {
		t.Errorf("error notification of the queued input %+v", n)
	}

	// B's settings are kept: once a thread loads the extension again, B's
	// turn runs on ext-config.
	threadC := start(repoA)
	waitAvailable("ext-config/m1", true)
	if got := answer(threadB, "back again"); got != "Arr" {
		t.Errorf("B's reply after C loaded the extension %q", got)
	}
	// unregisterProvider: ext-config is unavailable again; ext-func stays.
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: threadC, Text: "/drop-config"}); res.Status != protocol.TurnStartHandled {
		t.Fatalf("/drop-config %+v", res)
	}
	waitAvailable("ext-config/m1", false)
	waitAvailable("ext-func/echo", true)
	notLoaded("B's turn/start after /drop-config", s.call(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: threadB, Text: "anyone?"}, nil))
}
