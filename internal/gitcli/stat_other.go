//go:build !linux && !darwin

package gitcli

import "os"

// statKeyOf is fi's stat key. Without a device, inode and ctime, the
// size, mtime and mode tell a rewrite (the mtime is then also the ctime).
func statKeyOf(fi os.FileInfo) statKey {
	t := fi.ModTime().UnixNano()
	return statKey{size: fi.Size(), mtime: t, ctime: t, mode: fi.Mode(), exists: true}
}
