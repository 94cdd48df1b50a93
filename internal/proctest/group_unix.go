//go:build unix

package proctest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/knightcode/knightcode/internal/procgroup"
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
// process group pgid, each as "<pid> <state>" (procgroup.Live); nil when
// the group is gone.
func GroupMembers(pgid int) []string { return procgroup.Live(pgid) }

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
