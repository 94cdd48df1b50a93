package tools

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// groupAlive reports whether process group pgid has a member that has not
// exited. kill(-pgid, 0) alone is not enough: it also succeeds for zombies
// (exited, not yet reaped), and orphans re-parented to an init that does not
// reap (as in some containers) stay zombies forever. So when kill finds the
// group, /proc decides: a member counts unless its state is Z (zombie) or X
// (dead).
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 4 {
			continue
		}
		if pgrp, err := strconv.Atoi(string(f[2])); err == nil && pgrp == pgid && string(f[0]) != "Z" && string(f[0]) != "X" {
			return true
		}
	}
	return false
}
