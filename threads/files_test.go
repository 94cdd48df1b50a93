package threads

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// writeFiles creates files (path -> content, relative to dir) with their
// parent folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fieldOf returns the field of an invalidParams error, or the error's text
// prefixed with "!" for any other error ("" for nil).
func fieldOf(err error) string {
	if err == nil {
		return ""
	}
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Code == protocol.CodeInvalidParams {
		if d, ok := pe.Data.(protocol.InvalidParamsData); ok {
			return d.Field
		}
		return "?"
	}
	return "!" + err.Error()
}

func mtimeMs(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime().UnixMilli()
}

func ptr[T any](v T) *T { return &v }

func TestReadFile(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	outside := t.TempDir()
	bigText := strings.Repeat("é", 5000) // 10,000 bytes of UTF-8
	writeFiles(t, cwd, map[string]string{
		"a.txt":         "hello\nworld\n",
		"empty":         "",
		"sub/b.go":      "package b\n",
		"nul.bin":       "ab\x00cd",
		"latin1.txt":    "caf\xe9\n",
		"big.txt":       bigText,
		"crlf.txt":      "a\r\nb\r\n",
		"late-nul.txt":  strings.Repeat("x", protocol.FileBinarySniff) + "\x00",
		"big-latin.txt": "\xe9" + strings.Repeat("x", 100),
	})
	writeFiles(t, outside, map[string]string{"o.txt": "outside\n"})
	if err := os.Symlink("a.txt", filepath.Join(cwd, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cwd, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := func(s string) *string { return &s }
	tests := []struct {
		name      string
		path      string
		maxBytes  int
		want      protocol.FileReadResult
		wantField string
	}{
		{"text", "a.txt", 0, protocol.FileReadResult{Path: "a.txt", Size: 12, Text: text("hello\nworld\n")}, ""},
		{"empty file has empty text", "empty", 0, protocol.FileReadResult{Path: "empty", Text: text("")}, ""},
		{"subfolder", "sub/b.go", 0, protocol.FileReadResult{Path: "sub/b.go", Size: 10, Text: text("package b\n")}, ""},
		{"cleaned", "sub/../a.txt", 0, protocol.FileReadResult{Path: "a.txt", Size: 12, Text: text("hello\nworld\n")}, ""},
		{"absolute inside", filepath.Join(cwd, "a.txt"), 0, protocol.FileReadResult{Path: "a.txt", Size: 12, Text: text("hello\nworld\n")}, ""},
		{"absolute outside", filepath.Join(outside, "o.txt"), 0, protocol.FileReadResult{Path: relPath(cwd, filepath.Join(outside, "o.txt")), Size: 8, Text: text("outside\n")}, ""},
		{"symlink followed", "link.txt", 0, protocol.FileReadResult{Path: "link.txt", Size: 12, Text: text("hello\nworld\n")}, ""},
		{"CR bytes kept", "crlf.txt", 0, protocol.FileReadResult{Path: "crlf.txt", Size: 6, Text: text("a\r\nb\r\n")}, ""},
		{"NUL is binary", "nul.bin", 0, protocol.FileReadResult{Path: "nul.bin", Size: 5, Binary: true}, ""},
		{"invalid UTF-8 is binary", "latin1.txt", 0, protocol.FileReadResult{Path: "latin1.txt", Size: 5, Binary: true}, ""},
		{"a NUL past 8 KiB is text", "late-nul.txt", 0,
			protocol.FileReadResult{Path: "late-nul.txt", Size: protocol.FileBinarySniff + 1, Text: text(strings.Repeat("x", protocol.FileBinarySniff) + "\x00")}, ""},
		{"exactly maxBytes", "a.txt", 12, protocol.FileReadResult{Path: "a.txt", Size: 12, Text: text("hello\nworld\n")}, ""},
		{"over maxBytes", "a.txt", 11, protocol.FileReadResult{Path: "a.txt", Size: 12, TooLarge: true}, ""},
		{"over maxBytes cut inside a character", "big.txt", 8193, protocol.FileReadResult{Path: "big.txt", Size: 10000, TooLarge: true}, ""},
		{"over maxBytes and not UTF-8", "big-latin.txt", 10, protocol.FileReadResult{Path: "big-latin.txt", Size: 101, TooLarge: true, Binary: true}, ""},
		{"multi-byte text", "big.txt", 0, protocol.FileReadResult{Path: "big.txt", Size: 10000, Text: text(bigText)}, ""},
		{"missing", "nope.txt", 0, protocol.FileReadResult{}, "path"},
		{"folder", "sub", 0, protocol.FileReadResult{}, "path"},
		{"fifo is not a file (and is not opened)", "fifo", 0, protocol.FileReadResult{}, "path"},
		{"/proc/kmsg is refused (a read would block)", "/proc/kmsg", 0, protocol.FileReadResult{}, "path"},
		{"/proc/self/status is refused (procfs)", "/proc/self/status", 0, protocol.FileReadResult{}, "path"},
		{"empty path", "", 0, protocol.FileReadResult{}, "path"},
		{"below a file", "a.txt/x", 0, protocol.FileReadResult{}, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFile(cwd, tt.path, tt.maxBytes)
			if f := fieldOf(err); f != tt.wantField {
				t.Fatalf("error field %q (%v), want %q", f, err, tt.wantField)
			}
			if err != nil {
				return
			}
			abs, _ := resolvePath(cwd, tt.path)
			tt.want.MtimeMs = mtimeMs(t, abs)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("ReadFile(%q) (-got +want):\n%s", tt.path, diff)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct{ in, want string }{
		{"a/b", "/cwd/a/b"},
		{"./a/../b", "/cwd/b"},
		{"/x/./y", "/x/y"},
		{"~", home},
		{"~/n.txt", filepath.Join(home, "n.txt")},
		{"~x", "/cwd/~x"},
	}
	for _, tt := range tests {
		got, err := resolvePath("/cwd", tt.in)
		if err != nil || got != tt.want {
			t.Errorf("resolvePath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := resolvePath("/cwd", ""); fieldOf(err) != "path" {
		t.Errorf("empty path: %v", err)
	}
}

func TestListFiles(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, cwd, map[string]string{
		"b.txt":         "",
		".hidden":       "",
		"a/x.go":        "",
		"a/deep/y.go":   "",
		".git/HEAD":     "",
		"z dir/ü.md":    "",
		"a/.env":        "",
		"a/deep/z/q.go": "",
	})
	writeFiles(t, outside, map[string]string{"o/o.txt": ""})
	for link, target := range map[string]string{
		"linkdir":   "a",
		"linkfile":  "b.txt",
		"broken":    "nowhere",
		"a/up":      "..",
		"a/outside": filepath.Join(outside, "o"),
	} {
		if err := os.Symlink(target, filepath.Join(cwd, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	e := func(path, typ string) protocol.FileEntry { return protocol.FileEntry{Path: path, Type: typ} }
	const f, d = protocol.FileEntryFile, protocol.FileEntryDirectory
	tests := []struct {
		name      string
		path      string
		want      []protocol.FileEntry
		wantField string
	}{
		{"cwd", "", []protocol.FileEntry{e(".git", d), e(".hidden", f), e("a", d), e("b.txt", f), e("broken", f), e("linkdir", d), e("linkfile", f), e("z dir", d)}, ""},
		{"dot", ".", []protocol.FileEntry{e(".git", d), e(".hidden", f), e("a", d), e("b.txt", f), e("broken", f), e("linkdir", d), e("linkfile", f), e("z dir", d)}, ""},
		{"subfolder", "a", []protocol.FileEntry{e("a/.env", f), e("a/deep", d), e("a/outside", d), e("a/up", d), e("a/x.go", f)}, ""},
		{"nested, absolute", filepath.Join(cwd, "a", "deep"), []protocol.FileEntry{e("a/deep/y.go", f), e("a/deep/z", d)}, ""},
		{"through a link", "linkdir/deep", []protocol.FileEntry{e("linkdir/deep/y.go", f), e("linkdir/deep/z", d)}, ""},
		{"unicode and spaces", "z dir", []protocol.FileEntry{e("z dir/ü.md", f)}, ""},
		{"outside cwd", filepath.Join(outside, "o"), []protocol.FileEntry{e(relPath(cwd, filepath.Join(outside, "o"))+"/o.txt", f)}, ""},
		{"a file", "b.txt", nil, "path"},
		{"missing", "nope", nil, "path"},
		{"broken link", "broken", nil, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ListFiles(cwd, tt.path)
			if fl := fieldOf(err); fl != tt.wantField {
				t.Fatalf("error field %q (%v), want %q", fl, err, tt.wantField)
			}
			if err != nil {
				return
			}
			want := protocol.FileListResult{Root: cwd, Entries: tt.want}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("ListFiles(%q) (-got +want):\n%s", tt.path, diff)
			}
		})
	}
}

func TestListFilesTruncated(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	for _, n := range []int{protocol.MaxFileListEntries, protocol.MaxFileListEntries + 1} {
		dir := filepath.Join(cwd, fmt.Sprint(n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := ListFiles(cwd, fmt.Sprint(n))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entries) != protocol.MaxFileListEntries || got.Truncated != (n > protocol.MaxFileListEntries) {
			t.Errorf("%d files: %d entries, truncated %v", n, len(got.Entries), got.Truncated)
		}
		if last := got.Entries[len(got.Entries)-1].Path; last != fmt.Sprintf("%d/f%05d", n, protocol.MaxFileListEntries-1) {
			t.Errorf("%d files: last entry %q", n, last)
		}
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	writeFiles(t, cwd, map[string]string{"a.txt": "old\n", "sub/x": ""})
	abs := func(p string) string { return filepath.Join(cwd, filepath.FromSlash(p)) }
	read := func(p string) string {
		b, err := os.ReadFile(abs(p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("in place keeps mode, hard links and symlinks", func(t *testing.T) {
		writeFiles(t, cwd, map[string]string{"exec.sh": "#!/bin/sh\necho a long old line\n"})
		if err := os.Chmod(abs("exec.sh"), 0o751); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(abs("exec.sh"), abs("hard.sh")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("exec.sh", abs("soft.sh")); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(abs("exec.sh"))
		res, err := WriteFile(cwd, "soft.sh", "#!/bin/sh\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(abs("exec.sh"))
		if got := read("hard.sh"); got != "#!/bin/sh\n" {
			t.Errorf("hard link reads %q", got)
		}
		if fi, _ := os.Lstat(abs("soft.sh")); fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("symlink replaced by %v", fi.Mode())
		}
		if after.Mode() != before.Mode() || !os.SameFile(before, after) {
			t.Errorf("mode %v -> %v, same file %v", before.Mode(), after.Mode(), os.SameFile(before, after))
		}
		if res.MtimeMs != after.ModTime().UnixMilli() {
			t.Errorf("mtimeMs %d, file has %d", res.MtimeMs, after.ModTime().UnixMilli())
		}
	})

	t.Run("expectedMtimeMs", func(t *testing.T) {
		old := mtimeMs(t, abs("a.txt"))
		if _, err := WriteFile(cwd, "a.txt", "stale\n", ptr(old-1)); !errors.Is(err, ErrFileChanged) {
			t.Fatalf("stale mtime: %v, want ErrFileChanged", err)
		}
		if got := read("a.txt"); got != "old\n" {
			t.Errorf("refused write changed the file: %q", got)
		}
		res, err := WriteFile(cwd, "a.txt", "new\n", ptr(old))
		if err != nil {
			t.Fatal(err)
		}
		if got := read("a.txt"); got != "new\n" {
			t.Errorf("file reads %q", got)
		}
		// A second write with the mtime the first returned succeeds; with
		// the first read's mtime after a change it is refused.
		later := time.UnixMilli(res.MtimeMs).Add(time.Second)
		if err := os.Chtimes(abs("a.txt"), later, later); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteFile(cwd, "a.txt", "x\n", ptr(res.MtimeMs)); !errors.Is(err, ErrFileChanged) {
			t.Errorf("write after a change: %v, want ErrFileChanged", err)
		}
		if _, err := WriteFile(cwd, "gone.txt", "x\n", ptr(old)); !errors.Is(err, ErrFileChanged) {
			t.Errorf("missing file with expectedMtimeMs: %v, want ErrFileChanged", err)
		}
		if _, err := os.Stat(abs("gone.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("refused write created the file: %v", err)
		}
	})

	t.Run("created with parents", func(t *testing.T) {
		res, err := WriteFile(cwd, "new/deeper/n.txt", "n\n", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := read("new/deeper/n.txt"); got != "n\n" {
			t.Errorf("file reads %q", got)
		}
		if res.MtimeMs != mtimeMs(t, abs("new/deeper/n.txt")) {
			t.Errorf("mtimeMs %d", res.MtimeMs)
		}
		if _, err := WriteFile(cwd, "empty.txt", "", nil); err != nil || read("empty.txt") != "" {
			t.Errorf("empty text: %v", err)
		}
	})

	t.Run("shorter text truncates", func(t *testing.T) {
		writeFiles(t, cwd, map[string]string{"long.txt": strings.Repeat("long line\n", 100)})
		if _, err := WriteFile(cwd, "long.txt", "short", nil); err != nil {
			t.Fatal(err)
		}
		if got := read("long.txt"); got != "short" {
			t.Errorf("file reads %q", got)
		}
	})

	if err := syscall.Mkfifo(abs("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		name, path, text string
		field            string
	}{
		{"folder", "sub", "x", "path"},
		{"cwd", ".", "x", "path"},
		{"below a file", "a.txt/x", "x", "path"},
		{"fifo", "fifo", "x", "path"},
		{"empty path", "", "x", "path"},
		{"text over 8 MiB", "big.txt", strings.Repeat("x", protocol.MaxFileWriteBytes+1), "text"},
	}
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			if _, err := WriteFile(cwd, tt.path, tt.text, nil); fieldOf(err) != tt.field {
				t.Errorf("error %v, want invalidParams %q", err, tt.field)
			}
		})
	}
	if _, err := os.Stat(abs("big.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused text created the file: %v", err)
	}

	t.Run("read-only file cannot be written", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes read-only files")
		}
		writeFiles(t, cwd, map[string]string{"ro.txt": "ro\n"})
		if err := os.Chmod(abs("ro.txt"), 0o444); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteFile(cwd, "ro.txt", "x", nil); fieldOf(err) != "path" {
			t.Errorf("error %v, want invalidParams path", err)
		}
	})
}

// TestSystemPathsRefused: file/write and file/list refuse /proc, /sys and
// /dev (internal/safefile) with invalidParams "path".
func TestSystemPathsRefused(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	if _, err := WriteFile(cwd, "/dev/null", "x", nil); fieldOf(err) != "path" {
		t.Errorf("WriteFile(/dev/null) = %v, want invalidParams path", err)
	}
	if _, err := WriteFile(cwd, "/proc/self/comm", "x", nil); fieldOf(err) != "path" {
		t.Errorf("WriteFile(/proc/self/comm) = %v, want invalidParams path", err)
	}
	if _, err := ListFiles(cwd, "/proc"); fieldOf(err) != "path" {
		t.Errorf("ListFiles(/proc) = %v, want invalidParams path", err)
	}
}
