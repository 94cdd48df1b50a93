//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EExtensionFilesNotRegular: a -e entry that is a .ts symlink to a
// FIFO, a -e extension importing /dev/zero and a trusted project's
// .knightcode/extensions/y.ts importing /dev/zero are thread/start
// warnings naming the file, and the other extension loads (no warning); before the
// fix thread/start never answered (the harness's -timeout bounds it).
func TestE2EExtensionFilesNotRegular(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fifoTS := filepath.Join(dir, "fifo.ts")
	if err := os.Symlink(fifo, fifoTS); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.ts")
	src := "import x from \"/dev/zero\";\nexport default function (pi: any) { x; }\n"
	if err := os.WriteFile(zero, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(repo, ".knightcode", "extensions")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	projZero := filepath.Join(proj, "y.ts")
	if err := os.WriteFile(projZero, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startDiffServer(t, nil, "-e", fifoTS, "-e", zero, "-e", jsFixture(t, "input.ts"))
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	started := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess})
	want := []struct{ path, text string }{
		{projZero, "/dev/zero is under /dev"},
		{fifoTS, fifo + " is a named pipe (FIFO)"},
		{zero, "/dev/zero is under /dev"},
	}
	var got []protocol.Warning
	for _, w := range started.Warnings {
		if w.Source == protocol.WarningSourceExtension {
			got = append(got, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("extension warnings %+v", got)
	}
	for i, x := range want {
		if got[i].Path != x.path || !strings.Contains(got[i].Message, x.text) {
			t.Errorf("warning %d = %+v, want %s %q", i, got[i], x.path, x.text)
		}
	}
}
