package tools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/proctest"
)

// runBackground runs command with a bash tool recording into g (as All
// makes it) after writing the command's process group id to a file, and
// returns that id. The command must succeed.
func runBackground(t *testing.T, g *ProcessGroups, command, wantText string) int {
	t.Helper()
	dir := t.TempDir()
	bash := All(dir, WithProcessGroups(g))[1]
	res, text := execute(t, context.Background(), bash, bashCall{Command: "echo $$ > pgid; " + command})
	if res.IsError || text != wantText {
		t.Fatalf("isError=%v text=%q, want %q", res.IsError, text, wantText)
	}
	return proctest.ReadPID(t, filepath.Join(dir, "pgid"))
}

// stopAllCleanup stops whatever g still tracks when the test ends, so a
// failing test leaves no process behind.
func stopAllCleanup(t *testing.T, g *ProcessGroups) {
	t.Cleanup(func() {
		if err := g.StopAll(context.Background()); err != nil {
			t.Errorf("cleanup StopAll: %v", err)
		}
	})
}

// TestProcessGroupsStopAll leaves background processes running after the
// bash command exits: the group is tracked, and StopAll ends it (SIGTERM,
// or SIGKILL after Grace for a group that ignores SIGTERM, or at once when
// ctx has ended) and forgets it.
func TestProcessGroupsStopAll(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		command string
		grace   time.Duration
		ctx     context.Context
	}{
		{"sigterm", "sleep 100 & echo started", 2 * time.Second, context.Background()},
		{"pipeline and subshell", "(sleep 100 | cat) & (while :; do sleep 0.05; done) & echo started", 2 * time.Second, context.Background()},
		{"ignores sigterm", "(trap '' TERM; while :; do sleep 0.05; done) & echo started", 50 * time.Millisecond, context.Background()},
		{"ctx ended", "(trap '' TERM; sleep 100) & echo started", time.Hour, cancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := NewProcessGroups()
			g.Grace = tc.grace
			stopAllCleanup(t, g)
			pgid := runBackground(t, g, tc.command, "started\n")
			if live := liveMembers(t, pgid); len(live) == 0 {
				t.Fatalf("process group %d has no live member after the command exited", pgid)
			}
			if diff := cmp.Diff(g.Tracked(), []int{pgid}); diff != "" {
				t.Errorf("tracked (-got +want):\n%s", diff)
			}
			if err := g.StopAll(tc.ctx); err != nil {
				t.Errorf("StopAll: %v", err)
			}
			if live := liveMembers(t, pgid); live != nil {
				t.Errorf("process group %d still has live members after StopAll: %v", pgid, live)
			}
			if got := g.Tracked(); got != nil {
				t.Errorf("tracked after StopAll: %v, want none", got)
			}
		})
	}
}

// TestProcessGroupsDropsEndedGroups checks that a command without
// background processes is not tracked, and that a tracked group that ended
// by itself is dropped without a signal.
func TestProcessGroupsDropsEndedGroups(t *testing.T) {
	t.Parallel()
	g := NewProcessGroups()
	stopAllCleanup(t, g)
	runBackground(t, g, "echo done", "done\n")
	if got := g.Tracked(); got != nil {
		t.Fatalf("tracked after a command without background processes: %v", got)
	}

	flag := filepath.Join(t.TempDir(), "stop")
	pgid := runBackground(t, g, "(while [ ! -f "+flag+" ]; do sleep 0.01; done) & echo started", "started\n")
	if diff := cmp.Diff(g.Tracked(), []int{pgid}); diff != "" {
		t.Fatalf("tracked (-got +want):\n%s", diff)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for liveMembers(t, pgid) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the background loop of group %d never ended", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := g.Tracked(); got != nil {
		t.Errorf("tracked after the group ended: %v, want none", got)
	}
	if err := g.StopAll(context.Background()); err != nil {
		t.Errorf("StopAll of ended groups: %v", err)
	}
}

// TestProcessGroupsConcurrent runs bash calls sharing one tracker at once
// (as a thread's parallel tool calls may): every group is tracked, and one
// StopAll ends them all.
func TestProcessGroupsConcurrent(t *testing.T) {
	t.Parallel()
	g := NewProcessGroups()
	stopAllCleanup(t, g)
	const n = 4
	dirs := make([]string, n)
	results := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		dirs[i] = t.TempDir()
		bash := NewBash(dirs[i])
		bash.Groups = g
		wg.Add(1)
		go func() { // ends when the command has exited
			defer wg.Done()
			res := bash.Execute(context.Background(), []byte(`{"command": "echo $$ > pgid; sleep 100 & echo started"}`))
			if !res.IsError && len(res.Content) == 1 {
				results[i] = res.Content[0].Text
			}
		}()
	}
	wg.Wait()
	var want []int
	for i := range n {
		if results[i] != "started\n" {
			t.Fatalf("call %d: %q, want started", i, results[i])
		}
		want = append(want, proctest.ReadPID(t, filepath.Join(dirs[i], "pgid")))
	}
	slices.Sort(want) // Tracked's order
	if diff := cmp.Diff(g.Tracked(), want); diff != "" {
		t.Errorf("tracked (-got +want):\n%s", diff)
	}
	if err := g.StopAll(context.Background()); err != nil {
		t.Errorf("StopAll: %v", err)
	}
	for _, pgid := range want {
		if live := liveMembers(t, pgid); live != nil {
			t.Errorf("process group %d still has live members after StopAll: %v", pgid, live)
		}
	}
}

