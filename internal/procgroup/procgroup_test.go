//go:build unix

package procgroup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancelKillsTheGroup starts a shell that starts a background sleep and
// waits; cancelling the context must end the background child too, not only
// the shell.
func TestCancelKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile)
	Setup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for child == 0 { // the shell writes the pid before it waits
		b, _ := os.ReadFile(pidFile)
		if s := strings.TrimSpace(string(b)); strings.HasSuffix(string(b), "\n") {
			child, _ = strconv.Atoi(s)
		}
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the shell exited cleanly after cancel")
	}
	// The sleep was in the shell's group: SIGKILL ends it (a zombie until
	// init reaps it counts as ended). Poll until it is; a surviving child
	// makes the test run into go test's timeout.
	for !ended(child) {
		time.Sleep(time.Millisecond)
	}
	if err := Kill(cmd.Process.Pid); err != syscall.ESRCH && err != nil {
		t.Errorf("Kill of an ended group: %v", err)
	}
}

// ended reports whether process pid has exited (a zombie counts as ended).
func ended(pid int) bool {
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(b), ") Z ") || strings.Contains(string(b), ") X ")
	}
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
