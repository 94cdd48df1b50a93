package gittest

import (
	"os"
	"os/exec"
	"runtime"
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

// CrashAt runs op on a goroutine of its own with a step hook, installed by
// set, that stops it at step name the way kill -9 stops a process: before
// (may be nil) runs there first, to leave what a half-done git command
// would, then runtime.Goexit ends the goroutine. No rollback runs; only
// deferred calls do, which release locks as the kernel releases a dead
// process's flocks. Once op has ended, set(nil) removes the hook. It
// reports whether op got to that step and before's error.
func CrashAt(name string, set func(hook func(step string) error), before func() error, op func()) (crashed bool, beforeErr error) {
	set(func(s string) error {
		if s != name {
			return nil
		}
		crashed = true
		if before != nil {
			beforeErr = before()
		}
		runtime.Goexit()
		return nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		op()
	}()
	<-done
	set(nil)
	return crashed, beforeErr
}
