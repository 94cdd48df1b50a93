package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/safefile"
)

// The file operations behind file/read, file/list and file/write (spec:
// Method reference) as plain functions over a checkout path: they know
// nothing of threads or JSON-RPC (package rpc looks the thread's cwd up and
// translates). Parameter errors are *coreerr.ParamError naming the field; a
// stale expectedMtimeMs is ErrFileChanged. Every open goes through
// internal/safefile, so no path can block the caller.

// Limits of the file operations (spec: file/read, file/list, file/write).
const (
	// MaxFileWriteBytes is the most bytes WriteFile writes (8 MiB).
	MaxFileWriteBytes = 8 << 20
	// MaxFileListEntries is the most entries ListFiles returns; past it the
	// rest are left out and FileListing.Truncated is true.
	MaxFileListEntries = 5000
	// FileBinarySniff is how many leading bytes ReadFile looks at for a NUL
	// byte (8 KiB).
	FileBinarySniff = 8 << 10
)

// FileContent is what ReadFile found: Path relative to the checkout
// (/-separated; see relPath), Size in bytes, MtimeMs the modification time
// in Unix milliseconds, and Text when the file is neither Binary nor
// TooLarge.
type FileContent struct {
	Path     string
	Size     int64
	MtimeMs  int64
	Binary   bool
	TooLarge bool
	Text     *string
}

// FileEntry is one entry of a folder listing: Path relative to the checkout
// (/-separated) and Dir when it is a folder or a link to one.
type FileEntry struct {
	Path string
	Dir  bool
}

// FileListing is what ListFiles found: Root is the checkout, Entries are
// sorted by path, Truncated says entries past MaxFileListEntries were left
// out.
type FileListing struct {
	Root      string
	Entries   []FileEntry
	Truncated bool
}

// FileWritten is what WriteFile left: the file's modification time in Unix
// milliseconds after the write.
type FileWritten struct {
	MtimeMs int64
}

// ErrFileChanged: file/write's expectedMtimeMs does not match the file's
// modification time (or the file is gone); the file was left as it is (wire
// code fileChanged).
var ErrFileChanged = errors.New("the file changed since it was read")

// resolvePath makes a file method's path absolute the way the agent's tools
// do (safefile.ResolvePath): "~" and "~/..." expand to the server's home
// directory, an absolute path is cleaned, anything else is joined to cwd.
// Errors: invalidParams "path" for an empty path or a home directory that
// cannot be found.
func resolvePath(cwd, p string) (string, error) {
	if p == "" {
		return "", coreerr.Param("path", "must not be empty")
	}
	abs, err := safefile.ResolvePath(cwd, p)
	if err != nil {
		return "", coreerr.Param("path", "%v", err)
	}
	return abs, nil
}

