//go:build unix

package procgroup

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Live lists the live members of the process group whose leader's pid is
// pid: those that are neither zombies nor dead, each as "<pid> <state>",
// read from /proc; nil when the group has none. A killed process is a
// zombie until its parent (or, once orphaned, init) reaps it: it runs
// nothing, but kill(-pid, 0) still finds the group, so only Live tells a
// stopped group from a running one. Where there is no /proc, a group
// kill(-pid, 0) finds is one entry saying so (its zombies cannot be told
// apart there).
func Live(pid int) []string {
	if err := syscall.Kill(-pid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	if stats == nil {
		return []string{"kill(-pgid, 0) found the group"}
	}
	group := strconv.Itoa(pid)
	var live []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[2] == group && f[0] != "Z" && f[0] != "X" {
			live = append(live, filepath.Base(filepath.Dir(p))+" "+f[0])
		}
	}
	return live
}
