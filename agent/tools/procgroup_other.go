//go:build unix && !linux

package tools

import "syscall"

// groupAlive reports whether process group pgid still has a member, as
// kill(-pgid, 0) sees it (zombies count until reaped).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}
