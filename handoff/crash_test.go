package handoff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// crashAt is gittest.CrashAt on h's step hook (StepHook): op stops at
// step name as kill -9 would stop the process, after before (may be nil).
// It reports whether op got to that step.
func crashAt(h *Handoff, name string, before func(), op func()) (crashed bool) {
	crashed, _ = gittest.CrashAt(name, func(hook func(string) error) { h.StepHook = hook }, func() error {
		if before != nil {
			before()
		}
		return nil
	}, op)
	return crashed
}

// A handoff killed at every step, both directions, then recovered (as
// the next server start would) loses no byte: before the destination
// verified it rolls back to the untouched source and a clean destination
// at its old HEAD; after, it rolls forward. Either way the journal and
// its ref are gone, and a second handoff works. A crash matrix
// (gittest.CrashMatrix).
func TestCrashEveryStepMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	ctx := context.Background()
	steps := []struct {
		name    string
		forward bool
		// half leaves what a git command killed in the middle would.
		half func(t *testing.T, src, dst string)
	}{
		{"begun", false, nil},
		{StepSaved, false, nil},
		{StepMoving, false, nil},
		{"detached", false, nil},
		{"head", false, nil},
		{"head", false, func(t *testing.T, src, dst string) { // read-tree -u killed after some files
			gittest.Write(t, dst, "sub/new.txt", "untracked\n")
			gittest.Write(t, dst, "sub/b.txt", "b changed\n")
		}},
		{"checkout#1", false, nil},     // the first file placed in the destination
		{"index-locked#1", false, nil}, // the destination's new index is its index.lock
		{"moved", true, nil},
		{StepVerified, true, nil},
		{StepRecorded, true, nil},
		{StepCleaning, true, nil},
		{StepCleaning, true, func(t *testing.T, src, dst string) { // cleanup killed half-way
			gittest.Write(t, src, "sub/b.txt", "b\n")
			os.Remove(filepath.Join(src, "sub/new.txt"))
		}},
		{"index#2", true, nil},        // the source's files are HEAD's, its index is not
		{"index-locked#2", true, nil}, // the source's new index is its index.lock
		{"cleaned", true, nil},
	}
	for _, to := range []Direction{ToLocal, ToWorktree} {
		for _, st := range steps {
			name := string(to) + "/" + st.name
			if st.half != nil {
				name += "/half"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e, main, wt := newWorktreeEnv(t)
				src, dst := wt, main
				o := Options{To: to, Cwd: wt, Title: "crash"}
				if to == ToLocal {
					gittest.Git(t, wt, "checkout", "-q", "-b", "own")
				} else {
					src, dst = main, wt
					o.Cwd, o.Worktree = main, wt
				}
				dirtyFixture(t, src)
				want := stateOf(t, src)
				clean := stateOf(t, dst)
				srcRef, dstRef := symref(t, src), symref(t, dst)
				records := 0
				o.Record = func(context.Context, *Landed) error { records++; return nil }
				var runErr error
				crashed := crashAt(e.h, st.name, func() {
					if st.half != nil {
						st.half(t, src, dst)
					}
				}, func() { _, runErr = e.h.Run(ctx, o) })
				if !crashed {
					if to == ToWorktree && st.name == "detached" {
						return // a to-worktree handoff has no such step
					}
					t.Fatalf("never reached %s (err %v)", st.name, runErr)
				}
				h2 := New(e.h.git, e.ws, e.agentDir)
				recs, err := h2.Recover(ctx, RecoverOptions{Record: o.Record})
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) != 1 {
					t.Fatalf("recovered %d journals", len(recs))
				}
				wantOutcome := RolledBack
				from, to2 := src, dst
				if st.forward {
					wantOutcome, from, to2 = RolledForward, dst, src
				}
				if recs[0].Outcome != wantOutcome {
					t.Fatalf("outcome = %s (%v), want %s", recs[0].Outcome, recs[0].Err, wantOutcome)
				}
				wantState(t, "the changes", want, from)
				if got := stateOf(t, to2); got.Status != "" || got.Diff != "" || got.Cached != "" {
					t.Errorf("other side not clean: %+v", got)
				}
				if !st.forward {
					wantState(t, "destination not as before", clean, dst)
					if symref(t, src) != srcRef || symref(t, dst) != dstRef {
						t.Errorf("HEADs: src %q dst %q, want %q %q", symref(t, src), symref(t, dst), srcRef, dstRef)
					}
				} else if records != 1 {
					t.Errorf("Record called %d times", records)
				}
				e.noJournals(t)
			})
		}
	}
}

