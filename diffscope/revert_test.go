package diffscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// Helpers of the action tests (revert, stage, unstage) start with "act".

// actRepo makes a repository holding files (path -> content) in one commit.
func actRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := gittest.Init(t)
	for p, c := range files {
		gittest.Write(t, dir, p, c)
	}
	gittest.CommitAll(t, dir, "init")
	return dir
}

// actStatus is `git status --porcelain` (untracked files listed one by one).
func actStatus(t testing.TB, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "-c", "core.quotePath=false", "status", "--porcelain", "--untracked-files=all")
}

// actShow is the content of rev (e.g. ":f" for the index, "HEAD:f").
func actShow(t testing.TB, dir, rev string) string {
	t.Helper()
	return gittest.Git(t, dir, "cat-file", "blob", rev)
}

// actHunk reads scope at context (nil: 3) and returns file path and its
// hunk i (i < 0: the file only).
func actHunk(t testing.TB, d *Differ, dir string, opts ReadOptions, path string, i int) (File, Hunk) {
	t.Helper()
	if opts.Budget == 0 {
		opts.Budget = -1
	}
	f := fileByPath(t, mustRead(t, d, dir, opts), path)
	if i < 0 {
		return f, Hunk{}
	}
	if i >= len(f.Hunks) {
		t.Fatalf("%s has %d hunks, want hunk %d", path, len(f.Hunks), i)
	}
	return f, f.Hunks[i]
}

// actConflict fails the test unless err is a *ConflictError with reason.
func actConflict(t testing.TB, err error, reason string) *ConflictError {
	t.Helper()
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != reason {
		t.Fatalf("err = %v, want a %s conflict", err, reason)
	}
	return ce
}

// actParam fails the test unless err is a *ParamError for field.
func actParam(t testing.TB, err error, field string) {
	t.Helper()
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != field {
		t.Fatalf("err = %v, want an invalid %q", err, field)
	}
}

// actFiles returns the bytes of paths in dir ("<absent>" for a missing one,
// "-> target" for a symlink, with the permission bits).
func actFiles(t testing.TB, dir string, paths ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range paths {
		full := filepath.Join(dir, p)
		fi, err := os.Lstat(full)
		switch {
		case os.IsNotExist(err):
			m[p] = "<absent>"
		case err != nil:
			t.Fatal(err)
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(full)
			m[p] = "-> " + target
		default:
			b, err := os.ReadFile(full)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = fmt.Sprintf("%o %q", fi.Mode().Perm(), b)
		}
	}
	return m
}

func actRevert(t testing.TB, d *Differ, dir string, opts RevertOptions) []string {
	t.Helper()
	got, err := d.Revert(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Revert(%+v): %v", opts, err)
	}
	return got
}

func TestRevertHunkUnstagedTouchesOnlyTheWorktree(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": actLines(1, 30)})
	gittest.Write(t, dir, "f.txt", strings.Replace(strings.Replace(actLines(1, 30), "3\n", "three\n", 1), "27\n", "twenty-seven\n", 1))
	d := newDiffer(t)
	ageIndex(t, dir)
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
	check := guard(t, dir)
	got := actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: "f.txt", HunkID: h.ID})
	check() // .git/index byte-identical, same mtime
	if diff := cmp.Diff(got, []string{"f.txt"}); diff != "" {
		t.Errorf("paths (-got +want):\n%s", diff)
	}
	if got, want := gittest.Read(t, dir, "f.txt"), strings.Replace(actLines(1, 30), "27\n", "twenty-seven\n", 1); got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
}