// relPath is how file results name abs: relative to cwd and /-separated,
// "." for cwd itself, with ".." steps for a path outside cwd; abs itself
// (/-separated) when no relative path exists (another volume).
func relPath(cwd, abs string) string {
	rel, err := filepath.Rel(cwd, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// ReadFile reads for file/read in the checkout cwd: the file at path (resolved
// with resolvePath; links followed) with its size in bytes, its modification
// time in Unix milliseconds taken from the open file, and its text when it is
// neither binary nor larger than maxBytes (at least 1; file/read allows
// 1 to 8 MiB and defaults to 2 MiB).
//
// Binary means a NUL byte in the first 8 KiB or bytes that are not UTF-8 (a
// client that decoded and saved them would replace them). For a file over
// maxBytes only its first 8 KiB are read and checked. Result.Path is the path
// relative to cwd (see relPath).
//
// Errors: invalidParams "path" when there is no such file, it is not a
// regular file, or it cannot be read.
func ReadFile(cwd, path string, maxBytes int) (FileContent, error) {
	if maxBytes <= 0 {
		return FileContent{}, coreerr.Param("maxBytes", "must be at least 1, got %d", maxBytes)
	}
	abs, err := resolvePath(cwd, path)
	if err != nil {
		return FileContent{}, err
	}
	// Refuse folders and special files before opening: opening a FIFO for
	// reading would wait for a writer.
	if fi, err := os.Stat(abs); err != nil {
		return FileContent{}, pathError(path, err, "cannot be read")
	} else if err := regularFile(path, fi); err != nil {
		return FileContent{}, err
	}
	// safefile refuses what is not a regular file once open (a FIFO that
	// replaced the file since the stat) and anything under /proc, /sys and
	// /dev or on a kernel file system (/proc/kmsg would block a read).
	f, fi, err := safefile.Open(abs)
	if err != nil {
		return FileContent{}, pathError(path, err, "cannot be read")
	}
	defer f.Close()
	// Read one byte past maxBytes to learn whether the file (which may have
	// grown since the stat) is larger; a read that hangs (a stuck network
	// file system) gives up after safefile.ReadTimeout.
	data, err := safefile.ReadAll(context.Background(), f, int64(maxBytes))
	if err != nil {
		return FileContent{}, pathError(path, err, "cannot be read")
	}
	// The size and time of the bytes read, not of the earlier stat.
	if fi2, err := f.Stat(); err == nil {
		fi = fi2
	}
	res := FileContent{
		Path:    relPath(cwd, abs),
		Size:    fi.Size(),
		MtimeMs: fi.ModTime().UnixMilli(),
	}
	tooLarge := len(data) > maxBytes || fi.Size() > int64(maxBytes)
	sniff := data[:min(len(data), FileBinarySniff)]
	switch {
	case bytes.IndexByte(sniff, 0) >= 0:
		res.Binary = true
	case tooLarge:
		res.Binary = !validUTF8Prefix(sniff)
	default:
		res.Binary = !utf8.Valid(data)
	}
	res.TooLarge = tooLarge
	if !res.Binary && !res.TooLarge {
		text := string(data)
		res.Text = &text
	}
	return res, nil
}

// regularFile refuses (invalidParams "path") anything but a regular file.
func regularFile(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return coreerr.Param("path", "%s is a folder, not a file", path)
	}
	return coreerr.Param("path", "%s is not a regular file", path)
}

// validUTF8Prefix reports whether b is UTF-8 except that it may end in the
// middle of a character (b is the start of a longer file).
func validUTF8Prefix(b []byte) bool {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return true
		}
		// Only a character cut at the end may be forgiven: drop a trailing
		// byte that cannot stand alone and try again.
		r, _ := utf8.DecodeLastRune(b)
		if r != utf8.RuneError {
			return false
		}
		b = b[:len(b)-1]
	}
	return utf8.Valid(b)
}

