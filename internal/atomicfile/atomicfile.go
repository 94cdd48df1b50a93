package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data: a temporary file in the same
// directory, fsync, rename over path, fsync of the directory, so a reader
// sees the old content or the new, never a torn write (ARCHITECTURE.md,
// "Files are written atomically"). Missing parent folders are created; perm
// is the new file's mode. Errors are the filesystem's; on error path is
// unchanged and no temporary file is left.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, true)
}

// WriteFileUnsynced is [WriteFile] without the two fsyncs: a reader, and
// the next start after a crash of the process, see the old content or the
// new, never a torn write; after a power loss either may be there, or
// (on a file system that reorders the rename before the data) an empty
// file. For state whose loss on power failure leaves nothing to undo (a
// journal before its first write, or once every write landed).
func WriteFileUnsynced(path string, data []byte, perm os.FileMode) error {
	return writeFile(path, data, perm, false)
}

func writeFile(path string, data []byte, perm os.FileMode, sync bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if !sync {
		return nil
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// SyncDir fsyncs the directory dir so an entry created, renamed or removed
// in it is durable. It is best effort: a directory that cannot be opened
// or synced (not every platform can sync one) is ignored.
func SyncDir(dir string) { _ = syncDir(dir) }

// syncDir fsyncs dir; only a failing sync is an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	return d.Sync()
}
