//go:build unix

package session

import (
	"io/fs"
	"syscall"
)

// lockPath is the file whose flock marks ownership of a session file: on
// Unix the session file itself, so renames and symlinked aliases share it.
func lockPath(file string) string { return file }

// linkCount is the number of hard links of the file fi describes.
func linkCount(fi fs.FileInfo, _ string) (uint64, error) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink), nil
	}
	return 1, nil
}
