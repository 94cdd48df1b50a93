//go:build windows

package session

import (
	"io/fs"
	"syscall"
)

// lockPath is the file whose lock marks ownership of a session file. On
// Windows, LockFileEx locks are mandatory for the locked byte range, so
// locking the session file itself would stop readers (thread/read) from
// reading its header; the lock lives in a sidecar "<file>.lock" instead.
func lockPath(file string) string { return file + ".lock" }

// linkCount is the number of hard links of the file at path.
func linkCount(_ fs.FileInfo, path string) (uint64, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	h, err := syscall.CreateFile(p, 0, syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING, syscall.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, err
	}
	defer syscall.CloseHandle(h)
	var info syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(h, &info); err != nil {
		return 0, err
	}
	return uint64(info.NumberOfLinks), nil
}
