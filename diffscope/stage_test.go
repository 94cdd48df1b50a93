package diffscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

func actStage(t testing.TB, d *Differ, dir string, opts StageOptions) []string {
	t.Helper()
	got, err := d.Stage(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Stage(%+v): %v", opts, err)
	}
	return got
}

func actUnstage(t testing.TB, d *Differ, dir string, opts StageOptions) []string {
	t.Helper()
	got, err := d.Unstage(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Unstage(%+v): %v", opts, err)
	}
	return got
}

// actIndexMode is the mode of path's stage-0 index entry.
func actIndexMode(t testing.TB, dir, path string) string {
	t.Helper()
	out := gittest.Git(t, dir, "ls-files", "-s", "--", path)
	mode, _, _ := strings.Cut(out, " ")
	return mode
}

func TestStageAndUnstageOneHunk(t *testing.T) {
	body := actLines(1, 30)
	dir := actRepo(t, map[string]string{"f.txt": body})
	work := strings.Replace(strings.Replace(body, "3\n", "three\n", 1), "27\n", "twenty-seven\n", 1)
	gittest.Write(t, dir, "f.txt", work)
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 1)
	if got := actStage(t, d, dir, StageOptions{Path: "f.txt", HunkID: h.ID}); !cmp.Equal(got, []string{"f.txt"}) {
		t.Errorf("paths = %v", got)
	}
	if got, want := actShow(t, dir, ":f.txt"), strings.Replace(body, "27\n", "twenty-seven\n", 1); got != want {
		t.Errorf("index = %q, want %q", got, want)
	}
	if got := gittest.Read(t, dir, "f.txt"); got != work {
		t.Errorf("stage changed the working file: %q", got)
	}
	if got := actStatus(t, dir); got != "MM f.txt\n" {
		t.Errorf("status = %q, want MM", got)
	}
	// An id from the unstaged scope is not an id of the staged scope.
	_, err := d.Unstage(context.Background(), dir, StageOptions{HunkID: h.ID})
	actConflict(t, err, ReasonDiffChanged)
	_, sh := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "f.txt", 0)
	actUnstage(t, d, dir, StageOptions{HunkID: sh.ID})
	if got := actShow(t, dir, ":f.txt"); got != body {
		t.Errorf("index after unstage = %q, want HEAD's", got)
	}
	if got := gittest.Read(t, dir, "f.txt"); got != work {
		t.Errorf("unstage changed the working file: %q", got)
	}
	// The entry's stat data was refreshed: plumbing sees no change.
	if got := gittest.Git(t, dir, "diff-files", "--name-only"); got != "f.txt\n" {
		t.Errorf("diff-files = %q", got)
	}
}

func TestStageAllAndUnstageAll(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", "bin": "x\x00y", "run.sh": "echo\n", ".gitignore": "*.log\n"})
	gittest.Write(t, dir, "a.txt", "A\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	gittest.Write(t, dir, "bin", "x\x00z")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	gittest.Write(t, dir, "dir/new.txt", "n\n")
	gittest.Write(t, dir, "debug.log", "ignored\n")
	gittest.Write(t, dir, "ita.txt", "i\n")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	d := newDiffer(t)
	got := actStage(t, d, dir, StageOptions{})
	want := []string{"a.txt", "bin", "dir/new.txt", "gone.txt", "ita.txt", "link", "run.sh"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("staged paths (-got +want):\n%s", diff)
	}
	if got, want := actStatus(t, dir), "M  a.txt\nM  bin\nA  dir/new.txt\nD  gone.txt\nA  ita.txt\nA  link\nM  run.sh\n"; got != want {
		t.Errorf("status after stage all = %q, want %q (the ignored file left out)", got, want)
	}
	if got := gittest.Git(t, dir, "diff", "--name-only"); got != "" {
		t.Errorf("unstaged diff after stage all = %q, want none", got)
	}
	gittest.Write(t, dir, "later.txt", "l\n") // an intent-to-add entry made after staging
	gittest.Git(t, dir, "add", "-N", "later.txt")
	got = actUnstage(t, d, dir, StageOptions{})
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("unstaged paths (-got +want):\n%s", diff)
	}
	if got, want := actStatus(t, dir), " M a.txt\n M bin\n D gone.txt\n A later.txt\n M run.sh\n?? dir/new.txt\n?? ita.txt\n?? link\n"; got != want {
		t.Errorf("status after unstage all = %q, want %q", got, want)
	}
}

