//go:build windows

package mcp

import "github.com/knightcode/knightcode/internal/procgroup"

// groupAlive reports whether the server or a descendant of it runs
// (procgroup.Tree: Windows has no process groups in the POSIX sense).
func groupAlive(pid int) bool {
	pids, err := procgroup.Tree(pid)
	return err != nil || len(pids) > 0
}

// termGroup terminates the server and its descendants (Windows has no
// SIGTERM to ask them with).
func termGroup(pid int) error { return procgroup.Kill(pid) }
