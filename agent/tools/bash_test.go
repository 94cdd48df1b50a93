package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type bashCall struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout,omitempty"`
}

func seconds(s float64) *float64 { return &s }

func TestBash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name     string
		command  string
		want     string
		isError  bool
		exitCode *int
	}{
		{"stdout", "echo hello", "hello\n", false, ptr(0)},
		{"combined", "echo out; echo err >&2; echo out2", "out\nerr\nout2\n", false, ptr(0)},
		{"cwd", "pwd", dir + "\n", false, ptr(0)},
		{"noOutput", "true", "(no output)", false, ptr(0)},
		{"exitCode", "echo failing; exit 3", "failing\n\nCommand exited with code 3.", true, ptr(3)},
		{"exitNoOutput", "false", "Command exited with code 1.", true, ptr(1)},
		{"noStdin", "cat; echo done", "done\n", false, ptr(0)},
		{"signal", "kill -9 $$", "Command was killed: signal: killed.", true, nil},
		{"bashism", "[[ 1 == 1 ]] && echo yes", "yes\n", false, ptr(0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, text := execute(t, context.Background(), NewBash(dir), bashCall{Command: tc.command})
			if text != tc.want {
				t.Errorf("text = %q, want %q", text, tc.want)
			}
			if res.IsError != tc.isError {
				t.Errorf("isError = %v, want %v", res.IsError, tc.isError)
			}
			if diff := cmp.Diff(res.Details.ExitCode, tc.exitCode); diff != "" {
				t.Errorf("exitCode (-got +want):\n%s", diff)
			}
		})
	}
}

func ptr(i int) *int { return &i }

func TestBashOutputTruncation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want100 strings.Builder
	for i := 489; i <= 1000; i++ { // 512 lines of 100 bytes = 50KB
		fmt.Fprintf(&want100, "%099d\n", i)
	}
	tests := []struct {
		name      string
		command   string
		want      string
		truncated bool
	}{
		{"lines", "seq 1 5000", seqLines(3001, 5000) + "\n[Output cut: showing lines 3001-5000 of 5000 (the last 2000 lines within 50KB).]", true},
		{"exactlyMaxLines", "seq 1 2000", seqLines(1, 2000), false},
		{"bytes", "for i in $(seq 1 1000); do printf '%099d\\n' $i; done",
			strings.TrimSuffix(want100.String(), "\n") + "\n\n[Output cut: showing lines 489-1000 of 1000 (the last 512 lines within 50KB).]", true},
		{"oneHugeLine", "head -c 200000 /dev/zero | tr '\\0' x",
			"…" + strings.Repeat("x", 50*1024) + "\n\n[Output cut: showing the last 50.0KB of its last line (1 lines, 195.3KB in all).]", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, text := execute(t, context.Background(), NewBash(dir), bashCall{Command: tc.command})
			if res.IsError {
				t.Fatalf("bash failed: %s", trimMiddle(text))
			}
			if text != tc.want {
				t.Errorf("text =\n%q\nwant\n%q", trimMiddle(text), trimMiddle(tc.want))
			}
			if res.Details.Truncated != tc.truncated {
				t.Errorf("truncated = %v, want %v", res.Details.Truncated, tc.truncated)
			}
		})
	}
}

func seqLines(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "%d\n", i)
	}
	return sb.String()
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	t.Parallel()
	// Many small writes push the buffer through repeated trimming.
	b := newTailBuffer(100)
	var all bytes.Buffer
	for i := range 1000 {
		line := fmt.Sprintf("%d\n", i)
		b.Write([]byte(line))
		all.WriteString(line)
	}
	text, truncated := b.render()
	if !truncated {
		t.Fatalf("not truncated")
	}
	body, _, _ := strings.Cut(text, "\n\n[")
	if !strings.HasSuffix(all.String(), body+"\n") || !strings.HasPrefix(body, "9") || len(body) > 100 {
		t.Errorf("tail = %q, want whole last lines of at most 100 bytes", body)
	}
}

