package threads

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

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/internal/safefile"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The file methods as plain functions over a thread's cwd (spec: Method
// reference, file/read, file/list, file/write). They know nothing of
// threads: package rpc's file handlers look the cwd up (Manager.Checkout)
// and call them. Parameter errors are invalidParams *protocol.Error values naming the
// field; a stale expectedMtimeMs is ErrFileChanged.

// ErrFileChanged: file/write's expectedMtimeMs does not match the file's
// modification time (or the file is gone); the file was left as it is (wire
// code fileChanged).
var ErrFileChanged = errors.New("the file changed since it was read")

// resolvePath makes a file method's path absolute the way the agent's tools
// do (tools.ResolvePath): "~" and "~/..." expand to the server's home
// directory, an absolute path is cleaned, anything else is joined to cwd.
// Errors: invalidParams "path" for an empty path or a home directory that
// cannot be found.
func resolvePath(cwd, p string) (string, error) {
	if p == "" {
		return "", protocol.InvalidParams("path", "must not be empty")
	}
	abs, err := tools.ResolvePath(cwd, p)
	if err != nil {
		return "", protocol.InvalidParams("path", "%v", err)
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

// ReadFile answers file/read for a thread in cwd: the file at path (resolved
// with resolvePath; links followed) with its size in bytes, its modification
// time in Unix milliseconds taken from the open file, and its text when it is
// neither binary nor larger than maxBytes (1 to 8 MiB; 0 means 2 MiB).
//
// Binary means a NUL byte in the first 8 KiB or bytes that are not UTF-8 (a
// client that decoded and saved them would replace them). For a file over
// maxBytes only its first 8 KiB are read and checked. Result.Path is the path
// relative to cwd (see relPath).
//
// Errors: invalidParams "path" when there is no such file, it is not a
// regular file, or it cannot be read.
func ReadFile(cwd, path string, maxBytes int) (protocol.FileReadResult, error) {
	if maxBytes <= 0 {
		maxBytes = protocol.DefaultFileReadBytes
	}
	abs, err := resolvePath(cwd, path)
	if err != nil {
		return protocol.FileReadResult{}, err
	}
	// Refuse folders and special files before opening: opening a FIFO for
	// reading would wait for a writer.
	if fi, err := os.Stat(abs); err != nil {
		return protocol.FileReadResult{}, pathError(path, err, "cannot be read")
	} else if err := regularFile(path, fi); err != nil {
		return protocol.FileReadResult{}, err
	}
	// safefile refuses what is not a regular file once open (a FIFO that
	// replaced the file since the stat) and anything under /proc, /sys and
	// /dev or on a kernel file system (/proc/kmsg would block a read).
	f, fi, err := safefile.Open(abs)
	if err != nil {
		return protocol.FileReadResult{}, pathError(path, err, "cannot be read")
	}
	defer f.Close()
	// Read one byte past maxBytes to learn whether the file (which may have
	// grown since the stat) is larger; a read that hangs (a stuck network
	// file system) gives up after safefile.ReadTimeout.
	data, err := safefile.ReadAll(context.Background(), f, int64(maxBytes))
	if err != nil {
		return protocol.FileReadResult{}, pathError(path, err, "cannot be read")
	}
	// The size and time of the bytes read, not of the earlier stat.
	if fi2, err := f.Stat(); err == nil {
		fi = fi2
	}
	res := protocol.FileReadResult{
		Path:    relPath(cwd, abs),
		Size:    fi.Size(),
		MtimeMs: fi.ModTime().UnixMilli(),
	}
	tooLarge := len(data) > maxBytes || fi.Size() > int64(maxBytes)
	sniff := data[:min(len(data), protocol.FileBinarySniff)]
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
		return protocol.InvalidParams("path", "%s is a folder, not a file", path)
	}
	return protocol.InvalidParams("path", "%s is not a regular file", path)
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

// ListFiles answers file/list for a thread in cwd: the entries of the folder
// at path (resolved with resolvePath; "" means cwd; a link to a folder is
// followed), hidden ones included, sorted by name. Entry paths are relative to
// cwd and /-separated (see relPath); an entry is a "directory" when it is a
// folder or a link to one, else a "file" (a broken link too). Past
// protocol.MaxFileListEntries (5,000) entries, in name order, the rest are
// left out and Truncated is true. Root is cwd.
//
// Errors: invalidParams "path" when the path is not a folder, is under
// /proc, /sys or /dev, or cannot be read.
func ListFiles(cwd, path string) (protocol.FileListResult, error) {
	dir := cwd
	if path != "" {
		var err error
		if dir, err = resolvePath(cwd, path); err != nil {
			return protocol.FileListResult{}, err
		}
	}
	// Folders under /proc, /sys and /dev (by name or through a symlink) are
	// refused as file/read refuses their files.
	if _, err := safefile.Resolve(dir); err != nil {
		return protocol.FileListResult{}, pathError(path, err, "cannot be read")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return protocol.FileListResult{}, pathError(path, err, "cannot be read")
	}
	if !fi.IsDir() {
		return protocol.FileListResult{}, protocol.InvalidParams("path", "%s is not a folder", path)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return protocol.FileListResult{}, pathError(path, err, "cannot be read")
	}
	res := protocol.FileListResult{Root: cwd, Entries: []protocol.FileEntry{}}
	if len(des) > protocol.MaxFileListEntries {
		des, res.Truncated = des[:protocol.MaxFileListEntries], true
	}
	prefix := relPath(cwd, dir)
	for _, de := range des {
		typ := protocol.FileEntryFile
		switch {
		case de.IsDir():
			typ = protocol.FileEntryDirectory
		case de.Type()&fs.ModeSymlink != 0:
			if target, err := os.Stat(filepath.Join(dir, de.Name())); err == nil && target.IsDir() {
				typ = protocol.FileEntryDirectory
			}
		}
		p := de.Name()
		if prefix != "." {
			p = prefix + "/" + p
		}
		res.Entries = append(res.Entries, protocol.FileEntry{Path: p, Type: typ})
	}
	slices.SortFunc(res.Entries, func(a, b protocol.FileEntry) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// WriteFile answers file/write for a thread in cwd: it writes text to the
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
func WriteFile(cwd, path, text string, expectedMtimeMs *int64) (protocol.FileWriteResult, error) {
	if len(text) > protocol.MaxFileWriteBytes {
		return protocol.FileWriteResult{}, protocol.InvalidParams("text", "at most %d bytes, got %d", protocol.MaxFileWriteBytes, len(text))
	}
	abs, err := resolvePath(cwd, path)
	if err != nil {
		return protocol.FileWriteResult{}, err
	}
	// Refuse folders and special files before opening: opening a FIFO for
	// writing would wait for a reader.
	switch fi, err := os.Stat(abs); {
	case err == nil:
		if err := regularFile(path, fi); err != nil {
			return protocol.FileWriteResult{}, err
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	case err != nil && expectedMtimeMs != nil:
		return protocol.FileWriteResult{}, fmt.Errorf("%w: %s no longer exists", ErrFileChanged, path)
	}
	flags := os.O_WRONLY | syscall.O_NONBLOCK
	if expectedMtimeMs == nil {
		flags |= os.O_CREATE
		if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
			return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
		}
	}
	// safefile refuses, once open, what is not a regular file and anything
	// under /proc, /sys and /dev or on a kernel file system.
	f, fi, err := safefile.OpenFile(abs, flags, 0o666)
	if err != nil {
		if expectedMtimeMs != nil && errors.Is(err, fs.ErrNotExist) {
			return protocol.FileWriteResult{}, fmt.Errorf("%w: %s no longer exists", ErrFileChanged, path)
		}
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	defer f.Close()
	if expectedMtimeMs != nil {
		if got := fi.ModTime().UnixMilli(); got != *expectedMtimeMs {
			return protocol.FileWriteResult{}, fmt.Errorf("%w: %s was modified at %d, not %d", ErrFileChanged, path, got, *expectedMtimeMs)
		}
	}
	if err := f.Truncate(0); err != nil {
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	if _, err := f.WriteString(text); err != nil {
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	if err := f.Sync(); err != nil {
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	if fi, err = f.Stat(); err != nil {
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	if err := f.Close(); err != nil {
		return protocol.FileWriteResult{}, pathError(path, err, "cannot be written")
	}
	return protocol.FileWriteResult{MtimeMs: fi.ModTime().UnixMilli()}, nil
}

// pathError turns a filesystem error about path into invalidParams "path":
// "no such file" for a missing one, else what says why (the operating
// system's words, without the absolute path).
func pathError(path string, err error, what string) error {
	if se, ok := errors.AsType[*safefile.Error](err); ok {
		return protocol.InvalidParams("path", "%v", se)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return protocol.InvalidParams("path", "no such file or folder: %s", path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return protocol.InvalidParams("path", "%s %s: %v", path, what, err)
}
