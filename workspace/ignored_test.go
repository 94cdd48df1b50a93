package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// Ignored files are user data: .env, a symlink and an ignored folder of
// settings survive archive (delete) and come back on restore with their
// modes; node_modules, a big ignored folder and a file over the budget are
// not kept and are reported.
func TestIgnoredFilesKept(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	gittest.Write(t, src, ".gitignore", "*.log\n.env\nnode_modules/\n.idea/\ngen/\nbig.bin\nlink-ignored\n")
	gittest.CommitAll(t, src, "ignore more")
	wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
	gittest.WriteMode(t, wt, ".env", "SECRET=1\n", 0o600)
	gittest.WriteMode(t, wt, ".idea/workspace.xml", "<x/>\n", 0o644)
	gittest.Write(t, wt, ".idea/dist/out.js", "regenerable, inside a kept folder\n")
	gittest.WriteMode(t, wt, "sub/run.log", "#!/bin/sh\n", 0o755)
	if err := os.Symlink(".env", filepath.Join(wt, "link-ignored")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, wt, "node_modules/pkg/index.js", "x\n")
	for i := 0; i < IgnoredBigFolder; i++ {
		gittest.Write(t, wt, "gen/f"+strconv.Itoa(i), "g\n")
	}
	gittest.Write(t, wt, "big.bin", strings.Repeat("x", IgnoredMaxFile+1))

	d, err := m.Delete(ctx, wt, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.IgnoredNotKept || d.Ignored == nil {
		t.Fatalf("Deleted = %+v", d)
	}
	if diff := cmp.Diff([]string{".idea/dist/", "big.bin", "gen/", "node_modules/"}, d.Ignored.NotKept); diff != "" {
		t.Errorf("not kept (-want +got):\n%s", diff)
	}
	if d.Ignored.Kept != 4 {
		t.Errorf("kept %d, want 4", d.Ignored.Kept)
	}
	r, err := m.Restore(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !r.IgnoredNotKept || r.Ignored == nil || len(r.Ignored.NotKept) != 4 {
		t.Errorf("Restored ignored = %+v", r.Ignored)
	}
	for p, want := range map[string]string{".env": "SECRET=1\n", ".idea/workspace.xml": "<x/>\n", "sub/run.log": "#!/bin/sh\n"} {
		if got := gittest.Read(t, wt, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(wt, "sub/run.log")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("sub/run.log lost its exec bit: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(wt, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env came back %v (%v), want private 0600", fi, err)
	}
	if tgt, err := os.Readlink(filepath.Join(wt, "link-ignored")); err != nil || tgt != ".env" {
		t.Errorf("link-ignored = %q, %v", tgt, err)
	}
	for _, p := range []string{"node_modules", "gen", "big.bin", ".idea/dist"} {
		if _, err := os.Lstat(filepath.Join(wt, p)); !os.IsNotExist(err) {
			t.Errorf("%s came back: %v", p, err)
		}
	}
	if st := stateOf(t, wt); st.Status != "" {
		t.Errorf("restored worktree status = %q", st.Status)
	}
}

// .worktreeinclude at the project root copies the ignored files it names
// from the main checkout into a new worktree; files it names that are not
// ignored, and ignored files it does not name, are not copied.
func TestWorktreeInclude(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	gittest.Write(t, src, ".gitignore", "*.log\n.env*\nconfig/local.json\n")
	gittest.Write(t, src, ".worktreeinclude", ".env*\nconfig/\nnotes.txt\n")
	gittest.CommitAll(t, src, "include")
	gittest.WriteMode(t, src, ".env", "A=1\n", 0o600)
	gittest.Write(t, src, ".env.local", "B=2\n")
	gittest.Write(t, src, "config/local.json", "{}\n")
	gittest.Write(t, src, "debug.log", "not named\n")
	gittest.Write(t, src, "notes.txt", "untracked, not ignored\n")
	c := create(t, m, CreateOptions{Cwd: src})
	if diff := cmp.Diff([]string{".env", ".env.local", "config/local.json"}, c.Included); diff != "" {
		t.Errorf("included (-want +got):\n%s", diff)
	}
	wt := c.Worktree.Path
	if got := gittest.Read(t, wt, ".env"); got != "A=1\n" {
		t.Errorf(".env = %q", got)
	}
	if fi, err := os.Stat(filepath.Join(wt, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode = %v, %v", fi, err)
	}
	for _, p := range []string{"debug.log", "notes.txt"} {
		if _, err := os.Lstat(filepath.Join(wt, p)); !os.IsNotExist(err) {
			t.Errorf("%s copied: %v", p, err)
		}
	}
	if st := stateOf(t, wt); st.Status != "" {
		t.Errorf("new worktree status = %q", st.Status)
	}
}
