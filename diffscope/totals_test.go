package diffscope

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

func TestCaseC21_TurnTotalsCountUntrackedFiles(t *testing.T) {
	dir := gittest.InitCommit(t, "old.txt", "a\nb\n")
	d := newDiffer(t)
	before := mustCapture(t, d, dir)
	gittest.Write(t, dir, "old.txt", "a\nB\n")
	var b strings.Builder
	for i := 1; i <= 97; i++ {
		b.WriteString(strings.Repeat("n", i%7+1) + "\n")
	}
	gittest.Write(t, dir, "new.txt", b.String())
	gittest.Write(t, dir, "new.bin", "x\x00y")
	gittest.Write(t, dir, "tail.txt", "no-eol")
	after := mustCapture(t, d, dir)
	check := guard(t, dir)
	got, err := d.TurnFiles(context.Background(), dir, before, after)
	if err != nil {
		t.Fatal(err)
	}
	check()
	want := []FileTotal{
		{Path: "new.bin", Binary: true},
		{Path: "new.txt", Additions: 97},
		{Path: "old.txt", Additions: 1, Deletions: 1},
		{Path: "tail.txt", Additions: 1},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestTurnFiles(t *testing.T) {
	dir := gittest.InitCommit(t,
		"move-from.txt", strings.Repeat("moved line\n", 20),
		"gone.txt", "1\n2\n3\n",
		"tracked.txt", "1\n",
		"-odd name [1].txt", "1\n",
	)
	d := newDiffer(t)
	ctx := context.Background()
	t.Run("renames report the new path", func(t *testing.T) {
		before := mustCapture(t, d, dir)
		if err := os.Rename(filepath.Join(dir, "move-from.txt"), filepath.Join(dir, "move to.txt")); err != nil {
			t.Fatal(err)
		}
		gittest.Write(t, dir, "move to.txt", strings.Repeat("moved line\n", 20)+"one more\n")
		if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
			t.Fatal(err)
		}
		gittest.Write(t, dir, "-odd name [1].txt", "2\n")
		after := mustCapture(t, d, dir)
		got, err := d.TurnFiles(ctx, dir, before, after)
		if err != nil {
			t.Fatal(err)
		}
		want := []FileTotal{{Path: "-odd name [1].txt", Additions: 1, Deletions: 1}, {Path: "gone.txt", Deletions: 3}, {Path: "move to.txt", Additions: 1}}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("(-got +want):\n%s", diff)
		}
		none, err := d.TurnFiles(ctx, dir, after, after)
		if err != nil || len(none) != 0 || none == nil {
			t.Errorf("same capture twice: %#v, %v; want an empty list", none, err)
		}
	})
	t.Run("dropped untracked files count tracked files only", func(t *testing.T) {
		sub := gittest.InitCommit(t, "tracked.txt", "1\n")
		// Before: 597 untracked files in folders under 200: all dropped.
		for _, f := range []string{"a", "b", "c"} {
			writeMany(t, sub, f, 199)
		}
		gittest.Write(t, sub, "keep.txt", "k\n")
		before := mustCapture(t, d, sub)
		if !before.UntrackedDropped {
			t.Fatal("before capture did not drop its untracked files")
		}
		// The turn removes folders a and b (now 200 remain, included),
		// edits a tracked file and writes a new one.
		for _, f := range []string{"a", "b"} {
			if err := os.RemoveAll(filepath.Join(sub, f)); err != nil {
				t.Fatal(err)
			}
		}
		gittest.Write(t, sub, "tracked.txt", "1\n2\n")
		gittest.Write(t, sub, "made-by-turn.txt", "new\n")
		after := mustCapture(t, d, sub)
		if after.UntrackedDropped || len(after.Untracked) != 201 {
			t.Fatalf("after capture: dropped %v, %d untracked", after.UntrackedDropped, len(after.Untracked))
		}
		got, err := d.TurnFiles(ctx, sub, before, after)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, []FileTotal{{Path: "tracked.txt", Additions: 1}}); diff != "" {
			t.Errorf("(-got +want):\n%s", diff)
		}
		// Without a dropped capture untracked files count.
		got, err = d.TurnFiles(ctx, sub, after, mustCapture(t, d, sub))
		if err != nil || len(got) != 0 {
			t.Errorf("after vs after: %v, %v", got, err)
		}
	})
	t.Run("bad captures", func(t *testing.T) {
		c := mustCapture(t, d, dir)
		for _, tc := range []struct {
			before, after *Capture
			field         string
		}{
			{nil, c, "before"},
			{c, nil, "after"},
			{&Capture{HeadTree: c.HeadTree}, c, "before"},
		} {
			_, err := d.TurnFiles(ctx, dir, tc.before, tc.after)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != tc.field {
				t.Errorf("TurnFiles: %v, want a ParamError for %s", err, tc.field)
			}
		}
	})
}

