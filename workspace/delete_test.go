package workspace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// create makes a managed worktree of src or fails the test.
func create(t testing.TB, m *Manager, o CreateOptions) *Created {
	t.Helper()
	c, err := m.Create(ctx, o)
	if err != nil {
		t.Fatalf("Create(%+v): %v", o, err)
	}
	return c
}

// newCreated is a new Manager, commitFixture as the source checkout, and
// a worktree created from it.
func newCreated(t testing.TB) (m *Manager, src string, c *Created) {
	t.Helper()
	m = newManager(t)
	src = commitFixture(t)
	return m, src, create(t, m, CreateOptions{Cwd: src})
}

// Archive-style delete then restore reproduces status, diff and diff
// --cached byte for byte, and the snapshot survives `git gc --prune=now`.
func TestDeleteThenRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	dirtyFixture(t, src)
	c := create(t, m, CreateOptions{Cwd: src, CarryLocalChanges: true})
	wt := c.Worktree.Path
	// The thread works on: a commit on the detached HEAD, more edits.
	gittest.Write(t, wt, "committed.txt", "agent commit\n")
	gittest.Git(t, wt, "add", "committed.txt")
	gittest.Git(t, wt, "commit", "-q", "-m", "agent work")
	gittest.Write(t, wt, "sub/b.txt", "edited in the worktree\n")
	gittest.WriteMode(t, wt, "bin/tool", "#!/bin/sh\n", 0o755)
	gittest.Write(t, wt, "out.log", "ignored, kept\n")
	want := stateOf(t, wt)
	head := headOf(t, wt)

	d, err := m.Delete(ctx, wt, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Snapshot, SnapshotRefPrefix+c.Worktree.Bucket()+"/") {
		t.Errorf("snapshot ref %q not under %s<bucket>/", d.Snapshot, SnapshotRefPrefix)
	}
	if d.IgnoredNotKept || d.Ignored == nil || d.Ignored.Kept != 1 {
		t.Errorf("ignored files: IgnoredNotKept %v, %+v; want out.log kept", d.IgnoredNotKept, d.Ignored)
	}
	if _, err := os.Lstat(wt); !os.IsNotExist(err) {
		t.Errorf("worktree directory still there: %v", err)
	}
	if strings.Contains(worktreeList(t, src), wt) {
		t.Errorf("git still lists %s", wt)
	}
	w, _, _ := m.Registry().Get(wt)
	if !w.Deleted || w.Snapshot != d.Snapshot || w.Head != head || w.State != "" {
		t.Errorf("registry after delete: deleted=%v snapshot=%q head=%s state=%q; want true, %q, %s, \"\"", w.Deleted, w.Snapshot, w.Head, w.State, d.Snapshot, head)
	}
	if !strings.HasPrefix(d.RecoveryRef, TrashRefPrefix+c.Worktree.Bucket()+"/") || d.UnmergedCommits != 1 || w.RecoveryRef != d.RecoveryRef {
		t.Errorf("recovery ref %q (%d commits, registry %q); want one under %s<bucket>/", d.RecoveryRef, d.UnmergedCommits, w.RecoveryRef, TrashRefPrefix)
	}
	if got := strings.TrimSpace(gittest.Git(t, src, "rev-parse", d.RecoveryRef)); got != head {
		t.Errorf("recovery ref at %s, want HEAD %s", got, head)
	}

	gittest.Git(t, src, "reflog", "expire", "--expire=now", "--all")
	gittest.Git(t, src, "gc", "-q", "--prune=now")
	gittest.Git(t, src, "fsck", "--no-dangling", "--connectivity-only")
	if _, err := gittest.Run(src, nil, "cat-file", "-e", d.Snapshot+"^{tree}"); err != nil {
		t.Fatalf("snapshot gone after gc: %v", err)
	}

	r, err := m.Restore(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
		t.Errorf("restored state (-got +want):\n%s", diff)
	}
	if got := headOf(t, wt); got != head {
		t.Errorf("restored HEAD %s, want %s", got, head)
	}
	if out, err := gittest.Run(wt, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Errorf("restored HEAD on a branch %q, want detached", out)
	}
	if got := gittest.Read(t, wt, "out.log"); got != "ignored, kept\n" {
		t.Errorf("ignored out.log = %q, want it back", got)
	}
	if r.IgnoredNotKept || r.Worktree.Deleted {
		t.Errorf("Restored = %+v", r)
	}
	// The commit made on the detached HEAD is in no branch: the deletion
	// kept it under a recovery ref (C22), which the restore leaves.
	if got := knightcodeRefs(t, src); !cmp.Equal(got, []string{d.RecoveryRef}) {
		t.Errorf("refs after restore: %v, want only the recovery ref %q (the snapshot ref should be deleted)", got, d.RecoveryRef)
	}
	if w, _, _ := m.Registry().Get(wt); w.Deleted || w.Snapshot != "" {
		t.Errorf("registry after restore: %+v", w)
	}
}

