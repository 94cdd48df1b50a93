//go:build unix

package proctest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// ReadPID reads the process or process group id a command wrote to path
// (`echo $$ > path`); a missing file or a non-number fails the test.
func ReadPID(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// GroupMembers lists the live members (neither zombie nor dead) of the
// process group pgid, each as "<pid> <state>", from /proc; nil when the
// group is gone. Where there is no /proc and kill(-pgid, 0) finds the
// group, it says so in the one entry.
func GroupMembers(pgid int) []string {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return []string{"kill(-pgid, 0) found the group"}
	}
	var live []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, filepath.Base(filepath.Dir(p))+" "+f[0])
		}
	}
	return live
}

// PIDFiles reads the pid of every file matching the glob pattern (each as
// ReadPID does), in the glob's order.
func PIDFiles(t testing.TB, pattern string) []int {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range files {
		out = append(out, ReadPID(t, f))
	}
	return out
}

// Running reports whether process pid runs: it exists and is neither a
// zombie nor dead (from /proc; where there is none, kill(pid, 0)).
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, statErr := os.Stat("/proc/self/stat"); statErr == nil {
			return false
		}
		return syscall.Kill(pid, 0) == nil
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return i >= 0 && len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
