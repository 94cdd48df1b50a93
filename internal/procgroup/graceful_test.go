//go:build unix

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGracefulCancelAsksFirst cancels a shell that traps SIGTERM: it is
// asked to end (its trap runs and writes a file) before anything is killed.
func TestGracefulCancelAsksFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ready, cleaned := filepath.Join(dir, "ready"), filepath.Join(dir, "cleaned")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", `trap 'echo yes > "$1"; exit 3' TERM; sleep 300 & : > "$0"; wait`, ready, cleaned)
	SetupGraceful(cmd, time.Minute)
	cmd.WaitDelay = 2 * time.Minute
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, ready)
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the shell exited cleanly after cancel")
	}
	if b, err := os.ReadFile(cleaned); err != nil || strings.TrimSpace(string(b)) != "yes" {
		t.Errorf("the shell's SIGTERM trap did not run: %q, %v", b, err)
	}
}

// TestGracefulCancelKillsWhatStays cancels a shell whose background child
// ignores SIGTERM: after the grace the child is killed too.
func TestGracefulCancelKillsWhatStays(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", `trap '' TERM; sleep 300 & echo $! > "$0"; wait`, pidFile)
	SetupGraceful(cmd, 50*time.Millisecond)
	cmd.WaitDelay = time.Minute
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := 0
	for child == 0 {
		b, _ := os.ReadFile(pidFile)
		if s := strings.TrimSpace(string(b)); strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(s)
		}
	}
	cancel()
	_ = cmd.Wait()
	for !ended(child) { // a surviving child runs the test into go test's timeout
		time.Sleep(time.Millisecond)
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