// waitForPID waits for the file a command writes its $$ into and returns it.
func waitForPID(t *testing.T, path string, stop <-chan struct{}) (int, bool) {
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid, err == nil
		}
		select {
		case <-stop:
			return 0, false
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// liveMembers lists the members of process group pgid that have not exited,
// as the test sees them independently of the tool: nothing when kill(-pgid, 0)
// finds no process, else the members /proc shows in a state other than zombie.
func liveMembers(t *testing.T, pgid int) []string {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if runtime.GOOS != "linux" {
		return []string{"kill(-pgid, 0) found the group"}
	}
	var live []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, string(b[:i+1])+" "+f[0])
		}
	}
	return live
}

// TestBashCancelKillsProcessGroup interrupts a command with a background child
// while both sleep: the result is an aborted error and the whole group is gone.
func TestBashCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var pgid int
	wg.Add(1)
	go func() { // ends when the pid file appears or the command is over
		defer wg.Done()
		var ok bool
		if pgid, ok = waitForPID(t, pidFile, stop); ok {
			cancel()
		}
	}()
	res, text := execute(t, ctx, NewBash(dir), bashCall{Command: "echo partial; echo $$ > pid; sleep 100 & sleep 100"})
	close(stop)
	wg.Wait()
	if pgid == 0 {
		t.Fatalf("the command never wrote its pid; result %q", text)
	}
	if !res.IsError || text != "partial\n\nCommand aborted: the turn was interrupted." {
		t.Errorf("isError=%v text=%q, want the aborted error with the output so far", res.IsError, text)
	}
	if live := liveMembers(t, pgid); live != nil {
		t.Errorf("process group %d still has live members after cancel: %v", pgid, live)
	}
}

// TestBashTimeoutEscalatesToKill runs a command that ignores SIGTERM (and so
// do its children) past its timeout: SIGKILL after the grace period must end
// the group.
func TestBashTimeoutEscalatesToKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tool := NewBash(dir)
	tool.KillGrace = 50 * time.Millisecond
	res, text := execute(t, context.Background(), tool, bashCall{
		Command: "trap '' TERM; echo $$ > pid; sleep 100 & sleep 100", Timeout: seconds(0.3),
	})
	if !res.IsError || text != "Command timed out after 0.3 seconds." {
		t.Errorf("isError=%v text=%q, want the timeout error", res.IsError, text)
	}
	if res.Details.ExitCode != nil {
		t.Errorf("exitCode = %d, want none for a killed command", *res.Details.ExitCode)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if live := liveMembers(t, pgid); live != nil {
		t.Errorf("process group %d still has live members after the timeout: %v", pgid, live)
	}
}

// TestBashDoesNotWaitForBackgroundChildren checks that a command that exits
// while a background child still holds its output returns with the output.
func TestBashDoesNotWaitForBackgroundChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, text := execute(t, context.Background(), NewBash(dir), bashCall{Command: "sleep 100 & echo $! > bgpid; echo done"})
	b, err := os.ReadFile(filepath.Join(dir, "bgpid"))
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if res.IsError || text != "done\n" {
		t.Errorf("isError=%v text=%q, want done", res.IsError, text)
	}
}

func TestBashStartFailure(t *testing.T) {
	t.Parallel()
	res, text := execute(t, context.Background(), NewBash(filepath.Join(t.TempDir(), "missing")), bashCall{Command: "true"})
	if !res.IsError || !strings.HasPrefix(text, "bash: ") {
		t.Errorf("isError=%v text=%q, want a start error", res.IsError, text)
	}
}

// TestGroupAlive checks the tool's own liveness probe against a real group.
func TestGroupAlive(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("sleep", "100")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	if !groupAlive(pgid) {
		t.Errorf("groupAlive = false for a running group")
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	cmd.Wait()
	if groupAlive(pgid) {
		t.Errorf("groupAlive = true after the group was killed and reaped")
	}
}
