//go:build windows

package procgroup

import (
	"os/exec"
	"time"
)

// SetupGraceful is [Setup] on Windows: a console program cannot be asked to
// end by a signal from outside its console, so cancellation terminates
// the command and its descendants at once; grace is not used.
func SetupGraceful(cmd *exec.Cmd, grace time.Duration) {
	Setup(cmd)
}

// Stop is [Kill] on Windows (see [SetupGraceful]): pid and its descendants
// are terminated at once; grace is not used.
func Stop(pid int, grace time.Duration) error {
	return Kill(pid)
}
