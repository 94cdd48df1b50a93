package threads

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

func TestMain(m *testing.M) { gittest.Main(m) }

// waitLimit bounds every wait for a notification.
const waitLimit = 30 * time.Second

// recorder collects notifications (a Subscriber, or the Notifier when
// broadcasting) and lets a test wait for one.
type recorder struct {
	id uint64

	mu    sync.Mutex
	notes []recorded
	cond  chan struct{} // closed and replaced on every note
}

type recorded struct {
	method string
	params json.RawMessage
}

var nextRecorder atomic.Uint64

func newRecorder() *recorder {
	return &recorder{id: nextRecorder.Add(1), cond: make(chan struct{})}
}

func (r *recorder) ID() uint64 { return r.id }

func (r *recorder) Send(n protocol.Notification) error {
	method := n.Method()
	b, err := json.Marshal(n.Params())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.notes = append(r.notes, recorded{method, b})
	close(r.cond)
	r.cond = make(chan struct{})
	r.mu.Unlock()
	return nil
}

func (r *recorder) Broadcast(n protocol.Notification) error { return r.Send(n) }

// wait returns the params of the first note from *from on with method that
// satisfies ok, and moves *from past it.
func (r *recorder) wait(t *testing.T, from *int, method string, ok func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		for i := *from; i < len(r.notes); i++ {
			if n := r.notes[i]; n.method == method && (ok == nil || ok(n.params)) {
				*from = i + 1
				r.mu.Unlock()
				return n.params
			}
		}
		c := r.cond
		r.mu.Unlock()
		select {
		case <-c:
		case <-deadline:
			t.Fatalf("no %s within %v", method, waitLimit)
		}
	}
}

// has reports whether a note with method came from index from on.
func (r *recorder) has(from int, method string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes[from:] {
		if n.method == method {
			return true
		}
	}
	return false
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notes)
}

func statusIs(thread, typ string) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p protocol.ThreadStatusChangedParams
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == thread && p.Status.Type == typ
	}
}

// env is a Manager over temporary directories with scripted models.
type env struct {
	m     *Manager
	bcast *recorder
	dirs  session.Dirs
	home  string
}

// newEnv builds a Manager whose scripted models are id -> script JSON;
// idle is the idle-unload delay (0: the default). A cleanup shuts it down.
func newEnv(t *testing.T, scripts map[string]string, idle time.Duration) *env {
	t.Helper()
	return newEnvWith(t, scripts, idle, nil)
}

// newEnvWith is newEnv with the manager's Config changed by with (nil: as
// it is) before the manager is built.
func newEnvWith(t *testing.T, scripts map[string]string, idle time.Duration, with func(e *env, cfg *Config)) *env {
	t.Helper()
	home := t.TempDir()
	agentDir := filepath.Join(home, "agent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	models := []map[string]string{}
	for id, sc := range scripts {
		p := filepath.Join(home, id+".json")
		if err := os.WriteFile(p, []byte(sc), 0o644); err != nil {
			t.Fatal(err)
		}
		models = append(models, map[string]string{"id": id, "script": p})
	}
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"scripted": map[string]any{"models": models}}})
	if err := os.WriteFile(filepath.Join(agentDir, "models.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	reg, warnings := provider.Load(agentDir)
	if len(warnings) > 0 {
		t.Fatalf("models.json: %v", warnings)
	}
	git, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{bcast: newRecorder(), home: home, dirs: session.Dirs{AgentDir: agentDir, Override: filepath.Join(home, "sessions"), Source: session.SourceFlag}}
	mcfg := Config{Git: git, Differ: diffscope.New(git), Models: reg, Dirs: e.dirs, Notifier: e.bcast, IdleUnload: idle}
	if with != nil {
		with(e, &mcfg)
	}
	e.m = New(mcfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := e.m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return e
}

// start starts a fullAccess thread in cwd with the scripted model (if any)
// and subscribes sub.
func (e *env) start(t *testing.T, sub Subscriber, cwd, model string) string {
	t.Helper()
	p := StartOptions{Cwd: cwd, ApprovalMode: protocol.ApprovalFullAccess}
	if model != "" {
		p.Model = &ModelRef{Provider: "scripted", ID: model}
	}
	res, err := e.m.Start(context.Background(), sub, p)
	if err != nil {
		t.Fatal(err)
	}
	return res.Thread.ID
}

func scriptJSON(responses ...map[string]any) string {
	if responses == nil {
		responses = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"responses": responses})
	return string(b)
}

// waitScript is a reply whose bash call waits until flag exists.
func waitScript(flag string) map[string]any {
	return map[string]any{"toolCalls": []any{map[string]any{"id": "wait", "name": "bash", "arguments": map[string]any{"command": "while [ ! -f " + flag + " ]; do sleep 0.02; done"}}}}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func isTool(thread string) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p protocol.ItemStartedParams
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == thread && p.Item.Type == protocol.ItemToolCall
	}
}