func TestStageAllStaysWithinTheCaptureLimits(t *testing.T) {
	dir := actRepo(t, map[string]string{"keep.txt": "k\n"})
	for i := 0; i < BigFolder+50; i++ {
		gittest.Write(t, dir, filepath.Join("vendor", "pkg", strings.Repeat("x", i%7+1)+string(rune('a'+i%26))+strings.Repeat("0", i/26)+".txt"), "v\n")
	}
	for i := 0; i < MaxUntracked-BigFolder; i++ {
		gittest.Write(t, dir, filepath.Join("src", string(rune('a'+i%26))+strings.Repeat("1", i/26)+".go"), "s\n")
	}
	d := newDiffer(t)
	got := actStage(t, d, dir, StageOptions{})
	if len(got) != MaxUntracked-BigFolder {
		t.Errorf("staged %d paths, want the %d the capture included", len(got), MaxUntracked-BigFolder)
	}
	for _, p := range got {
		if strings.HasPrefix(p, "vendor/") {
			t.Fatalf("staged %s from a folder the capture left out", p)
		}
	}
}

func TestUnstageAllOnUnbornBranch(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.Write(t, dir, "b.txt", "b\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Git(t, dir, "add", "-N", "b.txt")
	d := newDiffer(t)
	got := actUnstage(t, d, dir, StageOptions{})
	if !cmp.Equal(got, []string{"a.txt"}) {
		t.Errorf("paths = %v, want [a.txt]", got)
	}
	if got, want := actStatus(t, dir), " A b.txt\n?? a.txt\n"; got != want {
		t.Errorf("status = %q, want %q (intent-to-add kept)", got, want)
	}
}

func TestStageWholeFiles(t *testing.T) {
	body := actLines(1, 30)
	dir := actRepo(t, map[string]string{"old.txt": body, "del.txt": "d\n", "link": "x"})
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("old.txt", filepath.Join(dir, "link"))
	gittest.CommitAll(t, dir, "link")
	os.Rename(filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"))
	os.Remove(filepath.Join(dir, "del.txt"))
	os.Remove(filepath.Join(dir, "link"))
	os.Symlink("new.txt", filepath.Join(dir, "link"))
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{Scope: ScopeUnstaged, Budget: -1})
	rn := fileByPath(t, res, "new.txt")
	if rn.Status != "renamed" {
		t.Fatalf("new.txt is %s, want renamed", rn.Status)
	}
	ln := fileByPath(t, res, "link")
	if len(ln.Hunks) > 0 {
		_, err := d.Stage(context.Background(), dir, StageOptions{HunkID: ln.Hunks[0].ID})
		actParam(t, err, "hunkId")
	}
	del := fileByPath(t, res, "del.txt")
	if got := actStage(t, d, dir, StageOptions{HunkID: del.Hunks[0].ID}); !cmp.Equal(got, []string{"del.txt"}) {
		t.Errorf("deleted file's hunk staged %v", got)
	}
	if got := actStage(t, d, dir, StageOptions{Path: "new.txt"}); !cmp.Equal(got, []string{"new.txt", "old.txt"}) {
		t.Errorf("rename staged %v", got)
	}
	actStage(t, d, dir, StageOptions{HunkID: ln.ID})
	if got, want := actStatus(t, dir), "D  del.txt\nM  link\nR  old.txt -> new.txt\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	// And back.
	sres := mustRead(t, d, dir, ReadOptions{Scope: ScopeStaged})
	for _, f := range sres.Files {
		actUnstage(t, d, dir, StageOptions{Path: f.Path, HunkID: f.ID})
	}
	if got, want := actStatus(t, dir), " D del.txt\n M link\n D old.txt\n?? new.txt\n"; got != want {
		t.Errorf("status after unstaging = %q, want %q", got, want)
	}
}

func TestStageRefusals(t *testing.T) {
	dir := actRepo(t, map[string]string{"f.txt": actLines(1, 20), "old.txt": actLines(1, 20)})
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 20), "5\n", "five\n", 1))
	gittest.Git(t, dir, "mv", "old.txt", "new.txt")
	gittest.Write(t, dir, "new.txt", strings.Replace(actLines(1, 20), "5\n", "five\n", 1))
	d := newDiffer(t)
	_, fh := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
	statusBefore := actStatus(t, dir)
	tests := []struct {
		name    string
		unstage bool
		opts    StageOptions
		field   string
	}{
		{"path outside the diff", false, StageOptions{Path: "nope.txt"}, "path"},
		{"staged path outside the staged diff", true, StageOptions{Path: "f.txt"}, "path"},
		{"hunk id at context 0", false, StageOptions{HunkID: fh.ID, Context: intp(0)}, "context"},
		{"negative context", false, StageOptions{Context: intp(-2)}, "context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.unstage {
				_, err = d.Unstage(context.Background(), dir, tt.opts)
			} else {
				_, err = d.Stage(context.Background(), dir, tt.opts)
			}
			actParam(t, err, tt.field)
		})
	}
	// A renamed file's hunk moves whole only (the staged rename here).
	rn, _ := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "new.txt", -1)
	if rn.Status == "renamed" && len(rn.Hunks) > 0 {
		_, err := d.Unstage(context.Background(), dir, StageOptions{HunkID: rn.Hunks[0].ID})
		actParam(t, err, "hunkId")
	}
	// A stale id.
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 20), "5\n", "FIVE\n", 1))
	_, err := d.Stage(context.Background(), dir, StageOptions{HunkID: fh.ID})
	actConflict(t, err, ReasonDiffChanged)
	gittest.Write(t, dir, "f.txt", strings.Replace(actLines(1, 20), "5\n", "five\n", 1))
	if got := actStatus(t, dir); got != statusBefore {
		t.Errorf("status %q -> %q after refused actions", statusBefore, got)
	}
}