// C24: a worktree's untracked work is in the snapshot before it is removed,
// every untracked file even past diffscope's limits (500 files, 200 per
// folder).
func TestCaseC24_UntrackedWorkKeptInSnapshot(t *testing.T) {
	t.Parallel()
	m, src, c := newCreated(t)
	wt := c.Worktree.Path
	gittest.Write(t, wt, "feature.go", "important new code\n")
	for i := 0; i < 620; i++ {
		gittest.Write(t, wt, filepath.Join("gen", fmt.Sprintf("d%d/f%03d.txt", i%3, i)), strconv.Itoa(i)+"\n")
	}
	d, err := m.Delete(ctx, wt, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := nonEmptyLines(gittest.Git(t, src, "ls-tree", "-r", "--name-only", d.Snapshot))
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	if !has["feature.go"] {
		t.Errorf("feature.go not in the snapshot")
	}
	gen := 0
	for f := range has {
		if strings.HasPrefix(f, "gen/") {
			gen++
		}
	}
	if gen != 620 {
		t.Errorf("snapshot holds %d of the 620 untracked gen/ files", gen)
	}
	if got := gittest.Git(t, src, "show", d.Snapshot+":feature.go"); got != "important new code\n" {
		t.Errorf("feature.go in the snapshot = %q", got)
	}
}

// C24: when `git worktree remove --force` fails part-way, there is no
// rm -rf fallback: the error names the snapshot (written before the
// removal, holding the untracked work) and what is left.
func TestCaseC24_RemoveFailureKeepsSnapshot(t *testing.T) {
	t.Parallel()
	m, src, c := newCreated(t)
	wt := c.Worktree.Path
	gittest.Write(t, wt, "feature.go", "important new code\n")
	gittest.Write(t, wt, "logs/b.log", "a log\n")
	stuck := filepath.Join(wt, "logs", "b.log")
	undo := makeUndeletable(t, stuck)
	defer undo()

	_, err := m.Delete(ctx, wt, DeleteOptions{})
	var re *RemoveError
	if !errors.As(err, &re) {
		t.Fatalf("Delete: %v, want *RemoveError", err)
	}
	if re.Snapshot == "" || !cmp.Equal(knightcodeRefs(t, src), []string{re.Snapshot}) {
		t.Errorf("snapshot %q; refs %v", re.Snapshot, knightcodeRefs(t, src))
	}
	if got := gittest.Git(t, src, "show", re.Snapshot+":feature.go"); got != "important new code\n" {
		t.Errorf("feature.go in the snapshot = %q", got)
	}
	if !slices.Contains(re.Remaining, "logs") {
		t.Errorf("Remaining = %v, want it to name logs", re.Remaining)
	}
	if _, err := os.Stat(stuck); err != nil {
		t.Errorf("the undeletable file is gone: %v (an rm -rf fallback?)", err)
	}
	// git dropped the registration: the registry records the deletion with
	// its snapshot, and a restore refuses until the leftovers are gone.
	w, _, _ := m.Registry().Get(wt)
	if re.Registered || !w.Deleted || w.Snapshot != re.Snapshot {
		t.Errorf("registered=%v, registry %+v", re.Registered, w)
	}
	_, err = m.Restore(ctx, wt)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonLocalChanges {
		t.Errorf("Restore over leftovers: %v, want localChanges", err)
	}
	undo()
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Restore(ctx, wt); err != nil {
		t.Fatalf("Restore after clearing leftovers: %v", err)
	}
	if got := gittest.Read(t, wt, "feature.go"); got != "important new code\n" {
		t.Errorf("restored feature.go = %q", got)
	}
}

// makeUndeletable makes path impossible to unlink: an immutable attribute
// as root (permissions do not bind root), a read-only parent otherwise. It
// returns the undo (safe to call twice).
func makeUndeletable(t *testing.T, path string) func() {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
			t.Skipf("cannot make a file undeletable as root here (chattr: %v %s)", err, out)
		}
		undo := func() { _ = exec.Command("chattr", "-i", path).Run() }
		t.Cleanup(undo)
		return undo
	}
	parent := filepath.Dir(path)
	if err := os.Chmod(parent, 0o555); err != nil {
		t.Fatal(err)
	}
	undo := func() { _ = os.Chmod(parent, 0o755) }
	t.Cleanup(undo)
	return undo
}