func ofThread(thread string) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p struct {
			ThreadID string `json:"threadId"`
		}
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == thread
	}
}

// sharedCheckout is two loaded threads of one checkout (repo): first at
// its root, whose model "wait" runs a bash call until flag exists, then
// answers; second in its folder sub, whose model "quick" answers at once.
type sharedCheckout struct {
	e             *env
	sub           *recorder
	repo, flag    string
	first, second string
}

func newSharedCheckout(t *testing.T) sharedCheckout {
	t.Helper()
	repo := gittest.Init(t)
	gittest.Write(t, repo, "sub/x.txt", "x\n")
	gittest.CommitAll(t, repo, "base")
	flag := filepath.Join(t.TempDir(), "go")
	e := newEnv(t, map[string]string{
		"wait":  scriptJSON(waitScript(flag), map[string]any{"text": "done"}),
		"quick": scriptJSON(map[string]any{"text": "one"}, map[string]any{"text": "two"}),
	}, 0)
	sub := newRecorder()
	return sharedCheckout{e: e, sub: sub, repo: repo, flag: flag,
		first: e.start(t, sub, repo, "wait"), second: e.start(t, sub, filepath.Join(repo, "sub"), "quick")}
}

// TestWithCheckout checks the checkout gate: a fence is refused while a turn
// runs in the checkout (from any thread inside it), a turn is refused while
// a fence is held, and queued inputs held back start when it is released.
func TestWithCheckout(t *testing.T) {
	c := newSharedCheckout(t)
	e, sub, repo, flag, first, second := c.e, c.sub, c.repo, c.flag, c.first, c.second
	ctx := context.Background()
	if got, err := e.m.Checkout(second); err != nil || got != filepath.Join(repo, "sub") {
		t.Errorf("Checkout = %q, %v", got, err)
	}
	if _, err := e.m.Checkout("nope"); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("Checkout of an unknown thread: %v", err)
	}
	if err := e.m.WithCheckout(ctx, "nope", "test action", func(string) error { return nil }); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("WithCheckout of an unknown thread: %v", err)
	}

	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, first, Input{Text: "wait"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	sub.wait(t, &from, protocol.ItemStarted.Name, isTool(first))
	ran := false
	err := e.m.WithCheckout(ctx, second, "test action", func(string) error { ran = true; return nil })
	if !errors.Is(err, ErrTurnInProgress) || ran {
		t.Errorf("WithCheckout during a turn in the checkout: %v, ran %v", err, ran)
	}
	touch(t, flag)
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(first))

	qfrom := sub.mark()
	err = e.m.WithCheckout(ctx, first, "test action", func(cwd string) error {
		if cwd != repo {
			t.Errorf("fn got cwd %q", cwd)
		}
		if _, _, err := e.m.StartTurn(ctx, sub, second, Input{Text: "refused"}, TurnOptions{}); !errors.Is(err, ErrTurnInProgress) {
			t.Errorf("StartTurn during a fence: %v", err)
		}
		if _, err := e.m.QueueAdd(ctx, 0, second, Input{Text: "later"}); err != nil {
			t.Errorf("QueueAdd during a fence: %v", err)
		}
		if sub.has(qfrom, protocol.TurnStarted.Name) {
			t.Error("a queued input started during the fence")
		}
		return errors.New("fn's own error")
	})
	if err == nil || err.Error() != "fn's own error" {
		t.Errorf("WithCheckout returned %v, want fn's error", err)
	}
	sub.wait(t, &qfrom, protocol.TurnStarted.Name, ofThread(second))
	sub.wait(t, &qfrom, protocol.TurnCompletedNotification.Name, ofThread(second))
}

