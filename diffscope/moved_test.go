package diffscope

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

func TestMoved(t *testing.T) {
	all := []string{"a.txt", "b.txt", "sub/c.txt", "run.sh", "new.txt", "never.txt"}
	tests := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		paths []string
		want  []string
	}{
		{"nothing changed", func(*testing.T, string) {}, all, []string{}},
		{"no paths", func(t *testing.T, dir string) { gittest.Write(t, dir, "a.txt", "user\n") }, nil, []string{}},
		{"edit", func(t *testing.T, dir string) { gittest.Write(t, dir, "b.txt", "user\n") }, all, []string{"b.txt"}},
		{"edit outside paths", func(t *testing.T, dir string) { gittest.Write(t, dir, "b.txt", "user\n") }, []string{"a.txt"}, []string{}},
		{"mode", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, all, []string{"run.sh"}},
		{"deletion in a folder", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "sub", "c.txt")); err != nil {
				t.Fatal(err)
			}
		}, all, []string{"sub/c.txt"}},
		{"untracked file added", func(t *testing.T, dir string) { gittest.Write(t, dir, "new.txt", "n\n") }, all, []string{"new.txt"}},
		{"rename is both paths", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "new.txt")); err != nil {
				t.Fatal(err)
			}
		}, all, []string{"a.txt", "new.txt"}},
		{"written back as it was", func(t *testing.T, dir string) {
			gittest.Write(t, dir, "a.txt", "user\n")
			gittest.Write(t, dir, "a.txt", "a\n")
		}, all, []string{}},
		{"many paths, one moved", func(t *testing.T, dir string) { gittest.Write(t, dir, "b.txt", "user\n") },
			append(manyPaths(100), "b.txt"), []string{"b.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := actRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", "run.sh": "x\n"})
			d := newDiffer(t)
			tree := mustCapture(t, d, dir).WorktreeTree
			tt.edit(t, dir)
			check := guard(t, dir)
			// From a subdirectory too: paths stay repository-relative.
			for _, checkout := range []string{dir, filepath.Join(dir, "sub")} {
				got, err := d.Moved(context.Background(), checkout, tree, tt.paths)
				if err != nil {
					t.Fatalf("Moved(%s): %v", checkout, err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("Moved(%s) (-got +want):\n%s", checkout, diff)
				}
			}
			check()
		})
	}
}

// manyPaths returns n paths no tree holds, so a comparison is not limited
// to pathspecs (movedSince passes at most 64).
func manyPaths(n int) []string {
	p := make([]string, n)
	for i := range p {
		p[i] = filepath.ToSlash(filepath.Join("none", string(rune('a'+i%26)), string(rune('a'+i/26))))
	}
	return p
}

func TestMovedErrors(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": "a\n"})
	d := newDiffer(t)
	ctx := context.Background()
	commit := gittest.Git(t, dir, "rev-parse", "HEAD")
	for _, tree := range []string{"", "abc", commit[:40], "0123456789012345678901234567890123456789"} {
		_, err := d.Moved(ctx, dir, tree, []string{"a.txt"})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Field != "tree" {
			t.Errorf("Moved(tree %q) err = %v, want an invalid tree", tree, err)
		}
	}
	if _, err := d.Moved(ctx, t.TempDir(), gitcli.EmptyTreeSHA1, []string{"a.txt"}); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Moved outside a repository: err = %v, want gitcli.ErrNotRepo", err)
	}
}
