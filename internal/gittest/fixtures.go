package gittest

import (
	"os"
	"path/filepath"
	"testing"
)

// CommitFixture makes a repository with a committed tree shared by the
// worktree and handoff tests: README.md, sub/a.txt (ten lines), sub/b.txt,
// sub/gone.txt and sub/staged-gone.txt (to delete), tools/run.sh, and a
// .gitignore holding gitignore; it returns its root.
func CommitFixture(t testing.TB, gitignore string) string {
	t.Helper()
	dir := Init(t)
	Write(t, dir, "README.md", "readme\n")
	Write(t, dir, "sub/a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n")
	Write(t, dir, "sub/b.txt", "b\n")
	Write(t, dir, "sub/gone.txt", "to delete\n")
	Write(t, dir, "sub/staged-gone.txt", "staged delete\n")
	Write(t, dir, "tools/run.sh", "#!/bin/sh\necho run\n")
	Write(t, dir, ".gitignore", gitignore)
	CommitAll(t, dir, "init")
	return dir
}

// DirtyFixture puts every kind of local change into a CommitFixture
// repository dir: staged, unstaged and both in sub/a.txt, untracked files
// (one in a new folder), an exec bit, a symlink, a deletion, a staged
// deletion and an intent-to-add entry.
func DirtyFixture(t testing.TB, dir string) {
	t.Helper()
	Write(t, dir, "sub/a.txt", "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n")
	Git(t, dir, "add", "sub/a.txt")
	Write(t, dir, "sub/a.txt", "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n")
	Write(t, dir, "sub/b.txt", "b changed\n")
	Write(t, dir, "sub/new.txt", "untracked\n")
	Write(t, dir, "sub/deep/new2.txt", "untracked 2\n")
	if err := os.Chmod(filepath.Join(dir, "tools/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../README.md", filepath.Join(dir, "sub/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sub/gone.txt")); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "rm", "-q", "sub/staged-gone.txt")
	Write(t, dir, "sub/intent.py", "x\n")
	Git(t, dir, "add", "-N", "sub/intent.py")
}
