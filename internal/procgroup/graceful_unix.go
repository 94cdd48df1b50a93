//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
	"time"
)

// SetupGraceful is [Setup] for a command that cleans up when asked to end:
// its context's cancellation sends SIGTERM to the whole group, so the
// programs in it can clean up (git removes its lock files; a user's hook
// restores what it stashed), and SIGKILL grace later to whatever of the
// group is left (a hook that ignores SIGTERM). Set cmd.WaitDelay above
// grace, so Wait does not close the pipes first. Call it before cmd.Start.
func SetupGraceful(cmd *exec.Cmd, grace time.Duration) {
	Setup(cmd)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		pid := cmd.Process.Pid
		err := syscall.Kill(-pid, syscall.SIGTERM)
		time.AfterFunc(grace, func() { _ = Kill(pid) })
		return err
	}
}
