//go:build unix

package mcp

import (
	"syscall"

	"github.com/knightcode/knightcode/internal/procgroup"
)

// groupAlive reports whether the process group led by pid has a live
// member: a zombie is not one (procgroup.Live).
func groupAlive(pid int) bool {
	return len(procgroup.Live(pid)) > 0
}

// termGroup asks every member of the process group led by pid to end.
func termGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGTERM)
}
