//go:build unix && !linux

package tools

import (
	"errors"
	"syscall"
)

// BecomeSubreaper returns errors.ErrUnsupported: child subreapers exist on
// Linux only (FreeBSD's procctl(PROC_REAP_ACQUIRE) is not used). Processes
// that escape a command's process group are not found on these systems.
func BecomeSubreaper() error { return errors.ErrUnsupported }

// isSubreaper reports false: see BecomeSubreaper.
func isSubreaper() bool { return false }

// groupAlive reports whether process group pgid still has a member, as
// kill(-pgid, 0) sees it (zombies count until reaped).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) != syscall.ESRCH
}

// proc is a process found by its token; never made here.
type proc struct {
	pid, ppid, pgid int
	start           uint64
}

// scanTagged finds nothing: there is no portable way to read another
// process's environment (ps -E prints it unescaped), so only process groups
// are stopped on these systems.
func scanTagged(string) []*proc { return nil }

func (p *proc) signal(sig groupSignal) { signalGroup(p.pid, sig) }
func (p *proc) reap() bool             { return true }
func (p *proc) close()                 {}
