package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/knightcode/knightcode/internal/safefile"
)

// target is an existing file a tool is about to change: the path to write (the
// symlink's target when path is a link) and its mode.
type target struct {
	path string
	info fs.FileInfo
}

// statTarget resolves symlinks in path and returns the regular file it names;
// fs.ErrNotExist (wrapped) when nothing is there, a *safefile.Error for a path
// under /proc, /sys or /dev.
func statTarget(path string) (target, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return target{}, err
	}
	if _, err := safefile.Resolve(real); err != nil {
		return target{}, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return target{}, err
	}
	if !fi.Mode().IsRegular() {
		return target{}, fmt.Errorf("%s is not a regular file", path)
	}
	return target{path: real, info: fi}, nil
}

// readTarget reads the whole file t through internal/safefile: only while it
// is still a regular file off the pseudo file systems, giving up when ctx
// ends or after safefile.ReadTimeout.
func readTarget(ctx context.Context, t target) ([]byte, error) {
	f, _, err := safefile.Open(t.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return safefile.ReadAll(ctx, f, -1)
}

// modeBits are the mode bits a replaced file keeps.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// replaceFile atomically replaces the existing file t with data: a temporary
// file in the same directory gets t's mode bits (and, best effort, its owner),
// the data, an fsync, and is renamed over t (ARCHITECTURE.md: files are written
// atomically where a torn write loses data). A hard link to the old file keeps
// the old content.
func replaceFile(t target, data []byte) (err error) {
	dir, base := filepath.Split(t.path)
	f, err := os.CreateTemp(dir, "."+base+".knightcode-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(t.info.Mode() & modeBits); err != nil {
		return err
	}
	if err := copyOwner(f, t.info); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), t.path)
}

// createFile writes data to a new file at path, creating missing parent
// directories (0o777 and 0o666 before the umask). It fails with fs.ErrExist
// when something appeared at path meanwhile.
func createFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
