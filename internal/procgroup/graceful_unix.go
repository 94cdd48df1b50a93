//go:build unix

package procgroup

import (
	"os/exec"
	"syscall"
	"time"
)

// SetupGraceful is [Setup] for a command that cleans up when asked to end:
// its context's cancellation stops the whole group with [Stop], so the
// programs in it can clean up (git removes its lock files; a user's hook
// restores what it stashed) before whatever is left gets SIGKILL grace
// later (a hook that ignores SIGTERM). Set cmd.WaitDelay above grace, so
// Wait does not close the pipes first. Call it before cmd.Start.
func SetupGraceful(cmd *exec.Cmd, grace time.Duration) {
	Setup(cmd)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return Stop(cmd.Process.Pid, grace)
	}
}

// Stop asks every member of the process group whose leader's pid is pid to
// end (SIGTERM, now) and sends SIGKILL to the group grace later, whatever
// is left of it then; it returns at once. Errors: the SIGTERM's kill(2)
// error, syscall.ESRCH when the group has no member left.
func Stop(pid int, grace time.Duration) error {
	err := syscall.Kill(-pid, syscall.SIGTERM)
	time.AfterFunc(grace, func() { _ = Kill(pid) })
	return err
}
