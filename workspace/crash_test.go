package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// crashAt is gittest.CrashAt on m's failure-injection hook: op stops at
// step name as kill -9 would stop the process, after before (may be nil).
// It reports whether op got to that step and before's error.
func crashAt(t *testing.T, m *Manager, name string, before func() error, op func()) (crashed bool, beforeErr error) {
	t.Helper()
	return gittest.CrashAt(name, func(hook func(string) error) { m.step = hook }, before, op)
}

// snapshotRefs lists the refs under refs/knightcode/snapshots/.
func snapshotRefs(t *testing.T, dir string) []string {
	t.Helper()
	return nonEmptyLines(gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", SnapshotRefPrefix))
}

// crashFixture makes a worktree with every kind of local change (carried
// from a dirty checkout, then edited there) and returns it with its state.
func crashFixture(t *testing.T, m *Manager) (src, wt string, want gitState) {
	t.Helper()
	src = commitFixture(t)
	dirtyFixture(t, src)
	wt = create(t, m, CreateOptions{Cwd: src, CarryLocalChanges: true}).Worktree.Path
	gittest.Write(t, wt, "sub/b.txt", "edited in the worktree\n")
	gittest.Write(t, wt, "notes.txt", "untracked notes\n")
	return src, wt, stateOf(t, wt)
}

// A deletion killed at any point after its snapshot leaves a registry entry
// marked deleted (state removing) with that snapshot: worktree/list says
// deleted, a restore rebuilds the worktree whatever was left at its path,
// and a second delete finishes the removal keeping the first snapshot. A
// crash matrix (gittest.CrashMatrix).
func TestDeleteKilledPartWayMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	setups := []struct {
		name   string
		step   string
		before func(src, wt string) error
		// cleared: a restore finds something to clear at the path.
		cleared bool
	}{
		{"after the registry learned of the snapshot", "snapshotted", nil, true},
		{"half removed", "snapshotted", func(src, wt string) error {
			return os.RemoveAll(filepath.Join(wt, "sub"))
		}, true},
		{"half removed, its .git file gone", "snapshotted", func(src, wt string) error {
			if err := os.RemoveAll(filepath.Join(wt, "sub")); err != nil {
				return err
			}
			return os.Remove(filepath.Join(wt, ".git"))
		}, true},
		{"registration gone, files left", "snapshotted", func(src, wt string) error {
			if _, err := gittest.Run(src, nil, "worktree", "remove", "--force", wt); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(wt, "sub"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(wt, "sub", "b.txt"), []byte("edited in the worktree\n"), 0o644)
		}, true},
		{"after git removed it", "removed", nil, false},
	}
	for _, s := range setups {
		for _, then := range []string{"restore", "delete again"} {
			t.Run(s.name+"/"+then, func(t *testing.T) {
				m := newManager(t)
				src, wt, want := crashFixture(t, m)
				before := func() error { return nil }
				if s.before != nil {
					before = func() error { return s.before(src, wt) }
				}
				crashed, err := crashAt(t, m, s.step, before, func() { _, _ = m.Delete(ctx, wt, DeleteOptions{}) })
				if !crashed || err != nil {
					t.Fatalf("crash at %s: crashed=%v, %v", s.step, crashed, err)
				}
				snaps := snapshotRefs(t, src)
				if len(snaps) != 1 {
					t.Fatalf("snapshot refs %v, want one", snaps)
				}
				w, _, _ := m.Registry().Get(wt)
				if !w.Deleted || w.State != StateRemoving || w.Snapshot != snaps[0] {
					t.Errorf("registry after the crash: deleted=%v state=%q snapshot=%q; want true, %q, %q", w.Deleted, w.State, w.Snapshot, StateRemoving, snaps[0])
				}
				list, err := m.List(ctx, "")
				if err != nil || len(list) != 1 || !list[0].Deleted {
					t.Errorf("List after the crash = %+v, %v; want it deleted", list, err)
				}

				if then == "delete again" {
					d, err := m.Delete(ctx, wt, DeleteOptions{})
					if err != nil {
						t.Fatalf("Delete again: %v", err)
					}
					if d.Snapshot != snaps[0] || d.Leftovers != "" {
						t.Errorf("Delete again = %+v; want the first snapshot %s kept, no leftovers", d, snaps[0])
					}
					if got := snapshotRefs(t, src); !cmp.Equal(got, snaps) {
						t.Errorf("snapshot refs %v, want %v", got, snaps)
					}
					if _, err := os.Lstat(wt); !os.IsNotExist(err) {
						t.Errorf("directory still there: %v", err)
					}
					if strings.Contains(worktreeList(t, src), wt) {
						t.Errorf("git still lists %s", wt)
					}
					if w, _, _ := m.Registry().Get(wt); !w.Deleted || w.State != "" || w.Snapshot != snaps[0] {
						t.Errorf("registry after delete again: %+v", w)
					}
					if _, err := m.Delete(ctx, wt, DeleteOptions{}); !isConflict(ReasonWorktreeDeleted)(err) {
						t.Errorf("a third Delete: %v, want worktreeDeleted", err)
					}
				}
				r, err := m.Restore(ctx, wt)
				if err != nil {
					t.Fatalf("Restore: %v", err)
				}
				wantCleared := s.cleared && then == "restore"
				if r.Cleared != wantCleared || r.Leftovers != "" {
					t.Errorf("Restored cleared=%v leftovers=%q; want %v, none", r.Cleared, r.Leftovers, wantCleared)
				}
				if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
					t.Errorf("restored state (-got +want):\n%s", diff)
				}
				if w, _, _ := m.Registry().Get(wt); w.Deleted || w.State != "" {
					t.Errorf("registry after restore: %+v", w)
				}
				if got := snapshotRefs(t, src); len(got) != 0 {
					t.Errorf("snapshot refs after restore: %v", got)
				}
			})
		}
	}
}