// A to-worktree handoff of a thread born in the main checkout killed just
// after it made the thread's new worktree, before the journal recorded
// its path, is rolled back by recovery: that worktree (found as the one
// made for the thread since the journal began) is deleted and forgotten,
// the main checkout keeps its changes, and another thread's worktree made
// earlier is left alone (audit: the worktree stayed, registered and
// attached to the thread).
func TestCrashAfterWorktreeMade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	main := commitFixture(t)
	other := e.newWorktree(t, main)
	dirtyFixture(t, main)
	want := stateOf(t, main)
	o := Options{To: ToWorktree, Cwd: main, ThreadID: "T7"}
	var made string
	crashed := crashAt(e.h, "made", func() {
		list, _ := e.ws.Registry().List()
		for _, w := range list {
			if slices.Contains(w.ThreadIDs, "T7") {
				made = w.Path
			}
		}
	}, func() { _, _ = e.h.Run(ctx, o) })
	if !crashed || made == "" {
		t.Fatalf("crashed %v, made %q", crashed, made)
	}
	recs, err := New(e.h.git, e.ws, e.agentDir).Recover(ctx, RecoverOptions{})
	if err != nil || len(recs) != 1 || recs[0].Outcome != RolledBack {
		t.Fatalf("Recover = %+v, %v; want one rolled back", recs, err)
	}
	if _, ok, _ := e.ws.Registry().Get(made); ok {
		t.Errorf("the registry still lists %s", made)
	}
	if list := gittest.Git(t, main, "worktree", "list", "--porcelain"); strings.Contains(list, made) || !strings.Contains(list, other) {
		t.Errorf("git worktree list:\n%s\nwant %s gone and %s kept", list, made, other)
	}
	if _, err := os.Lstat(made); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists: %v", made, err)
	}
	wantState(t, "main checkout", want, main)
	e.noJournals(t)
}

// Edits made in the source after a crash that match neither the saved
// state nor HEAD are never overwritten: recovery reports
// recoveryRequired (patch and instructions included), the next handoff is
// refused the same way, and once the user settles the file the journal
// finishes.
func TestCrashThenEditNeedsRecovery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	dirtyFixture(t, wt)
	crashAt(e.h, StepCleaning, func() {
		gittest.Write(t, wt, "sub/b.txt", "edited after the crash\n")
	}, func() { e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, Title: "x"}) })
	recs, err := e.h.Recover(ctx, RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Outcome != RecoveryRequired || recs[0].Err == nil {
		t.Fatalf("recovered = %+v", recs)
	}
	re := recs[0].Err
	if diff := cmp.Diff([]string{"sub/b.txt"}, re.Conflict.Paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(re.Patch); err != nil || re.Instructions == "" {
		t.Errorf("patch %s: %v; instructions %q", re.Patch, err, re.Instructions)
	}
	// The destination verified: the instructions say the changes are
	// there, and how to settle the edit, before the generic ones.
	for _, want := range []string{"Nothing is lost", "changes are in " + main, "sub/b.txt", "git -C " + wt + " restore --staged --worktree"} {
		if !strings.Contains(re.Instructions, want) {
			t.Errorf("instructions lack %q: %s", want, re.Instructions)
		}
	}
	if got := gittest.Read(t, wt, "sub/b.txt"); got != "edited after the crash\n" {
		t.Errorf("the edit was overwritten: %q", got)
	}
	var ce *ConflictError
	if _, err := e.h.Plan(ctx, Options{To: ToWorktree, Cwd: main, Worktree: wt}); !errors.As(err, &ce) || ce.Reason != ReasonRecoveryRequired {
		t.Errorf("next plan: %v, want recoveryRequired", err)
	}
	gittest.Write(t, wt, "sub/b.txt", "b\n") // the user puts it back
	recs, err = e.h.Recover(ctx, RecoverOptions{})
	if err != nil || len(recs) != 1 || recs[0].Outcome != RolledForward {
		t.Fatalf("recovered = %+v, %v", recs, err)
	}
	if st := stateOf(t, wt); st.Status != "" {
		t.Errorf("worktree not clean: %q", st.Status)
	}
}

// A handoff that fast-forwards the branch the main checkout has checked
// out (the previous handoff's branch), killed before it verified, rolls
// the branch back to where it was: the main checkout is exactly as before.
func TestCrashFastForwardedBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	main := commitFixture(t)
	old := head(t, main)
	gittest.Git(t, main, "checkout", "-q", "-b", "prev")
	wt := e.newWorktree(t, main)
	gittest.Write(t, wt, "sub/b.txt", "committed in the worktree\n")
	gittest.CommitAll(t, wt, "agent work")
	dirtyFixture(t, wt)
	want, clean := stateOf(t, wt), stateOf(t, main)
	if !crashAt(e.h, "head", nil, func() { e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, PreviousBranch: "prev"}) }) {
		t.Fatal("never reached head")
	}
	recs, err := e.h.Recover(ctx, RecoverOptions{})
	if err != nil || len(recs) != 1 || recs[0].Outcome != RolledBack {
		t.Fatalf("recovered %+v, %v", recs, err)
	}
	wantState(t, "main", clean, main)
	if head(t, main) != old || symref(t, main) != "refs/heads/prev" {
		t.Errorf("main at %s %q, want prev at %s", head(t, main), symref(t, main), old)
	}
	wantState(t, "worktree", want, wt)
	res, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, PreviousBranch: "prev"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch.Name != "prev" || res.Branch.Old != old || head(t, main) != head(t, wt) {
		t.Errorf("branch %+v", res.Branch)
	}
	wantState(t, "main after the handoff", want, main)
}

