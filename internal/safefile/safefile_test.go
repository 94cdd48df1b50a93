package safefile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture makes a folder with a regular file, a FIFO, symlinks to it and to
// system paths, and returns the folder.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"to-fifo":     "fifo",
		"to-status":   "/proc/self/status",
		"to-zero":     "/dev/zero",
		"to-plain":    "plain.txt",
		"to-proc":     "/proc",
		"dangling":    "missing.txt",
		"to-dev-new":  "/dev/knightcode-new",
		"to-link-dev": "to-zero",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestOpenRefuses opens every kind of path that can block a reader: each is
// refused at once with an *Error saying what it is (issue 15).
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		path    string
		flag    int
		want    error
		wantMsg string
	}{
		{"/dev/stdin", os.O_RDONLY, ErrSystemPath, "/dev/stdin is under /dev; only regular files outside /proc, /sys and /dev are opened"},
		{"/dev/zero", os.O_RDONLY, ErrSystemPath, "/dev/zero is under /dev;"},
		{"/dev", os.O_RDONLY, ErrSystemPath, "/dev is under /dev;"},
		{"/proc/self/status", os.O_RDONLY, ErrSystemPath, "/proc/self/status is under /proc;"},
		{"/proc/kmsg", os.O_RDONLY, ErrSystemPath, "/proc/kmsg is under /proc;"},
		{"/sys/kernel/notes", os.O_RDONLY, ErrSystemPath, "/sys/kernel/notes is under /sys;"},
		{"/proc/../dev/./zero", os.O_RDONLY, ErrSystemPath, "/dev/zero is under /dev;"},
		{in("fifo"), os.O_RDONLY, ErrNotRegular, in("fifo") + " is a named pipe (FIFO);"},
		{in("fifo"), os.O_WRONLY, ErrNotRegular, in("fifo") + " is a named pipe (FIFO);"}, // no reader: ENXIO, refused as a FIFO
		{in("fifo"), os.O_WRONLY | os.O_CREATE | os.O_TRUNC, ErrNotRegular, in("fifo") + " is a named pipe (FIFO);"},
		{in("to-fifo"), os.O_RDONLY, ErrNotRegular, in("to-fifo") + " (resolves to " + in("fifo") + ") is a named pipe (FIFO);"},
		{in("to-status"), os.O_RDONLY, ErrSystemPath, in("to-status") + " (resolves to /proc/"},
		{in("to-zero"), os.O_RDONLY, ErrSystemPath, in("to-zero") + " (resolves to /dev/zero) is under /dev;"},
		{in("to-link-dev"), os.O_RDONLY, ErrSystemPath, " (resolves to /dev/zero) is under /dev;"},
		{in("to-proc/self/status"), os.O_RDONLY, ErrSystemPath, "is under /proc;"},
		{in("to-dev-new"), os.O_WRONLY | os.O_CREATE, ErrSystemPath, " (resolves to /dev/knightcode-new) is under /dev;"},
		{in("sub"), os.O_RDONLY, ErrNotRegular, in("sub") + " is a folder;"},
	}
	for _, tc := range tests {
		f, _, err := OpenFile(tc.path, tc.flag, 0o644)
		if err == nil {
			f.Close()
			t.Errorf("OpenFile(%s) succeeded, want %v", tc.path, tc.want)
			continue
		}
		var se *Error
		if !errors.Is(err, tc.want) || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.wantMsg) {
			t.Errorf("OpenFile(%s) = %v, want an *Error wrapping %v containing %q", tc.path, err, tc.want, tc.wantMsg)
		}
	}
}