func TestRevertWholeFilesUnstagedLeaveIndex(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", "bin": "x\x00y"})
	gittest.Write(t, dir, "a.txt", "A staged\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Write(t, dir, "a.txt", "A unstaged\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	gittest.Write(t, dir, "bin", "x\x00z")
	gittest.Write(t, dir, "sub/dir/new.txt", "untracked\n")
	d := newDiffer(t)
	ageIndex(t, dir)
	check := guard(t, dir)
	got := actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}})
	check()
	if diff := cmp.Diff(got, []string{"a.txt", "bin", "gone.txt", "sub/dir/new.txt"}); diff != "" {
		t.Errorf("paths (-got +want):\n%s", diff)
	}
	want := map[string]string{"a.txt": `644 "A staged\n"`, "gone.txt": `644 "g\n"`, "bin": `644 "x\x00y"`, "sub/dir/new.txt": "<absent>", "sub": "<absent>"}
	if diff := cmp.Diff(actFiles(t, dir, "a.txt", "gone.txt", "bin", "sub/dir/new.txt", "sub"), want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if got, want := actStatus(t, dir), "M  a.txt\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestRevertWholeScopeUncommittedRestoresHEAD(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", "bin": "x\x00y", "run.sh": "echo\n", "link": "a"})
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	gittest.CommitAll(t, dir, "symlink")
	gittest.Write(t, dir, "a.txt", "A staged\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Write(t, dir, "a.txt", "A unstaged\n")
	gittest.Git(t, dir, "rm", "-q", "gone.txt")
	gittest.Write(t, dir, "bin", "x\x00z")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("gone.txt", filepath.Join(dir, "link"))
	gittest.Write(t, dir, "staged-new.txt", "n\n")
	gittest.Git(t, dir, "add", "staged-new.txt")
	gittest.Write(t, dir, "ita.txt", "i\n")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	gittest.Write(t, dir, "untracked.txt", "u\n")
	d := newDiffer(t)
	got := actRevert(t, d, dir, RevertOptions{})
	want := []string{"a.txt", "bin", "gone.txt", "ita.txt", "link", "run.sh", "staged-new.txt", "untracked.txt"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("paths (-got +want):\n%s", diff)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status after reverting everything = %q, want clean", got)
	}
	wantFiles := map[string]string{"a.txt": `644 "a\n"`, "gone.txt": `644 "g\n"`, "bin": `644 "x\x00y"`, "run.sh": `644 "echo\n"`,
		"link": "-> a.txt", "staged-new.txt": "<absent>", "ita.txt": "<absent>", "untracked.txt": "<absent>"}
	if diff := cmp.Diff(actFiles(t, dir, sortedKeys(wantFiles)...), wantFiles); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
}

func TestRevertAddedUntrackedFileDeletesIt(t *testing.T) {
	dir := actRepo(t, map[string]string{"keep.txt": "k\n"})
	gittest.Write(t, dir, "new/deep/n.txt", "n\n")
	gittest.Write(t, dir, "new/other.txt", "o\n")
	d := newDiffer(t)
	for _, scope := range []Scope{ScopeUnstaged, ScopeUncommitted} {
		gittest.Write(t, dir, "new/deep/n.txt", "n\n")
		f, _ := actHunk(t, d, dir, ReadOptions{Scope: scope}, "new/deep/n.txt", -1)
		got := actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: scope}, HunkID: f.ID})
		if diff := cmp.Diff(got, []string{"new/deep/n.txt"}); diff != "" {
			t.Errorf("%s: paths (-got +want):\n%s", scope, diff)
		}
		wantFiles := map[string]string{"new/deep/n.txt": "<absent>", "new/deep": "<absent>", "new/other.txt": `644 "o\n"`}
		if diff := cmp.Diff(actFiles(t, dir, "new/deep/n.txt", "new/deep", "new/other.txt"), wantFiles); diff != "" {
			t.Errorf("%s: files (-got +want):\n%s", scope, diff)
		}
	}
}

func TestRevertAddedFileUncommittedLeavesNoIndexEntry(t *testing.T) {
	dir := actRepo(t, map[string]string{"keep.txt": "k\n"})
	gittest.Write(t, dir, "staged.txt", "s\n")
	gittest.Write(t, dir, "ita.txt", "i\n")
	gittest.Git(t, dir, "add", "staged.txt")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	d := newDiffer(t)
	for _, p := range []string{"staged.txt", "ita.txt"} {
		actRevert(t, d, dir, RevertOptions{Path: p})
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}

func TestRevertIntentToAddUnstagedRemovesPlaceholder(t *testing.T) {
	dir := actRepo(t, map[string]string{"keep.txt": "k\n"})
	gittest.Write(t, dir, "ita.txt", "i\n")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	d := newDiffer(t)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: "ita.txt"})
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean (no intent-to-add entry for a deleted file)", got)
	}
}

