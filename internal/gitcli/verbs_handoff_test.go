package gitcli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// CheckIgnoredIn applies the mirror's .gitignore files (not the work
// tree's) with info/exclude, and git's walk: a folder must exist to match
// "dir/" patterns, "build/*" does not exclude build itself, nothing inside
// an excluded folder is re-included and its .gitignore is not read.
func TestCheckIgnoredIn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	gittest.Write(t, dir, ".gitignore", "*.txt\n")
	gittest.Write(t, dir, ".git/info/exclude", "*.x\n")
	mirror := t.TempDir()
	gittest.Write(t, mirror, ".gitignore", "build/*\n!build/keep.txt\n*.o\nex/\n")
	gittest.Write(t, mirror, "ex/.gitignore", "!*.o\n")
	gittest.Write(t, mirror, "sub/.gitignore", "!keep.o\n")
	if err := os.Mkdir(filepath.Join(mirror, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := discoverRepo(t, dir)
	got, err := repo.CheckIgnoredIn(ctx, mirror, []string{"build", "build/keep.txt", "build/other", "a.x", "ex", "ex/a.o",
		"sub/keep.o", "sub/b.o", "notes.txt", ":(glob)z.o", "new\nline.o", "*.c"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"build/other": true, "a.x": true, "ex": true, "ex/a.o": true, "sub/b.o": true, ":(glob)z.o": true, "new\nline.o": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckIgnoredIn (-want +got):\n%s", diff)
	}
}

// LsFilesGitignores lists tracked (deleted ones too) and untracked,
// not ignored .gitignore files, nothing else.
func TestLsFilesGitignores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	gittest.Write(t, dir, ".gitignore", "ign/\n")
	gittest.Write(t, dir, "d/.gitignore", "*.o\n")
	gittest.Write(t, dir, "x.gitignore", "\n")
	gittest.CommitAll(t, dir, "init")
	os.Remove(filepath.Join(dir, "d/.gitignore"))
	gittest.Write(t, dir, "sub/deep/.gitignore", "*\n!.gitignore\n")
	gittest.Write(t, dir, "ign/.gitignore", "\n")
	gittest.Write(t, dir, "self/.gitignore", "*\n")
	repo := discoverRepo(t, filepath.Join(dir, "sub"))
	got, err := repo.LsFilesGitignores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".gitignore", "d/.gitignore", "sub/deep/.gitignore"}, got); diff != "" {
		t.Errorf("LsFilesGitignores (-want +got):\n%s", diff)
	}
}

// DiffTreeNamesPairs lists, in one git process, the paths each pair of
// trees differs in: both paths of a rename, a path with a newline whole,
// nothing for a pair of equal trees, and no line git echoes.
func TestDiffTreeNamesPairs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "-q")
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.Write(t, dir, "keep.txt", "keep\n")
	gittest.CommitAll(t, dir, "one")
	t1 := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")[:40]
	gittest.Git(t, dir, "mv", "a.txt", "moved.txt")
	gittest.Write(t, dir, "new\nline.txt", "x\n")
	gittest.CommitAll(t, dir, "two")
	t2 := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")[:40]
	gittest.Write(t, dir, "keep.txt", "changed\n")
	gittest.CommitAll(t, dir, "three")
	t3 := gittest.Git(t, dir, "rev-parse", "HEAD^{tree}")[:40]
	repo := discoverRepo(t, dir)
	var got []string
	err := repo.DiffTreeNamesPairs(ctx, [][2]string{{t1, t1}, {t1, t2}, {t2, t2}, {t2, t3}}, func(p string) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "moved.txt", "new\nline.txt", "keep.txt"}, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if err := repo.DiffTreeNamesPairs(ctx, [][2]string{{t1, "0123456789012345678901234567890123456789"}}, func(string) error { return nil }); err == nil {
		t.Error("an unknown tree gave no error")
	}
}