// C22: deleting a worktree whose branch has commits in neither the base
// nor its upstream writes a recovery ref first and reports it; the branch
// is never deleted.
func TestCaseC22_RecoveryRefForUnmergedBranch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		commit   bool
		wantRef  string
		wantUnmr int
	}{
		{"branch with its own commit", true, TrashRefPrefix + "thread-1", 1},
		{"branch without commits of its own", false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src, c := newCreated(t)
			wt := c.Worktree.Path
			gittest.Git(t, wt, "switch", "-q", "-c", "thread-1")
			tip := headOf(t, wt)
			if tt.commit {
				gittest.Write(t, wt, "work.txt", "work\n")
				tip = gittest.CommitAll(t, wt, "agent work")
			}
			d, err := m.Delete(ctx, wt, DeleteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d.RecoveryRef != tt.wantRef || d.UnmergedCommits != tt.wantUnmr || d.Branch != "refs/heads/thread-1" {
				t.Errorf("Deleted = %+v; want recovery ref %q, %d unmerged", d, tt.wantRef, tt.wantUnmr)
			}
			if tt.wantRef != "" {
				if got := strings.TrimSpace(gittest.Git(t, src, "rev-parse", tt.wantRef)); got != tip {
					t.Errorf("%s = %s, want %s", tt.wantRef, got, tip)
				}
			}
			if got := strings.TrimSpace(gittest.Git(t, src, "rev-parse", "refs/heads/thread-1")); got != tip {
				t.Errorf("branch thread-1 = %s, want %s (kept)", got, tip)
			}
		})
	}
}

// refusalFixture is a managed worktree (with untracked work) a refusal
// test sets up further.
type refusalFixture struct {
	m    *Manager
	src  string
	path string
	opts DeleteOptions
}

// checkDeleteRefused sets up a managed worktree, lets setup change it, and
// checks that Delete fails as check says (with Output containing output)
// and modifies nothing: files, git's worktree list, refs, the registry.
func checkDeleteRefused(t *testing.T, setup func(t *testing.T, f *refusalFixture), check func(error) bool, output string) {
	t.Helper()
	f := &refusalFixture{m: newManager(t), src: commitFixture(t)}
	c := create(t, f.m, CreateOptions{Cwd: f.src})
	f.path = c.Worktree.Path
	gittest.Write(t, c.Worktree.Path, "untracked.txt", "work\n")
	setup(t, f)
	before := dirEntries(t, f.path)
	list := worktreeList(t, f.src)
	reg, _ := f.m.Registry().List()

	_, err := f.m.Delete(ctx, f.path, f.opts)
	if !check(err) {
		t.Fatalf("Delete: %v", err)
	}
	var ce *ConflictError
	if output != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Output, output)) {
		t.Errorf("Delete: %v; want the output to say %q", err, output)
	}
	if diff := cmp.Diff(dirEntries(t, f.path), before); diff != "" {
		t.Errorf("files changed (-got +want):\n%s", diff)
	}
	if got := worktreeList(t, f.src); got != list {
		t.Errorf("git worktree list changed:\n%s\nwant\n%s", got, list)
	}
	if got := knightcodeRefs(t, f.src); len(got) != 0 {
		t.Errorf("refs written: %v", got)
	}
	if got, _ := f.m.Registry().List(); !cmp.Equal(got, reg) {
		t.Errorf("registry changed: %+v", got)
	}
}

