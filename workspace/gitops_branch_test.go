package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knightcode/knightcode/internal/gittest"
)

func TestBranches(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	s := newRemoteSetup(t)
	base := revParse(t, s.work, "HEAD")
	gittest.Git(t, s.work, "checkout", "-q", "-b", "feature", "--track", "origin/main")
	tip := gittest.CommitAll(t, s.work, "feature")
	gittest.Git(t, s.work, "branch", "gone")
	gittest.Git(t, s.work, "config", "branch.gone.remote", "origin")
	gittest.Git(t, s.work, "config", "branch.gone.merge", "refs/heads/gone")

	got, err := Branches(ctx, git, s.work)
	if err != nil {
		t.Fatal(err)
	}
	want := []Branch{
		{Name: "feature", Ref: "refs/heads/feature", Current: true, Commit: tip, Upstream: "origin/main", Ahead: 1},
		{Name: "gone", Ref: "refs/heads/gone", Commit: tip, Upstream: "origin/gone", UpstreamGone: true},
		{Name: "main", Ref: "refs/heads/main", Commit: base, Upstream: "origin/main"},
		{Name: "origin/main", Ref: "refs/remotes/origin/main", Remote: true, Commit: base},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBranchCreate(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a", "a\n")
	head := gittest.CommitAll(t, dir, "a")
	gittest.Git(t, dir, "checkout", "-q", "--detach")
	gittest.Write(t, dir, "a", "local change\n")
	writeHook(t, dir, "post-checkout", "touch hook-ran\n")

	if err := BranchCreate(ctx, git, dir, "topic/"+strings.Repeat("y", 250)); err != nil {
		t.Fatalf("a 250-byte part: %v", err)
	}
	if err := BranchCreate(ctx, git, dir, "topic/x"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/topic/x" {
		t.Errorf("HEAD -> %q", got)
	}
	if revParse(t, dir, "topic/x") != head {
		t.Error("branch not at HEAD")
	}
	if gittest.Read(t, dir, "a") != "local change\n" {
		t.Error("local change lost")
	}
	if _, err := os.Stat(filepath.Join(dir, "hook-ran")); err == nil {
		t.Error("a hook ran for branch create")
	}
	asConflict(t, BranchCreate(ctx, git, dir, "main"), ReasonBranchExists)
	long := strings.Repeat("x", 251) // check-ref-format accepts it; no file system can name its lock
	for _, bad := range []string{"", "-x", "HEAD", "a..b", "a b", "x.lock", "a~1", "@{-1}", "/x", "x/", long, "topic/" + long} {
		err := BranchCreate(ctx, git, dir, bad)
		if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "name" {
			t.Errorf("BranchCreate(%.60q) = %v, want a ParamError for name", bad, err)
		}
	}
}

// switchRepo has main (a.txt) and other, which adds b.txt and
// build/out.bin and changes a.txt; main ignores build/ and *.bin.
func switchRepo(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "main\n")
	gittest.CommitAll(t, dir, "main")
	gittest.Git(t, dir, "checkout", "-q", "-b", "other")
	gittest.Write(t, dir, "a.txt", "other\n")
	gittest.Write(t, dir, "b.txt", "b\n")
	gittest.Write(t, dir, "build/out.bin", "tracked on other\n")
	gittest.CommitAll(t, dir, "other")
	gittest.Git(t, dir, "checkout", "-q", "main")
	gittest.Write(t, dir, ".gitignore", "build/\n")
	gittest.CommitAll(t, dir, "ignore build")
	return dir
}

func TestBranchSwitch(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	t.Run("clean, with the post-checkout hook", func(t *testing.T) {
		dir := switchRepo(t)
		writeHook(t, dir, "post-checkout", "echo \"$1 $2 $3\" > .git/hook-ran\n")
		old := revParse(t, dir, "HEAD")
		if err := BranchSwitch(ctx, git, testOplog(t), dir, "other"); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(gittest.Git(t, dir, "branch", "--show-current")); got != "other" {
			t.Errorf("on %q", got)
		}
		if got, want := gittest.Read(t, dir, ".git/hook-ran"), old+" "+revParse(t, dir, "other")+" 1\n"; got != want {
			t.Errorf("post-checkout got %q, want %q", got, want)
		}
		if err := BranchSwitch(ctx, git, testOplog(t), dir, "other"); err != nil {
			t.Errorf("switch to the current branch: %v", err)
		}
	})
	t.Run("local change", func(t *testing.T) {
		dir := switchRepo(t)
		gittest.Write(t, dir, "a.txt", "mine\n")
		ce := asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "other"), ReasonLocalChanges)
		if diff := cmp.Diff([]string{"a.txt"}, ce.Paths); diff != "" {
			t.Errorf("paths (-want +got):\n%s", diff)
		}
		if gittest.Read(t, dir, "a.txt") != "mine\n" {
			t.Error("local change lost")
		}
	})
	t.Run("untracked file", func(t *testing.T) {
		dir := switchRepo(t)
		gittest.Write(t, dir, "b.txt", "mine\n")
		ce := asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "other"), ReasonLocalChanges)
		if diff := cmp.Diff([]string{"b.txt"}, ce.Paths); diff != "" {
			t.Errorf("paths (-want +got):\n%s", diff)
		}
	})
	t.Run("ignored file the branch tracks", func(t *testing.T) {
		dir := switchRepo(t)
		gittest.Write(t, dir, "build/out.bin", "my build output\n")
		if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
			t.Fatalf("build/out.bin is not ignored: %q", st)
		}
		ce := asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "other"), ReasonLocalChanges)
		if diff := cmp.Diff([]string{"build/out.bin"}, ce.Paths); diff != "" {
			t.Errorf("paths (-want +got):\n%s", diff)
		}
		if gittest.Read(t, dir, "build/out.bin") != "my build output\n" {
			t.Error("ignored file overwritten")
		}
		if got := strings.TrimSpace(gittest.Git(t, dir, "branch", "--show-current")); got != "main" {
			t.Errorf("switched to %q", got)
		}
	})
	t.Run("ignored file where the branch has a folder", func(t *testing.T) {
		dir := switchRepo(t)
		gittest.Write(t, dir, ".gitignore", "build\n")
		gittest.CommitAll(t, dir, "ignore build file")
		gittest.Write(t, dir, "build", "a file\n")
		ce := asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "other"), ReasonLocalChanges)
		if diff := cmp.Diff([]string{"build"}, ce.Paths); diff != "" {
			t.Errorf("paths (-want +got):\n%s", diff)
		}
	})
	t.Run("staged new file as the branch has it is carried", func(t *testing.T) {
		dir := switchRepo(t)
		gittest.Write(t, dir, "b.txt", "b\n")
		gittest.Git(t, dir, "add", "b.txt")
		// Same content as other's b.txt: git carries it over.
		if err := BranchSwitch(ctx, git, testOplog(t), dir, "other"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("operation in progress", func(t *testing.T) {
		dir := conflictRepo(t)
		gittest.Run(dir, nil, "merge", "side")
		asConflict(t, BranchSwitch(ctx, git, testOplog(t), dir, "side"), ReasonOperationInProgress)
	})
	t.Run("no such branch", func(t *testing.T) {
		dir := switchRepo(t)
		err := BranchSwitch(ctx, git, testOplog(t), dir, "nope")
		if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "name" {
			t.Errorf("err %v, want ParamError name", err)
		}
	})
	t.Run("remote-tracking branch", func(t *testing.T) {
		s := newRemoteSetup(t)
		gittest.Git(t, s.work, "checkout", "-q", "-b", "remote-only")
		tip := gittest.CommitAll(t, s.work, "r")
		gittest.Git(t, s.work, "push", "-q", "origin", "remote-only")
		gittest.Git(t, s.work, "checkout", "-q", "main")
		gittest.Git(t, s.work, "branch", "-q", "-D", "remote-only")
		if err := BranchSwitch(ctx, git, testOplog(t), s.work, "remote-only"); err != nil {
			t.Fatal(err)
		}
		if revParse(t, s.work, "HEAD") != tip {
			t.Error("not at the remote branch's tip")
		}
		if got := strings.TrimSpace(gittest.Git(t, s.work, "rev-parse", "--abbrev-ref", "@{upstream}")); got != "origin/remote-only" {
			t.Errorf("upstream %q", got)
		}
	})
}

func TestLog(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	s := newRemoteSetup(t)
	first := revParse(t, s.work, "HEAD")
	gittest.Write(t, s.work, "m", "m\n")
	onMain := gittest.CommitAll(t, s.work, "on main")
	gittest.Git(t, s.work, "checkout", "-q", "-b", "feature", first)
	gittest.Write(t, s.work, "f", "1\n")
	c1 := gittest.CommitAll(t, s.work, "feature one")
	gittest.Write(t, s.work, "f", "2\n")
	c2 := gittest.CommitAll(t, s.work, "feature two")

	ids := func(r *LogResult) []string {
		var out []string
		for _, c := range r.Commits {
			out = append(out, c.ID)
		}
		return out
	}
	// Since origin/HEAD (origin/main at first).
	got, err := Log(ctx, git, s.work, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{c2, c1}, ids(got)); diff != "" {
		t.Errorf("since origin/main (-want +got):\n%s", diff)
	}
	if got.Base != "origin/main" {
		t.Errorf("base %q", got.Base)
	}
	want := LogCommit{ID: c2, Parents: []string{c1}, Subject: "feature two", AuthorName: "Test Author", AuthorEmail: "author@example.invalid"}
	if diff := cmp.Diff(want, got.Commits[0], cmpopts.IgnoreFields(LogCommit{}, "Time")); diff != "" || got.Commits[0].Time == 0 {
		t.Errorf("commit (-want +got):\n%s (time %d)", diff, got.Commits[0].Time)
	}
	// An explicit base: the worktree's.
	got, err = Log(ctx, git, s.work, LogOptions{BaseRef: c1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{c2}, ids(got)); diff != "" {
		t.Errorf("since c1 (-want +got):\n%s", diff)
	}
	// On the base branch: the last commits of HEAD.
	gittest.Git(t, s.work, "checkout", "-q", "main")
	got, err = Log(ctx, git, s.work, LogOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{onMain}, ids(got)); diff != "" || got.Base != "" {
		t.Errorf("on main (-want +got):\n%s (base %q)", diff, got.Base)
	}
	for _, bad := range []int{-1, 501} {
		_, err := Log(ctx, git, s.work, LogOptions{Limit: bad})
		if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "limit" {
			t.Errorf("limit %d: %v", bad, err)
		}
	}
	if _, err := Log(ctx, git, s.work, LogOptions{BaseRef: "nope"}); err == nil {
		t.Error("a base naming nothing was accepted")
	}
	// Unborn: no commits.
	got, err = Log(ctx, git, gittest.Init(t), LogOptions{})
	if err != nil || len(got.Commits) != 0 {
		t.Errorf("unborn: %v %v", got, err)
	}
}