// Files left in a half-removed worktree that differ from its snapshot (a
// writer that went on after it) are saved before the removal is finished;
// the worktree's snapshot stays the first one.
func TestDeleteAgainSavesChangedLeftovers(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src, wt, want := crashFixture(t, m)
	crashed, err := crashAt(t, m, "snapshotted", func() error {
		if err := os.RemoveAll(filepath.Join(wt, "tools")); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(wt, "notes.txt"), []byte("written after the snapshot\n"), 0o644)
	}, func() { _, _ = m.Delete(ctx, wt, DeleteOptions{}) })
	if !crashed || err != nil {
		t.Fatalf("crashed=%v, %v", crashed, err)
	}
	snap := snapshotRefs(t, src)[0]
	d, err := m.Delete(ctx, wt, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Snapshot != snap || !strings.HasPrefix(d.Leftovers, TrashRefPrefix) {
		t.Fatalf("Deleted = %+v; want snapshot %s and a leftovers ref", d, snap)
	}
	for path, want := range map[string]string{
		"notes.txt":    "written after the snapshot\n",
		"sub/b.txt":    "edited in the worktree\n", // from the snapshot
		"tools/run.sh": "#!/bin/sh\necho run\n",    // removed, not deleted
	} {
		if got := gittest.Git(t, src, "show", d.Leftovers+":"+path); got != want {
			t.Errorf("leftovers %s = %q, want %q", path, got, want)
		}
	}
	if _, err := m.Restore(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
		t.Errorf("restored state (-got +want):\n%s", diff)
	}
}

