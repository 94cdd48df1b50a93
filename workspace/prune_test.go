package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// Prune keeps the newest worktrees.keep worktrees of each project and
// snapshots and removes the least recently used others, never a loaded,
// locked or nested-repository one, never another project's, the user's own
// worktrees or the main checkout.
func TestPruneKeepsNewest(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	other := commitFixture(t)
	mine := filepath.Join(filepath.Dir(src), "mine")
	gittest.Git(t, src, "worktree", "add", "-q", "--detach", mine)
	gittest.Write(t, mine, "mine.txt", "the user's\n")

	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var paths []string // oldest first
	for i := 0; i < 6; i++ {
		c := create(t, m, CreateOptions{Cwd: src})
		gittest.Write(t, c.Worktree.Path, "work.txt", "work "+c.Worktree.Path+"\n")
		if err := m.Registry().Touch(c.Worktree.Path, base.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, c.Worktree.Path)
	}
	otherWT := create(t, m, CreateOptions{Cwd: other}).Worktree.Path
	if err := m.Registry().Touch(otherWT, base.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	loaded, locked, nested := paths[0], paths[1], paths[2]
	gittest.Git(t, src, "worktree", "lock", "--reason", "busy", locked)
	gittest.Git(t, nested, "init", "-q", "inner")
	mainState, mineState := stateOf(t, src), stateOf(t, mine)

	res, err := m.Prune(ctx, PruneOptions{Keep: 2, Project: src, InUse: func(p string) bool { return p == loaded }})
	if err != nil {
		t.Fatal(err)
	}
	var pruned []string
	for _, d := range res.Pruned {
		pruned = append(pruned, d.Path)
		if d.Snapshot == "" {
			t.Errorf("%s pruned without a snapshot", d.Path)
		} else if got := gittest.Git(t, src, "show", d.Snapshot+":work.txt"); got != "work "+d.Path+"\n" {
			t.Errorf("snapshot of %s holds work.txt = %q", d.Path, got)
		}
	}
	if diff := cmp.Diff(pruned, []string{paths[3]}); diff != "" {
		t.Errorf("pruned (-got +want):\n%s", diff)
	}
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, filepath.Base(filepath.Dir(s.Path))+":"+s.Reason)
	}
	sort.Strings(skipped)
	want := []string{
		filepath.Base(filepath.Dir(loaded)) + ":" + ReasonWorktreeInUse,
		filepath.Base(filepath.Dir(locked)) + ":" + ReasonWorktreeInUse,
		filepath.Base(filepath.Dir(nested)) + ":" + ReasonSubmodules,
	}
	sort.Strings(want)
	if diff := cmp.Diff(skipped, want); diff != "" {
		t.Errorf("skipped (-got +want):\n%s", diff)
	}
	for i, p := range paths {
		_, err := os.Stat(p)
		if gone := os.IsNotExist(err); gone != (i == 3) {
			t.Errorf("worktree %d (%s): gone = %v", i, p, gone)
		}
	}
	if _, err := os.Stat(otherWT); err != nil {
		t.Errorf("another project's worktree was pruned: %v", err)
	}
	if diff := cmp.Diff(stateOf(t, src), mainState); diff != "" {
		t.Errorf("main checkout changed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(stateOf(t, mine), mineState); diff != "" {
		t.Errorf("the user's worktree changed (-got +want):\n%s", diff)
	}
	if !strings.Contains(worktreeList(t, src), mine) {
		t.Errorf("the user's worktree is no longer registered")
	}

	// Without a project filter, every project keeps its own count.
	res, err = m.Prune(ctx, PruneOptions{Keep: 0, InUse: func(p string) bool { return p != otherWT }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pruned) != 1 || res.Pruned[0].Path != otherWT {
		t.Errorf("second prune = %+v, want only %s", res.Pruned, otherWT)
	}
	live, err := m.List(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	var alive []string
	for _, w := range live {
		if !w.Deleted {
			alive = append(alive, w.Path)
		}
	}
	wantAlive := slices.Clone(paths)
	wantAlive = slices.DeleteFunc(wantAlive, func(p string) bool { return p == paths[3] })
	sort.Strings(wantAlive)
	if diff := cmp.Diff(alive, wantAlive); diff != "" {
		t.Errorf("live worktrees (-got +want):\n%s", diff)
	}

	if _, err := m.Prune(ctx, PruneOptions{Keep: -1}); !isParam("keep")(err) {
		t.Errorf("Prune keep -1: %v, want ParamError keep", err)
	}
}
