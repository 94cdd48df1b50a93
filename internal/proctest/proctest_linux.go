package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// UniqueSleep returns a sleep argument "<secs>.<9 random digits>" that no
// other process has; every process still sleeping with it when the test
// ends gets SIGKILL.
func UniqueSleep(t testing.TB, secs int) string {
	arg := fmt.Sprintf("%d.%09d", secs, rand.IntN(1_000_000_000))
	t.Cleanup(func() {
		for _, pid := range Sleeping(arg) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return arg
}

// Sleeping returns the pids of the live (not zombie) processes whose
// command line is `sleep arg` (sleep named by path too).
func Sleeping(arg string) []int {
	want := []byte("sleep\x00" + arg + "\x00")
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, p := range paths {
		cmdline, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(cmdline, want) && !bytes.HasSuffix(cmdline, append([]byte("/"), want...)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ...": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		pids = append(pids, pid)
	}
	return pids
}

// WaitSleeping waits, up to 30 s, until a process sleeps with each of args
// (`setsid -f` returns before its child has started), and returns their
// pids; the test fails at once when one does not.
func WaitSleeping(t testing.TB, args ...string) []int {
	t.Helper()
	var pids []int
	deadline := time.Now().Add(30 * time.Second)
	for _, arg := range args {
		for {
			if found := Sleeping(arg); len(found) > 0 {
				pids = append(pids, found...)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no process sleeps %s", arg)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return pids
}

// Survivors returns "sleep <arg>: [pids]" for each of args a live process
// still sleeps with, waiting up to 5 s for them to go (a signalled process
// may take a moment to leave /proc); nil when none is left.
func Survivors(args ...string) []string {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var out []string
		for _, arg := range args {
			if pids := Sleeping(arg); len(pids) > 0 {
				out = append(out, fmt.Sprintf("sleep %s: %v", arg, pids))
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return out
		}
	}
}