// A restore killed part-way leaves git's registration and a half-built
// directory at the path; the registry still has the worktree deleted with
// its snapshot, and a restore again clears what is there and rebuilds it,
// saving first anything there that differs from the snapshot.
func TestRestoreKilledPartWay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		step  string
		after func(t *testing.T, src, wt string)
		// leftovers is a file the retry must find saved, with its content.
		leftovers [2]string
	}{
		{"after worktree add", "added", nil, [2]string{}},
		{"after worktree add, still locked initializing", "added", func(t *testing.T, src, wt string) {
			admin := strings.TrimSpace(gittest.Git(t, wt, "rev-parse", "--absolute-git-dir"))
			if err := os.WriteFile(filepath.Join(admin, "locked"), []byte("initializing"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, [2]string{}},
		{"after populating", "populated", nil, [2]string{}},
		{"after populating, then edited", "populated", func(t *testing.T, src, wt string) {
			gittest.Write(t, wt, "sub/b.txt", "edited in the half-restored worktree\n")
		}, [2]string{"sub/b.txt", "edited in the half-restored worktree\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t)
			src, wt, want := crashFixture(t, m)
			d, err := m.Delete(ctx, wt, DeleteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if crashed, _ := crashAt(t, m, tt.step, nil, func() { _, _ = m.Restore(ctx, wt) }); !crashed {
				t.Fatalf("Restore never got to %s", tt.step)
			}
			if !strings.Contains(worktreeList(t, src), "worktree "+wt+"\n") {
				t.Fatalf("no registration left at %s:\n%s", wt, worktreeList(t, src))
			}
			if w, _, _ := m.Registry().Get(wt); !w.Deleted || w.Snapshot != d.Snapshot {
				t.Errorf("registry after the crash: %+v", w)
			}
			if tt.after != nil {
				tt.after(t, src, wt)
			}
			r, err := m.Restore(ctx, wt)
			if err != nil {
				t.Fatalf("Restore again: %v", err)
			}
			if !r.Cleared {
				t.Errorf("Cleared = false")
			}
			if tt.leftovers[0] == "" && r.Leftovers != "" {
				t.Errorf("Leftovers = %q, want none", r.Leftovers)
			}
			if tt.leftovers[0] != "" {
				if r.Leftovers == "" {
					t.Fatalf("the edit in the half-restored worktree was not saved")
				}
				if got := gittest.Git(t, src, "show", r.Leftovers+":"+tt.leftovers[0]); got != tt.leftovers[1] {
					t.Errorf("leftovers %s = %q, want %q", tt.leftovers[0], got, tt.leftovers[1])
				}
			}
			if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
				t.Errorf("restored state (-got +want):\n%s", diff)
			}
			if n := strings.Count(worktreeList(t, src), "worktree "+wt+"\n"); n != 1 {
				t.Errorf("%s registered %d times", wt, n)
			}
		})
	}
}

// A creation killed part-way leaves a registry entry in state creating,
// which is never listed or looked up; Reconcile (and List) remove its
// registration, its directory and the entry once no process runs it.
func TestCreateKilledPartWay(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"registered", "added", "populated"} {
		for _, via := range []string{"Reconcile", "List"} {
			t.Run(step+"/"+via, func(t *testing.T) {
				m := newManager(t)
				src := commitFixture(t)
				dirtyFixture(t, src)
				userWT := filepath.Join(t.TempDir(), "mine")
				gittest.Git(t, src, "worktree", "add", "-q", "--detach", userWT)
				list := worktreeList(t, src)
				admin := topEntries(filepath.Join(src, ".git", "worktrees"))
				crashed, _ := crashAt(t, m, step, nil, func() {
					_, _ = m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: true})
				})
				if !crashed {
					t.Fatalf("Create never got to %s", step)
				}
				all, _ := m.Registry().List()
				if len(all) != 1 || all[0].State != StateCreating {
					t.Fatalf("registry after the crash: %+v", all)
				}
				path := all[0].Path
				if step != "registered" && !strings.Contains(worktreeList(t, src), path) {
					t.Errorf("git does not list the half-made %s", path)
				}
				if _, ok, _ := m.Lookup(path); ok {
					t.Errorf("Lookup finds a worktree being created")
				}
				switch via {
				case "Reconcile":
					removed, err := m.Reconcile(ctx)
					if err != nil || !cmp.Equal(removed, []string{path}) {
						t.Errorf("Reconcile = %v, %v; want [%s]", removed, err, path)
					}
				case "List":
					if got, err := m.List(ctx, ""); err != nil || len(got) != 0 {
						t.Errorf("List = %+v, %v; want nothing", got, err)
					}
				}
				if got := worktreeList(t, src); got != list {
					t.Errorf("git worktree list:\n%s\nwant\n%s", got, list)
				}
				if got := topEntries(filepath.Join(src, ".git", "worktrees")); !cmp.Equal(got, admin) {
					t.Errorf(".git/worktrees = %v, want %v", got, admin)
				}
				if got := topEntries(m.DefaultRoot()); len(got) != 0 {
					t.Errorf("left under the root: %v", got)
				}
				if all, _ := m.Registry().List(); len(all) != 0 {
					t.Errorf("registry = %+v, want empty", all)
				}
				if _, err := os.Stat(filepath.Join(userWT, "README.md")); err != nil {
					t.Errorf("the user's worktree was touched: %v", err)
				}
			})
		}
	}
}

