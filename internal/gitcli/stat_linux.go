//go:build linux

package gitcli

import (
	"os"
	"syscall"
)

// statKeyOf is fi's stat key: device, inode, size, mtime and ctime to the
// nanosecond, and the mode.
func statKeyOf(fi os.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode(), exists: true}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), st.Ino
		k.ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return k
}