// Cases from real tools (shared/cases), at the action layer.

func TestCaseC01_StageHunkWithUserDiffContextZero(t *testing.T) {
	dir := actRepo(t, map[string]string{"t.txt": "line one\nline two\n"})
	gittest.Write(t, dir, "t.txt", "line one and something\nline two\nline three\n")
	gittest.Git(t, dir, "config", "diff.context", "0")
	d := newDiffer(t)
	f, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "t.txt", 0)
	if len(f.Hunks) != 1 {
		t.Fatalf("%d hunks, want the one hunk of -U3", len(f.Hunks))
	}
	actStage(t, d, dir, StageOptions{Path: "t.txt", HunkID: h.ID})
	if got, want := actShow(t, dir, ":t.txt"), "line one and something\nline two\nline three\n"; got != want {
		t.Errorf("index = %q, want %q", got, want)
	}
	if got := gittest.Git(t, dir, "diff", "--name-only"); got != "" {
		t.Errorf("unstaged diff left: %q", got)
	}
}

func TestCaseC05_NewFileStagesAndUnstagesAgainstTheEmptyFile(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	gittest.Write(t, dir, "new.txt", "x\ny\nz\n")
	d := newDiffer(t)
	// Staging the untracked file's one hunk stages the file.
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "new.txt", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := actStatus(t, dir); got != "A  new.txt\n" {
		t.Fatalf("status after staging = %q, want A", got)
	}
	// The staged file changes again in the working tree: only that change
	// is left to stage, a modification of the index blob.
	gittest.Write(t, dir, "new.txt", "x\ny\nz\nw\n")
	_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "new.txt", 0)
	if h.OldStart == 0 {
		t.Fatalf("the unstaged hunk of a staged new file reads as a creation: %s", h.Header)
	}
	if got := actStatus(t, dir); got != "AM new.txt\n" {
		t.Fatalf("status = %q, want AM", got)
	}
	// Unstaging every line returns it to untracked, not an empty staged file.
	_, sh := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "new.txt", 0)
	actUnstage(t, d, dir, StageOptions{Path: "new.txt", HunkID: sh.ID})
	if got := actStatus(t, dir); got != "?? new.txt\n" {
		t.Errorf("status after unstaging every line = %q, want untracked", got)
	}
	if got := gittest.Read(t, dir, "new.txt"); got != "x\ny\nz\nw\n" {
		t.Errorf("worktree = %q, want untouched", got)
	}
	// Intent-to-add: the placeholder is replaced, then unstage all makes it
	// untracked again.
	gittest.Git(t, dir, "add", "-N", "new.txt")
	_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "new.txt", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := actShow(t, dir, ":new.txt"); got != "x\ny\nz\nw\n" {
		t.Errorf("index = %q", got)
	}
	actUnstage(t, d, dir, StageOptions{})
	if got := actStatus(t, dir); got != "?? new.txt\n" {
		t.Errorf("status after unstage all = %q, want untracked", got)
	}
	// Mirror image: a deleted file's one hunk stages and unstages the deletion.
	gittest.Write(t, dir, "old.txt", "o\np\n")
	gittest.Git(t, dir, "add", "old.txt")
	gittest.Git(t, dir, "commit", "-q", "-m", "old")
	os.Remove(filepath.Join(dir, "new.txt"))
	os.Remove(filepath.Join(dir, "old.txt"))
	_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "old.txt", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := actStatus(t, dir); got != "D  old.txt\n" {
		t.Errorf("status = %q, want D", got)
	}
	_, sh = actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "old.txt", 0)
	actUnstage(t, d, dir, StageOptions{HunkID: sh.ID})
	if got := actStatus(t, dir); got != " D old.txt\n" {
		t.Errorf("status = %q, want an unstaged deletion", got)
	}
}

