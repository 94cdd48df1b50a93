package safefile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotRegular marks a refused path that is not a regular file (a FIFO, a
// device, a socket, a folder); errors.Is finds it in an *Error.
var ErrNotRegular = errors.New("not a regular file")

// ErrSystemPath marks a refused path under one of SystemRoots or on a kernel
// pseudo file system (procfs, sysfs, debugfs, ...); errors.Is finds it in an
// *Error.
var ErrSystemPath = errors.New("a system path")

// ReadTimeout is the deadline a caller gives one whole read of a file opened
// here when its own context has none closer (a regular file of a local file
// system reads in far less; a hung network or FUSE file system does not).
const ReadTimeout = 30 * time.Second

// maxLinks bounds the symlinks followed by hand when resolving a path whose
// last link dangles (the kernel's own limit for one path lookup is 40).
const maxLinks = 40

// Error is a refused path. Path is the path as given; Real is where it leads
// after resolving symlinks ("" when that is Path itself); Mode holds the file
// type bits of what was found there (0 for a system path refused by name);
// What says what it is in words ("a named pipe (FIFO)", "under /proc", "on a
// procfs file system"); Err is ErrNotRegular or ErrSystemPath.
type Error struct {
	Path string
	Real string
	Mode fs.FileMode
	What string
	Err  error
}

// Error says what the path is and that only regular files are opened, for
// example "/dev/stdin is under /dev; only regular files outside /proc, /sys
// and /dev are opened".
func (e *Error) Error() string {
	s := e.Path
	if e.Real != "" && e.Real != e.Path {
		s += " (resolves to " + e.Real + ")"
	}
	return s + " is " + e.What + "; only regular files outside /proc, /sys and /dev are opened"
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// SystemRoots are the folders whose paths are refused by name, before and
// after resolving symlinks: the kernel's process and device views, where a
// read can block forever or have side effects (on systems without them the
// names are refused all the same).
var SystemRoots = []string{"/proc", "/sys", "/dev"}

// systemRoot returns the root of SystemRoots that holds the clean absolute
// path p, or "".
func systemRoot(p string) string {
	p = filepath.ToSlash(p)
	for _, r := range SystemRoots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return r
		}
	}
	return ""
}

// Resolve returns where the absolute path leads: the path with every symlink
// resolved (filepath.EvalSymlinks), or, when nothing exists there yet, the
// path a create would make, through the resolved parent folders and any
// dangling symlink at its end (so a new file is checked where it would be
// created). It refuses (an *Error wrapping ErrSystemPath) a path that is,
// or leads, under one of SystemRoots. Other errors are the file system's
// (*fs.PathError), including ELOOP for more than 40 dangling links in a row.
// Use it for paths that are not opened as files (file/list's folders).
func Resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", &fs.PathError{Op: "resolve", Path: path, Err: errors.New("not an absolute path")}
	}
	path = filepath.Clean(path)
	if r := systemRoot(path); r != "" {
		return "", &Error{Path: path, What: "under " + r, Err: ErrSystemPath}
	}
	hops := 0
	real, err := resolve(path, &hops)
	if err != nil {
		return "", err
	}
	if r := systemRoot(real); r != "" {
		return "", &Error{Path: path, Real: real, What: "under " + r, Err: ErrSystemPath}
	}
	return real, nil
}

// resolve is Resolve without the checks; hops counts the links followed by
// hand.
func resolve(p string, hops *int) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return real, err
	}
	dir, base := filepath.Dir(p), filepath.Base(p)
	if dir == p {
		return p, nil
	}
	rdir, err := resolve(dir, hops)
	if err != nil {
		return "", err
	}
	q := filepath.Join(rdir, base)
	fi, err := os.Lstat(q)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return q, nil // missing: a create makes it here
	}
	if *hops++; *hops > maxLinks {
		return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
	}
	target, err := os.Readlink(q)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(rdir, target)
	}
	return resolve(filepath.Clean(target), hops)
}

// Open opens the absolute path for reading; see OpenFile.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return OpenFile(path, os.O_RDONLY, 0)
}

// OpenFile opens the absolute path with flag (os.O_RDONLY, os.O_WRONLY or
// os.O_RDWR, optionally with os.O_CREATE, os.O_EXCL, os.O_APPEND, os.O_TRUNC)
// and perm (for a created file), only when it is a regular file outside
// /proc, /sys and /dev, and returns the open file with its fs.FileInfo from
// fstat. The file's Name is the resolved path (the symlinks' target).
//
// The path is resolved first (Resolve), and the file opened is the resolved
// one, with O_NOFOLLOW, O_NONBLOCK (opening a FIFO or a device cannot wait),
// O_NOCTTY and O_CLOEXEC on Unix; fstat then refuses anything not regular,
// and on Linux fstatfs refuses pseudo file systems (procfs, sysfs, debugfs,
// tracefs, cgroup, devpts, ...) wherever they are mounted. O_NONBLOCK has no
// effect on reads and writes of a regular file. os.O_TRUNC is applied only
// after those checks (ftruncate), so a refused file is never truncated. An
// open that fails where something not regular is (a FIFO with no reader
// opened for writing fails with ENXIO) is refused as that thing.
//
// Errors: *Error wrapping ErrSystemPath or ErrNotRegular for a refused path;
// else the file system's *fs.PathError naming path as given (fs.ErrNotExist
// for a missing file).
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	real, err := Resolve(path)
	if err != nil {
		return nil, nil, err
	}
	path = filepath.Clean(path)
	if real == path {
		real = ""
	}
	name := real
	if name == "" {
		name = path
	}
	f, err := os.OpenFile(name, flag&^os.O_TRUNC|openFlags, perm)
	if err != nil {
		if fi, serr := os.Lstat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &Error{Path: path, Real: real, Mode: fi.Mode().Type(), What: describe(fi.Mode()), Err: ErrNotRegular}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Path = path
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "fstat", Path: path, Err: errors.Unwrap(err)}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Path: path, Real: real, Mode: fi.Mode().Type(), What: describe(fi.Mode()), Err: ErrNotRegular}
	}
	if fsName := pseudoFS(f); fsName != "" {
		f.Close()
		return nil, nil, &Error{Path: path, Real: real, Mode: fi.Mode().Type(), What: "on a " + fsName + " file system", Err: ErrSystemPath}
	}
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, nil, &fs.PathError{Op: "truncate", Path: path, Err: errors.Unwrap(err)}
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			return nil, nil, &fs.PathError{Op: "fstat", Path: path, Err: errors.Unwrap(err)}
		}
	}
	return f, fi, nil
}