func TestRevertRenameWhole(t *testing.T) {
	body := actLines(1, 40)
	dir := actRepo(t, map[string]string{"old.txt": body})
	gittest.Git(t, dir, "mv", "old.txt", "new.txt")
	gittest.Write(t, dir, "new.txt", strings.Replace(body, "20\n", "twenty\n", 1))
	d := newDiffer(t)
	f, _ := actHunk(t, d, dir, ReadOptions{}, "new.txt", -1)
	if f.Status != "renamed" || len(f.Hunks) != 1 {
		t.Fatalf("new.txt read as %s with %d hunks, want renamed with 1", f.Status, len(f.Hunks))
	}
	_, err := d.Revert(context.Background(), dir, RevertOptions{HunkID: f.Hunks[0].ID})
	actParam(t, err, "hunkId")
	got := actRevert(t, d, dir, RevertOptions{Path: "old.txt"}) // the old path names the rename too
	if diff := cmp.Diff(got, []string{"new.txt", "old.txt"}); diff != "" {
		t.Errorf("paths (-got +want):\n%s", diff)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
	if got := gittest.Read(t, dir, "old.txt"); got != body {
		t.Errorf("old.txt = %q", got)
	}
}

func TestRevertModeOnlyAndSymlinkByFileID(t *testing.T) {
	dir := actRepo(t, map[string]string{"run.sh": "echo\n"})
	os.Symlink("run.sh", filepath.Join(dir, "link"))
	gittest.CommitAll(t, dir, "link")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("elsewhere", filepath.Join(dir, "link"))
	d := newDiffer(t)
	for _, p := range []string{"run.sh", "link"} {
		f, _ := actHunk(t, d, dir, ReadOptions{}, p, -1)
		if p == "link" && len(f.Hunks) > 0 {
			_, err := d.Revert(context.Background(), dir, RevertOptions{Path: p, HunkID: f.Hunks[0].ID})
			actParam(t, err, "hunkId")
		}
		actRevert(t, d, dir, RevertOptions{Path: p, HunkID: f.ID})
	}
	want := map[string]string{"run.sh": `644 "echo\n"`, "link": "-> run.sh"}
	if diff := cmp.Diff(actFiles(t, dir, "run.sh", "link"), want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}

func TestRevertRefusals(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": actLines(1, 20), "bin": "a\x00b", "del.txt": "d\n", "m.txt": actLines(1, 20)})
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 20), "5\n", "five\n", 1))
	gittest.Write(t, dir, "new.txt", "n\n")
	os.Remove(filepath.Join(dir, "del.txt"))
	gittest.WriteMode(t, dir, "m.txt", strings.Replace(actLines(1, 20), "5\n", "five\n", 1), 0o755)
	gittest.Write(t, dir, "bin", "a\x00c")
	d := newDiffer(t)
	_, fh := actHunk(t, d, dir, ReadOptions{}, "f.txt", 0)
	_, nh := actHunk(t, d, dir, ReadOptions{}, "new.txt", 0)
	_, dh := actHunk(t, d, dir, ReadOptions{}, "del.txt", 0)
	_, mh := actHunk(t, d, dir, ReadOptions{}, "m.txt", 0)
	before := actFiles(t, dir, "f.txt", "new.txt", "del.txt", "m.txt", "bin")
	statusBefore := actStatus(t, dir)
	tests := []struct {
		name  string
		opts  RevertOptions
		field string
	}{
		{"staged scope", RevertOptions{ReadOptions: ReadOptions{Scope: ScopeStaged}, Path: "f.txt"}, "scope"},
		{"committed scope", RevertOptions{ReadOptions: ReadOptions{Scope: ScopeCommitted, Commit: "HEAD"}}, "scope"},
		{"path outside the diff", RevertOptions{Path: "other.txt"}, "path"},
		{"hunk with a path outside the diff", RevertOptions{Path: "other.txt", HunkID: fh.ID}, "path"},
		{"hunk of an added file", RevertOptions{HunkID: nh.ID}, "hunkId"},
		{"hunk of a deleted file", RevertOptions{Path: "del.txt", HunkID: dh.ID}, "hunkId"},
		{"hunk of a mode-changed file", RevertOptions{HunkID: mh.ID}, "hunkId"},
		{"hunk id at context 0", RevertOptions{ReadOptions: ReadOptions{Context: intp(0)}, HunkID: fh.ID}, "context"},
		{"negative context", RevertOptions{ReadOptions: ReadOptions{Context: intp(-1)}}, "context"},
		{"reapply outside lastTurn", RevertOptions{Reapply: true}, "reapply"},
		{"unknown scope", RevertOptions{ReadOptions: ReadOptions{Scope: "everything"}}, "scope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Revert(context.Background(), dir, tt.opts)
			actParam(t, err, tt.field)
		})
	}
	if diff := cmp.Diff(actFiles(t, dir, "f.txt", "new.txt", "del.txt", "m.txt", "bin"), before); diff != "" {
		t.Errorf("a refused revert changed files (-got +want):\n%s", diff)
	}
	if got := actStatus(t, dir); got != statusBefore {
		t.Errorf("status %q -> %q after refused reverts", statusBefore, got)
	}
}

