package handoff

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// submoduleClone makes a repository whose commit A has no submodule and
// whose commit B (main's tip) adds the submodule mod, and returns a plain
// clone of it (mod not initialized: an empty folder, as after `git
// clone` without --recurse-submodules) with A's id.
func submoduleClone(t *testing.T) (clone, a string) {
	t.Helper()
	lib := gittest.Init(t)
	gittest.Write(t, lib, "l.txt", "lib\n")
	gittest.CommitAll(t, lib, "lib")
	up := commitFixture(t)
	a = head(t, up)
	gittest.Git(t, up, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "mod")
	gittest.Git(t, up, "commit", "-q", "-m", "add mod")
	clone = filepath.Join(t.TempDir(), "clone")
	gittest.Git(t, filepath.Dir(clone), "clone", "-q", up, clone)
	clone, err := filepath.EvalSymlinks(clone)
	if err != nil {
		t.Fatal(err)
	}
	if !isEmptyDir(t, clone, "mod") {
		t.Fatal("the clone's mod is not an empty folder")
	}
	return clone, a
}

// isEmptyDir reports whether dir/p is an empty folder; absent is false.
func isEmptyDir(t *testing.T, dir, p string) bool {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, p))
	return err == nil && len(ents) == 0
}

// A submodule that is not initialized is an empty folder, which holds no
// work: handoffs between checkouts at commits with and without its
// gitlink go through (issue 22 item 6: the worktree at the commit with the
// gitlink refused the handoff of the main checkout at the commit without
// it, naming the empty folder as an untracked file in the way), and the
// folder is there exactly where git puts it: the worktree leaves the
// gitlink's empty folder behind when its gitlink goes, as git removes it.
func TestHandoffAcrossAnUninitializedSubmodule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	main, a := submoduleClone(t)
	b := head(t, main)
	wt := e.newWorktree(t, main)
	if !isEmptyDir(t, wt, "mod") {
		t.Fatalf("the new worktree at B has no empty mod folder")
	}
	roundTrip := func(at, edit string, wantMod bool) {
		t.Helper()
		gittest.Git(t, main, "checkout", "-q", "-f", "--detach", at)
		gittest.Write(t, main, "README.md", edit)
		want := stateOf(t, main)
		if _, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: main, Worktree: wt, ThreadID: "T1"}); err != nil {
			t.Fatalf("to the worktree at %s: %v", at, err)
		}
		wantState(t, "worktree after the handoff", want, wt)
		if got := isEmptyDir(t, wt, "mod"); got != wantMod {
			t.Errorf("worktree at %s: empty mod folder %v, want %v", at, got, wantMod)
		}
		if _, err := os.Lstat(filepath.Join(wt, "mod")); !wantMod && err == nil {
			t.Errorf("worktree at %s: mod left behind", at)
		}
		if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1"}); err != nil {
			t.Fatalf("back from the worktree at %s: %v", at, err)
		}
		wantState(t, "main checkout after the way back", want, main)
		if st := stateOf(t, wt); st.Status != "" || st.Diff != "" || st.Cached != "" {
			t.Errorf("worktree not clean: %+v", st)
		}
	}
	roundTrip(b, "edit at B\n", true)
	roundTrip(a, "edit at A\n", false) // refused before: mod in the way
	roundTrip(b, "edit at B again\n", true)
	roundTrip(a, "edit at A again\n", false)
	e.noJournals(t)
}

// A folder that holds no file, left where a handoff writes (by an older
// handoff that did not remove a gitlink's folder, or by a tool), is not
// untracked work: a gitlink keeps it, a file replaces it, and a handoff of
// its dry run is not refused over it.
func TestHandoffOverAnEmptyFolderLeftBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	main, a := submoduleClone(t)
	wt := e.newWorktree(t, main)
	gittest.Git(t, wt, "checkout", "-q", "--detach", a)
	for _, d := range []string{"mod/empty/deeper", "file-here/x"} {
		if err := os.MkdirAll(filepath.Join(wt, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// toWorktree hands main's changes to wt, its dry run first, and
	// checks that wt holds them, at main's HEAD.
	toWorktree := func(what string) {
		t.Helper()
		want, at := stateOf(t, main), head(t, main)
		o := Options{To: ToWorktree, Cwd: main, Worktree: wt, ThreadID: "T1"}
		if _, err := e.h.Plan(ctx, o); err != nil {
			t.Fatalf("dry run %s: %v", what, err)
		}
		if _, err := e.h.Run(ctx, o); err != nil {
			t.Fatalf("handoff %s: %v", what, err)
		}
		if diff := cmp.Diff(want, stateOf(t, wt)); diff != "" || head(t, wt) != at {
			t.Errorf("worktree after the handoff %s, HEAD %s want %s (-want +got):\n%s", what, head(t, wt), at, diff)
		}
	}

	// The main checkout at B with an edit: the gitlink goes where the
	// empty folder is.
	gittest.Write(t, main, "README.md", "edit at B\n")
	toWorktree("where a gitlink goes")
	if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1"}); err != nil {
		t.Fatal(err)
	}

	// A commit where a file takes the empty folder's place: the handoff
	// writes it there.
	gittest.Git(t, main, "checkout", "-q", "--", "README.md")
	gittest.Write(t, main, "file-here", "a file\n")
	gittest.Git(t, main, "add", "file-here")
	gittest.Git(t, main, "commit", "-q", "-m", "a file where the worktree has an empty folder")
	gittest.Write(t, main, "file-here", "edited\n")
	toWorktree("where a file goes")
	e.noJournals(t)
}
