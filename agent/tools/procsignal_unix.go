//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

// startGroup makes cmd, once started, the leader of a new session and
// process group (setsid), so the group id is its pid.
func startGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// groupSignal is what signalGroup sends.
type groupSignal int

const (
	sigTerm groupSignal = iota // SIGTERM: please exit
	sigCont                    // SIGCONT: a stopped process sees the SIGTERM
	sigKill                    // SIGKILL
)

// signalGroup sends sig to every member of process group pgid; errors (the
// group has ended) are ignored.
func signalGroup(pgid int, sig groupSignal) {
	s := map[groupSignal]syscall.Signal{sigTerm: syscall.SIGTERM, sigCont: syscall.SIGCONT, sigKill: syscall.SIGKILL}[sig]
	_ = syscall.Kill(-pgid, s)
}
