package diffscope

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// TestReadPathMatchesFullRead: the one-path re-read of a hunk action gives
// the file exactly as the scope's full read does (ids included), and
// declines (so the action reads the whole scope) for a file it cannot read
// alone: an added file, an intent-to-add entry, an id of another file.
func TestReadPathMatchesFullRead(t *testing.T) {
	body := actLines(1, 40)
	dir := actRepo(t, map[string]string{"f.txt": body, "g.txt": body, "other.txt": "o\n"})
	gittest.Write(t, dir, "f.txt", strings.Replace(strings.Replace(body, "5\n", "five\n", 1), "30\n", "thirty\n", 1))
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Write(t, dir, "f.txt", strings.Replace(body, "30\n", "THIRTY\n", 1))
	gittest.Write(t, dir, "g.txt", strings.Replace(body, "7\n", "seven\n", 1))
	gittest.Write(t, dir, "new.txt", "n\n")
	gittest.Git(t, dir, "add", "-N", "new.txt")
	gittest.Write(t, dir, "other.txt", "changed\n")
	d := newDiffer(t)
	ctx := context.Background()
	ri, err := d.discover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, scope := range []Scope{ScopeUncommitted, ScopeUnstaged, ScopeStaged} {
		for _, c := range []int{1, 3, 5} {
			ro := ReadOptions{Scope: scope, Context: intp(c), Budget: -1}
			full := mustRead(t, d, dir, ro)
			for _, f := range full.Files {
				for _, h := range f.Hunks {
					st, ok, err := d.readPath(ctx, ri, ro, c, f.Path, h.ID)
					if err != nil {
						t.Fatal(err)
					}
					wantOK := f.Status == "modified"
					if ok != wantOK {
						t.Errorf("%s context %d %s: readPath ok = %v, want %v", scope, c, f.Path, ok, wantOK)
						continue
					}
					if !ok {
						continue
					}
					if diff := cmp.Diff(f, st.files[0].wire); diff != "" {
						t.Errorf("%s context %d %s: one-path read differs (-full +path):\n%s", scope, c, f.Path, diff)
					}
				}
				// Another file's id is not found in this one.
				if _, ok, _ := d.readPath(ctx, ri, ro, c, f.Path, "nope"); ok {
					t.Errorf("%s %s: readPath accepted an unknown id", scope, f.Path)
				}
			}
		}
	}
}
