package diffscope

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// actTurnIndex simulates a turn like actTurn and returns revert options
// carrying the turn's index trees too.
func actTurnIndex(t testing.TB, d *Differ, dir string, edit func()) RevertOptions {
	t.Helper()
	before := mustCapture(t, d, dir)
	edit()
	after := mustCapture(t, d, dir)
	return RevertOptions{
		ReadOptions:   ReadOptions{Scope: ScopeLastTurn, FromTree: before.WorktreeTree, ToTree: after.WorktreeTree},
		FromIndexTree: before.IndexTree, ToIndexTree: after.IndexTree,
	}
}

// indexView is what the user sees of the index and working tree: `git diff
// --cached`, `git diff` and `git status --porcelain`, byte for byte.
type indexView struct{ Cached, Unstaged, Status string }

func viewIndex(t testing.TB, dir string) indexView {
	t.Helper()
	return indexView{
		Cached:   gittest.Git(t, dir, "diff", "--cached"),
		Unstaged: gittest.Git(t, dir, "diff"),
		Status:   actStatus(t, dir),
	}
}

// TestRevertLastTurnRestoresTheIndexTheTurnChanged checks that undoing a
// turn that only staged (git add of an MM file, git add -A with an
// untracked file) puts the index back exactly, so the staged-only content
// is not lost, and that reapply stages it again; both only while the
// turn's index entries are as the turn left (found) them.
func TestRevertLastTurnRestoresTheIndexTheTurnChanged(t *testing.T) {
	body := actLines(1, 20)
	staged := replaceLine(body, "3", "three (staged)")
	work := replaceLine(staged, "17", "seventeen (unstaged)")
	tests := []struct {
		name      string
		turn      func(dir string)
		wantPaths []string
	}{
		{"git add of an MM file", func(dir string) { gittest.Git(t, dir, "add", "f.txt") }, []string{"f.txt"}},
		{"git add -A with an untracked file", func(dir string) { gittest.Git(t, dir, "add", "-A") }, []string{"f.txt", "u.txt"}},
		{"git rm --cached", func(dir string) { gittest.Git(t, dir, "rm", "-q", "--cached", "g.txt") }, []string{"g.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := actRepo(t, map[string]string{"f.txt": body, "g.txt": "g\n"})
			gittest.Write(t, dir, "f.txt", staged)
			gittest.Git(t, dir, "add", "f.txt")
			gittest.Write(t, dir, "f.txt", work)
			gittest.Write(t, dir, "u.txt", "untracked\n")
			d := newDiffer(t)
			before := viewIndex(t, dir)
			if before.Status != "MM f.txt\n?? u.txt\n" {
				t.Fatalf("status before the turn = %q", before.Status)
			}
			files := actFiles(t, dir, "f.txt", "g.txt", "u.txt")
			ro := actTurnIndex(t, d, dir, func() { tt.turn(dir) })
			after := viewIndex(t, dir)
			if ro.FromTree != ro.ToTree || ro.FromIndexTree == ro.ToIndexTree {
				t.Fatalf("the turn should change the index only: %+v", ro)
			}

			got := actRevert(t, d, dir, ro)
			if diff := cmp.Diff(got, tt.wantPaths); diff != "" {
				t.Errorf("undo paths (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(viewIndex(t, dir), before); diff != "" {
				t.Errorf("after undo (-got +want as before the turn):\n%s", diff)
			}
			if diff := cmp.Diff(actFiles(t, dir, "f.txt", "g.txt", "u.txt"), files); diff != "" {
				t.Errorf("undo changed working files (-got +want):\n%s", diff)
			}
			// Undoing again: the index entries are no longer as the turn
			// left them.
			_, err := d.Revert(context.Background(), dir, ro)
			if ce := actConflict(t, err, ReasonDiffChanged); !cmp.Equal(ce.Paths, tt.wantPaths) {
				t.Errorf("second undo conflict paths = %v, want %v", ce.Paths, tt.wantPaths)
			}

			reapply := ro
			reapply.Reapply = true
			actRevert(t, d, dir, reapply)
			if diff := cmp.Diff(viewIndex(t, dir), after); diff != "" {
				t.Errorf("after reapply (-got +want as after the turn):\n%s", diff)
			}
		})
	}
}

// TestRevertLastTurnIndexGuard checks the index side of a turn undo: it is
// refused (nothing changes) when an entry the turn staged moved since,
// it keeps the user's own staging of other paths, and a one-file revert
// never writes the index.
func TestRevertLastTurnIndexGuard(t *testing.T) {
	body := actLines(1, 20)
	dir := actRepo(t, map[string]string{"f.txt": body, "g.txt": "g\n", "h.txt": "h\n"})
	gittest.Write(t, dir, "f.txt", replaceLine(body, "3", "three"))
	d := newDiffer(t)
	ro := actTurnIndex(t, d, dir, func() {
		gittest.Write(t, dir, "g.txt", "agent\n")
		gittest.Git(t, dir, "add", "f.txt", "g.txt")
	})

	// The user unstages f.txt after the turn: the undo is refused.
	gittest.Git(t, dir, "reset", "-q", "--", "f.txt")
	moved := viewIndex(t, dir)
	_, err := d.Revert(context.Background(), dir, ro)
	if ce := actConflict(t, err, ReasonDiffChanged); !cmp.Equal(ce.Paths, []string{"f.txt"}) {
		t.Errorf("conflict paths = %v, want [f.txt]", ce.Paths)
	}
	if diff := cmp.Diff(viewIndex(t, dir), moved); diff != "" {
		t.Errorf("a refused undo changed something (-got +want):\n%s", diff)
	}

	// Staged again as the turn left it, plus the user's own staging of
	// h.txt: the undo restores the turn's entries and keeps h.txt staged.
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Write(t, dir, "h.txt", "user\n")
	gittest.Git(t, dir, "add", "h.txt")
	got := actRevert(t, d, dir, ro)
	if diff := cmp.Diff(got, []string{"f.txt", "g.txt"}); diff != "" {
		t.Errorf("undo paths (-got +want):\n%s", diff)
	}
	if got, want := actStatus(t, dir), " M f.txt\nM  h.txt\n"; got != want {
		t.Errorf("status after undo = %q, want %q", got, want)
	}
	if got := gittest.Read(t, dir, "g.txt"); got != "g\n" {
		t.Errorf("g.txt = %q, want the content before the turn", got)
	}

	// Reapplied, then one file of the turn reverted: the working tree
	// only, never the index.
	reapply := ro
	reapply.Reapply = true
	actRevert(t, d, dir, reapply)
	if got, want := actStatus(t, dir), "M  f.txt\nM  g.txt\nM  h.txt\n"; got != want {
		t.Errorf("status after reapply = %q, want %q", got, want)
	}
	ageIndex(t, dir)
	check := guard(t, dir)
	one := ro
	one.Path = "g.txt"
	if got := actRevert(t, d, dir, one); !cmp.Equal(got, []string{"g.txt"}) {
		t.Errorf("one-file revert paths = %v, want [g.txt]", got)
	}
	check()
	if got, want := actStatus(t, dir), "M  f.txt\nMM g.txt\nM  h.txt\n"; got != want {
		t.Errorf("status after reverting g.txt alone = %q, want %q", got, want)
	}
}

// replaceLine replaces the line old ("3" for "3\n") of body with new.
func replaceLine(body, old, new string) string {
	lines := strings.SplitAfter(body, "\n")
	for i, l := range lines {
		if l == old+"\n" {
			lines[i] = new + "\n"
		}
	}
	return strings.Join(lines, "")
}