func TestRevertStaleHunkIDIsDiffChanged(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": actLines(1, 30)})
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 30), "3\n", "three\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{}, "f.txt", 0)
	// The hunk changes after the read: same place, other text.
	edited := strings.Replace(actLines(1, 30), "3\n", "THREE\n", 1)
	gittest.Write(t, dir, "f.txt", edited)
	for _, opts := range []RevertOptions{{Path: "f.txt", HunkID: h.ID}, {HunkID: h.ID}} {
		_, err := d.Revert(context.Background(), dir, opts)
		ce := actConflict(t, err, ReasonDiffChanged)
		if opts.Path != "" && !cmp.Equal(ce.Paths, []string{"f.txt"}) {
			t.Errorf("conflict paths = %v, want [f.txt]", ce.Paths)
		}
	}
	// Another hunk of the same file changed: this hunk's id changes too
	// (the file's blob ids are in every id of the file).
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 30), "3\n", "three\n", 1))
	_, h = actHunk(t, d, dir, ReadOptions{}, "f.txt", 0)
	gittest.Write(t, dir, "f.txt", strings.Replace(strings.Replace(actLines(1, 30), "3\n", "three\n", 1), "28\n", "x\n", 1))
	_, err := d.Revert(context.Background(), dir, RevertOptions{HunkID: h.ID})
	actConflict(t, err, ReasonDiffChanged)
	// A hunk id read at another context is not the same id.
	_, h5 := actHunk(t, d, dir, ReadOptions{Context: intp(5)}, "f.txt", 0)
	_, err = d.Revert(context.Background(), dir, RevertOptions{HunkID: h5.ID})
	actConflict(t, err, ReasonDiffChanged)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Context: intp(5)}, HunkID: h5.ID})
	if got, want := gittest.Read(t, dir, "f.txt"), strings.Replace(actLines(1, 30), "28\n", "x\n", 1); got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
}

func TestRevertIgnoreWhitespaceIDMatchesNothing(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": actLines(1, 10)})
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 10), "3\n", "three\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{IgnoreWhitespace: true}, "f.txt", 0)
	for _, ro := range []ReadOptions{{}, {IgnoreWhitespace: true}} {
		_, err := d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro, HunkID: h.ID})
		actConflict(t, err, ReasonDiffChanged)
	}
}

func TestRevertHunkIDWithoutPath(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": actLines(1, 10), "b.txt": actLines(1, 10)})
	gittest.Write(t, dir, "a.txt", strings.Replace(actLines(1, 10), "3\n", "three\n", 1))
	gittest.Write(t, dir, "b.txt", strings.Replace(actLines(1, 10), "3\n", "three\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{}, "b.txt", 0)
	if got := actRevert(t, d, dir, RevertOptions{HunkID: h.ID}); !cmp.Equal(got, []string{"b.txt"}) {
		t.Errorf("paths = %v, want [b.txt]", got)
	}
	if got := actStatus(t, dir); got != " M a.txt\n" {
		t.Errorf("status = %q, want only a.txt modified", got)
	}
	// The hunk id of one file given with another file's path is not there.
	_, h = actHunk(t, d, dir, ReadOptions{}, "a.txt", 0)
	gittest.Write(t, dir, "b.txt", strings.Replace(actLines(1, 10), "3\n", "three\n", 1))
	_, err := d.Revert(context.Background(), dir, RevertOptions{Path: "b.txt", HunkID: h.ID})
	actConflict(t, err, ReasonDiffChanged)
}

func TestRevertUncommittedHunkAlsoLeavesNothingStaged(t *testing.T) {
	body := actLines(1, 40)
	dir := actRepo(t, map[string]string{"f.txt": body})
	// Hunk at 5 fully staged; hunk at 20 staged, then edited further;
	// hunk at 35 unstaged only.
	staged := strings.Replace(strings.Replace(body, "5\n", "five\n", 1), "20\n", "twenty\n", 1)
	gittest.Write(t, dir, "f.txt", staged)
	gittest.Git(t, dir, "add", "f.txt")
	work := strings.Replace(strings.Replace(staged, "twenty\n", "TWENTY\n", 1), "35\n", "thirty-five\n", 1)
	gittest.Write(t, dir, "f.txt", work)
	d := newDiffer(t)
	f, _ := actHunk(t, d, dir, ReadOptions{}, "f.txt", -1)
	if len(f.Hunks) != 3 {
		t.Fatalf("%d hunks, want 3", len(f.Hunks))
	}
	for _, i := range []int{1, 0} { // the hunk at 20, then the one at 5
		_, h := actHunk(t, d, dir, ReadOptions{}, "f.txt", i)
		actRevert(t, d, dir, RevertOptions{Path: "f.txt", HunkID: h.ID})
	}
	if got, want := gittest.Read(t, dir, "f.txt"), strings.Replace(body, "35\n", "thirty-five\n", 1); got != want {
		t.Errorf("worktree f.txt = %q, want %q", got, want)
	}
	if got := actShow(t, dir, ":f.txt"); got != body {
		t.Errorf("index f.txt = %q, want HEAD's", got)
	}
}

func TestRevertRollsBackWhenIndexIsLocked(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": actLines(1, 20), "b.txt": "b\n", "c.txt": "c\n"})
	gittest.Write(t, dir, "a.txt", strings.Replace(actLines(1, 20), "3\n", "three\n", 1))
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Write(t, dir, "a.txt", strings.Replace(actLines(1, 20), "3\n", "THREE\n", 1))
	gittest.Write(t, dir, "b.txt", "B\n")
	os.Remove(filepath.Join(dir, "c.txt"))
	gittest.Write(t, dir, "new.txt", "n\n")
	os.Symlink("b.txt", filepath.Join(dir, "ln"))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{}, "a.txt", 0)
	names := []string{"a.txt", "b.txt", "c.txt", "new.txt", "ln"}
	before := actFiles(t, dir, names...)
	status := actStatus(t, dir)
	// Another git process holds the index: the worktree step succeeds,
	// the index step fails, and the worktree must be put back.
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		opts      RevertOptions
		wantPaths []string
	}{
		{RevertOptions{}, []string{"a.txt", "b.txt", "c.txt", "ln", "new.txt"}},
		{RevertOptions{Path: "a.txt", HunkID: h.ID}, []string{"a.txt"}},
	} {
		opts := tt.opts
		_, err := d.Revert(context.Background(), dir, opts)
		// The lock is a concurrent change (QA E2), not an internal error.
		ce, ok := errors.AsType[*ConflictError](err)
		if !ok || ce.Reason != ReasonConcurrentChange || !strings.Contains(ce.Output, "index.lock': File exists") {
			t.Fatalf("Revert(%+v) = %v, want a concurrentChange conflict with git's index.lock error", opts, err)
		}
		if diff := cmp.Diff(ce.Paths, tt.wantPaths); diff != "" {
			t.Errorf("Revert(%+v) conflict paths (-got +want):\n%s", opts, diff)
		}
		if diff := cmp.Diff(actFiles(t, dir, names...), before); diff != "" {
			t.Errorf("Revert(%+v) left files changed (-got +want):\n%s", opts, diff)
		}
	}
	os.Remove(lock)
	if got := actStatus(t, dir); got != status {
		t.Errorf("status %q -> %q", status, got)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".git"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "knightcode-") {
			t.Errorf("left %s in the git dir", e.Name())
		}
	}
}

