//go:build windows

package mcp

import "github.com/knightcode/knightcode/internal/procgroup"

// groupAlive is false on Windows, where procgroup.Stop terminates the
// server and its descendants at once.
func groupAlive(pid int) bool { return false }

// termGroup terminates the server and its descendants (Windows has no
// SIGTERM to ask them with).
func termGroup(pid int) error { return procgroup.Kill(pid) }
