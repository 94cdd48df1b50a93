//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EFileReadRefusesSpecialFiles: file/read of /proc/kmsg (a read
// would block until the kernel logs something) and of a FIFO (an open
// would wait for a writer) answer invalidParams naming path, within the
// request timeout, instead of hanging the thread (internal/safefile).
func TestE2EFileReadRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startDiffServer(t, nil)
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo}, &started)
	for _, path := range []string{"/proc/kmsg", fifo} {
		s.wantErr(t, protocol.FileRead.Name, protocol.FileReadParams{ThreadID: started.Thread.ID, Path: path},
			wireErr{Code: protocol.CodeInvalidParams, Field: "path"})
	}
}