// C25: a locked worktree is reported with its lock reason, from `git
// worktree list --porcelain` read before anything is touched: its helper
// symlink and every file stay, no snapshot is written.
func TestCaseC25_LockedWorktreeIsNotTouched(t *testing.T) {
	t.Parallel()
	checkDeleteRefused(t, func(t *testing.T, f *refusalFixture) {
		if err := os.Symlink(filepath.Join(f.src, "README.md"), filepath.Join(f.path, ".env.local")); err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, f.src, "worktree", "lock", "--reason", "session guard: owner=thread-A", f.path)
	}, isConflict(ReasonWorktreeInUse), "locked: session guard: owner=thread-A")
}

// The other refusals: nothing is modified either.
func TestDeleteRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(t *testing.T, f *refusalFixture)
		check  func(error) bool
		output string // substring of the conflict's Output
	}{
		{
			name:   "loaded worktree",
			setup:  func(t *testing.T, f *refusalFixture) { f.opts.InUse = func(p string) bool { return p == f.path } },
			check:  isConflict(ReasonWorktreeInUse),
			output: "loaded",
		},
		{
			name: "nested repository in an ignored folder",
			setup: func(t *testing.T, f *refusalFixture) {
				gittest.Git(t, f.path, "init", "-q", filepath.Join(f.path, "vendor.log", "inner"))
			},
			check: isConflict(ReasonSubmodules),
		},
		{
			name: "initialized submodule",
			setup: func(t *testing.T, f *refusalFixture) {
				lib := commitFixture(t)
				gittest.Git(t, f.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
			},
			check: isConflict(ReasonSubmodules),
		},
		{
			name: "user-made worktree",
			setup: func(t *testing.T, f *refusalFixture) {
				f.path = filepath.Join(filepath.Dir(f.src), "mine")
				gittest.Git(t, f.src, "worktree", "add", "-q", "--detach", f.path)
			},
			check: isParam("path"),
		},
		{
			name:  "main checkout",
			setup: func(t *testing.T, f *refusalFixture) { f.path = f.src },
			check: isParam("path"),
		},
		{
			name: "directory no longer registered with git",
			setup: func(t *testing.T, f *refusalFixture) {
				// The user unregistered it by hand, keeping the files.
				gitFile := filepath.Join(f.path, ".git")
				admin := strings.TrimSpace(strings.TrimPrefix(gittest.Read(t, f.path, ".git"), "gitdir:"))
				if err := os.RemoveAll(admin); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(gitFile); err != nil {
					t.Fatal(err)
				}
			},
			check: isConflict(ReasonWorktreeMissing),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDeleteRefused(t, tt.setup, tt.check, tt.output)
		})
	}
}

func isConflict(reason string) func(error) bool {
	return func(err error) bool {
		var ce *ConflictError
		return errors.As(err, &ce) && ce.Reason == reason
	}
}

