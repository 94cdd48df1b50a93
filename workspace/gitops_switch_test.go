package workspace

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

// testOplog is an operation log in a fresh folder.
func testOplog(t testing.TB) *gitstate.Oplog {
	t.Helper()
	return &gitstate.Oplog{Dir: t.TempDir()}
}

// swapRepo has main and other differing in every way a switch writes:
// a changed file, deleted and added ones, a file on main that is a
// folder on other (x -> x/y) and the reverse (d/z -> d), a symlink that
// is a folder on other (s -> s/inside.txt), a symlink retargeted, an
// executable bit, and n files under f/ changed; keep.txt and keep2.txt
// are the same on both. main ignores *.o.
func swapRepo(t testing.TB, n int) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, ".gitignore", "*.o\n")
	gittest.Write(t, dir, "keep.txt", "keep\n")
	gittest.Write(t, dir, "keep2.txt", "keep2\n")
	gittest.Write(t, dir, "mod.txt", "main\n")
	gittest.Write(t, dir, "del.txt", "only on main\n")
	gittest.Write(t, dir, "x", "x is a file on main\n")
	gittest.Write(t, dir, "d/z", "d is a folder on main\n")
	gittest.WriteMode(t, dir, "run.sh", "echo run\n", 0o644)
	if err := os.Symlink("keep.txt", filepath.Join(dir, "ln")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("keep.txt", filepath.Join(dir, "s")); err != nil { // a folder on other
		t.Fatal(err)
	}
	gittest.Write(t, dir, "gone/both.txt", "deleted on other\n")
	for i := range n {
		gittest.Write(t, dir, fmt.Sprintf("f/%03d.txt", i), fmt.Sprintf("file %d on main\n", i))
	}
	gittest.CommitAll(t, dir, "main")
	gittest.Git(t, dir, "checkout", "-q", "-b", "other")
	gittest.Write(t, dir, "mod.txt", "other\n")
	gittest.Git(t, dir, "rm", "-q", "del.txt", "x", "d/z", "s", "gone/both.txt")
	gittest.Write(t, dir, "s/inside.txt", "s is a folder on other\n")
	gittest.Write(t, dir, "add.txt", "only on other\n")
	gittest.Write(t, dir, "x/y", "x is a folder on other\n")
	gittest.Write(t, dir, "d", "d is a file on other\n")
	gittest.WriteMode(t, dir, "run.sh", "echo run\n", 0o755)
	os.Remove(filepath.Join(dir, "ln"))
	if err := os.Symlink("keep2.txt", filepath.Join(dir, "ln")); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		gittest.Write(t, dir, fmt.Sprintf("f/%03d.txt", i), fmt.Sprintf("file %d on other\n", i))
	}
	gittest.CommitAll(t, dir, "other")
	gittest.Git(t, dir, "checkout", "-q", "main")
	return dir
}