func TestCaseC07_C08_StageHunkUnderUserDiffConfig(t *testing.T) {
	dir := actRepo(t, map[string]string{"s.txt": "1\n2\na\n\nb\n3\n4\n", "lib/app/code.ex": "a\nb\n"})
	gittest.Write(t, dir, "s.txt", "1\n2\na\n\nb\na\n\nb\n3\n4\n")
	gittest.Write(t, dir, "lib/app/code.ex", "a\nB\n")
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{Scope: ScopeUnstaged})
	for _, kv := range [][2]string{
		{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"}, {"diff.indentHeuristic", "false"},
		{"diff.algorithm", "patience"}, {"diff.context", "0"}, {"apply.whitespace", "fix"}, {"apply.ignoreWhitespace", "change"},
	} {
		gittest.Git(t, dir, "config", kv[0], kv[1])
	}
	// Ids read before the user's config changed still name the same hunks.
	for _, p := range []string{"s.txt", "lib/app/code.ex"} {
		f := fileByPath(t, res, p)
		actStage(t, d, dir, StageOptions{Path: p, HunkID: f.Hunks[0].ID})
	}
	if got := gittest.Git(t, dir, "diff", "--name-only"); got != "" {
		t.Errorf("unstaged diff left: %q", got)
	}
	if got, want := actShow(t, dir, ":s.txt"), "1\n2\na\n\nb\na\n\nb\n3\n4\n"; got != want {
		t.Errorf("s.txt index = %q, want %q", got, want)
	}
}

