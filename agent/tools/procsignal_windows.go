//go:build windows

package tools

import (
	"os/exec"

	"github.com/knightcode/knightcode/internal/procgroup"
)

// startGroup gives cmd a console process group of its own; "the group" of
// pid is then the command and its descendants (package procgroup).
func startGroup(cmd *exec.Cmd) {
	procgroup.Setup(cmd)
}

// groupSignal is what signalGroup sends.
type groupSignal int

const (
	sigTerm groupSignal = iota // CTRL_BREAK_EVENT to the console group
	sigCont                    // nothing: Windows has no stopped processes to resume
	sigKill                    // TerminateProcess on the command and its descendants
)

// signalGroup sends sig to the group of pgid; errors (the group has ended)
// are ignored.
func signalGroup(pgid int, sig groupSignal) {
	switch sig {
	case sigTerm:
		_ = procgroup.Interrupt(pgid)
	case sigKill:
		_ = procgroup.Kill(pgid)
	}
}

// groupAlive reports whether the command pgid or a descendant of it is
// still running.
func groupAlive(pgid int) bool {
	pids, err := procgroup.Tree(pgid)
	return err != nil || len(pids) > 0
}
