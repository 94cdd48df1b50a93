package session

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// closedSaved is a saved session file that no one owns any more.
func closedSaved(t *testing.T, dir string) string {
	t.Helper()
	s := newSaved(t, dir, userMsg(t, "hi", 1))
	file := s.File()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestFileLockRenameNeverReplaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := closedSaved(t, dir)
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "archive", filepath.Base(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("another transcript\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	l, err := LockFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if tryLockOther(t, file) {
		t.Errorf("the file is not locked while held")
	}
	if _, err := Open(file); !errors.Is(err, ErrLockedElsewhere) {
		t.Errorf("Open while held: %v, want ErrLockedElsewhere", err)
	}
	err = l.Rename(dst)
	var ee *ExistsError
	if !errors.As(err, &ee) || !errors.Is(err, ErrDestinationExists) {
		t.Fatalf("Rename onto a file = %v, want *ExistsError", err)
	}
	if diff := cmp.Diff(ee.Surviving(), []string{file, dst}); diff != "" {
		t.Errorf("surviving (-got +want):\n%s", diff)
	}
	if got, _ := os.ReadFile(dst); string(got) != "another transcript\n" {
		t.Errorf("destination overwritten: %q", got)
	}
	if got, _ := os.ReadFile(file); string(got) != string(want) {
		t.Errorf("source changed: %q", got)
	}

	if err := os.Remove(dst); err != nil {
		t.Fatal(err)
	}
	if err := l.Rename(dst); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if l.Path() != dst || tryLockOther(t, dst) {
		t.Errorf("after Rename: path %s, lock held %v", l.Path(), !tryLockOther(t, dst))
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old name is still there: %v", err)
	}
	if got, _ := os.ReadFile(dst); string(got) != string(want) {
		t.Errorf("moved file differs: %q", got)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if !tryLockOther(t, dst) {
		t.Errorf("still locked after Unlock")
	}
	if err := l.Rename(file); !errors.Is(err, ErrClosed) {
		t.Errorf("Rename after Unlock: %v, want ErrClosed", err)
	}
}

func TestFileLockRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	// Loaded in this process.
	s := newSaved(t, dir, userMsg(t, "hi", 1))
	var le *LoadedError
	if _, err := LockFile(s.File()); !errors.As(err, &le) {
		t.Errorf("LockFile of a loaded file: %v, want *LoadedError", err)
	}

	// Owned by another process.
	other := closedSaved(t, t.TempDir())
	cmd, stdin, out := helper(t, "hold", other)
	if got := readLine(t, out); got != "owned" {
		t.Fatalf("helper: %q", got)
	}
	if _, err := LockFile(other); !errors.Is(err, ErrLockedElsewhere) {
		t.Errorf("LockFile of a file another process owns: %v, want ErrLockedElsewhere", err)
	}
	stdin.Close()
	_, _ = io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}

	// Hard-linked: refused up front, and again by Remove when a link
	// appears after the lock was taken.
	linked := closedSaved(t, t.TempDir())
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(linked, link); err != nil {
		t.Fatal(err)
	}
	var he *HardLinkError
	if _, err := LockFile(linked); !errors.As(err, &he) || he.Links != 2 {
		t.Errorf("LockFile of a hard-linked file: %v, want *HardLinkError with 2 links", err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	l, err := LockFile(linked)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Link(linked, link); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(); !errors.As(err, &he) {
		t.Errorf("Remove of a file linked meanwhile: %v, want *HardLinkError", err)
	}
	if _, err := os.Stat(linked); err != nil {
		t.Errorf("a refused Remove removed the file: %v", err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(linked); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove left the file: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("Unlock after Remove: %v", err)
	}

	// Missing.
	if _, err := LockFile(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LockFile of a missing file: %v", err)
	}
}

// TestHeaderWorkspace checks that a created session records its workspace
// in the header, that the header round-trips, and that listings report its
// mode.
func TestHeaderWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := &Workspace{Mode: WorkspaceWorktree, Path: "/w/ab12/p", ProjectCwd: "/p", BaseRef: "main"}
	s, err := Create(dir, CreateOptions{Cwd: "/w/ab12/p/sub", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, userMsg(t, "in a worktree", 1))
	s.Close()
	local := newSaved(t, dir, userMsg(t, "local", 2))
	local.Close()

	if diff := cmp.Diff(mustRead(t, s.File()).Header.Workspace, ws); diff != "" {
		t.Errorf("header workspace (-got +want):\n%s", diff)
	}
	var l Lister
	for range 2 { // cold, then from the index
		rows, err := l.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[r.Title] = r.WorkspaceMode
		}
		if diff := cmp.Diff(got, map[string]string{"in a worktree": "worktree", "local": ""}); diff != "" {
			t.Errorf("workspace modes (-got +want):\n%s", diff)
		}
	}
}