func TestCaseC10_StageCRLFHunkKeepsCR(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("l" + strconv.Itoa(i) + "\r\n")
	}
	body := b.String()
	dir := actRepo(t, map[string]string{"w.txt": body})
	gittest.Write(t, dir, "w.txt", strings.Replace(strings.Replace(body, "l2\r\n", "L2\r\n", 1), "l18\r\n", "L18\r\n", 1))
	d := newDiffer(t)
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "w.txt", 0)
	actStage(t, d, dir, StageOptions{Path: "w.txt", HunkID: h.ID})
	if got, want := actShow(t, dir, ":w.txt"), strings.Replace(body, "l2\r\n", "L2\r\n", 1); got != want {
		t.Errorf("index = %q, want %q", got, want)
	}
	if got := gittest.Git(t, dir, "diff", "--cached", "--numstat"); got != "1\t1\tw.txt\n" {
		t.Errorf("staged numstat = %q, want one line changed", got)
	}
	// And reverting the other hunk keeps CR in the working file.
	_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "w.txt", 0)
	actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, HunkID: h.ID})
	if got, want := gittest.Read(t, dir, "w.txt"), strings.Replace(body, "l2\r\n", "L2\r\n", 1); got != want {
		t.Errorf("worktree = %q, want %q", got, want)
	}
}

func TestCaseC16_ModeChangeDoesNotTravelWithHunks(t *testing.T) {
	body := actLines(1, 30)
	dir := actRepo(t, map[string]string{"f.txt": body})
	work := strings.Replace(strings.Replace(body, "2\n", "CHANGED2\n", 1), "28\n", "CHANGED28\n", 1)
	gittest.WriteMode(t, dir, "f.txt", work, 0o755)
	d := newDiffer(t)
	f, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
	if f.OldMode != "100644" || f.NewMode != "100755" || len(f.Hunks) != 2 {
		t.Fatalf("f.txt read as %s -> %s with %d hunks", f.OldMode, f.NewMode, len(f.Hunks))
	}
	actStage(t, d, dir, StageOptions{Path: "f.txt", HunkID: h.ID})
	if got := actIndexMode(t, dir, "f.txt"); got != "100644" {
		t.Errorf("index mode after staging a hunk = %s, want 100644", got)
	}
	if got, want := actShow(t, dir, ":f.txt"), strings.Replace(body, "2\n", "CHANGED2\n", 1); got != want {
		t.Errorf("index = %q, want %q", got, want)
	}
	// Reverting a hunk of a mode-changed file is refused (whole files only)
	// and leaves the file executable.
	_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
	_, err := d.Revert(context.Background(), dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, HunkID: h.ID})
	actParam(t, err, "hunkId")
	if fi, _ := os.Stat(filepath.Join(dir, "f.txt")); fi.Mode().Perm() != 0o755 {
		t.Errorf("worktree mode = %o, want 755", fi.Mode().Perm())
	}
	// Stage the other text hunk: what is left is the mode change alone, an
	// item of its own (no hunks) staged by its file id.
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	mf, _ := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", -1)
	if len(mf.Hunks) != 0 || mf.OldMode != "100644" || mf.NewMode != "100755" {
		t.Fatalf("left: %s -> %s with %d hunks, want the mode change alone", mf.OldMode, mf.NewMode, len(mf.Hunks))
	}
	actStage(t, d, dir, StageOptions{HunkID: mf.ID})
	if got := actIndexMode(t, dir, "f.txt"); got != "100755" {
		t.Errorf("index mode = %s, want 100755", got)
	}
	// Unstaging a hunk keeps the staged mode.
	_, sh := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "f.txt", 1)
	actUnstage(t, d, dir, StageOptions{HunkID: sh.ID})
	if got := actIndexMode(t, dir, "f.txt"); got != "100755" {
		t.Errorf("index mode after unstaging a hunk = %s, want 100755", got)
	}
	if got, want := actShow(t, dir, ":f.txt"), strings.Replace(body, "2\n", "CHANGED2\n", 1); got != want {
		t.Errorf("index = %q, want %q", got, want)
	}
	// Reverting the file by its id puts mode and text back.
	wf, _ := actHunk(t, d, dir, ReadOptions{}, "f.txt", -1)
	actRevert(t, d, dir, RevertOptions{HunkID: wf.ID})
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status after reverting the file = %q, want clean", got)
	}
}

