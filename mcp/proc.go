package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/internal/procgroup"
)

// The stop sequence of a stdio server (EXTENSIBILITY.md §2 "Process
// hygiene"): close its stdin, wait up to stopGrace for it to exit, SIGTERM
// its process group, wait up to stopGrace (killBy at the latest), SIGKILL
// the group; stop returns by stopLimit whatever is left (a zombie is not
// left: it runs nothing).
const (
	stopGrace = 2 * time.Second
	killBy    = stopLimit - 250*time.Millisecond
	stopLimit = 4 * time.Second
)

// stderrRate bounds the bytes per second of a server's stderr that reach
// the log; the rest is counted and dropped.
const stderrRate = 64 << 10

// baseEnv is the environment every stdio server starts with, taken from
// environ (the app-server's own): PATH, HOME, TMPDIR, LANG and the LC_*
// locale variables — never the provider API keys or anything else the
// app-server was given (issue 27, "Security decisions"). The server's
// configured env (expanded) is added after it and wins.
func baseEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains([]string{"PATH", "HOME", "TMPDIR", "LANG"}, name) || strings.HasPrefix(name, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}

// withEnv is env with each name=value of extra set, replacing an entry of
// that name (names in sorted order, for a stable environment).
func withEnv(env []string, extra map[string]string) []string {
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, n+"=") })
		env = append(env, n+"="+extra[n])
	}
	return env
}

// stdioTransport is go-sdk's CommandTransport for one server's command,
// which it starts in a process group of its own with its stderr logged
// (logStderr); pid tells the started process's pid.
type stdioTransport struct {
	cmd    *exec.Cmd
	server string
	log    *slog.Logger

	mu  sync.Mutex
	pid int // 0 until started
}

// newStdioTransport makes the transport of argv run in dir with env.
func newStdioTransport(server string, argv []string, dir string, env []string, log *slog.Logger) *stdioTransport {
	// No context ends it: stop and kill do (procgroup.Setup's Cancel
	// needs a command made with one).
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	procgroup.Setup(cmd)
	// A descendant holding stdout open must not keep Wait (the stop)
	// waiting: the group is killed after it anyway.
	cmd.WaitDelay = stopGrace
	return &stdioTransport{cmd: cmd, server: server, log: log}
}

// Connect starts the command (mcp.Transport).
func (t *stdioTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.cmd.Stderr = w
	conn, err := (&mcpsdk.CommandTransport{Command: t.cmd, TerminateDuration: stopGrace}).Connect(ctx)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	t.mu.Lock()
	t.pid = t.cmd.Process.Pid
	t.mu.Unlock()
	running.add(t.pid)
	go logStderr(r, t.server, t.log)
	return conn, nil
}

// running are the process groups of the stdio servers started and not
// yet stopped, process-wide: KillAll ends what a stuck unload left.
var running = groups{pids: map[int]bool{}}

type groups struct {
	mu   sync.Mutex
	pids map[int]bool
}

func (g *groups) add(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pids[pid] = true
}

func (g *groups) remove(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pids, pid)
}

// KillAll sends SIGKILL to the process group of every stdio server still
// running (on Windows, ends its process tree) and returns how many there
// were: the app-server's last shutdown step, so that no server outlives
// it even when a thread could not unload in time (an extension's handler
// that never returns) and its stop never ran (EXTENSIBILITY.md §2
// "Process hygiene").
func KillAll() int {
	running.mu.Lock()
	pids := slices.Collect(maps.Keys(running.pids))
	clear(running.pids)
	running.mu.Unlock()
	n := 0
	for _, pid := range pids {
		if groupAlive(pid) {
			_ = procgroup.Kill(pid)
			n++
		}
	}
	return n
}

// started is the pid of the started command, 0 before.
func (t *stdioTransport) started() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pid
}

// stop ends the server within stopLimit: closeSession (go-sdk's Close,
// which closes its stdin and waits for it), then, stopGrace later or once
// the leader exited, SIGTERM to whatever is left of its process group,
// and SIGKILL to what still runs stopGrace after that, or at killBy if
// that is earlier. The group's zombies (a killed
// grandchild waiting for init to reap it) are not waited for. A
// closeSession still waiting (a descendant outside the group holding its
// pipes) is left to finish on its own.
func (t *stdioTransport) stop(closeSession func()) {
	begin := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if closeSession != nil {
			closeSession()
		}
	}()
	select {
	case <-done:
	case <-time.After(stopGrace):
	}
	pid := t.started()
	if pid == 0 {
		<-done
		return
	}
	if groupAlive(pid) && termGroup(pid) == nil {
		waitGroupGone(pid, earliest(time.Now().Add(stopGrace), begin.Add(killBy)))
	}
	if groupAlive(pid) && procgroup.Kill(pid) == nil {
		waitGroupGone(pid, begin.Add(stopLimit))
	}
	running.remove(pid)
	select {
	case <-done:
	case <-time.After(time.Until(begin.Add(stopLimit))):
	}
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// waitGroupGone waits until the process group led by pid has no live
// member, or deadline.
func waitGroupGone(pid int, deadline time.Time) {
	for groupAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the server's process group at once (an abandoned connect).
func (t *stdioTransport) kill() {
	if pid := t.started(); pid != 0 {
		_ = procgroup.Kill(pid)
		running.remove(pid)
	}
}

// logStderr logs each line a server writes to its stderr, prefixed
// mcp[<server>], at most stderrRate bytes a second; what is over is
// dropped and counted in the next line logged.
func logStderr(r io.ReadCloser, server string, log *slog.Logger) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	prefix := "mcp[" + server + "]"
	windowStart, used, dropped := time.Now(), 0, 0
	for sc.Scan() {
		line := sc.Text()
		if now := time.Now(); now.Sub(windowStart) >= time.Second {
			windowStart, used = now, 0
		}
		if used+len(line) > stderrRate {
			dropped += len(line) + 1
			continue
		}
		used += len(line) + 1
		if dropped > 0 {
			log.Warn(prefix+" stderr over its rate limit", "droppedBytes", dropped)
			dropped = 0
		}
		log.Info(prefix + " " + line)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		log.Warn(prefix+" reading stderr failed", "err", err)
	}
}
