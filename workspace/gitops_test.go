package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

func newRunner(t testing.TB) *gitcli.Runner {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// remoteSetup is a checkout on main cloned from a bare remote (file://,
// origin, with origin/HEAD set), plus a second bare repository for a
// fork.
type remoteSetup struct {
	work, origin, fork string
}

func newRemoteSetup(t *testing.T) remoteSetup {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := remoteSetup{work: filepath.Join(base, "work"), origin: filepath.Join(base, "origin.git"), fork: filepath.Join(base, "fork.git")}
	gittest.Git(t, base, "init", "-q", "--bare", "-b", "main", s.origin)
	gittest.Git(t, base, "init", "-q", "--bare", "-b", "main", s.fork)
	gittest.Git(t, base, "init", "-q", "-b", "main", s.work)
	gittest.Git(t, s.work, "config", "core.autocrlf", "false")
	gittest.Write(t, s.work, "a.txt", "one\n")
	gittest.CommitAll(t, s.work, "first")
	gittest.Git(t, s.work, "remote", "add", "origin", "file://"+s.origin)
	gittest.Git(t, s.work, "push", "-q", "-u", "origin", "main")
	gittest.Git(t, s.work, "remote", "set-head", "origin", "main")
	return s
}

func revParse(t *testing.T, dir, rev string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", rev))
}

func writeHook(t *testing.T, dir, name, script string) {
	t.Helper()
	gittest.WriteMode(t, dir, filepath.Join(".git", "hooks", name), "#!/bin/sh\n"+script, 0o755)
}

// Status.

func TestStatusCounts(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	s := newRemoteSetup(t)
	gittest.Write(t, s.work, ".gitignore", "*.log\n")
	gittest.Write(t, s.work, "b.txt", "b\n")
	gittest.CommitAll(t, s.work, "second") // ahead 1
	gittest.Write(t, s.work, "a.txt", "two\n")
	gittest.Git(t, s.work, "add", "a.txt")
	gittest.Write(t, s.work, "a.txt", "three\n") // staged and unstaged
	gittest.Write(t, s.work, "b.txt", "bb\n")    // unstaged
	gittest.Write(t, s.work, "dir/u1", "u\n")
	gittest.Write(t, s.work, "dir/u2", "u\n")
	gittest.Write(t, s.work, "x.log", "ignored\n")
	head := revParse(t, s.work, "HEAD")

	// A status must not write the index, even when its stat data is stale.
	index := filepath.Join(s.work, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Status(ctx, git, s.work)
	if err != nil {
		t.Fatal(err)
	}
	want := &GitStatus{Branch: "main", Head: head, Upstream: "origin/main", Ahead: 1, Staged: 1, Unstaged: 2, Untracked: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("Status wrote the index")
	}

	// Behind, and detached.
	gittest.Git(t, s.work, "stash", "-u", "-q")
	gittest.Git(t, s.work, "reset", "-q", "--hard", "HEAD~1")
	gittest.Git(t, s.work, "update-ref", "refs/remotes/origin/main", head)
	got, err = Status(ctx, git, s.work)
	if err != nil {
		t.Fatal(err)
	}
	if got.Behind != 2-1 || got.Ahead != 0 {
		t.Errorf("ahead/behind = %d/%d, want 0/1", got.Ahead, got.Behind)
	}
	gittest.Git(t, s.work, "checkout", "-q", "--detach")
	got, err = Status(ctx, git, s.work)
	if err != nil {
		t.Fatal(err)
	}
	if got.Branch != "" || got.Upstream != "" {
		t.Errorf("detached: branch %q upstream %q, want both empty", got.Branch, got.Upstream)
	}
	if _, err := Status(ctx, git, t.TempDir()); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("outside a repository: %v, want ErrNotRepo", err)
	}
}

// conflictRepo has main and side changing a.txt differently.
func conflictRepo(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "base\n")
	gittest.CommitAll(t, dir, "base")
	gittest.Git(t, dir, "checkout", "-q", "-b", "side")
	gittest.Write(t, dir, "a.txt", "side\n")
	gittest.CommitAll(t, dir, "side")
	gittest.Git(t, dir, "checkout", "-q", "main")
	gittest.Write(t, dir, "a.txt", "main\n")
	gittest.CommitAll(t, dir, "main")
	return dir
}