func TestRevertBranchScopeAgainstMergeBase(t *testing.T) {
	body := actLines(1, 40)
	dir := actRepo(t, map[string]string{"f.txt": body, "g.txt": "g\n"})
	gittest.Git(t, dir, "switch", "-q", "-c", "topic")
	committed := strings.Replace(strings.Replace(body, "5\n", "five\n", 1), "30\n", "thirty\n", 1)
	gittest.Write(t, dir, "f.txt", committed)
	gittest.Write(t, dir, "added.txt", "a\n")
	gittest.CommitAll(t, dir, "topic")
	gittest.Write(t, dir, "g.txt", "G\n") // uncommitted change on top
	d := newDiffer(t)
	ro := ReadOptions{Scope: ScopeBranch, Against: "main"}
	_, h := actHunk(t, d, dir, ro, "f.txt", 0)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ro, Path: "f.txt", HunkID: h.ID})
	want := strings.Replace(body, "30\n", "thirty\n", 1)
	if got := gittest.Read(t, dir, "f.txt"); got != want {
		t.Errorf("worktree f.txt = %q, want %q", got, want)
	}
	if got := actShow(t, dir, ":f.txt"); got != want {
		t.Errorf("index f.txt = %q, want %q (as the merge-base in the reverted hunk)", got, want)
	}
	got := actRevert(t, d, dir, RevertOptions{ReadOptions: ro, Path: "added.txt"})
	if !cmp.Equal(got, []string{"added.txt"}) {
		t.Errorf("paths = %v", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "added.txt")); !os.IsNotExist(err) {
		t.Errorf("added.txt still there after reverting it in the branch scope")
	}
	if res := mustRead(t, d, dir, ro); !cmp.Equal(paths(res), []string{"f.txt", "g.txt"}) {
		t.Errorf("branch diff after reverts = %v, want [f.txt g.txt]", paths(res))
	}
}

// actTurn simulates a turn: capture, run edit, capture again; it returns
// the lastTurn read options.
func actTurn(t testing.TB, d *Differ, dir string, edit func()) ReadOptions {
	t.Helper()
	before := mustCapture(t, d, dir)
	edit()
	after := mustCapture(t, d, dir)
	return ReadOptions{Scope: ScopeLastTurn, FromTree: before.WorktreeTree, ToTree: after.WorktreeTree}
}

