package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// numbered returns lines "line 1\n" .. "line n\n".
func numbered(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "small.txt", "one\ntwo\nthree\nfour\nfive\n", 0o644)
	writeFile(t, dir, "nonl.txt", "a\nb", 0o644)
	writeFile(t, dir, "crlf.txt", "a\r\nb\r\n", 0o644)
	writeFile(t, dir, "empty.txt", "", 0o644)
	writeFile(t, dir, "long.txt", numbered(3000), 0o644)
	wide := strings.Repeat(strings.Repeat("w", 99)+"\n", 1000) // 100 KB in 100-byte lines
	writeFile(t, dir, "wide.txt", wide, 0o644)
	huge := strings.Repeat("é", 40*1024) + "\nafter\n" // one 80 KB line
	writeFile(t, dir, "hugeline.txt", huge, 0o644)
	writeFile(t, dir, "bin.dat", "PNG\x00\x01\x02", 0o644)
	writeFile(t, dir, "sub/nested.txt", "nested\n", 0o644)

	tests := []struct {
		name    string
		args    string
		want    string
		isError bool
	}{
		{"whole", `{"path": "small.txt"}`, "one\ntwo\nthree\nfour\nfive\n", false},
		{"offset", `{"path": "small.txt", "offset": 4}`, "four\nfive\n", false},
		{"limit", `{"path": "small.txt", "limit": 2}`, "one\ntwo\n\n[Showing lines 1-2 of 5. Use offset=3 to continue.]", false},
		{"offsetLimit", `{"path": "small.txt", "offset": 2, "limit": 2}`, "two\nthree\n\n[Showing lines 2-3 of 5. Use offset=4 to continue.]", false},
		{"lastLine", `{"path": "small.txt", "offset": 5}`, "five\n", false},
		{"noFinalNewline", `{"path": "nonl.txt", "offset": 2}`, "b", false},
		{"noFinalNewlineLimit", `{"path": "nonl.txt", "limit": 1}`, "a\n\n[Showing lines 1-1 of 2. Use offset=2 to continue.]", false},
		{"crlfKept", `{"path": "crlf.txt"}`, "a\r\nb\r\n", false},
		{"empty", `{"path": "empty.txt"}`, "[The file is empty.]", false},
		{"nested", `{"path": "sub/nested.txt"}`, "nested\n", false},
		{"absolute", fmt.Sprintf(`{"path": %q}`, filepath.Join(dir, "small.txt")), "one\ntwo\nthree\nfour\nfive\n", false},
		{"defaultLineLimit", `{"path": "long.txt"}`, numbered(2000) + "\n[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]", false},
		{"limitOverMax", `{"path": "long.txt", "offset": 2990, "limit": 5000}`, strings.TrimPrefix(numbered(3000), numbered(2989)), false},
		{"byteLimit", `{"path": "wide.txt"}`, wide[:512*100] + "\n[Showing lines 1-512 of 1000. Use offset=513 to continue.]", false},
		{"hugeLine", `{"path": "hugeline.txt"}`, huge[:50*1024] + "\n\n[Line 1 is longer than 50KB; only its first 50.0KB are shown. Use bash (for example cut or head -c) to see the rest.]", false},
		{"afterHugeLine", `{"path": "hugeline.txt", "offset": 2}`, "after\n", false},
		{"offsetPastEnd", `{"path": "small.txt", "offset": 6}`, "read: offset 6 is beyond the end of small.txt (5 lines)", true},
		{"offsetZero", `{"path": "small.txt", "offset": 0}`, "read: offset must be at least 1, got 0", true},
		{"limitZero", `{"path": "small.txt", "limit": 0}`, "read: limit must be at least 1, got 0", true},
		{"missing", `{"path": "nope.txt"}`, "read: open " + filepath.Join(dir, "nope.txt") + ": no such file or directory", true},
		{"directory", `{"path": "sub"}`, "read: sub is a directory", true},
		{"binary", `{"path": "bin.dat"}`, "read: bin.dat looks like a binary file (6 bytes); read shows text only", true},
	}
	tool := NewRead(dir)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, got := execute(t, context.Background(), tool, tc.args)
			if res.IsError != tc.isError {
				t.Errorf("isError = %v, want %v (text %q)", res.IsError, tc.isError, got)
			}
			if got != tc.want {
				t.Errorf("text (%d bytes) =\n%q\nwant (%d bytes)\n%q", len(got), trimMiddle(got), len(tc.want), trimMiddle(tc.want))
			}
			if res.Details.FileChanges != nil {
				t.Errorf("read reported file changes")
			}
		})
	}
}

// trimMiddle shortens long strings for failure messages.
func trimMiddle(s string) string {
	if len(s) <= 300 {
		return s
	}
	return s[:150] + " ... " + s[len(s)-150:]
}

func TestReadHonoursCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "x\n", 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, text := execute(t, ctx, NewRead(dir), `{"path": "a.txt"}`)
	if !res.IsError || !strings.Contains(text, "context canceled") {
		t.Errorf("read with a cancelled ctx: isError=%v text=%q", res.IsError, text)
	}
}

func TestReadUnreadable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	dir := t.TempDir()
	writeFile(t, dir, "secret.txt", "x\n", 0o000)
	res, _ := execute(t, context.Background(), NewRead(dir), `{"path": "secret.txt"}`)
	if !res.IsError {
		t.Errorf("reading an unreadable file succeeded")
	}
}

// TestReadRefusesWhatBlocks reads paths that block a reader or take over the
// server's stdin (issue 15: a read of /dev/stdin or a FIFO wedged the
// thread): each is an error result saying what the path is, returned at
// once. A read that blocks fails the test after a generous bound instead of
// hanging it.
func TestReadRefusesWhatBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "link-to-fifo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/status", filepath.Join(dir, "link-to-status")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"/dev/stdin", "read: /dev/stdin is under /dev; only regular files outside /proc, /sys and /dev are opened"},
		{"/dev/zero", "read: /dev/zero is under /dev; only regular files outside /proc, /sys and /dev are opened"},
		{"/proc/self/status", "read: /proc/self/status is under /proc; only regular files outside /proc, /sys and /dev are opened"},
		{"/proc/kmsg", "read: /proc/kmsg is under /proc; only regular files outside /proc, /sys and /dev are opened"},
		{"fifo", "read: " + fifo + " is a named pipe (FIFO); only regular files outside /proc, /sys and /dev are opened"},
		{"link-to-fifo", "read: " + filepath.Join(dir, "link-to-fifo") + " (resolves to " + fifo + ") is a named pipe (FIFO); only regular files outside /proc, /sys and /dev are opened"},
		{"link-to-status", "is under /proc; only regular files"},
	}
	tool := NewRead(dir)
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			type outcome struct {
				isError bool
				text    string
			}
			done := make(chan outcome, 1)
			go func() { // ends when Execute returns
				res := tool.Execute(context.Background(), []byte(fmt.Sprintf(`{"path": %q}`, tc.path)))
				var text string
				if len(res.Content) == 1 {
					text = res.Content[0].Text
				}
				done <- outcome{res.IsError, text}
			}()
			select {
			case got := <-done:
				if !got.isError || !strings.Contains(got.text, tc.want) {
					t.Errorf("read %s: isError=%v text=%q, want an error containing %q", tc.path, got.isError, got.text, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("read %s did not return: it blocks", tc.path)
			}
		})
	}
}