// ListFiles lists for file/list in the checkout cwd: the entries of the folder
// at path (resolved with resolvePath; "" means cwd; a link to a folder is
// followed), hidden ones included, sorted by name. Entry paths are relative to
// cwd and /-separated (see relPath); an entry is Dir when it is a folder or a
// link to one (a broken link is not). Past
// MaxFileListEntries (5,000) entries, in name order, the rest are
// left out and Truncated is true. Root is cwd.
//
// Errors: invalidParams "path" when the path is not a folder, is under
// /proc, /sys or /dev, or cannot be read.
func ListFiles(cwd, path string) (FileListing, error) {
	dir := cwd
	if path != "" {
		var err error
		if dir, err = resolvePath(cwd, path); err != nil {
			return FileListing{}, err
		}
	}
	// Folders under /proc, /sys and /dev (by name or through a symlink) are
	// refused as file/read refuses their files.
	if _, err := safefile.Resolve(dir); err != nil {
		return FileListing{}, pathError(path, err, "cannot be read")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return FileListing{}, pathError(path, err, "cannot be read")
	}
	if !fi.IsDir() {
		return FileListing{}, coreerr.Param("path", "%s is not a folder", path)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return FileListing{}, pathError(path, err, "cannot be read")
	}
	res := FileListing{Root: cwd, Entries: []FileEntry{}}
	if len(des) > MaxFileListEntries {
		des, res.Truncated = des[:MaxFileListEntries], true
	}
	prefix := relPath(cwd, dir)
	for _, de := range des {
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			if target, err := os.Stat(filepath.Join(dir, de.Name())); err == nil && target.IsDir() {
				isDir = true
			}
		}
		p := de.Name()
		if prefix != "." {
			p = prefix + "/" + p
		}
		res.Entries = append(res.Entries, FileEntry{Path: p, Dir: isDir})
	}
	slices.SortFunc(res.Entries, func(a, b FileEntry) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// WriteFile writes for file/write in the checkout cwd: it writes text to the
// file at path (resolved with resolvePath) in place and returns the file's
// modification time afterwards, in Unix milliseconds.
//
// In place means the file is opened for writing (following a symlink to its
// target), truncated and written, never replaced by a rename: it keeps its
// mode, owner and hard links. A missing file is created (mode 0666 before the
// umask) together with its missing parent folders, as the agent's write tool
// does.
//
// With expectedMtimeMs the file must exist and its modification time, taken
// from the opened file before anything is written, must be exactly that;
// otherwise nothing is written and the error is ErrFileChanged (a file
// removed since the read counts as changed).
//
// Errors: invalidParams "path" for a folder, a file that is not a regular
// file, or a path that cannot be written; invalidParams "text" over 8 MiB;
// ErrFileChanged.
func WriteFile(cwd, path, text string, expectedMtimeMs *int64) (FileWritten, error) {
	if len(text) > MaxFileWriteBytes {
		return FileWritten{}, coreerr.Param("text", "at most %d bytes, got %d", MaxFileWriteBytes, len(text))
	}
	abs, err := resolvePath(cwd, path)
	if err != nil {
		return FileWritten{}, err
	}
	// Refuse folders and special files before opening: opening a FIFO for
	// writing would wait for a reader.
	switch fi, err := os.Stat(abs); {
	case err == nil:
		if err := regularFile(path, fi); err != nil {
			return FileWritten{}, err
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return FileWritten{}, pathError(path, err, "cannot be written")
	case err != nil && expectedMtimeMs != nil:
		return FileWritten{}, fmt.Errorf("%w: %s no longer exists", ErrFileChanged, path)
	}
	flags := os.O_WRONLY | syscall.O_NONBLOCK
	if expectedMtimeMs == nil {
		flags |= os.O_CREATE
		if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
			return FileWritten{}, pathError(path, err, "cannot be written")
		}
	}
	// safefile refuses, once open, what is not a regular file and anything
	// under /proc, /sys and /dev or on a kernel file system.
	f, fi, err := safefile.OpenFile(abs, flags, 0o666)
	if err != nil {
		if expectedMtimeMs != nil && errors.Is(err, fs.ErrNotExist) {
			return FileWritten{}, fmt.Errorf("%w: %s no longer exists", ErrFileChanged, path)
		}
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	defer f.Close()
	if expectedMtimeMs != nil {
		if got := fi.ModTime().UnixMilli(); got != *expectedMtimeMs {
			return FileWritten{}, fmt.Errorf("%w: %s was modified at %d, not %d", ErrFileChanged, path, got, *expectedMtimeMs)
		}
	}
	if err := f.Truncate(0); err != nil {
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	if _, err := f.WriteString(text); err != nil {
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	if err := f.Sync(); err != nil {
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	if fi, err = f.Stat(); err != nil {
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	if err := f.Close(); err != nil {
		return FileWritten{}, pathError(path, err, "cannot be written")
	}
	return FileWritten{MtimeMs: fi.ModTime().UnixMilli()}, nil
}

// pathError turns a filesystem error about path into invalidParams "path":
// "no such file" for a missing one, else what says why (the operating
// system's words, without the absolute path).
func pathError(path string, err error, what string) error {
	if se, ok := errors.AsType[*safefile.Error](err); ok {
		return coreerr.Param("path", "%v", se)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return coreerr.Param("path", "no such file or folder: %s", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return coreerr.Param("path", "%s %s: %v", path, what, err)
}
