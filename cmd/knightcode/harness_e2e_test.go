package main

// The end-to-end harness every test of this package uses: the binary built
// once by TestMain, a raw process with its stdin and stdout (proc, for
// protocol scripts), a server driven through package client (diffServer,
// started from the binary or wired in process), the one notification
// recorder, and request and error helpers. Repository and script fixtures
// are in fixtures_e2e_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// binary is the knightcode binary built once by TestMain.
var binary string

// binaryVersion is what `binary --version` prints after "knightcode ": the
// version initialize must report as serverInfo.version. It can differ from
// the test process's serverVersion(), since go build stamps VCS information
// and go test does not.
var binaryVersion string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == tools.ReaperArg {
		// A server made in this process (newAppServer) runs the test binary
		// as its commands' reaper, as main does the real one.
		os.Exit(tools.RunReaper(os.Args[2:]))
	}
	dir, err := os.MkdirTemp("", "knightcode-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "knightcode")
	args := []string{"build", "-o", binary}
	if gittest.RaceEnabled { // the binary as the tests are built
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building knightcode:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	out, err := exec.Command(binary, "--version").Output()
	v, ok := strings.CutPrefix(strings.TrimSuffix(string(out), "\n"), "knightcode ")
	if err != nil || !ok || v == "" {
		fmt.Fprintf(os.Stderr, "knightcode --version: %v, output %q\n", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	binaryVersion = v
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// serverEnv is the environment of a server whose home is home: home,
// config and agent directories below it.
func serverEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"KNIGHTCODE_CODING_AGENT_DIR="+filepath.Join(home, "agent"),
		"KNIGHTCODE_CODING_AGENT_SESSION_DIR=",
		"GROK_HOME=",               // Grok Build's state is read from HOME/.grok, never the developer's
		"GORACE=atexit_sleep_ms=0", // a -race binary otherwise sleeps 1 s at exit
	)
}

// testEnv is the environment of a server process (serverEnv) with its home
// in the test's temp dir.
func testEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	return serverEnv(home), home
}

// proc is a running `knightcode app-server`.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *rpctest.SyncBuffer
	home   string
	waited chan struct{}
	err    error // cmd.Wait's result, set before waited is closed
}

// start starts the binary with args; a cleanup kills it if it still runs.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return startPrepared(t, nil, args...)
}