// TestOpenRegular opens regular files directly, through a symlink, and
// creates one through a dangling symlink; a missing file is fs.ErrNotExist
// naming the path as given.
func TestOpenRegular(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	for _, name := range []string{"plain.txt", "to-plain"} {
		f, fi, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		data, err := ReadAll(context.Background(), f, -1)
		f.Close()
		if err != nil || string(data) != "hello\n" || fi.Size() != 6 {
			t.Errorf("Open(%s) read %q, %v (size %d), want hello", name, data, err, fi.Size())
		}
	}
	f, _, err := OpenFile(filepath.Join(dir, "dangling"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatalf("create through a dangling link: %v", err)
	}
	f.Close()
	if _, err := os.Stat(filepath.Join(dir, "missing.txt")); err != nil {
		t.Errorf("the link's target was not created: %v", err)
	}
	missing := filepath.Join(dir, "nope", "x.txt")
	_, _, err = Open(missing)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != missing {
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist naming %s", err, missing)
	}
	if _, err := Resolve("relative/path"); err == nil {
		t.Errorf("Resolve of a relative path succeeded")
	}
}

// TestOpenTruncates: os.O_TRUNC empties a regular file once it is open and
// checked, and leaves a refused one alone (a FIFO with a reader is opened
// for writing and then refused; nothing was truncated before the check).
func TestOpenTruncates(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	f, fi, err := OpenFile(filepath.Join(dir, "to-plain"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "plain.txt")); err != nil || len(b) != 0 || fi.Size() != 0 {
		t.Errorf("after O_TRUNC plain.txt = %q (%v), stat size %d, want empty", b, err, fi.Size())
	}
	r, err := os.OpenFile(filepath.Join(dir, "fifo"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, _, err := OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY|os.O_TRUNC, 0); !errors.Is(err, ErrNotRegular) {
		if f != nil {
			f.Close()
		}
		t.Errorf("O_TRUNC of a FIFO with a reader = %v, want ErrNotRegular", err)
	}
}

// TestPseudoFS checks the file system test on its own: a procfs file opened
// by hand is recognised (this is what refuses procfs mounted elsewhere).
func TestPseudoFS(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("file system types are checked on Linux only")
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	defer f.Close()
	if got := pseudoFS(f); got != "procfs" {
		t.Errorf("pseudoFS(/proc/self/status) = %q, want procfs", got)
	}
	g, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := pseudoFS(g); got != "" {
		t.Errorf("pseudoFS(test binary) = %q, want none", got)
	}
}

// TestReaderGivesUpOnCancel reads a pipe nobody writes to (a read that
// blocks): cancelling ctx makes Read return context.Canceled, and every
// later Read too.
func TestReaderGivesUpOnCancel(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := NewReader(ctx, pr)
	done := make(chan error, 1)
	go func() { // ends when Read returns
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel = %v, want context.Canceled", err)
	}
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("second Read = %v, want context.Canceled", err)
	}
	pw.Close() // ends the read left in the background
}

// TestReadAllLimit reads one byte past limit and no more.
func TestReadAllLimit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 200*1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := ReadAll(context.Background(), f, 100*1024)
	if err != nil || len(data) != 100*1024+1 {
		t.Errorf("ReadAll(limit 100 KiB) = %d bytes, %v, want %d", len(data), err, 100*1024+1)
	}
	if _, err := io.Copy(io.Discard, f); err != nil {
		t.Fatal(err)
	}
}

// readFileBounded runs ReadFile(path, limit) and fails the test when it has
// not returned within 10 s (a FIFO with no writer would block forever).
func readFileBounded(t *testing.T, path string, limit int64) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := ReadFile(path, limit)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("ReadFile(%s) did not return within 10 s", path)
		return nil, nil
	}
}

// TestReadFile reads configuration-file paths that must not wedge or balloon
// the server: FIFOs, devices and symlinks to them are refused at once, a
// file over the limit is an error naming it, a regular file is read whole.
func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := fixture(t)
	in := func(name string) string { return filepath.Join(dir, name) }
	big := in("big.json")
	if err := os.WriteFile(big, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path  string
		limit int64
		want  error
		what  string
	}{
		{in("fifo"), ConfigLimit, ErrNotRegular, "a named pipe (FIFO)"},
		{in("to-fifo"), ConfigLimit, ErrNotRegular, "a named pipe (FIFO)"},
		{"/dev/zero", ConfigLimit, ErrSystemPath, "under /dev"},
		{in("to-zero"), ConfigLimit, ErrSystemPath, "under /dev"},
		{in("sub"), ConfigLimit, ErrNotRegular, "a folder"},
		{big, 99, ErrTooLarge, "is larger than 99 bytes"},
		{in("missing.json"), ConfigLimit, fs.ErrNotExist, "no such file"},
	}
	for _, tt := range tests {
		data, err := readFileBounded(t, tt.path, tt.limit)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.what) || data != nil {
			t.Errorf("ReadFile(%s, %d) = %d bytes, %v; want %v saying %q", tt.path, tt.limit, len(data), err, tt.want, tt.what)
		}
	}
	if data, err := readFileBounded(t, big, 100); err != nil || len(data) != 100 {
		t.Errorf("ReadFile(big, 100) = %d bytes, %v; want all 100", len(data), err)
	}
	if data, err := readFileBounded(t, in("to-plain"), ConfigLimit); err != nil || string(data) != "hello\n" {
		t.Errorf("ReadFile(to-plain) = %q, %v; want the file", data, err)
	}
	if got := (&TooLargeError{Path: "/a/settings.json", Limit: ConfigLimit}).Error(); got != "/a/settings.json is larger than 16 MiB" {
		t.Errorf("TooLargeError = %q", got)
	}
}

// TestReadFileRelative reads a relative path against the current folder.
func TestReadFileRelative(t *testing.T) {
	dir := fixture(t)
	t.Chdir(dir)
	if data, err := readFileBounded(t, "plain.txt", ConfigLimit); err != nil || string(data) != "hello\n" {
		t.Errorf("ReadFile(plain.txt) = %q, %v; want the file", data, err)
	}
	if _, err := readFileBounded(t, "fifo", ConfigLimit); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile(fifo) = %v; want ErrNotRegular", err)
	}
}