// TestIdleUnloadAndResume checks that a thread without subscribers and work
// unloads (notLoaded, lock released), that a closed connection counts as
// unsubscribed, and that resume loads it again.
func TestIdleUnloadAndResume(t *testing.T) {
	e := newEnv(t, map[string]string{"quick": scriptJSON(map[string]any{"text": "hi"})}, time.Millisecond)
	ctx := context.Background()
	sub := newRecorder()
	thread := e.start(t, sub, t.TempDir(), "quick")
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "hello"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	from := 0
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, nil)
	bfrom := e.bcast.mark()
	unsubscribed, err := e.m.Unsubscribe(ctx, sub.ID(), thread)
	if err != nil || !unsubscribed {
		t.Fatalf("Unsubscribe = %v, %v", unsubscribed, err)
	}
	e.bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))
	if c := e.m.ThreadCounters(); c.LoadedThreads != 0 {
		t.Errorf("loaded threads after the unload: %d", c.LoadedThreads)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil || read.Thread.Status.Type != protocol.ThreadStatusNotLoaded || len(read.Turns) != 1 {
		t.Fatalf("Read after the unload: %+v, %v", read, err)
	}
	s, err := session.Open(read.Thread.SessionFile)
	if err != nil {
		t.Fatalf("the unloaded thread still holds its lock: %v", err)
	}
	s.Close()

	other := newRecorder()
	resumed, err := e.m.Resume(ctx, other, thread, "")
	if err != nil || resumed.Thread.Status.Type != protocol.ThreadStatusIdle || len(resumed.Turns) != 1 {
		t.Fatalf("Resume = %+v, %v", resumed, err)
	}
	if c := e.m.ThreadCounters(); c.LoadedThreads != 1 {
		t.Errorf("loaded threads after the resume: %d", c.LoadedThreads)
	}
	e.m.DropSubscriber(other.ID())
	e.bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))
}

// TestShutdownInterrupts checks that Shutdown interrupts a running turn,
// which ends interrupted with its end entry, releases the lock, and refuses
// new threads afterwards.
func TestShutdownInterrupts(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "never")
	e := newEnv(t, map[string]string{"wait": scriptJSON(waitScript(flag))}, 0)
	ctx := context.Background()
	sub := newRecorder()
	thread := e.start(t, sub, t.TempDir(), "wait")
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "wait forever"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	from := 0
	sub.wait(t, &from, protocol.ItemStarted.Name, isTool(thread))
	sctx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	if err := e.m.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(sub.wait(t, &from, protocol.TurnCompletedNotification.Name, nil), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnInterrupted {
		t.Errorf("turn ended %s", done.Turn.Status)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil || len(read.Turns) != 1 || read.Turns[0].Status != protocol.TurnInterrupted || read.Turns[0].CompletedAt == 0 {
		t.Fatalf("Read after Shutdown: %+v, %v", read, err)
	}
	s, err := session.Open(read.Thread.SessionFile)
	if err != nil {
		t.Fatalf("lock kept after Shutdown: %v", err)
	}
	s.Close()
	_, err = e.m.Start(ctx, sub, StartOptions{Cwd: t.TempDir()})
	if !errors.Is(err, ErrShuttingDown) {
		t.Errorf("Start after Shutdown: %v", err)
	}
}

// TestOwnershipLost replaces a loaded thread's session file: the next write
// fails, the thread closes with an error notification and systemError, and
// the status stays visible until the thread loads again.
func TestOwnershipLost(t *testing.T) {
	e := newEnv(t, map[string]string{"quick": scriptJSON()}, 0)
	ctx := context.Background()
	sub := newRecorder()
	thread := e.start(t, sub, t.TempDir(), "")
	if err := e.m.UpdateSettings(ctx, thread, SettingsUpdate{Model: &ModelRef{Provider: "scripted", ID: "quick"}}); err != nil {
		t.Fatal(err)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil || read.Thread.SessionFile == "" {
		t.Fatalf("Read: %+v, %v", read, err)
	}
	file := read.Thread.SessionFile
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := file + ".replacement"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	bfrom := 0
	err = e.m.UpdateSettings(ctx, thread, SettingsUpdate{ApprovalMode: protocol.ApprovalAsk})
	if !errors.Is(err, session.ErrOwnershipLost) {
		t.Fatalf("write after the replacement: %v", err)
	}
	from := 0
	var note protocol.ErrorParams
	if err := json.Unmarshal(sub.wait(t, &from, protocol.ErrorNotification.Name, nil), &note); err != nil {
		t.Fatal(err)
	}
	if note.ThreadID != thread || note.Message == "" {
		t.Errorf("error notification %+v", note)
	}
	e.bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusSystemError))
	// The sidebar row shows it too, with the message.
	lost := sidebarRowOf(t, e.bcast, &bfrom, thread, func(r protocol.SidebarRow) bool { return r.Status.Type == protocol.ThreadStatusSystemError })
	if lost.Status.Message != note.Message || lost.Cwd == "" {
		t.Errorf("sidebar row after the loss: %+v, want systemError %q", lost, note.Message)
	}
	if _, err := e.m.Checkout(thread); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("the thread is still loaded: %v", err)
	}
	read, err = e.m.Read(ctx, thread, "")
	if err != nil || read.Thread.Status.Type != protocol.ThreadStatusSystemError {
		t.Errorf("Read after the loss: %+v, %v", read.Thread.Status, err)
	}
	if _, err := e.m.Resume(ctx, sub, thread, ""); err != nil {
		t.Fatal(err)
	}
	read, _ = e.m.Read(ctx, thread, "")
	if read.Thread.Status.Type != protocol.ThreadStatusIdle {
		t.Errorf("status after the reload: %+v", read.Thread.Status)
	}
	sidebarRowOf(t, e.bcast, &bfrom, thread, func(r protocol.SidebarRow) bool { return r.Status.Type == protocol.ThreadStatusIdle })
}

