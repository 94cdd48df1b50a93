//go:build unix

package tools

import (
	"os"
	"syscall"
)

// copyOwner gives f the owner and group of info's file, best effort (only
// root may give files away), and sets its mode bits again, which chown
// clears (setuid/setgid).
func copyOwner(f *os.File, info os.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
	return f.Chmod(info.Mode() & modeBits)
}