// startPrepared is start with prepare, when not nil, called with the server's
// home before the server starts (to write its agent directory's files).
func startPrepared(t *testing.T, prepare func(home string), args ...string) *proc {
	t.Helper()
	env, home := testEnv(t)
	if prepare != nil {
		prepare(home)
	}
	p := &proc{cmd: exec.Command(binary, args...), stderr: &rpctest.SyncBuffer{}, home: home, waited: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	// Our own pipes, not StdinPipe/StdoutPipe: cmd.Wait must not close the
	// read end of stdout before the test has read all of it.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdin, p.cmd.Stdout = inR, outW
	p.stdin, p.stdout = inW, outR
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
	})
	t.Cleanup(func() {
		select {
		case <-p.waited:
		default:
			p.cmd.Process.Kill()
			<-p.waited
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	// The waiter goroutine runs until the process exited.
	go func() {
		p.err = p.cmd.Wait()
		close(p.waited)
	}()
	return p
}

// peer starts reading the process's stdout line by line.
func (p *proc) peer(t *testing.T) *rpctest.Peer {
	return rpctest.NewPeer(t, p.stdin, p.stdout)
}

// wait waits for the process to exit within limit and returns its exit code.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.waited:
	case <-time.After(limit):
		t.Fatalf("server did not exit within %v", limit)
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("server killed by signal %v", ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatalf("wait: %v", p.err)
	return -1
}

// waitStderr waits until the server's log contains s.
func (p *proc) waitStderr(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("server log lacks %q:\n%s", s, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// note is one notification a connection received.
type note struct {
	Method string
	Params json.RawMessage
}

// recorder keeps every notification one connection received, in order;
// tests wait on it for a notification or read what came after a mark. It
// is the one recorder of this package's tests: add is the connection's
// client.OnNotification callback.
type recorder struct {
	mu     sync.Mutex
	notes  []note
	signal chan struct{} // receives (without blocking) when a note arrives
}

func newRecorder() *recorder {
	return &recorder{signal: make(chan struct{}, 1)}
}

// add records a notification.
func (r *recorder) add(method string, params json.RawMessage) {
	r.mu.Lock()
	r.notes = append(r.notes, note{method, params})
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// mark is the index of the next notification.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notes)
}

// since returns a copy of the notifications from index from on.
func (r *recorder) since(from int) []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]note(nil), r.notes[from:]...)
}

// waitNote waits for the first notification from index *from on that is
// method and satisfies ok, and moves *from past it.
func (r *recorder) waitNote(t *testing.T, from *int, method string, ok func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	deadline := time.After(rpctest.DefaultTimeout)
	for {
		r.mu.Lock()
		for i := *from; i < len(r.notes); i++ {
			n := r.notes[i]
			if n.Method == method && (ok == nil || ok(n.Params)) {
				*from = i + 1
				r.mu.Unlock()
				return n.Params
			}
		}
		r.mu.Unlock()
		select {
		case <-r.signal:
		case <-deadline:
			t.Fatalf("no %s notification within %v", method, rpctest.DefaultTimeout)
		}
	}
}

// notesFrom returns the notifications of thread from index from on.
func (r *recorder) notesFrom(from int, thread string) []note {
	return ofThread(r.since(from), thread)
}

// threadNotes returns the notifications about thread from index from on,
// up to and including the first with method until (waiting for it).
func (r *recorder) threadNotes(t *testing.T, from int, thread, until string) []note {
	t.Helper()
	end := from
	r.waitNote(t, &end, until, func(raw json.RawMessage) bool { return threadOf(raw) == thread })
	return ofThread(r.since(from)[:end-from], thread)
}

// ofThread returns the notes about thread.
func ofThread(notes []note, thread string) []note {
	var out []note
	for _, n := range notes {
		if threadOf(n.Params) == thread {
			out = append(out, n)
		}
	}
	return out
}

// count returns how many notifications of method for thread the
// connection received.
func (r *recorder) count(method, thread string) int {
	k := 0
	for _, n := range r.since(0) {
		if n.Method == method && threadOf(n.Params) == thread {
			k++
		}
	}
	return k
}

// waitCount waits until count(method, thread) reaches want.
func (r *recorder) waitCount(t *testing.T, method, thread string, want int) {
	t.Helper()
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for r.count(method, thread) < want {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s notifications for %s, want %d", r.count(method, thread), method, thread, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func threadOf(raw json.RawMessage) string {
	var p struct {
		ThreadID string `json:"threadId"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.ThreadID
}

// diffServer is a knightcode app-server driven through package client, with
// every notification it sent kept in order (its recorder). The name is
// historical: every e2e test drives its server through it.
type diffServer struct {
	c    *client.Client
	home string
	*recorder
}

// record makes the diffServer of c (home is its HOME, "" for a wired
// server) and records c's notifications from now on.
func record(c *client.Client, home string) *diffServer {
	s := &diffServer{c: c, home: home, recorder: newRecorder()}
	c.OnNotification(s.add)
	return s
}

// initialize sends initialize on c.
func initialize(t testing.TB, c *client.Client) {
	t.Helper()
	initializeMode(t, c, "")
}

// initializeMode sends initialize on c with capabilities.mode mode (none
// when "").
func initializeMode(t testing.TB, c *client.Client, mode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	p := protocol.InitializeParams{}
	if mode != "" {
		p.Capabilities = &protocol.ClientCapabilities{Mode: mode}
	}
	if _, err := c.Initialize(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// launch starts cmd (the binary with its environment set) as a client,
// capturing its stderr.
func launch(t testing.TB, cmd *exec.Cmd) (*client.Client, *rpctest.SyncBuffer) {
	t.Helper()
	stderr := &rpctest.SyncBuffer{}
	cmd.Stderr = stderr
	c, err := client.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return c, stderr
}

// startDiffServer starts the binary with scripted models id -> script (a
// JSON value of {"responses": [...]}) in its agent directory, initializes
// it and returns it; a cleanup closes it.
func startDiffServer(t *testing.T, scripts map[string]string, args ...string) *diffServer {
	t.Helper()
	env, home := testEnv(t)
	if len(scripts) > 0 {
		writeScripts(t, home, scripts)
	}
	cmd := exec.Command(binary, append([]string{"app-server"}, args...)...)
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	return s
}

// startEnvServer is startDiffServer with extra environment entries (later
// entries win).
func startEnvServer(t *testing.T, extra ...string) *diffServer {
	t.Helper()
	env, home := testEnv(t)
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(env, extra...)
	s, _ := serveDiff(t, cmd, home)
	return s
}

// serveDiff starts cmd (the binary with its environment set; home is its
// HOME), records its notifications, closes it at cleanup (logging its
// stderr when the test failed) and initializes it. It returns the server
// and its captured stderr.
func serveDiff(t *testing.T, cmd *exec.Cmd, home string) (*diffServer, *rpctest.SyncBuffer) {
	t.Helper()
	return serveDiffMode(t, cmd, home, "")
}

// serveDiffMode is serveDiff initializing with capabilities.mode mode
// (none when "").
func serveDiffMode(t *testing.T, cmd *exec.Cmd, home, mode string) (*diffServer, *rpctest.SyncBuffer) {
	t.Helper()
	c, stderr := launch(t, cmd)
	s := record(c, home)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("server exit: %v", err)
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	initializeMode(t, c, mode)
	return s, stderr
}

// crashServer starts the binary with env and initializes it; the caller
// kills it or closes it.
func crashServer(t *testing.T, env []string) (*client.Client, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	c, stderr := launch(t, cmd)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = c.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	initialize(t, c)
	return c, cmd
}

// homeServer is a server started on a given home, so several servers (one
// after the other, or at once) can share the agent directory.
type homeServer struct {
	*diffServer
	cmd    *exec.Cmd
	stderr *rpctest.SyncBuffer
	killed bool
}

// startIn starts the binary on home and initializes it; a cleanup closes it
// unless it was killed.
func startIn(t *testing.T, home string) *homeServer {
	t.Helper()
	cmd := exec.Command(binary, "app-server")
	cmd.Env = serverEnv(home)
	c, stderr := launch(t, cmd)
	h := &homeServer{diffServer: record(c, home), cmd: cmd, stderr: stderr}
	t.Cleanup(func() { h.close(t) })
	initialize(t, c)
	return h
}

// close shuts the server down (stdin EOF) and checks it exited cleanly.
func (h *homeServer) close(t *testing.T) {
	t.Helper()
	err := h.c.Close()
	if err != nil && !h.killed {
		t.Errorf("server exit: %v", err)
	}
	if t.Failed() {
		t.Logf("server stderr:\n%s", h.stderr.String())
	}
}

// kill9 kills the server with SIGKILL, as a crash would.
func (h *homeServer) kill9(t *testing.T) {
	t.Helper()
	h.killed = true
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h.c.Close()
}

// wiredServer builds the server as the binary does.
func wiredServer(t *testing.T) *jsonrpc.Server {
	t.Helper()
	srv, err := newAppServer(options{}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// wiredServerShutAtCleanup is wiredServer shut down by a cleanup.
func wiredServerShutAtCleanup(t *testing.T) *jsonrpc.Server {
	t.Helper()
	srv := wiredServer(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv
}

// inProcessHome points this process's HOME and agent directory (no
// session directory setting) at a new temp dir, for a server wired in
// process, and returns it.
func inProcessHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KNIGHTCODE_CODING_AGENT_DIR", filepath.Join(home, "agent"))
	t.Setenv("KNIGHTCODE_CODING_AGENT_SESSION_DIR", "")
	return home
}

// wiredClient is an initialized in-process client of a wired server whose
// HOME is a temp dir; a cleanup closes it.
func wiredClient(t *testing.T) *client.Client {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	c := client.NewInProcess(wiredServer(t))
	t.Cleanup(func() { c.Close() })
	initialize(t, c)
	return c
}

// call sends a request and returns its error; result receives the result.
func (s *diffServer) call(t *testing.T, method string, params, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	return s.c.Request(ctx, method, params, result)
}

// must sends a request that must succeed.
func (s *diffServer) must(t *testing.T, method string, params, result any) {
	t.Helper()
	if err := s.call(t, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// mustCall sends the typed request m, which must succeed, and returns its
// result (client.Call).
func mustCall[P, R any](t *testing.T, s *diffServer, m protocol.ClientRequest[P, R], p P) R {
	t.Helper()
	return callWithin(t, s.c, rpctest.DefaultTimeout, m, p)
}

// crashCall is mustCall on a bare client, with five times the timeout.
func crashCall[P, R any](t *testing.T, c *client.Client, m protocol.ClientRequest[P, R], p P) R {
	t.Helper()
	return callWithin(t, c, 5*rpctest.DefaultTimeout, m, p)
}

// callWithin sends the typed request m on c, which must succeed within
// limit, and returns its result.
func callWithin[P, R any](t *testing.T, c *client.Client, limit time.Duration, m protocol.ClientRequest[P, R], p P) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := client.Call(ctx, c, m, p)
	if err != nil {
		t.Fatalf("%s: %v", m.Name, err)
	}
	return res
}

// startThread starts a fullAccess thread in cwd, with model id of the
// scripted provider when id is not "".
func (s *diffServer) startThread(t *testing.T, cwd, model string) string {
	t.Helper()
	res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: cwd, ApprovalMode: "fullAccess"})
	if model != "" {
		mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
			ThreadID: res.Thread.ID, Model: &protocol.ModelRef{Provider: "scripted", ID: model}})
	}
	return res.Thread.ID
}

// startTurn starts a turn and returns its id from turn/started.
func (s *diffServer) startTurn(t *testing.T, threadID, text string) (turnID string, from int) {
	t.Helper()
	from = s.mark()
	mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: threadID, Text: text})
	var started protocol.TurnStartedParams
	raw := s.waitNote(t, &from, protocol.TurnStarted.Name, func(r json.RawMessage) bool { return threadOf(r) == threadID })
	if err := json.Unmarshal(raw, &started); err != nil {
		t.Fatal(err)
	}
	return started.Turn.ID, from
}

// runTurn runs a turn to its end and returns its summary and the files of
// its turn/diff/updated.
func (s *diffServer) runTurn(t *testing.T, threadID, text string) (protocol.Turn, []protocol.FileTotal) {
	t.Helper()
	turnID, from := s.startTurn(t, threadID, text)
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == threadID }), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.ID != turnID || done.Turn.Status != protocol.TurnCompleted {
		t.Fatalf("turn %s ended %+v", turnID, done.Turn)
	}
	var files protocol.TurnDiffUpdatedParams
	if err := json.Unmarshal(s.waitNote(t, &from, protocol.TurnDiffUpdated.Name, func(r json.RawMessage) bool { return threadOf(r) == threadID }), &files); err != nil {
		t.Fatal(err)
	}
	if files.TurnID != turnID {
		t.Fatalf("turn/diff/updated of %s, want %s", files.TurnID, turnID)
	}
	return done.Turn, files.Files
}

// readThread answers thread/read for the newest page.
func (s *diffServer) readThread(t *testing.T, thread string) protocol.ThreadReadResult {
	t.Helper()
	var res protocol.ThreadReadResult
	s.must(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: thread}, &res)
	return res
}

// waitTurnCompleted waits for the turn/completed of thread from *from on.
func (s *diffServer) waitTurnCompleted(t *testing.T, from *int, thread string) protocol.Turn {
	t.Helper()
	raw := s.waitNote(t, from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	return decode[protocol.TurnCompletedParams](t, raw).Turn
}

func (s *diffServer) readDiff(t *testing.T, p protocol.ThreadDiffReadParams) protocol.ThreadDiffReadResult {
	t.Helper()
	return mustCall(t, s, protocol.ThreadDiffRead, p)
}

func fileOf(t *testing.T, res protocol.ThreadDiffReadResult, path string) protocol.DiffFile {
	t.Helper()
	for _, f := range res.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("%s not in the diff: %+v", path, summarize(res.Files))
	return protocol.DiffFile{}
}

// fileSummary is a diff file reduced to what tests compare.
type fileSummary struct {
	Path, OldPath, Status string
	Additions, Deletions  int
	Hunks                 int
}

func summarize(files []protocol.DiffFile) []fileSummary {
	out := []fileSummary{}
	for _, f := range files {
		out = append(out, fileSummary{f.Path, f.OldPath, f.Status, f.Additions, f.Deletions, len(f.Hunks)})
	}
	return out
}

// indexState is the user's index file as bytes and modification time, to
// check that reads never write it.
type indexState struct {
	data  []byte
	mtime time.Time
}

func readIndex(t *testing.T, repo string) indexState {
	t.Helper()
	p := filepath.Join(repo, ".git", "index")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return indexState{b, fi.ModTime()}
}

func (a indexState) same(b indexState) bool {
	return bytes.Equal(a.data, b.data) && a.mtime.Equal(b.mtime)
}

// wireErr is an error response reduced to what the tests compare: its code,
// data.field of invalidParams, data.reason and data.paths of gitConflict.
type wireErr struct {
	Code   string
	Field  string
	Reason string
	Paths  []string
}

func toWireErr(t *testing.T, err error) wireErr {
	t.Helper()
	if err == nil {
		return wireErr{}
	}
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an error response: %v", err)
	}
	w := wireErr{Code: e.Code}
	if raw, ok := e.Data.(json.RawMessage); ok {
		var d struct {
			Field  string   `json:"field"`
			Reason string   `json:"reason"`
			Paths  []string `json:"paths"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("error data %s: %v", raw, err)
		}
		w.Field, w.Reason, w.Paths = d.Field, d.Reason, d.Paths
	}
	// A stale id's message tells the client what to do about it.
	if w.Reason == "diffChanged" && !strings.Contains(e.Message, "read the diff again") {
		t.Errorf("diffChanged message %q does not say to read the diff again", e.Message)
	}
	return w
}

// wantErr checks that a request fails as want; Paths are compared only when
// want has some.
func (s *diffServer) wantErr(t *testing.T, method string, params any, want wireErr) {
	t.Helper()
	got := toWireErr(t, s.call(t, method, params, nil))
	if want.Paths == nil {
		got.Paths = nil
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("%s %s: error (-got +want):\n%s", method, mustJSON(params), diff)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

func intp(n int) *int { return &n }

func ptrTo(s string) *string { return &s }