// A creation still running (its creation lock held, here in this very
// process) is left alone by Reconcile and not listed; it completes.
func TestReconcileLeavesRunningCreation(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	reached, resume := make(chan struct{}), make(chan struct{})
	m.step = func(s string) error {
		if s == "added" {
			close(reached)
			<-resume
		}
		return nil
	}
	type result struct {
		c   *Created
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := m.Create(ctx, CreateOptions{Cwd: src})
		done <- result{c, err}
	}()
	<-reached
	removed, rerr := m.Reconcile(ctx)
	listed, lerr := m.List(ctx, "")
	all, _ := m.Registry().List()
	close(resume)
	res := <-done
	m.step = nil
	if rerr != nil || len(removed) != 0 {
		t.Errorf("Reconcile = %v, %v; want nothing removed", removed, rerr)
	}
	if lerr != nil || len(listed) != 0 {
		t.Errorf("List during the creation = %+v, %v; want nothing", listed, lerr)
	}
	if len(all) != 1 || all[0].State != StateCreating {
		t.Errorf("registry during the creation: %+v", all)
	}
	if res.err != nil {
		t.Fatalf("Create: %v", res.err)
	}
	w, ok, _ := m.Registry().Get(res.c.Worktree.Path)
	if !ok || w.State != "" || w.Deleted || res.c.Worktree.State != "" {
		t.Errorf("registry after the creation: %+v", w)
	}
	if got := stateOf(t, res.c.Worktree.Path); got != (gitState{}) {
		t.Errorf("new worktree not clean: %+v", got)
	}
}

// C22: commits a thread made on its worktree's detached HEAD are in no
// branch. Deleting the worktree keeps them under a recovery ref, and so
// does forgetting it (thread/delete), which deletes the snapshot ref that
// held them; a HEAD a branch contains needs none.
func TestCaseC22_DetachedCommitsSurviveForget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// commit makes the agent commit; branch puts a branch on it.
		commit, branch bool
		// dropTrash deletes the deletion's recovery ref before Forget.
		dropTrash bool
	}{
		{"no commit", false, false, false},
		{"commit on the detached HEAD", true, false, false},
		{"recovery ref deleted by hand", true, false, true},
		{"commit a branch contains", true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t)
			src := commitFixture(t)
			wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
			bucket := filepath.Base(filepath.Dir(wt))
			if tt.commit {
				gittest.Write(t, wt, "agent.txt", "agent work\n")
				gittest.Git(t, wt, "add", "agent.txt")
				gittest.Git(t, wt, "commit", "-q", "-m", "agent work")
			}
			head := headOf(t, wt)
			if tt.branch {
				gittest.Git(t, src, "branch", "kept", head)
			}
			unreachable := tt.commit && !tt.branch
			d, err := m.Delete(ctx, wt, DeleteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.RecoveryRef != ""; got != unreachable {
				t.Errorf("Delete recovery ref %q; want one: %v", d.RecoveryRef, unreachable)
			}
			if unreachable && (!strings.HasPrefix(d.RecoveryRef, TrashRefPrefix+bucket+"/") || d.UnmergedCommits != 1) {
				t.Errorf("Delete recovery ref %q (%d commits); want one under %s%s/, 1 commit", d.RecoveryRef, d.UnmergedCommits, TrashRefPrefix, bucket)
			}
			if tt.dropTrash {
				gittest.Git(t, src, "update-ref", "-d", d.RecoveryRef)
			}
			f, err := m.Forget(ctx, wt)
			if err != nil {
				t.Fatal(err)
			}
			if f.Snapshot != d.Snapshot {
				t.Errorf("Forget deleted %q, want the snapshot %q", f.Snapshot, d.Snapshot)
			}
			if got := f.RecoveryRef != ""; got != unreachable {
				t.Errorf("Forget recovery ref %q; want one: %v", f.RecoveryRef, unreachable)
			}
			if unreachable && !tt.dropTrash && f.RecoveryRef != d.RecoveryRef {
				t.Errorf("Forget wrote %q; want the deletion's %q reused", f.RecoveryRef, d.RecoveryRef)
			}
			refs := knightcodeRefs(t, src)
			if slices.Contains(refs, d.Snapshot) {
				t.Errorf("snapshot ref %s not deleted", d.Snapshot)
			}
			if unreachable {
				if !cmp.Equal(refs, []string{f.RecoveryRef}) {
					t.Errorf("refs %v, want only %s", refs, f.RecoveryRef)
				}
				if got := strings.TrimSpace(gittest.Git(t, src, "rev-parse", f.RecoveryRef)); got != head {
					t.Errorf("%s at %s, want the agent commit %s", f.RecoveryRef, got, head)
				}
			} else if len(refs) != 0 {
				t.Errorf("refs %v, want none", refs)
			}
			gittest.Git(t, src, "reflog", "expire", "--expire=now", "--all")
			gittest.Git(t, src, "gc", "-q", "--prune=now")
			if _, err := gittest.Run(src, nil, "cat-file", "-e", head+"^{commit}"); err != nil {
				t.Errorf("the agent commit is gone after gc: %v", err)
			}
			if all, _ := m.Registry().List(); len(all) != 0 {
				t.Errorf("registry = %+v, want empty", all)
			}
		})
	}
}

