package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

// ErrDestinationExists: a move of a session file found another file at its
// destination and left both as they were (wire code archiveConflict; spec
// "Ownership, unloading, and shutdown": archive/unarchive "refuses
// destination collisions, and never overwrites another transcript").
var ErrDestinationExists = errors.New("another file is at the session file's destination")

// ExistsError reports a refused move: Source is the session file (still at
// its path, unchanged) and Destination the file that was already there
// (unchanged too). errors.Is(err, ErrDestinationExists) is true.
type ExistsError struct {
	Source      string
	Destination string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("session file %s was not moved: %s already exists (both files are left as they are)", e.Source, e.Destination)
}

// Unwrap returns ErrDestinationExists.
func (e *ExistsError) Unwrap() error { return ErrDestinationExists }

// Surviving lists the files that exist after the refusal: the source and
// the destination.
func (e *ExistsError) Surviving() []string { return []string{e.Source, e.Destination} }

// FileLock is an exclusive hold on a session file that this process has not
// loaded, for the file operations of archive, unarchive and delete: the same
// flock a [Session] holds (so no other process, and no [Open] in this one,
// can own the file meanwhile) on a file verified to have one link. Build one
// with [LockFile]; release it with [FileLock.Unlock]. Safe for concurrent
// use.
type FileLock struct {
	mu       sync.Mutex
	path     string
	fl       *flock.Flock
	released bool
}

// LockFile locks the session file at path (symlinks resolved) and verifies
// it: a regular file with exactly one link.
//
// Errors: *LoadedError (ErrAlreadyLoaded) when this process has it loaded;
// *LockedError (ErrLockedElsewhere) when another process owns it;
// *HardLinkError (ErrHardLinked) when it has more than one link; errors
// matching fs.ErrNotExist; ErrNotSession for something other than a regular
// file.
func LockFile(path string) (*FileLock, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	owners.Lock()
	defer owners.Unlock()
	if s := owners.m[canon]; s != nil {
		return nil, &LoadedError{Path: path, Owner: s}
	}
	fl, err := lockFile(canon)
	if err != nil {
		return nil, err
	}
	l := &FileLock{path: canon, fl: fl}
	if err := l.verify(); err != nil {
		_ = fl.Unlock()
		return nil, err
	}
	return l, nil
}

// Path is the locked file's current path.
func (l *FileLock) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path
}

// verify checks that l.path is a regular file with one link (and, where the
// lock is on the file itself, the file that was locked).
func (l *FileLock) verify() error {
	fi, err := os.Stat(l.path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: not a regular file", l.path, ErrNotSession)
	}
	if lockPath(l.path) == l.path {
		held, err := l.fl.Stat()
		if err != nil {
			return err
		}
		if !os.SameFile(held, fi) {
			return fmt.Errorf("%s: %w: the file was replaced", l.path, ErrOwnershipLost)
		}
	}
	n, err := linkCount(fi, l.path)
	if err != nil {
		return err
	}
	if n > 1 {
		return &HardLinkError{Path: l.path, Links: n}
	}
	return nil
}

// Rename moves the locked file to dst (its directory created, mode 0700),
// never replacing a file there: renameat2(RENAME_NOREPLACE) on Linux, else
// a hard link to dst then the removal of the old name. The lock stays held
// (it is on the file, not its name). The file is verified again first.
//
// Errors: *ExistsError (ErrDestinationExists) when dst exists, nothing
// moved; *HardLinkError and the errors of [LockFile]'s checks; filesystem
// errors; ErrClosed after Unlock.
func (l *FileLock) Rename(dst string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return ErrClosed
	}
	if err := l.verify(); err != nil {
		return err
	}
	dst, err := filepath.Abs(dst)
	if err != nil {
		return err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dst = filepath.Join(real, filepath.Base(dst))
	}
	if err := renameNoReplace(l.path, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &ExistsError{Source: l.path, Destination: dst}
		}
		return err
	}
	atomicfile.SyncDir(filepath.Dir(l.path))
	atomicfile.SyncDir(filepath.Dir(dst))
	l.path = dst
	return nil
}

// Remove unlinks the locked file after verifying it again (one link, the
// file that was locked). The lock is released with it.
//
// Errors: *HardLinkError and the errors of [LockFile]'s checks (nothing is
// removed); filesystem errors; ErrClosed after Unlock.
func (l *FileLock) Remove() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return ErrClosed
	}
	if err := l.verify(); err != nil {
		return err
	}
	if err := os.Remove(l.path); err != nil {
		return err
	}
	atomicfile.SyncDir(filepath.Dir(l.path))
	l.released = true
	err := l.fl.Unlock()
	if lp := lockPath(l.path); lp != l.path {
		os.Remove(lp)
	}
	return err
}

// Unlock releases the lock; it is safe to call more than once.
func (l *FileLock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	return l.fl.Unlock()
}

// linkRename moves src to dst without replacing dst: a hard link (which
// fails when dst exists), then the removal of src.
func linkRename(src, dst string) error {
	if err := os.Link(src, dst); err != nil {
		return err
	}
	if err := os.Remove(src); err != nil {
		os.Remove(dst)
		return err
	}
	return nil
}