func TestRevertLastTurnUndoAndReapply(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": actLines(1, 20), "b.txt": "b\n", "gone.txt": "g\n", "run.sh": "x\n"})
	gittest.Write(t, dir, "a.txt", strings.Replace(actLines(1, 20), "2\n", "TWO\n", 1))
	gittest.Git(t, dir, "add", "a.txt") // the user's staging before the turn
	gittest.Write(t, dir, "notes.txt", "scratch\n")
	d := newDiffer(t)
	names := []string{"a.txt", "b.txt", "gone.txt", "run.sh", "made/by/turn.txt", "notes.txt"}
	start := actFiles(t, dir, names...)
	startStatus := actStatus(t, dir)
	ro := actTurn(t, d, dir, func() {
		gittest.Write(t, dir, "a.txt", strings.Replace(strings.Replace(actLines(1, 20), "2\n", "TWO\n", 1), "19\n", "NINETEEN\n", 1))
		gittest.Write(t, dir, "b.txt", "agent\n")
		os.Remove(filepath.Join(dir, "gone.txt"))
		os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
		gittest.Write(t, dir, "made/by/turn.txt", "t\n")
	})
	end := actFiles(t, dir, names...)

	check := guard(t, dir) // the index is never written by lastTurn actions (C32)
	got := actRevert(t, d, dir, RevertOptions{ReadOptions: ro})
	check()
	if diff := cmp.Diff(got, []string{"a.txt", "b.txt", "gone.txt", "made/by/turn.txt", "run.sh"}); diff != "" {
		t.Errorf("undo paths (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(actFiles(t, dir, names...), start); diff != "" {
		t.Errorf("after undo (-got +want):\n%s", diff)
	}
	if got := actStatus(t, dir); got != startStatus {
		t.Errorf("status after undo = %q, want %q as before the turn", got, startStatus)
	}
	// Undoing again: the files are no longer as the turn left them.
	_, err := d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro})
	ce := actConflict(t, err, ReasonDiffChanged)
	if diff := cmp.Diff(ce.Paths, []string{"a.txt", "b.txt", "gone.txt", "made/by/turn.txt", "run.sh"}); diff != "" {
		t.Errorf("conflict paths (-got +want):\n%s", diff)
	}
	// Reapply: they are as the turn found them.
	check = guard(t, dir)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ro, Reapply: true})
	check()
	if diff := cmp.Diff(actFiles(t, dir, names...), end); diff != "" {
		t.Errorf("after reapply (-got +want):\n%s", diff)
	}
	_, err = d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro, Reapply: true})
	actConflict(t, err, ReasonDiffChanged)
	_, h := actHunk(t, d, dir, ro, "a.txt", 0)
	_, err = d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro, Reapply: true, HunkID: h.ID})
	actParam(t, err, "hunkId")
}

func TestRevertLastTurnRefusedAfterManualEdit(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": actLines(1, 20), "b.txt": "b\n", "c.txt": "c\n"})
	d := newDiffer(t)
	ro := actTurn(t, d, dir, func() {
		gittest.Write(t, dir, "a.txt", strings.Replace(strings.Replace(actLines(1, 20), "2\n", "TWO\n", 1), "19\n", "NINETEEN\n", 1))
		gittest.Write(t, dir, "b.txt", "agent\n")
		gittest.Write(t, dir, "c.txt", "agent\n")
	})
	// The user edits one file after the turn: the undo must change nothing.
	gittest.Write(t, dir, "b.txt", "user\n")
	names := []string{"a.txt", "b.txt", "c.txt"}
	before := actFiles(t, dir, names...)
	_, err := d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro})
	ce := actConflict(t, err, ReasonDiffChanged)
	if !cmp.Equal(ce.Paths, []string{"b.txt"}) {
		t.Errorf("conflict paths = %v, want [b.txt]", ce.Paths)
	}
	if diff := cmp.Diff(actFiles(t, dir, names...), before); diff != "" {
		t.Errorf("a refused undo changed files (-got +want):\n%s", diff)
	}
	// Reverting b.txt alone is refused the same way; c.txt alone works.
	_, err = d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro, Path: "b.txt"})
	actConflict(t, err, ReasonDiffChanged)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ro, Path: "c.txt"})
	// A hunk of a.txt reverts against the file as it is now, even after
	// the user edited its other end.
	gittest.Write(t, dir, "a.txt", strings.Replace(strings.Replace(strings.Replace(actLines(1, 20), "2\n", "TWO\n", 1), "19\n", "NINETEEN\n", 1), "10\n", "user ten\n", 1))
	_, h := actHunk(t, d, dir, ro, "a.txt", 0)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ro, Path: "a.txt", HunkID: h.ID})
	want := map[string]string{
		"a.txt": fmt.Sprintf("644 %q", strings.Replace(strings.Replace(actLines(1, 20), "19\n", "NINETEEN\n", 1), "10\n", "user ten\n", 1)),
		"b.txt": `644 "user\n"`, "c.txt": `644 "c\n"`,
	}
	if diff := cmp.Diff(actFiles(t, dir, names...), want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	// A hunk whose lines the user changed no longer applies.
	gittest.Write(t, dir, "a.txt", actLines(1, 20))
	_, h = actHunk(t, d, dir, ro, "a.txt", 1)
	_, err = d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ro, HunkID: h.ID})
	if ce := actConflict(t, err, ReasonPatchFailed); !strings.Contains(ce.Output, "a.txt") {
		t.Errorf("patchFailed output %q does not name a.txt", ce.Output)
	}
}