// Forgetting a worktree whose deletion did not finish finishes it first:
// nothing of it stays registered or on disk.
func TestForgetFinishesUnfinishedDeletion(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src, wt, _ := crashFixture(t, m)
	if crashed, _ := crashAt(t, m, "snapshotted", nil, func() { _, _ = m.Delete(ctx, wt, DeleteOptions{}) }); !crashed {
		t.Fatal("no crash")
	}
	if _, err := m.Forget(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Errorf("directory still there: %v", err)
	}
	if strings.Contains(worktreeList(t, src), wt) {
		t.Errorf("git still lists %s", wt)
	}
	if got := snapshotRefs(t, src); len(got) != 0 {
		t.Errorf("snapshot refs %v", got)
	}
	if all, _ := m.Registry().List(); len(all) != 0 {
		t.Errorf("registry = %+v", all)
	}
}

// C27: a managed worktree whose directory was removed behind our back is
// noticed when a thread opens there: its registration alone goes (`git
// worktree remove <path>`; the user's own stale registration stays), the
// registry marks it deleted with a snapshot of its HEAD alone, commits on
// its HEAD are kept under a recovery ref, and a restore re-creates it
// clean at that HEAD.
func TestCaseC27_NoticeMissing(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	mine := filepath.Join(filepath.Dir(src), "wt-old")
	gittest.Git(t, src, "worktree", "add", "-q", "-b", "thread-7", mine, "main")
	if err := os.RemoveAll(mine); err != nil {
		t.Fatal(err)
	}
	wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
	gittest.Write(t, wt, "agent.txt", "agent work\n")
	gittest.Git(t, wt, "add", "agent.txt")
	gittest.Git(t, wt, "commit", "-q", "-m", "agent work")
	head := headOf(t, wt)

	if d, err := m.NoticeMissing(ctx, wt); d != nil || err != nil {
		t.Errorf("NoticeMissing of a worktree that is there = %+v, %v; want nothing done", d, err)
	}
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "worktree", "lock", "--reason", "on a removable disk", wt)
	if d, err := m.NoticeMissing(ctx, wt); d != nil || !isMissingLocked(err, "on a removable disk") {
		t.Errorf("NoticeMissing of a locked registration = %+v, %v; want nothing done and a *MissingLockedError with the reason", d, err)
	}
	if !strings.Contains(worktreeList(t, src), wt) {
		t.Errorf("the locked registration of %s was removed", wt)
	}
	gittest.Git(t, src, "worktree", "unlock", wt)

	d := wantNoticed(t, m, src, wt, head)
	list := worktreeList(t, src)
	if strings.Contains(list, wt) || !strings.Contains(list, mine) {
		t.Errorf("git lists:\n%s\nwant %s gone and %s kept", list, wt, mine)
	}
	w, _, _ := m.Registry().Get(wt)
	if !w.Deleted || w.Snapshot != d.Snapshot || w.RecoveryRef != d.RecoveryRef || w.Head != head {
		t.Errorf("registry = %+v", w)
	}
	if d, err := m.NoticeMissing(ctx, wt); d != nil || err != nil {
		t.Errorf("NoticeMissing again = %+v, %v; want nothing done", d, err)
	}
	wantRecreated(t, m, wt, head)
}