// C27: a worktree whose directory vanished behind git's back is deleted by
// removing only its own registration (the user's stale registrations
// stay), and a restore first clears a stale registration at its path.
func TestCaseC27_StaleRegistrations(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	// The user's own stale registration: never touched.
	mine := filepath.Join(filepath.Dir(src), "wt-old")
	gittest.Git(t, src, "worktree", "add", "-q", "-b", "thread-7", mine, "main")
	if err := os.RemoveAll(mine); err != nil {
		t.Fatal(err)
	}

	c := create(t, m, CreateOptions{Cwd: src})
	wt := c.Worktree.Path
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	d, err := m.Delete(ctx, wt, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.DirectoryMissing || d.Snapshot == "" {
		t.Errorf("Deleted = %+v; want DirectoryMissing with a HEAD-only snapshot", d)
	}
	list := worktreeList(t, src)
	if strings.Contains(list, wt) || !strings.Contains(list, mine) {
		t.Errorf("after delete, git lists:\n%s\nwant %s gone and %s kept", list, wt, mine)
	}

	// A stale registration at the deleted worktree's path.
	r, err := m.Restore(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if r.StaleRegistration {
		t.Errorf("StaleRegistration without one")
	}
	if _, err := m.Delete(ctx, wt, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "worktree", "add", "-q", "--detach", wt, "main")
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(worktreeList(t, src), "prunable") {
		t.Fatalf("no prunable registration:\n%s", worktreeList(t, src))
	}
	r, err = m.Restore(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if !r.StaleRegistration {
		t.Errorf("StaleRegistration = false")
	}
	list = worktreeList(t, src)
	if !strings.Contains(list, mine) {
		t.Errorf("the user's stale registration was pruned:\n%s", list)
	}
	if got := stateOf(t, wt); got != (gitState{}) {
		t.Errorf("restored worktree not clean: %+v", got)
	}
}

// A worktree whose submodules are not initialized (their folders empty,
// as after a plain clone; a worktree holding an initialized one is never
// deleted) comes back from its snapshot with those empty folders, as `git
// worktree add` leaves them, and a gitlink only staged comes back staged
// (issue 22 item 6: a restore refused any snapshot holding a gitlink, so
// no worktree of a repository with submodules could be restored).
func TestRestoreUninitializedSubmodules(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	lib := gittest.Init(t)
	gittest.Write(t, lib, "l.txt", "lib\n")
	gittest.CommitAll(t, lib, "lib")
	up := commitFixture(t)
	gittest.Git(t, up, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "mod")
	gittest.Git(t, up, "commit", "-q", "-m", "add mod")
	src := filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, filepath.Dir(src), "clone", "-q", up, src)

	c := create(t, m, CreateOptions{Cwd: src})
	wt := c.Worktree.Path
	gittest.Write(t, wt, "sub/b.txt", "edited\n")
	gittest.Git(t, wt, "update-index", "--add", "--cacheinfo", "160000,"+headOf(t, src)+",staged-mod")
	want, wantDirs := stateOf(t, wt), foldersOf(t, wt)
	if !slices.Contains(wantDirs, "mod") {
		t.Fatalf("the new worktree has no mod folder: %v", wantDirs)
	}
	if _, err := m.Delete(ctx, wt, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Restore(ctx, wt); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if diff := cmp.Diff(want, stateOf(t, wt)); diff != "" {
		t.Errorf("restored worktree (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDirs, foldersOf(t, wt)); diff != "" {
		t.Errorf("restored folders (-want +got):\n%s", diff)
	}
	if ents, err := os.ReadDir(filepath.Join(wt, "mod")); err != nil || len(ents) != 0 {
		t.Errorf("mod in the restored worktree: %v entries, %v; want an empty folder", len(ents), err)
	}
}

func TestRestoreErrors(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)

	live := create(t, m, CreateOptions{Cwd: src})
	if _, err := m.Restore(ctx, live.Worktree.Path); !errors.Is(err, ErrNotDeleted) {
		t.Errorf("Restore of a live worktree: %v, want ErrNotDeleted", err)
	}
	if _, err := m.Restore(ctx, src); !isParam("path")(err) {
		t.Errorf("Restore of the main checkout: %v, want ParamError path", err)
	}

	// Removed by the user with git: deleted without a snapshot.
	gone := create(t, m, CreateOptions{Cwd: src})
	gittest.Git(t, src, "worktree", "remove", "--force", gone.Worktree.Path)
	d, err := m.Delete(ctx, gone.Worktree.Path, DeleteOptions{})
	if err != nil || d.Snapshot != "" {
		t.Fatalf("Delete of a vanished worktree = %+v, %v", d, err)
	}
	if _, err := m.Restore(ctx, gone.Worktree.Path); !isConflict(ReasonWorktreeMissing)(err) {
		t.Errorf("Restore without a snapshot: %v, want worktreeMissing", err)
	}

	// A snapshot ref deleted behind our back.
	lost := create(t, m, CreateOptions{Cwd: src})
	d, err = m.Delete(ctx, lost.Worktree.Path, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "update-ref", "-d", d.Snapshot)
	if _, err := m.Restore(ctx, lost.Worktree.Path); !isConflict(ReasonWorktreeMissing)(err) {
		t.Errorf("Restore with its ref gone: %v, want worktreeMissing", err)
	}
}

// A restore that fails half-way leaves the worktree deleted with its
// snapshot, and can be retried.
func TestRestoreFailureLeavesDeleted(t *testing.T) {
	t.Parallel()
	m, src, c := newCreated(t)
	gittest.Write(t, c.Worktree.Path, "work.txt", "work\n")
	d, err := m.Delete(ctx, c.Worktree.Path, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list := worktreeList(t, src)
	m.step = func(name string) error {
		if name == "populated" {
			return errors.New("injected")
		}
		return nil
	}
	if _, err := m.Restore(ctx, c.Worktree.Path); err == nil {
		t.Fatal("Restore succeeded")
	}
	if got := worktreeList(t, src); got != list {
		t.Errorf("worktree list changed:\n%s", got)
	}
	if _, err := os.Lstat(c.Worktree.Path); !os.IsNotExist(err) {
		t.Errorf("directory left: %v", err)
	}
	if w, _, _ := m.Registry().Get(c.Worktree.Path); !w.Deleted || w.Snapshot != d.Snapshot {
		t.Errorf("registry = %+v", w)
	}
	m.step = nil
	if _, err := m.Restore(ctx, c.Worktree.Path); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Read(t, c.Worktree.Path, "work.txt"); got != "work\n" {
		t.Errorf("work.txt = %q", got)
	}
}

// C32: a snapshot keeps the index and the working files apart, so a
// partially staged file and an unstaged new file come back as they were
// (`MM a.txt`, `?? notes.txt`), not all staged.
func TestCaseC32_RestoreKeepsPartialStaging(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := gittest.Init(t)
	var lines []string
	for i := 1; i <= 20; i++ {
		lines = append(lines, strconv.Itoa(i))
	}
	gittest.Write(t, src, "a.txt", strings.Join(lines, "\n")+"\n")
	gittest.Write(t, src, "b.txt", "b\n")
	gittest.CommitAll(t, src, "init")
	wt := create(t, m, CreateOptions{Cwd: src}).Worktree.Path
	staged := slices.Clone(lines)
	staged[1] = "TWO"
	gittest.Write(t, wt, "a.txt", strings.Join(staged, "\n")+"\n")
	gittest.Git(t, wt, "add", "a.txt")
	staged[18] = "NINETEEN"
	gittest.Write(t, wt, "a.txt", strings.Join(staged, "\n")+"\n")
	gittest.Write(t, wt, "notes.txt", "scratch\n")
	if got := gittest.Git(t, wt, "status", "--short"); got != "MM a.txt\n?? notes.txt\n" {
		t.Fatalf("fixture status %q", got)
	}
	want := stateOf(t, wt)
	if _, err := m.Delete(ctx, wt, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Restore(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, wt, "status", "--short"); got != "MM a.txt\n?? notes.txt\n" {
		t.Errorf("status after restore %q, want %q", got, "MM a.txt\n?? notes.txt\n")
	}
	if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
		t.Errorf("state after restore (-got +want):\n%s", diff)
	}
}