// sidebarRowOf waits for a thread/sidebar row of thread from *from on that
// satisfies ok and returns it.
func sidebarRowOf(t *testing.T, r *recorder, from *int, thread string, ok func(protocol.SidebarRow) bool) protocol.SidebarRow {
	t.Helper()
	var p protocol.ThreadSidebarParams
	raw := r.wait(t, from, protocol.ThreadSidebar.Name, func(raw json.RawMessage) bool {
		var p protocol.ThreadSidebarParams
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == thread && p.Row != nil && ok(*p.Row)
	})
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return *p.Row
}

// TestHardLinkedTranscript checks that a hard-linked session file is refused.
func TestHardLinkedTranscript(t *testing.T) {
	e := newEnv(t, map[string]string{"quick": scriptJSON()}, time.Millisecond)
	ctx := context.Background()
	sub := newRecorder()
	thread := e.start(t, sub, t.TempDir(), "quick")
	if err := e.m.UpdateSettings(ctx, thread, SettingsUpdate{ThinkingLevel: "off"}); err != nil {
		t.Fatal(err)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	bfrom := e.bcast.mark()
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), thread); err != nil {
		t.Fatal(err)
	}
	e.bcast.wait(t, &bfrom, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))
	if err := os.Link(read.Thread.SessionFile, filepath.Join(e.home, "second-name")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Resume(ctx, sub, thread, ""); !errors.Is(err, session.ErrHardLinked) {
		t.Errorf("Resume of a hard-linked transcript: %v", err)
	}
}

// TestListPages checks thread/list paging over a snapshot and its cursor
// refusals.
func TestListPages(t *testing.T) {
	e := newEnv(t, map[string]string{"quick": scriptJSON()}, 0)
	ctx := context.Background()
	sub := newRecorder()
	cwd := t.TempDir()
	var ids []string
	for range 3 {
		id := e.start(t, sub, cwd, "")
		if err := e.m.UpdateSettings(ctx, id, SettingsUpdate{ApprovalMode: protocol.ApprovalAsk}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	e.start(t, sub, t.TempDir(), "") // another project, never saved
	// A limit of 0 is rpc's refusal (rpc.TestThreadListLimit).
	two := 2
	page, err := e.m.List(ListOptions{Cwd: cwd, Limit: two})
	if err != nil || len(page.Threads) != 2 || page.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	rest, err := e.m.List(ListOptions{Cwd: cwd, Limit: two, Cursor: page.NextCursor})
	if err != nil || len(rest.Threads) != 1 || rest.NextCursor != "" {
		t.Fatalf("second page: %+v, %v", rest, err)
	}
	seen := map[string]bool{}
	for _, s := range append(page.Threads, rest.Threads...) {
		seen[s.ID] = true
		if s.Status == nil || s.Status.Type != protocol.ThreadStatusIdle {
			t.Errorf("%s: status %+v", s.ID, s.Status)
		}
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("%s not listed", id)
		}
	}
	for _, c := range []ListOptions{
		{Cursor: page.NextCursor},                 // another filter
		{Cwd: cwd, Cursor: "unknown:0"},           // no such snapshot
		{Cwd: cwd, Cursor: "no-offset"},           // malformed
		{Cwd: cwd, Cursor: page.NextCursor + "x"}, // malformed offset
	} {
		if _, err := e.m.List(c); !errors.Is(err, session.ErrInvalidCursor) {
			t.Errorf("List(%+v): %v, want invalid cursor", c, err)
		}
	}
}
