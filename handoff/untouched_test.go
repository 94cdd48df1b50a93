package handoff

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

// The warnings of a handoff and of its plan name the moved paths no turn
// of the thread changed (Options.Changes): its turns' files, and the
// paths their trees differ in (a renamed file's old name, which files do
// not list), are its own; at most MaxUntouchedNamed are named, all are
// counted. Without Changes there is no such warning.
func TestUntouchedWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	repo, err := e.h.git.Discover(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	before, err := gitstate.Complete(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	// The thread's turn: an edit and a rename.
	gittest.Write(t, wt, "sub/a.txt", "the turn's\n")
	gittest.Git(t, wt, "mv", "sub/b.txt", "sub/b2.txt")
	after, err := gitstate.Complete(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else's.
	gittest.Write(t, wt, "README.md", "edited by hand\n")
	for i := range MaxUntouchedNamed + 5 {
		gittest.Write(t, wt, fmt.Sprintf("x/f%02d.txt", i), "another tool's\n")
	}
	named := []string{"README.md"}
	for i := range MaxUntouchedNamed - 1 {
		named = append(named, fmt.Sprintf("x/f%02d.txt", i))
	}
	want := fmt.Sprintf("%d paths that no turn of this thread changed %%s with it (a handoff moves every uncommitted change of the checkout, another tool's or person's too): %s and 6 more",
		MaxUntouchedNamed+6, strings.Join(named, ", "))
	changes := &Changes{Paths: []string{"sub/a.txt", "sub/b2.txt"}, Trees: [][2]string{{before.WorktreeTree, after.WorktreeTree}}}
	untouchedOf := func(ws []string) []string {
		var out []string
		for _, w := range ws {
			if strings.Contains(w, "no turn of this thread") {
				out = append(out, w)
			}
		}
		return out
	}

	o := Options{To: ToLocal, Cwd: wt, ThreadID: "T1"}
	p, err := e.h.Plan(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := untouchedOf(p.Warnings()); len(got) != 0 {
		t.Errorf("without Changes: %q", got)
	}
	o.Changes = &Changes{Paths: changes.Paths}
	if p, err = e.h.Plan(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := untouchedOf(p.Warnings()); len(got) != 1 || !strings.Contains(got[0], "sub/b.txt") {
		t.Errorf("without the turns' trees, the renamed file's old name is not the thread's: %q", got)
	}
	o.Changes = changes
	if p, err = e.h.Plan(ctx, o); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{fmt.Sprintf(want, "would move")}, untouchedOf(p.Warnings())); diff != "" {
		t.Errorf("plan's warnings (-want +got):\n%s", diff)
	}
	res, err := e.h.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{fmt.Sprintf(want, "moved")}, untouchedOf(res.Warnings)); diff != "" {
		t.Errorf("handoff's warnings (-want +got):\n%s", diff)
	}

	// The way back, all of it the thread's own: no warning.
	o = Options{To: ToWorktree, Cwd: main, Worktree: wt, ThreadID: "T1", Changes: &Changes{Paths: append([]string{"README.md", "sub/b.txt"}, changes.Paths...)}}
	for i := range MaxUntouchedNamed + 5 {
		o.Changes.Paths = append(o.Changes.Paths, fmt.Sprintf("x/f%02d.txt", i))
	}
	if res, err = e.h.Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if got := untouchedOf(res.Warnings); len(got) != 0 {
		t.Errorf("all the thread's own: %q", got)
	}
}
