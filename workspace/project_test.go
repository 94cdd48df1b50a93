package workspace

import (
	"path/filepath"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

func TestProject(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	c := create(t, m, CreateOptions{Cwd: filepath.Join(src, "sub")})
	linked := filepath.Join(filepath.Dir(src), "linked")
	gittest.Git(t, src, "worktree", "add", "-q", "--detach", linked)
	plain, _ := filepath.EvalSymlinks(t.TempDir())
	nested := create(t, m, CreateOptions{Cwd: c.Cwd})

	tests := []struct {
		name, dir, want string
	}{
		{"main checkout", src, src},
		{"subdirectory", filepath.Join(src, "sub"), src},
		{"user's linked worktree", linked, src},
		{"managed worktree", c.Worktree.Path, src},
		{"inside a managed worktree", c.Cwd, src},
		{"worktree made from a managed worktree", nested.Cwd, src},
		{"not a repository", plain, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Project(ctx, tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Project(%s) = %s, want %s", tt.dir, got, tt.want)
			}
		})
	}
	if _, err := m.Project(ctx, filepath.Join(plain, "missing")); !isParam("cwd")(err) {
		t.Errorf("Project of a missing dir: %v, want ParamError cwd", err)
	}
	if w, ok, err := m.Lookup(c.Cwd); err != nil || !ok || w.Path != c.Worktree.Path {
		t.Errorf("Lookup(%s) = %s, %v, %v", c.Cwd, w.Path, ok, err)
	}
	if _, ok, _ := m.Lookup(src); ok {
		t.Errorf("Lookup of the main checkout matched a managed worktree")
	}
}

// List filters by project and reports each live worktree's current HEAD
// and branch.
func TestList(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	a := commitFixture(t)
	b := commitFixture(t)
	wa := create(t, m, CreateOptions{Cwd: a}).Worktree.Path
	wb := create(t, m, CreateOptions{Cwd: b}).Worktree.Path
	gittest.Git(t, wa, "switch", "-q", "-c", "feature")
	gittest.Write(t, wa, "f.txt", "f\n")
	head := gittest.CommitAll(t, wa, "f")

	got, err := m.List(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != wa || got[0].Head != head || got[0].Branch != "refs/heads/feature" {
		t.Errorf("List(a) = %+v; want %s at %s on feature", got, wa, head)
	}
	all, err := m.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Errorf("List() has %d entries, want 2 (%s, %s)", len(all), wa, wb)
	}
}

// Snapshot saves a live worktree without changing it: its state and index
// bytes stay as they were.
func TestSnapshotLeavesWorktreeAlone(t *testing.T) {
	t.Parallel()
	m, src, c := newCreated(t)
	dirtyFixture(t, c.Worktree.Path)
	want := stateOf(t, c.Worktree.Path)
	index := indexBytes(t, c.Worktree.Path)
	s, err := m.Snapshot(ctx, c.Worktree.Path)
	if err != nil {
		t.Fatal(err)
	}
	if got := indexBytes(t, c.Worktree.Path); string(got) != string(index) {
		t.Errorf("index changed")
	}
	if got := stateOf(t, c.Worktree.Path); got != want {
		t.Errorf("state changed: %+v", got)
	}
	read, ok, err := m.ReadSnapshot(ctx, src, s.Ref)
	if err != nil || !ok {
		t.Fatalf("ReadSnapshot = %v, %v", ok, err)
	}
	if read.Head != s.Head || read.IndexTree != s.IndexTree || read.WorktreeTree != s.WorktreeTree ||
		len(read.IntentToAdd) != 1 || read.IntentToAdd[0] != "sub/intent.py" {
		t.Errorf("ReadSnapshot = %+v, want %+v", read, s)
	}
	parents := gittest.Git(t, src, "log", "-1", "--format=%P", s.Ref)
	// dirtyFixture leaves an ignored sub/build.log: kept as the third
	// parent.
	if s.Ignored == nil || s.Ignored.Commit == "" || read.Ignored == nil || read.Ignored.Commit != s.Ignored.Commit {
		t.Fatalf("ignored files: wrote %+v, read %+v", s.Ignored, read.Ignored)
	}
	if want := s.Head + " " + s.IndexCommit + " " + s.Ignored.Commit + "\n"; parents != want {
		t.Errorf("snapshot parents %q, want HEAD, the index commit and the ignored files %q (stash shape)", parents, want)
	}
}
