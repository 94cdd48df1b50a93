//go:build unix

package safefile

import "syscall"

// openFlags are added to every open: it cannot block on a FIFO or device,
// never makes a terminal the controlling one, is not inherited across exec,
// and does not follow a symlink swapped in after Resolve.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC | syscall.O_NOFOLLOW