func TestCaseC17_TextHunksBesideABinaryFile(t *testing.T) {
	dir := actRepo(t, map[string]string{"notes.txt": "a\nb\n", "en.spl": "SPL\x00\x01v1"})
	gittest.Write(t, dir, "notes.txt", "a\nB\n")
	gittest.Write(t, dir, "en.spl", "SPL\x00\x01v2")
	d := newDiffer(t)
	bf, _ := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "en.spl", -1)
	if !bf.Binary || len(bf.Hunks) != 0 {
		t.Fatalf("en.spl: binary %v with %d hunks", bf.Binary, len(bf.Hunks))
	}
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "notes.txt", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := gittest.Git(t, dir, "diff", "--cached", "--name-only"); got != "notes.txt\n" {
		t.Errorf("staged = %q, want notes.txt only", got)
	}
	_, sh := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "notes.txt", 0)
	actUnstage(t, d, dir, StageOptions{HunkID: sh.ID})
	_, h = actHunk(t, d, dir, ReadOptions{}, "notes.txt", 0)
	actRevert(t, d, dir, RevertOptions{HunkID: h.ID})
	if got := gittest.Read(t, dir, "notes.txt"); got != "a\nb\n" {
		t.Errorf("notes.txt = %q", got)
	}
	// The binary file is one item: staged by its id, reverted by its path.
	actStage(t, d, dir, StageOptions{HunkID: bf.ID})
	if got := actShow(t, dir, ":en.spl"); got != "SPL\x00\x01v2" {
		t.Errorf("index en.spl = %q", got)
	}
	actRevert(t, d, dir, RevertOptions{Path: "en.spl"})
	if got := gittest.Read(t, dir, "en.spl"); got != "SPL\x00\x01v1" {
		t.Errorf("en.spl = %q", got)
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean", got)
	}
}

func TestCaseC19_QuotedDashAndGlobNames(t *testing.T) {
	names := []string{"configurações.txt", "-dash.txt", "quo\"te.txt", "[ab].txt", "sp ace\\tab.txt"}
	files := map[string]string{"a.txt": "plain\n"}
	for _, n := range names {
		files[n] = actLines(1, 20)
	}
	dir := actRepo(t, files)
	edit := strings.Replace(strings.Replace(actLines(1, 20), "2\n", "two\n", 1), "18\n", "eighteen\n", 1)
	for _, n := range names {
		gittest.Write(t, dir, n, edit)
	}
	gittest.Write(t, dir, "a.txt", "changed\n") // "[ab].txt" as a glob would match it
	d := newDiffer(t)
	for _, n := range names {
		_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, n, 0)
		actStage(t, d, dir, StageOptions{Path: n, HunkID: h.ID})
		_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, n, 0)
		actRevert(t, d, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: n, HunkID: h.ID})
		_, sh := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, n, 0)
		actUnstage(t, d, dir, StageOptions{Path: n, HunkID: sh.ID})
		if got, want := gittest.Read(t, dir, n), strings.Replace(actLines(1, 20), "2\n", "two\n", 1); got != want {
			t.Errorf("%s = %q, want %q", n, got, want)
		}
		actStage(t, d, dir, StageOptions{Path: n})
		actUnstage(t, d, dir, StageOptions{Path: n})
		actRevert(t, d, dir, RevertOptions{Path: n})
		if got := gittest.Read(t, dir, n); got != actLines(1, 20) {
			t.Errorf("%s after reverting the file = %q", n, got)
		}
	}
	if got := actStatus(t, dir); got != " M a.txt\n" {
		t.Errorf("status = %q, want only a.txt (never matched by a glob) modified", got)
	}
}

