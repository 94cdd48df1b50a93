package gittest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RunKilled runs the test binary's test named child (a crash child that
// SIGKILLs itself at a step named in env) with env added to the
// environment, and, when after > 0, kills it after that long. The child
// must die by a signal, or (only when after > 0: the kill may come too
// late) succeed; a child that exits 0 when it was to kill itself at its
// step, or fails on its own, fails the test with its output.
func RunKilled(t testing.TB, child string, env []string, after time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if after > 0 {
		time.AfterFunc(after, func() { _ = cmd.Process.Kill() })
	}
	err = cmd.Wait()
	if after == 0 && err == nil {
		t.Fatalf("%s: the step was never reached:\n%s", child, out.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); err != nil && !(ok && ws.Signaled()) {
		t.Fatalf("%s failed: %v\n%s", child, err, out.String())
	}
}