// actLines returns "from\n...to\n".
func actLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// Cases from real tools (shared/cases), at the action layer.

func TestCaseC02_RevertEOFHunkKeepsNoNewlineMarker(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": "a\nb\nc\nd\ne\nf\ng\nh\ni\nlast"})
	gittest.Write(t, dir, "f.txt", "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast\nadded1\nadded2")
	d := newDiffer(t)
	f, h := actHunk(t, d, dir, ReadOptions{}, "f.txt", 1)
	if len(f.Hunks) != 2 || h.Lines[len(h.Lines)-1] != `\ No newline at end of file` {
		t.Fatalf("hunk 2 = %q, want it to end with the marker", h.Lines)
	}
	actRevert(t, d, dir, RevertOptions{Path: "f.txt", HunkID: h.ID})
	if got, want := gittest.Read(t, dir, "f.txt"), "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast"; got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
	// The other direction: a final newline added, then reverted.
	gittest.Write(t, dir, "f.txt", "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast\n")
	_, h = actHunk(t, d, dir, ReadOptions{}, "f.txt", 1)
	actRevert(t, d, dir, RevertOptions{HunkID: h.ID})
	if got, want := gittest.Read(t, dir, "f.txt"), "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast"; got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
}

func TestCaseC04_RevertTrailingEmptyLineDeletion(t *testing.T) {
	dir := actRepo(t, map[string]string{"values.yaml": "nodeSelector: {}\naffinity: {}\n\n"})
	gittest.Write(t, dir, "values.yaml", "nodeSelector: {}\naffinity: {}\n")
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "values.yaml", 0)
	if got := h.Lines[len(h.Lines)-1]; got != "-" {
		t.Fatalf("last hunk line = %q, want the deleted empty line", got)
	}
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := actShow(t, dir, ":values.yaml"); got != "nodeSelector: {}\naffinity: {}\n" {
		t.Errorf("index = %q", got)
	}
	_, h = actHunk(t, d, dir, ReadOptions{}, "values.yaml", 0)
	actRevert(t, d, dir, RevertOptions{HunkID: h.ID})
	if got, want := gittest.Read(t, dir, "values.yaml"), "nodeSelector: {}\naffinity: {}\n\n"; got != want {
		t.Errorf("values.yaml = %q, want %q", got, want)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}

