package main

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
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/gittest"
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

// testEnv is the environment of a server process: home, config and agent
// directories in the test's temp dir.
func testEnv(t *testing.T) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	return append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"KNIGHTCODE_CODING_AGENT_DIR="+filepath.Join(home, "agent"),
		"KNIGHTCODE_CODING_AGENT_SESSION_DIR=",
		"GORACE=atexit_sleep_ms=0", // a -race binary otherwise sleeps 1 s at exit
	), home
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

const (
	e2eInitialize  = `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"e2e","version":"1"}}}`
	e2eInitialized = `{"method":"initialized","params":{}}`
)

func initResult(home string) string {
	return `{"id":1,"result":{"serverInfo":{"name":"knightcode","version":"` + binaryVersion + `"},"platform":{"os":"linux","arch":"x64","homeDir":"` + home + `"}}}`
}

// TestE2EScripts plays protocol scripts against the binary, one process per
// script; each ends with stdin EOF, after which the server must end its
// output and exit 0.
func TestE2EScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps func(home string) []rpctest.Step
	}{
		{"handshake order and errors", func(home string) []rpctest.Step {
			return []rpctest.Step{
				{Send: `{"id":0,"method":"server/diagnostics","params":{}}`},
				{Expect: `{"id":0,"error":{"code":"notInitialized","message":"server/diagnostics before the handshake finished: send initialize, wait for its result, then send initialized"}}`},
				{Send: `{"id":1,"method":"initialize","params":{"capabilities":{"optOutNotifications":"x"}}}`},
				{Expect: `{"id":1,"error":{"code":"invalidParams","message":"capabilities.optOutNotifications: expected array, got string","data":{"field":"capabilities.optOutNotifications"}}}`},
				{Send: e2eInitialize},
				{Expect: initResult(home)},
				{Send: `{"id":2,"method":"server/diagnostics","params":{}}`},
				{Expect: `{"id":2,"error":{"code":"notInitialized","message":"server/diagnostics before the handshake finished: send initialize, wait for its result, then send initialized"}}`},
				{Send: e2eInitialized},
				{Send: `{"id":3,"method":"initialize","params":{}}`},
				{Expect: `{"id":3,"error":{"code":"invalidParams","message":"the connection is already initialized; initialize is sent once"}}`},
				{Send: `{"id":4,"method":"thread/nothing","params":{}}`},
				{Expect: `{"id":4,"error":{"code":"methodNotFound","message":"unknown method thread/nothing"}}`},
				{Send: `{"id":5,"method":"server/diagnostics","params":[]}`},
				{Expect: `{"id":5,"error":{"code":"invalidParams","message":"params must be a JSON object, got array"}}`},
				{CloseInput: true},
				{ExpectEOF: true},
			}
		}},
		{"ids of both kinds echoed exactly", func(home string) []rpctest.Step {
			return []rpctest.Step{
				{Send: `{"jsonrpc":"2.0","id":"req-\u00e9\"1","method":"initialize","params":{}}`},
				{Expect: strings.Replace(initResult(home), `"id":1`, `"id":"req-é\"1"`, 1)},
				{Send: e2eInitialized},
				{Send: `{"id":"req-\u00e9\"1","method":"a/b"}`},
				{ExpectRaw: `{"id":"req-\u00e9\"1","error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
				{Send: `{"id":7.0,"method":"a/b"}`},
				{ExpectRaw: `{"id":7.0,"error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
				{Send: `{"id":-12e-1,"method":"a/b"}`},
				{ExpectRaw: `{"id":-12e-1,"error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
				{Send: `{"id":"","method":"a/b"}`},
				{ExpectRaw: `{"id":"","error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
				{CloseInput: true},
				{ExpectEOF: true},
			}
		}},
		{"garbage lines", func(home string) []rpctest.Step {
			return []rpctest.Step{
				{Send: "\x00\xff binary"},
				{Expect: `{"method":"error","params":{"code":"parseError","message":"invalid JSON: invalid character '\\x00' looking for beginning of value"}}`},
				{Send: `{"id":"g1","method":"initialize","params":{"capabilities":`},
				{Expect: `{"id":"g1","error":{"code":"parseError","message":"invalid JSON: unexpected end of JSON input"}}`},
				{Send: e2eInitialize},
				{Expect: initResult(home)},
				{Send: e2eInitialized},
				{Send: `{"id":2,"method":"server/diagnostics","params":{}} {"id":3}`},
				{Expect: `{"id":2,"error":{"code":"parseError","message":"invalid JSON: invalid character '{' after top-level value"}}`},
				{Send: `{"id":4,"method":"a/b"}`},
				{Expect: `{"id":4,"error":{"code":"methodNotFound","message":"unknown method a/b"}}`},
				{CloseInput: true},
				{ExpectEOF: true},
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := start(t, "app-server")
			rpctest.Run(t, p.peer(t), tt.steps(p.home))
			if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
}

// TestE2EOptOut checks that optOutNotifications filters the error
// notification of a garbage line on the connection that asked, and only
// there.
func TestE2EOptOut(t *testing.T) {
	t.Parallel()
	for _, optOut := range []bool{true, false} {
		t.Run(fmt.Sprintf("optOut=%v", optOut), func(t *testing.T) {
			t.Parallel()
			p := start(t, "app-server")
			peer := p.peer(t)
			names := `["item/agentMessage/delta","no/such/notification"]`
			if optOut {
				names = `["error","item/agentMessage/delta"]`
			}
			peer.Send(`{"id":1,"method":"initialize","params":{"capabilities":{"optOutNotifications":` + names + `}}}`)
			peer.Expect(initResult(p.home))
			peer.Send(e2eInitialized)
			peer.Send(`not json`)
			peer.Send(`{"id":"cut","method":`) // a response is never filtered
			if !optOut {
				peer.Expect(`{"method":"error","params":{"code":"parseError","message":"invalid JSON: invalid character 'o' in literal null (expecting 'u')"}}`)
			}
			peer.Expect(`{"id":"cut","error":{"code":"parseError","message":"invalid JSON: unexpected end of JSON input"}}`)
			peer.CloseInput()
			peer.ExpectEOF()
		})
	}
}

// TestE2EOversizedLine writes a real 64 MiB + 1 byte line through the pipe:
// it is dropped with an error notification naming its id, and the
// connection goes on; a line of exactly 64 MiB is read.
func TestE2EOversizedLine(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	peer := p.peer(t)
	rpctest.Handshake(t, peer)
	line := func(id string, size int) []byte {
		head := `{"id":"` + id + `","method":"a/b","params":"`
		b := make([]byte, 0, size+1)
		b = append(b, head...)
		b = append(b, bytes.Repeat([]byte("a"), size-len(head)-2)...)
		b = append(b, `"}`...)
		return append(b, '\n')
	}
	peer.SendBytes(line("over", 64<<20+1))
	peer.Expect(`{"method":"error","params":{"code":"parseError","message":"line of 67108865 bytes exceeds the 67108864-byte limit; dropped","id":"over"}}`)
	peer.SendBytes(line("max", 64<<20))
	peer.Expect(`{"id":"max","error":{"code":"methodNotFound","message":"unknown method a/b"}}`)
	peer.Send(`{"id":2,"method":"a/b"}`)
	peer.Expect(`{"id":2,"error":{"code":"methodNotFound","message":"unknown method a/b"}}`)
	peer.CloseInput()
	peer.ExpectEOF()
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestE2ESignals checks SIGTERM and SIGINT: input stops at once (a request
// sent after the server logged its shutdown is never answered), output ends
// and the process exits 0.
func TestE2ESignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			p := start(t, "app-server")
			peer := p.peer(t)
			rpctest.Handshake(t, peer)
			peer.Send(`{"id":2,"method":"server/diagnostics","params":{}}`)
			if line := peer.Next(); !bytes.HasPrefix(line, []byte(`{"id":2,"result":{"rssBytes":`)) {
				t.Errorf("diagnostics: %s", line)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			p.waitStderr(t, `msg="shutting down"`)
			_, _ = p.stdin.Write([]byte(`{"id":3,"method":"server/diagnostics","params":{}}` + "\n"))
			peer.ExpectEOF()
			if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
				t.Errorf("exit code %d", code)
			}
		})
	}
}

// TestE2EStdinEOF checks that closing stdin with nothing in flight ends the
// process at once, well before the shutdown grace period.
func TestE2EStdinEOF(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	peer := p.peer(t)
	rpctest.Handshake(t, peer)
	peer.CloseInput()
	peer.ExpectEOF()
	if code := p.wait(t, 5*time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !strings.Contains(p.stderr.String(), `msg="shutdown complete"`) {
		t.Errorf("log lacks the shutdown:\n%s", p.stderr.String())
	}
}

// TestE2EClientNeverReads checks that a client that never reads stdout does
// not keep the server alive: after stdin EOF it exits by the 10 s limit
// (bound asserted: 12 s) with exit code 1, saying why.
func TestE2EClientNeverReads(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	var in bytes.Buffer
	in.WriteString(e2eInitialize + "\n" + e2eInitialized + "\n")
	for i := range 5000 { // ~1.5 MB of responses, far past a pipe's buffer
		fmt.Fprintf(&in, `{"id":%d,"method":"server/diagnostics","params":{}}`+"\n", i+2)
	}
	if _, err := p.stdin.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := p.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 12*time.Second)
	t.Logf("exited %v after stdin EOF", time.Since(begin))
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(p.stderr.String(), "output not drained by the shutdown limit") {
		t.Errorf("log does not say output was not drained:\n%s", p.stderr.String())
	}
}

// TestE2EClientClosedStdout checks that a client closing its end of stdout
// ends the server with an error instead of killing it with SIGPIPE.
func TestE2EClientClosedStdout(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	p.stdout.Close()
	if _, err := p.stdin.Write([]byte(e2eInitialize + "\n")); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, rpctest.DefaultTimeout); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(p.stderr.String(), "broken pipe") {
		t.Errorf("log does not mention the broken pipe:\n%s", p.stderr.String())
	}
}

// TestE2EHelp checks that help and usage errors print on stderr, write
// nothing on stdout and never read stdin (which stays open).
func TestE2EHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		wantCode int
		golden   string
	}{
		{[]string{"app-server", "--help"}, 0, "app-server-help.txt"},
		{[]string{"app-server", "-h"}, 0, "app-server-help.txt"},
		{[]string{"--help"}, 0, "help.txt"},
		{[]string{"app-server", "--port", "1"}, 2, "unknown-flag.txt"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			p := start(t, tt.args...)
			out, err := io.ReadAll(p.stdout)
			if err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, rpctest.DefaultTimeout); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if len(out) != 0 {
				t.Errorf("stdout: %q", out)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.stderr.String(); got != string(want) {
				t.Errorf("stderr:\n%s\nwant (testdata/%s):\n%s", got, tt.golden, want)
			}
		})
	}
}

// BenchmarkRoundTrip measures one request and its response through the
// binary's stdin and stdout.
func BenchmarkRoundTrip(b *testing.B) {
	for _, method := range []string{"a/b", protocol.ServerDiagnostics.Name} {
		b.Run(method, func(b *testing.B) {
			cmd := exec.Command(binary, "app-server")
			cmd.Env = append(os.Environ(), "HOME="+b.TempDir(), "GORACE=atexit_sleep_ms=0")
			c, err := client.Start(cmd)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				var res json.RawMessage
				err := c.Request(ctx, method, struct{}{}, &res)
				if err != nil && method != "a/b" {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestE2EGenerateIntoClosedPipe runs `app-server generate-ts` into a pipe
// whose reader stops after the first bytes (as `| head` does): the command
// exits 0 without an error message.
func TestE2EGenerateIntoClosedPipe(t *testing.T) {
	t.Parallel()
	env, _ := testEnv(t)
	cmd := exec.Command(binary, "app-server", "generate-ts")
	cmd.Env = env
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	buf := make([]byte, 16)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := cmd.Wait(); err != nil || stderr.Len() > 0 {
		t.Errorf("generate-ts into a closed pipe: %v, stderr %q", err, stderr.String())
	}
}
