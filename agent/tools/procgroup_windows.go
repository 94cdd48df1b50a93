//go:build windows

package tools

import "errors"

// BecomeSubreaper returns errors.ErrUnsupported: Windows has no child
// subreapers. A command's descendants are found through the process tree
// (package procgroup) while their parent chain is intact; a process whose
// parent exited before the stop is not found.
func BecomeSubreaper() error { return errors.ErrUnsupported }

// isSubreaper reports false: see BecomeSubreaper.
func isSubreaper() bool { return false }

// proc is a process found by its token; never made on Windows.
type proc struct {
	pid, ppid, pgid int
	start           uint64
}

// scanTagged finds nothing: Windows offers no supported way to read another
// process's environment, so only the commands' process trees are stopped.
func scanTagged(string) []*proc { return nil }

func (p *proc) signal(sig groupSignal) { signalGroup(p.pid, sig) }
func (p *proc) reap() bool             { return true }
func (p *proc) close()                 {}