func TestCaseC32_LastTurnUndoKeepsTheUsersStaging(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": actLines(1, 20), "b.txt": "b\n"})
	gittest.Write(t, dir, "a.txt", strings.Replace(strings.Replace(actLines(1, 20), "2\n", "TWO\n", 1), "19\n", "NINETEEN\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "a.txt", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID}) // the user staged hunk 1 only
	gittest.Write(t, dir, "notes.txt", "scratch\n")
	before := actStatus(t, dir)
	if before != "MM a.txt\n?? notes.txt\n" {
		t.Fatalf("status before the turn = %q", before)
	}
	ro := actTurn(t, d, dir, func() {
		gittest.Write(t, dir, "b.txt", "b\nagent-edit\n")
	})
	ageIndex(t, dir)
	check := guard(t, dir)
	if got := actRevert(t, d, dir, RevertOptions{ReadOptions: ro}); !cmp.Equal(got, []string{"b.txt"}) {
		t.Errorf("undo paths = %v, want [b.txt]", got)
	}
	check()
	if got := actStatus(t, dir); got != before {
		t.Errorf("status after undo = %q, want %q as before the turn", got, before)
	}
}

func TestCaseC37_RevertStagedHunkBesideUnstagedEdits(t *testing.T) {
	body := actLines(1, 30)
	dir := actRepo(t, map[string]string{"f.txt": body})
	gittest.Write(t, dir, "f.txt", strings.Replace(body, "3\n", "three\n", 1))
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Write(t, dir, "f.txt", strings.Replace(strings.Replace(body, "3\n", "three\n", 1), "27\n", "twenty-seven\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{}, "f.txt", 0)
	actRevert(t, d, dir, RevertOptions{Path: "f.txt", HunkID: h.ID})
	if got, want := gittest.Read(t, dir, "f.txt"), strings.Replace(body, "27\n", "twenty-seven\n", 1); got != want {
		t.Errorf("worktree = %q, want %q", got, want)
	}
	if got := actShow(t, dir, ":f.txt"); got != body {
		t.Errorf("index = %q, want HEAD's", got)
	}
	if got := actStatus(t, dir); got != " M f.txt\n" {
		t.Errorf("status = %q, want ' M f.txt'", got)
	}
}

// BenchmarkRevertOneHunk500 reverts one hunk of a 5000-line file with 500
// hunks (every 10th line changed) through Revert (which reads the scope
// again, looks the id up and applies it) and, in the same run, through
// `git apply -R` of the same one-hunk patch run by gitcli: the cost of
// knightcode's safety (capture + diff + id lookup) over the bare apply.
func BenchmarkRevertOneHunk500(b *testing.B) {
	head, work := bigHunkContents()
	dir := actRepo(b, map[string]string{"big.txt": head})
	gittest.Write(b, dir, "big.txt", work)
	d := newDiffer(b)
	ctx := context.Background()
	st, err := d.read(ctx, dir, ReadOptions{Scope: ScopeUnstaged, Budget: -1})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(st.files[0].wire.Hunks); n != 500 {
		b.Fatalf("%d hunks, want 500", n)
	}
	const pick = 250
	id := st.files[0].wire.Hunks[pick].ID
	rp, err := splitRaw(st.files[0].raw)
	if err != nil {
		b.Fatal(err)
	}
	patch, err := rp.textPatch(pick)
	if err != nil {
		b.Fatal(err)
	}
	reset := func(b *testing.B) {
		b.StopTimer()
		gittest.Write(b, dir, "big.txt", work)
		b.StartTimer()
	}
	for _, scope := range []Scope{ScopeUnstaged, ScopeUncommitted} {
		b.Run("Revert/"+string(scope), func(b *testing.B) {
			id := id
			if scope != ScopeUnstaged {
				gittest.Write(b, dir, "big.txt", work)
				_, h := actHunk(b, d, dir, ReadOptions{Scope: scope}, "big.txt", pick)
				id = h.ID
			}
			for i := 0; i < b.N; i++ {
				reset(b)
				if _, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: scope}, Path: "big.txt", HunkID: id}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("GitApply", func(b *testing.B) {
		repo := discover(b, ctx, dir)
		for i := 0; i < b.N; i++ {
			reset(b)
			if err := repo.Apply(ctx, strings.NewReader(string(patch)), gitcli.ApplyOptions{Reverse: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestRevertTypeChangeWhole(t *testing.T) {
	dir := actRepo(t, map[string]string{"t": "plain\n", "target.txt": "x\n"})
	os.Remove(filepath.Join(dir, "t"))
	os.Symlink("target.txt", filepath.Join(dir, "t"))
	d := newDiffer(t)
	f, _ := actHunk(t, d, dir, ReadOptions{}, "t", -1)
	if f.Status != "typeChanged" {
		t.Fatalf("t read as %s, want typeChanged", f.Status)
	}
	if len(f.Hunks) > 0 {
		_, err := d.Revert(context.Background(), dir, RevertOptions{HunkID: f.Hunks[0].ID})
		actParam(t, err, "hunkId")
	}
	actStage(t, d, dir, StageOptions{Path: "t"})
	if got := actIndexMode(t, dir, "t"); got != "120000" {
		t.Errorf("staged mode %s, want 120000", got)
	}
	actRevert(t, d, dir, RevertOptions{Path: "t"})
	if got := actFiles(t, dir, "t")["t"]; got != `644 "plain\n"` {
		t.Errorf("t = %s, want the plain file back", got)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}

func TestRevertConflictedFileResolvesToHEAD(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": "base\n", "other.txt": "o\n"})
	gittest.Git(t, dir, "switch", "-q", "-c", "theirs")
	gittest.Write(t, dir, "f.txt", "theirs\n")
	gittest.CommitAll(t, dir, "theirs")
	gittest.Git(t, dir, "switch", "-q", "main")
	gittest.Write(t, dir, "f.txt", "ours\n")
	gittest.CommitAll(t, dir, "ours")
	if _, err := gittest.Run(dir, nil, "merge", "-q", "theirs"); err == nil {
		t.Fatal("merge did not conflict")
	}
	d := newDiffer(t)
	// Staging the whole file resolves it, as git add does.
	actStage(t, d, dir, StageOptions{Path: "f.txt"})
	if got := gittest.Git(t, dir, "ls-files", "-u"); got != "" {
		t.Errorf("unmerged entries left after staging: %q", got)
	}
	gittest.Git(t, dir, "reset", "-q", "--merge")
	if _, err := gittest.Run(dir, nil, "merge", "-q", "theirs"); err == nil {
		t.Fatal("merge did not conflict")
	}
	// Reverting it in the uncommitted scope takes HEAD's side everywhere.
	actRevert(t, d, dir, RevertOptions{Path: "f.txt"})
	if got := gittest.Read(t, dir, "f.txt"); got != "ours\n" {
		t.Errorf("f.txt = %q, want HEAD's", got)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}