// TestCaseC20_TurnTotalsCountASubmoduleAsOnePath checks that a turn that
// changes what is inside a submodule lists the submodule as one path with
// no line totals: for edits without a commit (the gitlink does not move,
// only the capture's token does), for an edited file edited again, for a
// new untracked file in it and for a new commit, once each; and that a turn
// that leaves the submodule alone does not list it.
func TestCaseC20_TurnTotalsCountASubmoduleAsOnePath(t *testing.T) {
	top := t.TempDir()
	src := filepath.Join(top, "subsrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "init", "-q", "-b", "main")
	gittest.Write(t, src, "s.txt", "s1\n")
	gittest.CommitAll(t, src, "s1")
	dir := actRepo(t, map[string]string{"top.txt": "t\n", "z.txt": "z\n"})
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.CommitAll(t, dir, "add sub")
	sub := filepath.Join(dir, "sub")
	d := newDiffer(t)
	ctx := context.Background()

	tests := []struct {
		name string
		turn func()
		want []FileTotal
	}{
		{"edit inside without a commit", func() {
			gittest.Write(t, sub, "s.txt", "wip\n")
			gittest.Write(t, dir, "top.txt", "t\nmore\n")
		}, []FileTotal{{Path: "sub"}, {Path: "top.txt", Additions: 1}}},
		{"edit an edited file again", func() { gittest.Write(t, sub, "s.txt", "wip 2\n") }, []FileTotal{{Path: "sub"}}},
		{"untracked file inside", func() { gittest.Write(t, sub, "new.txt", "n\n") }, []FileTotal{{Path: "sub"}}},
		{"commit inside", func() {
			gittest.Git(t, sub, "add", "-A")
			gittest.Git(t, sub, "commit", "-qm", "s2")
		}, []FileTotal{{Path: "sub"}}},
		{"outside only", func() { gittest.Write(t, dir, "z.txt", "Z\n") }, []FileTotal{{Path: "z.txt", Additions: 1, Deletions: 1}}},
	}
	for _, tt := range tests {
		before := mustCapture(t, d, dir)
		if len(before.Submodules) != 1 || len(before.Submodules["sub"]) != 64 {
			t.Fatalf("%s: Submodules = %v, want a token for sub", tt.name, before.Submodules)
		}
		tt.turn()
		after := mustCapture(t, d, dir)
		got, err := d.TurnFiles(ctx, dir, before, after)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s: (-got +want):\n%s", tt.name, diff)
		}
	}
	// The capture looked inside without changing the submodule.
	if got := gittest.Git(t, sub, "status", "--porcelain"); got != "" {
		t.Errorf("submodule status after the captures = %q, want clean", got)
	}
}

// TestCaptureSubmoduleNotInitialized checks that a gitlink whose submodule
// is not checked out (an empty folder) gets no token and fails nothing.
func TestCaptureSubmoduleNotInitialized(t *testing.T) {
	src := gittest.Init(t)
	gittest.Write(t, src, "s.txt", "s1\n")
	gittest.CommitAll(t, src, "s1")
	dir := actRepo(t, map[string]string{"top.txt": "t\n"})
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.CommitAll(t, dir, "add sub")
	gittest.Git(t, dir, "submodule", "deinit", "-q", "-f", "sub")
	c := mustCapture(t, newDiffer(t), dir)
	if c.Submodules != nil {
		t.Errorf("Submodules = %v, want none for a submodule that is not checked out", c.Submodules)
	}
}