// switchState is what a switch may change: where HEAD points, the index
// entries, status with untracked and ignored files, and every file of the
// work tree (content, or link target, and executable bit).
func switchState(t testing.TB, dir string) map[string]string {
	t.Helper()
	head, _ := gittest.Run(dir, nil, "symbolic-ref", "-q", "HEAD")
	s := map[string]string{
		"HEAD":   head + " " + revParseTB(t, dir, "HEAD"),
		"index":  gittest.Git(t, dir, "ls-files", "-s"),
		"status": gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all", "--ignored"),
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			s["file:"+rel] = "-> " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			s["file:"+rel] = fmt.Sprintf("%v %s", fi.Mode().Perm()&0o100 != 0, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func revParseTB(t testing.TB, dir, rev string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", rev))
}

// BranchSwitch leaves the checkout exactly as `git switch` does, carrying
// the local changes git carries, and refuses where git refuses, changing
// nothing then.
func TestBranchSwitchLikeGit(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	template := swapRepo(t, 5)
	tests := []struct {
		name   string
		local  func(dir string)
		refuse []string // the paths of a localChanges refusal
		// stricter: git switch does not refuse.
		stricter bool
		// absorbed: the local change is the branch's own, so switching
		// back does not bring it back (with git as well).
		absorbed bool
		// oneWay: switching back is refused (by git as well).
		oneWay bool
	}{
		{name: "clean", local: func(string) {}},
		{name: "unrelated changes carried", local: func(dir string) {
			gittest.Write(t, dir, "keep.txt", "edited, unstaged\n")
			gittest.Write(t, dir, "keep2.txt", "edited, staged\n")
			gittest.Git(t, dir, "add", "keep2.txt")
			gittest.Write(t, dir, "keep2.txt", "edited, staged, then again\n")
			gittest.Write(t, dir, "notes.txt", "untracked\n")
			gittest.Write(t, dir, "build.o", "ignored\n")
			gittest.Write(t, dir, "new.txt", "staged new\n")
			gittest.Git(t, dir, "add", "new.txt")
		}},
		{name: "changed file the branch changes", local: func(dir string) {
			gittest.Write(t, dir, "mod.txt", "mine\n")
		}, refuse: []string{"mod.txt"}},
		{name: "staged change the branch changes", local: func(dir string) {
			gittest.Write(t, dir, "f/001.txt", "mine\n")
			gittest.Git(t, dir, "add", "f/001.txt")
			gittest.Write(t, dir, "f/001.txt", "file 1 on main\n")
		}, refuse: []string{"f/001.txt"}},
		// git switch puts the branch's file where a deleted one was; the
		// deletion is a local change, so knightcode refuses.
		{name: "deleted file the branch changes", local: func(dir string) {
			os.Remove(filepath.Join(dir, "mod.txt"))
		}, refuse: []string{"mod.txt"}, stricter: true},
		{name: "already as the branch has it", local: func(dir string) {
			gittest.Write(t, dir, "mod.txt", "other\n")
			gittest.Git(t, dir, "add", "mod.txt")
		}, absorbed: true},
		{name: "executable bit changed", local: func(dir string) {
			if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, refuse: []string{"run.sh"}},
		// git ignores the assume-unchanged bit before overwriting a file.
		{name: "assume-unchanged file the branch changes", local: func(dir string) {
			gittest.Git(t, dir, "update-index", "--assume-unchanged", "mod.txt")
			gittest.Write(t, dir, "mod.txt", "mine, hidden from status\n")
		}, refuse: []string{"mod.txt"}},
		{name: "staged as the branch has it, then edited", local: func(dir string) {
			gittest.Write(t, dir, "mod.txt", "other\n")
			gittest.Git(t, dir, "add", "mod.txt")
			gittest.Write(t, dir, "mod.txt", "other, and edited\n")
		}, oneWay: true},
		{name: "deleted here, deleted on the branch", local: func(dir string) {
			os.Remove(filepath.Join(dir, "gone", "both.txt"))
		}, absorbed: true},
		{name: "empty folder in a folder the branch replaces by a file", local: func(dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "d", "empty", "deeper"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, absorbed: true},
		{name: "executable bit of an unrelated file changed", local: func(dir string) {
			if err := os.Chmod(filepath.Join(dir, "keep.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours, theirs := gittest.CopyCheckout(t, template), gittest.CopyCheckout(t, template)
			tt.local(ours)
			tt.local(theirs)
			before := switchState(t, ours)
			err := BranchSwitch(ctx, git, testOplog(t), ours, "other")
			_, gitErr := gittest.Run(theirs, nil, "switch", "-q", "other")
			if tt.refuse != nil {
				ce := asConflict(t, err, ReasonLocalChanges)
				if diff := cmp.Diff(tt.refuse, ce.Paths); diff != "" {
					t.Errorf("paths (-want +got):\n%s", diff)
				}
				if (gitErr == nil) != tt.stricter {
					t.Errorf("git switch: %v", gitErr)
				}
				if diff := cmp.Diff(before, switchState(t, ours)); diff != "" {
					t.Errorf("a refused switch changed the checkout (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil || gitErr != nil {
				t.Fatalf("ours: %v; git switch: %v", err, gitErr)
			}
			if diff := cmp.Diff(switchState(t, theirs), switchState(t, ours)); diff != "" {
				t.Errorf("state (-git switch +BranchSwitch):\n%s", diff)
			}
			if tt.oneWay {
				return
			}
			// And back.
			if err := BranchSwitch(ctx, git, testOplog(t), ours, "main"); err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, theirs, "switch", "-q", "main")
			if diff := cmp.Diff(switchState(t, theirs), switchState(t, ours)); diff != "" {
				t.Errorf("back on main (-git switch +BranchSwitch):\n%s", diff)
			}
			if diff := cmp.Diff(before, switchState(t, ours)); diff != "" && !tt.absorbed {
				t.Errorf("there and back (-before +after):\n%s", diff)
			}
		})
	}
}

// Where git would delete the user's files to put a branch's file in
// place (ignored files in a folder the branch has as a file), the switch
// refuses; untracked ones are refused as git refuses them.
func TestBranchSwitchKeepsFilesInAFolderTheBranchReplaces(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	template := swapRepo(t, 1)
	for _, p := range []string{"d/cache.o", "d/notes.txt"} {
		t.Run(p, func(t *testing.T) {
			dir := gittest.CopyCheckout(t, template)
			gittest.Write(t, dir, p, "mine\n")
			before := switchState(t, dir)
			ce := asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "other"), ReasonLocalChanges)
			if !slices.Contains(ce.Paths, "d") {
				t.Errorf("paths %v, want d", ce.Paths)
			}
			if diff := cmp.Diff(before, switchState(t, dir)); diff != "" {
				t.Errorf("changed (-before +after):\n%s", diff)
			}
		})
	}
}

// The switch is git's own to the user: `git switch -` goes back, the
// recovery point exists under refs/knightcode/oplog/, nothing is left in
// the operation log, and a branch checked out in another worktree is
// refused as branchExists.
func TestBranchSwitchRefsAndRecoveryPoint(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := swapRepo(t, 2)
	o := testOplog(t)
	if err := BranchSwitch(ctx, git, o, dir, "other"); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, dir, "reflog", "-1", "--format=%gs", "HEAD"); got != "checkout: moving from main to other\n" {
		t.Errorf("reflog %q", got)
	}
	gittest.Git(t, dir, "switch", "-q", "-")
	if got := strings.TrimSpace(gittest.Git(t, dir, "branch", "--show-current")); got != "main" {
		t.Errorf("git switch - went to %q", got)
	}
	if refs := gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", gitstate.OplogRefPrefix); refs == "" {
		t.Error("no recovery point")
	}
	if ents, _ := os.ReadDir(o.Dir); len(ents) > 0 {
		t.Errorf("operation log left %d entries", len(ents))
	}
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", wt, "other")
	ce := asConflict(t, BranchSwitch(ctx, git, o, dir, "other"), ReasonBranchExists)
	if !slices.Equal(ce.Paths, []string{"refs/heads/other"}) {
		t.Errorf("paths %v", ce.Paths)
	}
}

// A switch killed at any step of its journal (kill -9 of the process)
// is, after the recovery a server runs at start, exactly the state before
// or after it, with the carried local changes intact and nothing left
// behind. A crash matrix (gittest.CrashMatrix).
func TestBranchSwitchKilledMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	git := newRunner(t)
	template := swapRepo(t, 40)
	gittest.Write(t, template, "keep.txt", "carried, unstaged\n")
	gittest.Write(t, template, "notes.txt", "untracked\n")
	gittest.Write(t, template, "keep2.txt", "carried, staged\n")
	gittest.Git(t, template, "add", "keep2.txt")
	before := switchState(t, template)
	var after map[string]string
	{
		dir := gittest.CopyCheckout(t, template)
		if err := BranchSwitch(ctx, git, testOplog(t), dir, "other"); err != nil {
			t.Fatal(err)
		}
		after = switchState(t, dir)
	}
	cases := []string{"recorded#1", "remove#1", "remove#3", "checkout#1", "checkout#20", "checkout#44",
		"index#1", "index-locked#1", "ref#1", "done#1"}
	timed := []time.Duration{40 * time.Millisecond, 150 * time.Millisecond}
	for i := range len(cases) + len(timed) {
		name := ""
		var delay time.Duration
		if i < len(cases) {
			name = cases[i]
		} else {
			delay = timed[i-len(cases)]
			name = "after" + delay.String()
		}
		t.Run(name, func(t *testing.T) {
			dir := gittest.CopyCheckout(t, template)
			oplogDir := t.TempDir()
			step := ""
			if delay == 0 {
				step = name
			}
			runCrashChild(t, "switch", dir, oplogDir, step, delay)
			o := &gitstate.Oplog{Dir: oplogDir}
			if _, err := o.Recover(ctx, git, ""); err != nil {
				t.Fatal(err)
			}
			got := switchState(t, dir)
			if !cmp.Equal(got, before) && !cmp.Equal(got, after) {
				t.Fatalf("neither before nor after:\nvs before (-got +want):\n%s\nvs after (-got +want):\n%s",
					cmp.Diff(got, before), cmp.Diff(got, after))
			}
			left := gittest.OplogLeftovers(dir, oplogDir)
			if len(left) > 0 {
				t.Errorf("leftovers: %v", left)
			}
		})
	}
}

// A checkout on another file system than the operation log (a second
// disk, tmpfs) switches and commits as on one: the journal's index
// cannot be hard-linked as index.lock there, so it is copied into the
// lock git's way.
func TestJournaledActionsAcrossFileSystems(t *testing.T) {
	t.Parallel()
	shm := "/dev/shm"
	var a, b syscall.Stat_t
	if syscall.Stat(shm, &a) != nil || syscall.Stat(t.TempDir(), &b) != nil || a.Dev == b.Dev {
		t.Skip("no second file system (/dev/shm) here")
	}
	base, err := os.MkdirTemp(shm, "knightcode-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	git := newRunner(t)
	dir := filepath.Join(base, "repo")
	if err := os.CopyFS(dir, os.DirFS(swapRepo(t, 3))); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "update-index", "-q", "--refresh")
	o := testOplog(t)
	if err := BranchSwitch(ctx, git, o, dir, "other"); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "keep.txt", "edited\n")
	if _, err := Commit(ctx, git, o, dir, "edit\n", true, ""); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after the commit: %q", st)
	}
	if left := gittest.OplogLeftovers(dir, o.Dir); len(left) > 0 {
		t.Errorf("leftovers: %v", left)
	}
}

// A submodule that is not initialized is an empty folder: git/branch/switch
// makes it where the branch adds the gitlink and removes it where the
// gitlink goes, and an empty folder left where a branch puts a gitlink or
// a file is no untracked work to refuse over, all as `git switch` does
// (issue 22 item 6).
func TestBranchSwitchUninitializedSubmodule(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	template := gittest.Init(t)
	gittest.Write(t, template, "a.txt", "a\n")
	gittest.CommitAll(t, template, "A")
	gittest.Git(t, template, "checkout", "-q", "-b", "sub")
	gittest.Git(t, template, "update-index", "--add", "--cacheinfo", "160000,"+headOf(t, template)+",mod")
	gittest.Write(t, template, "file-here", "a file on sub\n")
	gittest.Git(t, template, "add", "file-here")
	gittest.Git(t, template, "commit", "-q", "-m", "B: a gitlink, and a file")
	gittest.Git(t, template, "checkout", "-q", "main")
	if _, err := os.Lstat(filepath.Join(template, "mod")); err == nil {
		t.Fatal("mod is still there on main")
	}
	for _, tt := range []struct {
		name  string
		local func(dir string)
	}{
		{"clean", func(string) {}},
		{"empty folders left where the branch writes", func(dir string) {
			for _, d := range []string{"mod/empty/deeper", "file-here/x"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ours, theirs := gittest.CopyCheckout(t, template), gittest.CopyCheckout(t, template)
			tt.local(ours)
			tt.local(theirs)
			for _, branch := range []string{"sub", "main"} {
				err := BranchSwitch(ctx, git, testOplog(t), ours, branch)
				gittest.Git(t, theirs, "switch", "-q", branch)
				if err != nil {
					t.Fatalf("switch to %s: %v", branch, err)
				}
				if diff := cmp.Diff(switchState(t, theirs), switchState(t, ours)); diff != "" {
					t.Errorf("on %s (-git switch +BranchSwitch):\n%s", branch, diff)
				}
				if diff := cmp.Diff(foldersOf(t, theirs), foldersOf(t, ours)); diff != "" {
					t.Errorf("folders on %s (-git switch +BranchSwitch):\n%s", branch, diff)
				}
			}
			if _, err := os.Lstat(filepath.Join(ours, "mod")); err == nil && tt.name == "clean" {
				t.Errorf("mod left behind on main") // git leaves the one with folders in it
			}
		})
	}
}

// foldersOf lists the folders of the work tree dir (its .git left out).
func foldersOf(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a linked worktree's .git file
		}
		if d.IsDir() && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
