package gitstate

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// TreeWith writes, through the object store, the tree git writes for the
// same changes (read-tree of the base, update-index --replace
// --index-info, write-tree), and TreePaths reads entries as ls-tree does:
// files replacing folders and folders replacing files, folders emptied
// away, new folders, symlinks, the empty base.
func TestTreeWithIsGits(t *testing.T) {
	ctx := context.Background()
	dir := gittest.Init(t)
	for _, p := range []string{"a.txt", "d/x.txt", "d/e/y.txt", "f", "z/only.txt", "s-1", "s.txt", "s/t.txt"} {
		gittest.Write(t, dir, p, p+"\n")
	}
	gittest.CommitAll(t, dir, "init")
	repo := discover(t, dir)
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	blob := strings.TrimSpace(gittest.GitStdin(t, dir, []byte("new\n"), "hash-object", "-w", "--stdin"))
	link := strings.TrimSpace(gittest.GitStdin(t, dir, []byte("a.txt"), "hash-object", "-w", "--stdin"))
	file := Entry{Mode: "100644", OID: blob}
	for i, changes := range []map[string]Entry{
		{"a.txt": file},
		{"a.txt": {}, "d/e/y.txt": {}},
		{"z/only.txt": {}},
		{"d": file, "d/x.txt": {}, "d/e/y.txt": {}},
		{"f": {}, "f/g/h.txt": file},
		{"new/deep/n.txt": file, "s": {Mode: "120000", OID: link}, "s/t.txt": {}},
		{"s/u.txt": {Mode: "100755", OID: blob}, "s.txt": {}},
		{"nothing/here": {}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, err := TreeWith(ctx, repo, head, changes)
			if err != nil {
				t.Fatal(err)
			}
			tmp := repo.WithIndex(filepath.Join(t.TempDir(), "index"))
			gittest.Git(t, dir, "read-tree", "--index-output="+tmp.IndexFile(), head)
			var in strings.Builder
			for p, e := range changes {
				if e.Absent() {
					fmt.Fprintf(&in, "0 %s\t%s\x00", repo.ZeroID(), p)
				}
			}
			for p, e := range changes {
				if !e.Absent() {
					fmt.Fprintf(&in, "%s %s\t%s\x00", e.Mode, e.OID, p)
				}
			}
			env := []string{"GIT_INDEX_FILE=" + tmp.IndexFile()}
			if _, err := gittest.RunEnv(dir, env, []byte(in.String()), "update-index", "-z", "--add", "--replace", "--index-info"); err != nil {
				t.Fatal(err)
			}
			want, err := gittest.RunEnv(dir, env, nil, "write-tree")
			if err != nil {
				t.Fatal(err)
			}
			if got != strings.TrimSpace(want) {
				t.Errorf("TreeWith = %s\n%s\ngit = %s\n%s", got, gittest.Git(t, dir, "ls-tree", "-r", got),
					want, gittest.Git(t, dir, "ls-tree", "-r", strings.TrimSpace(want)))
			}
			var paths []string
			for p := range changes {
				paths = append(paths, p)
			}
			ours, err := TreePaths(ctx, repo, got, append(paths, "d", "a.txt", "d/x.txt"))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := TreeEntries(ctx, repo, got, append(paths, "d", "a.txt", "d/x.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ours) != fmt.Sprint(theirs) {
				t.Errorf("TreePaths = %v, ls-tree = %v", ours, theirs)
			}
		})
	}
	if got, err := TreeWith(ctx, repo, "", nil); err != nil || got != repo.EmptyTree() {
		t.Errorf("TreeWith(nothing) = %s, %v", got, err)
	}
}
