//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
)

// Setup makes cmd, once started, the leader of a new process group, and
// makes its context's cancellation (exec.CommandContext) kill the whole
// group with SIGKILL. Call it before cmd.Start.
func Setup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return Kill(cmd.Process.Pid)
	}
}

// Kill sends SIGKILL to every member of the process group whose leader's
// pid is pid. Errors: the kill(2) error, syscall.ESRCH when the group has no
// member left.
func Kill(pid int) error {
	return syscall.Kill(-pid, syscall.SIGKILL)
}