// TestStopError checks the error's text and that it wraps ctx's error.
func TestStopError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *StopError
		want string
	}{
		{&StopError{PGIDs: []int{7, 9}}, "tools: background process groups [7 9] still running after SIGKILL"},
		{&StopError{PGIDs: []int{7}, Err: context.DeadlineExceeded}, "tools: background process groups [7] still running after SIGKILL: context deadline exceeded"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got, want := errors.Is(tc.err, context.DeadlineExceeded), tc.err.Err != nil; got != want {
			t.Errorf("errors.Is(%v, DeadlineExceeded) = %v, want %v", tc.err, got, want)
		}
	}
}

// tokenHolders lists the live (not zombie) processes whose environment
// holds EnvProcTag=token, as the test sees them in /proc independently of
// the tool, with their state.
func tokenHolders(t *testing.T, token string) map[int]string {
	t.Helper()
	needle := "\x00" + EnvProcTag + "=" + token + "\x00"
	out := map[int]string{}
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range envs {
		env, err := os.ReadFile(p)
		if err != nil || !strings.Contains("\x00"+string(env), needle) {
			continue
		}
		dir := filepath.Dir(p)
		pid, _ := strconv.Atoi(filepath.Base(dir))
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			out[pid] = string(stat)
		}
	}
	return out
}

// TestStopAllEndsEscapedProcesses runs commands whose processes leave the
// command's process group (setsid -f, setsid nested, perl's setpgrp, one
// that ignores SIGTERM) and exit the command: StopAll must end every
// process that carries the thread's token, and reap the ones that became
// the server's children (issue 15: they outlived unload, archive and server
// exit).
func TestStopAllEndsEscapedProcesses(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("processes are found by token on Linux only")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid:", err)
	}
	commands := []string{
		"setsid -f sleep 300; echo started",
		"setsid -f sh -c 'setsid -f sleep 300; sleep 300'; echo started",
		"setsid -f sh -c 'trap \"\" TERM; sleep 300 & wait'; echo started",
		"(sleep 300 &) ; echo started",
	}
	if _, err := exec.LookPath("perl"); err == nil {
		commands = append(commands, "perl -e 'setpgrp; sleep 300' & echo started")
	}
	g := NewProcessGroups()
	g.Grace = 200 * time.Millisecond
	stopAllCleanup(t, g)
	for _, c := range commands {
		runBackground(t, g, c, "started\n")
	}
	// setsid -f returns before its child has started: wait (bounded) until
	// every command's escapee exists.
	want := len(commands) + 2 // the nested sh and the trap's sleep
	var before map[int]string
	for deadline := time.Now().Add(30 * time.Second); ; {
		before = tokenHolders(t, g.Token())
		if len(before) >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(before) < want {
		t.Fatalf("%d processes carry the token before StopAll, want at least %d: %v", len(before), want, before)
	}
	if err := g.StopAll(context.Background()); err != nil {
		t.Errorf("StopAll: %v", err)
	}
	var left map[int]string
	for deadline := time.Now().Add(5 * time.Second); ; {
		if left = tokenHolders(t, g.Token()); len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes carrying the token survived StopAll: %v", left)
	}
	g.mu.Lock()
	if n := len(g.watched); n != 0 {
		t.Errorf("StopAll kept %d process handles (pidfds) open", n)
	}
	g.mu.Unlock()
	// The escapees were re-parented to this process (a subreaper): none may
	// be left as its unreaped zombie.
	self := strconv.Itoa(os.Getpid())
	for pid := range before {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // reaped
		}
		i := bytes.LastIndexByte(stat, ')')
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[0] == "Z" && f[1] == self {
			t.Errorf("process %d is left an unreaped zombie of the server: %s", pid, stat)
		}
	}
}

// TestBashTagsCommands checks that a command's environment holds the
// token of its tool's ProcessGroups, that each tracker has its own, and
// that an inherited tag is replaced, not doubled.
func TestBashTagsCommands(t *testing.T) {
	t.Parallel()
	a, b := NewProcessGroups(), NewProcessGroups()
	if a.Token() == b.Token() || len(a.Token()) != 32 {
		t.Fatalf("tokens %q and %q, want two different 32-digit tokens", a.Token(), b.Token())
	}
	dir := t.TempDir()
	bash := NewBash(dir)
	bash.Groups = a
	res, text := execute(t, context.Background(), bash, bashCall{Command: "env | grep ^" + EnvProcTag + "="})
	if res.IsError || text != EnvProcTag+"="+a.Token()+"\n" {
		t.Errorf("isError=%v env %q, want %s=%s", res.IsError, text, EnvProcTag, a.Token())
	}
	if got := a.env([]string{"A=1", EnvProcTag + "=outer"}); !slices.Equal(got, []string{"A=1", EnvProcTag + "=" + a.Token()}) {
		t.Errorf("env = %q, want the inherited tag replaced", got)
	}
}
