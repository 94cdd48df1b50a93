package diffscope

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

func strp(s string) *string { return &s }

func TestFileSides(t *testing.T) {
	dir := gittest.InitCommit(t,
		"a.txt", "old\r\ntext",
		"gone.txt", "bye\n",
		"img.bin", "x\x00y",
		"big.txt", "small\n",
		"move-from.txt", strings.Repeat("moved\n", 20),
		"dir/inner.txt", "i\n",
		"-dash [x].txt", "d1\n",
	)
	gittest.Write(t, dir, "a.txt", "new\r\ntext")
	gittest.Write(t, dir, "added.txt", "hello\n")
	gittest.Write(t, dir, "-dash [x].txt", "d2\n")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "img.bin", "x\x00z")
	gittest.Write(t, dir, "big.txt", strings.Repeat("x", MaxSideSize+1))
	if err := os.Rename(filepath.Join(dir, "move-from.txt"), filepath.Join(dir, "move-to.txt")); err != nil {
		t.Fatal(err)
	}
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	from, to := res.FromTree, res.ToTree
	// The trees stay readable after the work tree moves on.
	gittest.Write(t, dir, "a.txt", "moved on\n")

	tests := []struct {
		name, path, oldPath string
		want                Sides
	}{
		{"modified", "a.txt", "", Sides{Old: strp("old\r\ntext"), New: strp("new\r\ntext")}},
		{"added", "added.txt", "", Sides{New: strp("hello\n")}},
		{"deleted", "gone.txt", "", Sides{Old: strp("bye\n")}},
		{"renamed", "move-to.txt", "move-from.txt", Sides{Old: strp(strings.Repeat("moved\n", 20)), New: strp(strings.Repeat("moved\n", 20))}},
		{"binary", "img.bin", "", Sides{Binary: true}},
		{"too large", "big.txt", "", Sides{TooLarge: true}},
		{"unchanged", "dir/inner.txt", "", Sides{Old: strp("i\n"), New: strp("i\n")}},
		{"option-like and glob name", "-dash [x].txt", "", Sides{Old: strp("d1\n"), New: strp("d2\n")}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := guard(t, dir)
			got, err := d.FileSides(ctx, dir, from, to, tc.path, tc.oldPath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(*got, tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			check()
		})
	}

	blob := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD:a.txt"))
	commit := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	bad := []struct {
		name, from, to, path, oldPath, field string
	}{
		{"short tree id", from[:12], to, "a.txt", "", "fromTree"},
		{"uppercase tree id", strings.ToUpper(from), to, "a.txt", "", "fromTree"},
		{"not hex", from, strings.Repeat("z", 40), "a.txt", "", "toTree"},
		{"a ref name", "HEAD", to, "a.txt", "", "fromTree"},
		{"missing object", from, strings.Repeat("ab", 20), "a.txt", "", "toTree"},
		{"blob id as tree", from, blob, "a.txt", "", "toTree"},
		{"commit id as tree", commit, to, "a.txt", "", "fromTree"},
		{"in neither tree", from, to, "nowhere.txt", "", "path"},
		{"a folder", from, to, "dir", "", "path"},
		{"escaping path", from, to, "../a.txt", "", "path"},
		{"absolute path", from, to, "/a.txt", "", "path"},
		{"empty path", from, to, "", "", "path"},
		{"dot path", from, to, "./a.txt", "", "path"},
		{"bad old path", from, to, "a.txt", "x/../a.txt", "oldPath"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.FileSides(ctx, dir, tc.from, tc.to, tc.path, tc.oldPath)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != tc.field {
				t.Errorf("FileSides: %v, want a ParamError for %q", err, tc.field)
			}
		})
	}
	if _, err := d.FileSides(ctx, t.TempDir(), from, to, "a.txt", ""); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("outside a repository: %v, want ErrNotRepo", err)
	}
}

func TestFileSidesOddNames(t *testing.T) {
	dir := gittest.Init(t)
	names := []string{"new\nline.txt", "tab\tname.txt", "ünï côdé.txt", `q"uote\.txt`}
	for _, n := range names {
		gittest.Write(t, dir, n, "1\n")
	}
	gittest.CommitAll(t, dir, "init")
	for _, n := range names {
		gittest.Write(t, dir, n, "2\n")
	}
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	for _, n := range names {
		got, err := d.FileSides(context.Background(), dir, res.FromTree, res.ToTree, n, "")
		if err != nil {
			t.Errorf("%q: %v", n, err)
			continue
		}
		if diff := cmp.Diff(*got, Sides{Old: strp("1\n"), New: strp("2\n")}); diff != "" {
			t.Errorf("%q (-got +want):\n%s", n, diff)
		}
	}
}

func TestFileSidesGitlink(t *testing.T) {
	dir := gittest.Init(t)
	src := gittest.Init(t)
	gittest.Write(t, src, "s.txt", "s1\n")
	first := gittest.CommitAll(t, src, "s1")
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.CommitAll(t, dir, "add sub")
	gittest.Write(t, filepath.Join(dir, "sub"), "s.txt", "s2\n")
	second := gittest.CommitAll(t, filepath.Join(dir, "sub"), "s2")
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	got, err := d.FileSides(context.Background(), dir, res.FromTree, res.ToTree, "sub", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Sides{Old: strp("Subproject commit " + first + "\n"), New: strp("Subproject commit " + second + "\n")}
	if diff := cmp.Diff(*got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
