//go:build unix

package gitstate

import (
	"os"
	"syscall"
)

// sameDevice reports whether two files are on one file system (a rename
// between them can succeed).
func sameDevice(a, b os.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev
}
