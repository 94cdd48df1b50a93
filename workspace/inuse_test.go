package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// A thread that loads in the worktree while Delete waits for the
// repository lock still stops it: InUse is asked again under the lock,
// before the first write, and nothing is modified.
func TestDeleteChecksInUseAgainUnderTheLock(t *testing.T) {
	t.Parallel()
	var calls []string
	checkDeleteRefused(t, func(t *testing.T, f *refusalFixture) {
		f.opts.InUse = func(p string) bool {
			calls = append(calls, p)
			return len(calls) > 1 // loaded only once the first check passed
		}
	}, isConflict(ReasonWorktreeInUse), "loaded")
	if len(calls) != 2 || calls[0] != calls[1] {
		t.Errorf("InUse calls %v, want the worktree twice", calls)
	}
}

// Prune asks InUse again under the lock too: a worktree that became busy
// after the first check is skipped as in use, not removed.
func TestPruneChecksInUseAgainUnderTheLock(t *testing.T) {
	t.Parallel()
	m, src, c := newCreated(t)
	gittest.Write(t, c.Worktree.Path, "work.txt", "work\n")
	before := dirEntries(t, c.Worktree.Path)
	calls := 0
	res, err := m.Prune(ctx, PruneOptions{Keep: 0, Project: src, InUse: func(p string) bool {
		calls++
		return calls > 1
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := &PruneResult{Pruned: []Deleted{}, Skipped: []PruneSkip{{Path: c.Worktree.Path, Reason: ReasonWorktreeInUse, Message: "a thread is loaded in " + c.Worktree.Path}}}
	if diff := cmp.Diff(res, want); diff != "" {
		t.Errorf("Prune (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(dirEntries(t, c.Worktree.Path), before); diff != "" {
		t.Errorf("files changed (-got +want):\n%s", diff)
	}
	if got := knightcodeRefs(t, src); len(got) != 0 {
		t.Errorf("refs written: %v", got)
	}
	if w, _, _ := m.Registry().Get(c.Worktree.Path); w.Deleted {
		t.Errorf("registry marks the busy worktree deleted")
	}
}