// C27 after `git worktree prune`: git forgot the worktree whose folder was
// removed, its HEAD and logs with it; the registry's last recorded HEAD
// (RecordHead, at each turn's end, which also pins it: see the threads
// tests) is kept under refs/knightcode/ and the worktree is re-created
// there (QA: the commits made in it were reachable from no ref, and the
// registry held only the creation base).
func TestCaseC27_NoticeMissingAfterPrune(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
	gittest.Write(t, wt, "agent.txt", "agent work\n")
	gittest.Git(t, wt, "add", "agent.txt")
	gittest.Git(t, wt, "commit", "-q", "-m", "agent work")
	head := headOf(t, wt)
	if err := m.RecordHead(filepath.Join(wt, "."), head); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "worktree", "prune")

	wantNoticed(t, m, src, wt, head)
	wantRecreated(t, m, wt, head)
}

// isMissingLocked reports whether err is a *MissingLockedError with reason.
func isMissingLocked(err error, reason string) bool {
	e, ok := errors.AsType[*MissingLockedError](err)
	return ok && e.Reason == reason
}

// wantNoticed runs NoticeMissing on wt, whose folder is gone, and checks
// that it kept head under refs/knightcode/trash/ and wrote a snapshot.
func wantNoticed(t *testing.T, m *Manager, src, wt, head string) *Deleted {
	t.Helper()
	d, err := m.NoticeMissing(ctx, wt)
	if err != nil || d == nil {
		t.Fatalf("NoticeMissing = %+v, %v", d, err)
	}
	if !d.DirectoryMissing || !strings.HasPrefix(d.Snapshot, SnapshotRefPrefix) || !strings.HasPrefix(d.RecoveryRef, TrashRefPrefix) {
		t.Errorf("Deleted = %+v; want DirectoryMissing, a snapshot, a recovery ref", d)
	}
	if got := strings.TrimSpace(gittest.Git(t, src, "rev-parse", d.RecoveryRef)); got != head {
		t.Errorf("recovery ref at %s, want %s", got, head)
	}
	return d
}

// wantRecreated restores wt and checks that it is back, clean, at head with
// agent.txt.
func wantRecreated(t *testing.T, m *Manager, wt, head string) {
	t.Helper()
	r, err := m.Restore(ctx, wt)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if r.Worktree.Deleted || headOf(t, wt) != head || gittest.Read(t, wt, "agent.txt") != "agent work\n" {
		t.Errorf("restored %+v at %s, want %s with agent.txt", r.Worktree, headOf(t, wt), head)
	}
	if st := gittest.Git(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("restored worktree not clean: %q", st)
	}
}

// A restore refuses what it did not leave: files at the path of a
// deletion that finished, with no registration there.
func TestRestoreRefusesForeignFiles(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
	if _, err := m.Delete(ctx, wt, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, wt, "someone.txt", "not ours\n")
	_, err := m.Restore(ctx, wt)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonLocalChanges || !cmp.Equal(ce.Paths, []string{"someone.txt"}) {
		t.Errorf("Restore over foreign files: %v, want localChanges [someone.txt]", err)
	}
	if got := gittest.Read(t, wt, "someone.txt"); got != "not ours\n" {
		t.Errorf("someone.txt = %q", got)
	}
}