func TestCaseC20_SubmoduleNeverLosesItsContent(t *testing.T) {
	top := t.TempDir()
	src := filepath.Join(top, "subsrc")
	os.MkdirAll(src, 0o755)
	gittest.Git(t, src, "init", "-q", "-b", "main")
	gittest.Write(t, src, "s.txt", "s1\n")
	gittest.CommitAll(t, src, "s1")
	dir := actRepo(t, map[string]string{"top.txt": "t\n"})
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.CommitAll(t, dir, "add sub")
	sub := filepath.Join(dir, "sub")
	gittest.Write(t, sub, "s.txt", "s2\n")
	gittest.Git(t, sub, "commit", "-qam", "s2")
	gittest.Write(t, sub, "s.txt", "wip\n")
	gittest.Write(t, sub, "untracked.txt", "new\n")
	subHead := strings.TrimSpace(gittest.Git(t, sub, "rev-parse", "HEAD"))
	d := newDiffer(t)
	f, _ := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "sub", -1)
	if !f.Submodule || len(f.Hunks) != 0 {
		t.Fatalf("sub read as submodule %v with %d hunks", f.Submodule, len(f.Hunks))
	}
	inner := func() {
		t.Helper()
		want := map[string]string{"sub/s.txt": `644 "wip\n"`, "sub/untracked.txt": `644 "new\n"`}
		if diff := cmp.Diff(actFiles(t, dir, "sub/s.txt", "sub/untracked.txt"), want); diff != "" {
			t.Errorf("submodule content changed (-got +want):\n%s", diff)
		}
		if got := strings.TrimSpace(gittest.Git(t, sub, "rev-parse", "HEAD")); got != subHead {
			t.Errorf("submodule HEAD moved to %s", got)
		}
	}
	actStage(t, d, dir, StageOptions{HunkID: f.ID})
	// --short tells a submodule's new commit (M) from dirty content (m);
	// --porcelain does not.
	if got := gittest.Git(t, dir, "status", "--short"); got != "Mm sub\n" {
		t.Errorf("status after staging = %q, want Mm (pointer staged, inner dirt not)", got)
	}
	if got := strings.Fields(gittest.Git(t, dir, "ls-files", "-s", "--", "sub"))[1]; got != subHead {
		t.Errorf("staged pointer %s, want the submodule's HEAD %s", got, subHead)
	}
	inner()
	actUnstage(t, d, dir, StageOptions{Path: "sub"})
	if got := gittest.Git(t, dir, "status", "--short"); got != " M sub\n" {
		t.Errorf("status after unstaging = %q, want ' M sub'", got)
	}
	inner()
	for _, opts := range []RevertOptions{{Path: "sub"}, {HunkID: f.ID, ReadOptions: ReadOptions{Scope: ScopeUnstaged}}} {
		_, err := d.Revert(context.Background(), dir, opts)
		actParam(t, err, "path")
	}
	inner()
	gittest.Write(t, dir, "top.txt", "T\n")
	if got := actRevert(t, d, dir, RevertOptions{}); !cmp.Equal(got, []string{"top.txt"}) {
		t.Errorf("whole-scope revert touched %v, want [top.txt] (the submodule left out)", got)
	}
	inner()
}

