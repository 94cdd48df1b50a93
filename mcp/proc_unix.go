//go:build unix

package mcp

import "syscall"

// groupAlive reports whether the process group led by pid has a member.
func groupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) == nil
}

// termGroup asks every member of the process group led by pid to end.
func termGroup(pid int) error {
	return syscall.Kill(-pid, syscall.SIGTERM)
}