func TestStatusOperationInProgress(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	tests := []struct {
		op         string
		start      func(t *testing.T, dir string)
		conflicted int
	}{
		{OpMerge, func(t *testing.T, dir string) { gittest.Run(dir, nil, "merge", "side") }, 1},
		{OpRebase, func(t *testing.T, dir string) { gittest.Run(dir, nil, "rebase", "side") }, 1},
		{OpCherryPick, func(t *testing.T, dir string) { gittest.Run(dir, nil, "cherry-pick", "side") }, 1},
		{OpRevert, func(t *testing.T, dir string) {
			gittest.Write(t, dir, "a.txt", "main2\n")
			gittest.CommitAll(t, dir, "main2")
			gittest.Run(dir, nil, "revert", "--no-edit", "HEAD~1")
		}, 1},
		{OpBisect, func(t *testing.T, dir string) { gittest.Git(t, dir, "bisect", "start") }, 0},
		{OpAm, func(t *testing.T, dir string) {
			patch := gittest.Git(t, dir, "format-patch", "--stdout", "-1", "side")
			gittest.Run(dir, []byte(patch), "am")
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			dir := conflictRepo(t)
			tt.start(t, dir)
			got, err := Status(ctx, git, dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.Operation != tt.op {
				t.Errorf("Operation = %q, want %q", got.Operation, tt.op)
			}
			if got.Conflicted != tt.conflicted {
				t.Errorf("Conflicted = %d, want %d", got.Conflicted, tt.conflicted)
			}
		})
	}
	clean := conflictRepo(t)
	got, err := Status(ctx, git, clean)
	if err != nil {
		t.Fatal(err)
	}
	if got.Operation != "" {
		t.Errorf("no operation: got %q", got.Operation)
	}
}

// Origin.

func TestOrigin(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a", "a\n")
	gittest.CommitAll(t, dir, "a")

	got, err := Origin(ctx, git, dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&GitOrigin{Root: dir, Branch: "main"}, got); diff != "" {
		t.Errorf("no remote (-want +got):\n%s", diff)
	}

	// The first remote in `git remote` order when there is no origin.
	gittest.Git(t, dir, "remote", "add", "zeta", "https://user:secret@example.com/acme/zeta.git")
	gittest.Git(t, dir, "remote", "add", "alpha", "git@github.com:acme/alpha.git")
	first := strings.Fields(gittest.Git(t, dir, "remote"))[0]
	got, err = Origin(ctx, git, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Remote != first {
		t.Errorf("remote %q, want the first of git remote, %q", got.Remote, first)
	}
	gittest.Git(t, dir, "remote", "add", "origin", "https://user:secret@example.com/acme/proj.git")
	gittest.Git(t, dir, "checkout", "-q", "--detach")
	got, err = Origin(ctx, git, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := &GitOrigin{Root: dir, Remote: "origin", URL: "https://user@example.com/acme/proj.git",
		Repo: &RemoteRepo{Host: "example.com", Owner: "acme", Name: "proj"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("origin, detached (-want +got):\n%s", diff)
	}
}

func TestParseRemoteURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want *RemoteRepo
	}{
		{"https://github.com/acme/proj.git", &RemoteRepo{"github.com", "acme", "proj"}},
		{"https://user:tok@github.com/acme/proj", &RemoteRepo{"github.com", "acme", "proj"}},
		{"ssh://git@github.com:22/acme/proj.git", &RemoteRepo{"github.com", "acme", "proj"}},
		{"git@github.com:acme/proj.git", &RemoteRepo{"github.com", "acme", "proj"}},
		{"me@git.example.org:acme/proj.git", &RemoteRepo{"git.example.org", "acme", "proj"}},
		{"git://example.org/acme/proj", &RemoteRepo{"example.org", "acme", "proj"}},
		{"file:///srv/git/acme/proj.git", nil},
		{"/srv/git/proj.git", nil},
		{"../proj", nil},
		{"https://example.org/group/sub/proj.git", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ParseRemoteURL(tt.url)); diff != "" {
			t.Errorf("ParseRemoteURL(%q) (-want +got):\n%s", tt.url, diff)
		}
	}
	for in, want := range map[string]string{
		"https://u:p@h/x":  "https://u@h/x",
		"https://u@h/x":    "https://u@h/x",
		"git@h:x":          "git@h:x",
		"file:///srv/x":    "file:///srv/x",
		"ssh://u:p@h:22/x": "ssh://u@h:22/x",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