// describe names a file type in words.
func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// NewReader returns a reader of f for one caller that gives up as soon as
// ctx ends, even while a read system call is blocked (on a hung network or
// FUSE file system): Read then returns ctx's error, the blocked call finishes
// in the background into a buffer of the reader's own (its data is dropped;
// closing f meanwhile is safe: the descriptor closes when the call returns),
// and every later Read returns the same error. Give ctx a deadline
// (ReadTimeout) so that a read also ends without a cancel. Each Read reads
// at most 64 KiB. Not for concurrent use.
//
// The reader keeps ctx: it lives only as long as the call that made it.
func NewReader(ctx context.Context, f *os.File) io.Reader {
	return &ctxReader{ctx: ctx, f: f, done: make(chan readResult, 1)}
}

const readChunk = 64 * 1024

type ctxReader struct {
	ctx  context.Context
	f    *os.File
	buf  []byte
	done chan readResult
	err  error // sticky: set once ctx ended
}

type readResult struct {
	n   int
	err error
}

// Read reads up to len(p) bytes (at most 64 KiB); see NewReader.
func (r *ctxReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if r.buf == nil {
		r.buf = make([]byte, readChunk)
	}
	buf := r.buf[:min(len(p), readChunk)]
	go func() { // ends when the read system call returns
		n, err := r.f.Read(buf)
		r.done <- readResult{n, err}
	}()
	select {
	case res := <-r.done:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-r.ctx.Done():
		r.err = r.ctx.Err()
		return 0, r.err
	}
}

// ReadAll reads f to its end or up to limit+1 bytes (to tell a file over
// limit from one of exactly limit), giving up with ctx's error when ctx
// ends; a ctx without a deadline gets ReadTimeout. limit < 0 means no limit.
func ReadAll(ctx context.Context, f *os.File, limit int64) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ReadTimeout)
		defer cancel()
	}
	var r io.Reader = NewReader(ctx, f)
	if limit >= 0 {
		r = io.LimitReader(r, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return data, fmt.Errorf("reading %s: %w", f.Name(), err)
	}
	return data, nil
}

// ConfigLimit is the ReadFile limit for configuration and state files
// (settings.json, mcp.json, auth.json, models.json, tools.json, trust and
// plugin state, marketplace catalogs, plugin manifests, Grok Build's
// config.toml): 16 MiB, far beyond any file a person or a tool writes, and
// small enough that a file that keeps growing cannot balloon the server.
const ConfigLimit = 16 << 20

// ErrTooLarge marks a file that ReadFile refused because it holds more than
// its limit; errors.Is finds it in a *TooLargeError.
var ErrTooLarge = errors.New("file too large")

// TooLargeError is a file over ReadFile's limit. Path is the path as given,
// Limit the limit in bytes.
type TooLargeError struct {
	Path  string
	Limit int64
}

// Error says the file and the limit, for example "/home/u/.knightcode/agent/
// settings.json is larger than 16 MiB".
func (e *TooLargeError) Error() string {
	return e.Path + " is larger than " + sizeWords(e.Limit)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// sizeWords is n bytes in words: whole MiB or KiB when exact, else bytes.
func sizeWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads the whole file at path (made absolute against the current
// folder when relative) the way os.ReadFile does, but only when Open opens
// it: a regular file outside /proc, /sys and /dev and off the pseudo file
// systems, opened without blocking, so a FIFO, a device, a socket or a
// symlink to one is refused at once instead of wedging the caller. It reads
// at most limit bytes (limit >= 0), giving up after ReadTimeout on a hung
// network or FUSE file system.
//
// Errors: *Error (ErrNotRegular, ErrSystemPath) for a refused path, saying
// what it is ("a named pipe (FIFO)"); *TooLargeError (ErrTooLarge) for a
// file of more than limit bytes; else the file system's *fs.PathError naming
// path (errors.Is(err, fs.ErrNotExist) for a missing file, as with
// os.ReadFile), or the read's error naming the file.
func ReadFile(path string, limit int64) ([]byte, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(path); err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
	f, fi, err := Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	data, err := ReadAll(context.Background(), f, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return data, nil
}

// ResolvePath makes a path argument absolute the way every tool (and the
// file/* methods) reads it: "~" and "~/..." expand to the home directory
// (os.UserHomeDir), an absolute path is cleaned, anything else is joined to
// cwd (an absolute directory) and cleaned; "~user" forms are not expanded.
// Errors: an empty path, or an unknown home directory for a "~" path
// (wrapping os.UserHomeDir's error).
func ResolvePath(cwd, p string) (string, error) {
	if p == "" {
		return "", errors.New(`"path" is empty`)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand %q: %w", p, err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(cwd, p), nil
}