func TestCaseC40_HunkActionsOnA200kLineFile(t *testing.T) {
	t.Parallel()
	var head, work strings.Builder
	for i := 1; i <= 200000; i++ {
		head.WriteString(strconv.Itoa(i) + "\n")
		work.WriteString(strconv.Itoa(i) + ",x\n")
	}
	dir := actRepo(t, map[string]string{"big.csv": head.String()})
	gittest.Write(t, dir, "big.csv", work.String())
	d := newDiffer(t)
	// A read within the default budget lists the file without hunks; the
	// whole file is still one item.
	small := fileByPath(t, mustRead(t, d, dir, ReadOptions{Scope: ScopeUnstaged}), "big.csv")
	if !small.TooLarge || len(small.Hunks) != 0 {
		t.Fatalf("big.csv within the default budget: tooLarge %v, %d hunks", small.TooLarge, len(small.Hunks))
	}
	_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged, Budget: -1}, "big.csv", 0)
	actStage(t, d, dir, StageOptions{HunkID: h.ID})
	if got := gittest.Git(t, dir, "diff", "--cached", "--numstat"); got != "200000\t200000\tbig.csv\n" {
		t.Errorf("staged numstat = %q", got)
	}
	_, uh := actHunk(t, d, dir, ReadOptions{Budget: -1}, "big.csv", 0)
	actRevert(t, d, dir, RevertOptions{HunkID: uh.ID})
	if got := gittest.Read(t, dir, "big.csv"); got != head.String() {
		t.Errorf("big.csv not restored (%d bytes, want %d)", len(got), head.Len())
	}
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status = %q, want clean (index and worktree back to HEAD)", got)
	}
	gittest.Write(t, dir, "big.csv", work.String())
	actStage(t, d, dir, StageOptions{HunkID: small.ID})
	actRevert(t, d, dir, RevertOptions{Path: "big.csv"})
	if got := actStatus(t, dir); got != "" {
		t.Errorf("status after whole-file stage and revert = %q, want clean", got)
	}
}

// Two actions in one checkout at once (two threads: a whole-scope revert
// and a git/stage of everything) run one after the other from read to
// write: whichever goes first, the other reads what it left, so the end
// state is clean either way. Without the lock held from the read, the
// stage wrote the index it had read before the revert (status MM).
func TestConcurrentActionsReadUnderTheLock(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("line 1 of %d\nline 2\nline 3\n", i)
	}
	for round := range 4 {
		dir := actRepo(t, files)
		for p := range files {
			gittest.Write(t, dir, p, "changed\n"+files[p]+"more\n")
		}
		d := newDiffer(t)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, errs[0] = d.Revert(context.Background(), dir, RevertOptions{})
		}()
		go func() {
			defer wg.Done()
			_, errs[1] = d.Stage(context.Background(), dir, StageOptions{})
		}()
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				if _, ok := errors.AsType[*ParamError](err); !ok { // staging nothing, after the revert
					t.Errorf("round %d: %v", round, err)
				}
			}
		}
		if got := actStatus(t, dir); got != "" {
			t.Fatalf("round %d: status after a revert and a stage at once = %q, want clean", round, got)
		}
	}
}

// An id no read can have given is invalidParams naming hunkId (a stale
// well-formed id stays diffChanged).
func TestMalformedHunkID(t *testing.T) {
	dir := actRepo(t, map[string]string{"a.txt": "a\n"})
	gittest.Write(t, dir, "a.txt", "b\n")
	d := newDiffer(t)
	for _, id := range []string{"zz", "deadbeef", strings.Repeat("A", 64), strings.Repeat("0", 63) + "g"} {
		_, err := d.Stage(context.Background(), dir, StageOptions{HunkID: id})
		if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "hunkId" {
			t.Errorf("Stage(hunkId %q) = %v, want invalidParams hunkId", id, err)
		}
		_, err = d.Revert(context.Background(), dir, RevertOptions{HunkID: id})
		if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "hunkId" {
			t.Errorf("Revert(hunkId %q) = %v, want invalidParams hunkId", id, err)
		}
	}
	_, err := d.Stage(context.Background(), dir, StageOptions{HunkID: strings.Repeat("0", 64)})
	if ce, ok := errors.AsType[*ConflictError](err); !ok || ce.Reason != ReasonDiffChanged {
		t.Errorf("Stage(a well-formed unknown id) = %v, want diffChanged", err)
	}
	if got := actStatus(t, dir); got != " M a.txt\n" {
		t.Errorf("status %q: something was written", got)
	}
}