// A file written in either checkout while the handoff runs is never
// overwritten: the destination's write refuses, with nothing of it
// written, an edit to a file it would replace and a file made where it
// would add one (localChanges, the handoff undone, the source untouched);
// the source's cleanup refuses an edit to a moved file, which then needs
// the user (recoveryRequired), the edit kept.
func TestEditDuringHandoffIsKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name, step, file, text string
		inSource               bool
	}{
		{"destination edit", "head", "sub/b.txt", "edited in main during the handoff\n", false},
		{"destination new file", "head", "sub/deep/new2.txt", "made in main during the handoff\n", false},
		{"source edit", StepCleaning, "sub/b.txt", "edited in the worktree during the handoff\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, main, wt := newWorktreeEnv(t)
			dirtyFixture(t, wt)
			want, clean := stateOf(t, wt), stateOf(t, main)
			e.h.StepHook = func(s string) error {
				if s == tt.step {
					dir := main
					if tt.inSource {
						dir = wt
					}
					gittest.Write(t, dir, tt.file, tt.text)
				}
				return nil
			}
			_, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, Title: "edit"})
			e.h.StepHook = nil
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a conflict", err)
			}
			if !tt.inSource {
				if ce.Reason != ReasonLocalChanges || !slices.Equal(ce.Paths, []string{tt.file}) {
					t.Errorf("conflict %s %v, want localChanges [%s]", ce.Reason, ce.Paths, tt.file)
				}
				if got := gittest.Read(t, main, tt.file); got != tt.text {
					t.Errorf("%s = %q: the edit was overwritten", tt.file, got)
				}
				clean.Status = stateOf(t, main).Status // the edit shows in status
				clean.Diff = stateOf(t, main).Diff
				clean.Files[tt.file] = "-rw-r--r--:" + tt.text
				wantState(t, "main, besides the edit", clean, main)
				wantState(t, "the source", want, wt)
				e.noJournals(t)
				return
			}
			if ce.Reason != ReasonRecoveryRequired || !slices.Equal(ce.Paths, []string{tt.file}) {
				t.Errorf("conflict %s %v, want recoveryRequired [%s]", ce.Reason, ce.Paths, tt.file)
			}
			if got := gittest.Read(t, wt, tt.file); got != tt.text {
				t.Errorf("%s = %q: the edit was overwritten", tt.file, got)
			}
			wantState(t, "the destination", want, main)
		})
	}
}

// A tracked folder that became a file (and the other way round) hands off
// both ways: the folder the destination's write empties is not taken for
// a file made during the handoff (QA: every such handoff was refused).
func TestFolderFileSwapHandsOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	if err := os.RemoveAll(filepath.Join(wt, "tools")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, wt, "tools", "a file where a folder was\n")
	if err := os.Remove(filepath.Join(wt, "README.md")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, wt, "README.md/inside.txt", "a folder where a file was\n")
	want := stateOf(t, wt)
	if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, Title: "swap"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "main after the handoff", want, main)
	if _, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: main, Worktree: wt}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "the worktree after the way back", want, wt)
}

// RecoverStart (the server's start) finishes a killed handoff and keeps
// its outcome for the next load of its thread: TakeRecovered hands it to
// that thread once, and to no other.
func TestRecoverStartKeepsReports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	dirtyFixture(t, wt)
	want := stateOf(t, wt)
	o := Options{To: ToLocal, Cwd: wt, ThreadID: "T9", Title: "kept"}
	if !crashAt(e.h, StepVerified, nil, func() { _, _ = e.h.Run(ctx, o) }) {
		t.Fatal("never reached the verified step")
	}
	h2 := New(e.h.git, e.ws, e.agentDir)
	if err := h2.RecoverStart(ctx, RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "the changes after the start's recovery", want, main)
	e.noJournals(t)
	for _, other := range []string{"T1", ""} {
		if got, err := h2.TakeRecovered(other); err != nil || len(got) != 0 {
			t.Errorf("TakeRecovered(%q) took %+v (%v)", other, got, err)
		}
	}
	got, err := h2.TakeRecovered("T9")
	if err != nil || len(got) != 1 || got[0].Outcome != RolledForward || got[0].Landed == nil || got[0].Landed.Destination != main {
		t.Fatalf("kept reports = %+v (%v), want the roll forward into %s", got, err, main)
	}
	if msg := got[0].Message(); !strings.Contains(msg, "was finished") || !strings.Contains(msg, main) {
		t.Errorf("message = %q", msg)
	}
	if again, err := h2.TakeRecovered("T9"); err != nil || len(again) != 0 {
		t.Errorf("taken twice: %+v (%v)", again, err)
	}
}
