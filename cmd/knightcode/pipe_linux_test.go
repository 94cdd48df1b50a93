package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrowOutputPipe checks that a stdout pipe is grown to
// outputPipeBytes, and that a file is left alone.
func TestGrowOutputPipe(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < outputPipeBytes {
			t.Skipf("pipe-max-size is %d: no unprivileged pipe may hold %d bytes", max, outputPipeBytes)
		}
	}
	growOutputPipe(w)
	got, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got < outputPipeBytes {
		t.Errorf("stdout pipe holds %d bytes after growOutputPipe, want %d", got, outputPipeBytes)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	growOutputPipe(f) // not a pipe: nothing to do, nothing breaks
	if _, err := f.WriteString("x"); err != nil {
		t.Error(err)
	}
}
