package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/threads/ext"
)

// fixture is the absolute path of testdata/extensions/name (the project's
// TypeScript fixtures, shared with cmd/knightcode's e2e tests).
func fixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "extensions", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeHost is a thread as the seam sees it, recording what extensions do.
type fakeHost struct {
	cwd string

	mu       sync.Mutex
	warnings []ext.Warning
	messages []ext.Message
	entries  map[string]json.RawMessage
	statuses map[string]string
	notices  []string
	widgets  map[string]*ext.Widget
	dialogs  []ext.Dialog
	answer   ext.DialogAnswer
	idle     bool
	aborted  int
}

func newFakeHost(cwd string) *fakeHost {
	return &fakeHost{cwd: cwd, entries: map[string]json.RawMessage{}, statuses: map[string]string{}, widgets: map[string]*ext.Widget{}, idle: true}
}

func (h *fakeHost) ThreadID() string { return "thread-1" }
func (h *fakeHost) Cwd() string      { return h.cwd }
func (h *fakeHost) HasUI() bool      { return true }
func (h *fakeHost) UI() ext.UI       { return fakeUI{h} }
func (h *fakeHost) Warn(w ext.Warning) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.warnings = append(h.warnings, w)
}
func (h *fakeHost) SendMessage(m ext.Message, d ext.Delivery) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.messages = append(h.messages, m)
	return nil
}
func (h *fakeHost) AppendEntry(customType string, data json.RawMessage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries[customType] = data
	return nil
}
func (h *fakeHost) Abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted++
}
func (h *fakeHost) IsIdle() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.idle
}

// wait polls cond under the host's lock until it holds (side effects
// leave the runtime asynchronously, in order).
func (h *fakeHost) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		ok := cond()
		h.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

type fakeUI struct{ h *fakeHost }

func (u fakeUI) Dialog(ctx context.Context, d ext.Dialog) (ext.DialogAnswer, error) {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	u.h.dialogs = append(u.h.dialogs, d)
	return u.h.answer, nil
}
func (u fakeUI) Questions(context.Context, string, []ext.Question) (map[string]ext.Answer, error) {
	return nil, ext.ErrDismissed
}
func (u fakeUI) Notify(level, message string) {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	u.h.notices = append(u.h.notices, level+": "+message)
}
func (u fakeUI) SetStatus(key, text string) {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	u.h.statuses[key] = text
}
func (u fakeUI) SetWidget(key string, w *ext.Widget) {
	u.h.mu.Lock()
	defer u.h.mu.Unlock()
	u.h.widgets[key] = w
}
func (u fakeUI) SetTitle(string)          {}
func (u fakeUI) SetWorkingMessage(string) {}
func (u fakeUI) SetWorkingVisible(bool)   {}

// loadRunner loads entries with a new Engine (timeout 0: the default) in
// a runner on a fake host in cwd, disposed at cleanup.
func loadRunner(t *testing.T, timeout time.Duration, cwd string, entries ...string) (*ext.Runner, *fakeHost, []ext.Warning, *Engine) {
	t.Helper()
	e := New(Options{HandlerTimeout: timeout, AgentDir: t.TempDir()})
	h := newFakeHost(cwd)
	var exts []ext.Extension
	for _, p := range entries {
		exts = append(exts, e.Extension(p))
	}
	r := ext.New(ext.Config{Host: h, Extensions: exts, ReservedTools: []string{"read", "bash", "edit", "write"}})
	w := r.Load()
	t.Cleanup(r.Dispose)
	return r, h, w, e
}

// writeExt writes an extension source file name in dir and returns its
// path.
func writeExt(t testing.TB, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t testing.TB, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (fakeUI) OnViewEvent(ext.ViewEventHandler) func() { return func() {} }
func (fakeUI) TerminalOnly(string)                     {}

// commandEntry runs the registered command text and returns the session
// entry customType it appends (decoded), failing on a warning.
func commandEntry(t *testing.T, ctx context.Context, r *ext.Runner, h *fakeHost, text, customType string) map[string]any {
	t.Helper()
	r.RunCommand(ctx, text)
	h.wait(t, "the "+customType+" entry", func() bool { return h.entries[customType] != nil || len(h.warnings) > 0 })
	if len(h.warnings) > 0 {
		t.Fatalf("warnings %+v", h.warnings)
	}
	var got map[string]any
	if err := json.Unmarshal(h.entries[customType], &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// compareFields reports each member of want whose JSON differs in got.
func compareFields(t *testing.T, got, want map[string]any) {
	t.Helper()
	for k, v := range want {
		gb, _ := json.Marshal(got[k])
		wb, _ := json.Marshal(v)
		if string(gb) != string(wb) {
			t.Errorf("%s = %s, want %s", k, gb, wb)
		}
	}
}
