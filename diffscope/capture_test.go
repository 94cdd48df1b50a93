package diffscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// treeFiles lists "<mode> <path>" of every entry of tree, recursively.
func treeFiles(t testing.TB, dir, tree string) []string {
	t.Helper()
	out := gittest.Git(t, dir, "ls-tree", "-r", "-z", tree)
	var files []string
	for _, rec := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, _ := strings.Cut(rec, "\t")
		files = append(files, strings.Fields(meta)[0]+" "+path)
	}
	return files
}

// blobAt is the content of path in tree ("" and false when absent).
func blobAt(t testing.TB, dir, tree, path string) (string, bool) {
	t.Helper()
	out, err := gittest.Run(dir, nil, "cat-file", "-p", tree+":"+path)
	if err != nil {
		return "", false
	}
	return out, true
}

func TestCaptureUnbornHead(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.Write(t, dir, "staged.txt", "s\n")
	gittest.Git(t, dir, "add", "staged.txt")
	d := newDiffer(t)
	c := mustCapture(t, d, dir)
	if c.Head != "" || c.HeadTree != gitcli.EmptyTreeSHA1 {
		t.Errorf("Head, HeadTree = %q, %q; want \"\", the empty tree", c.Head, c.HeadTree)
	}
	if diff := cmp.Diff(treeFiles(t, dir, c.IndexTree), []string{"100644 staged.txt"}); diff != "" {
		t.Errorf("index tree (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(treeFiles(t, dir, c.WorktreeTree), []string{"100644 a.txt", "100644 staged.txt"}); diff != "" {
		t.Errorf("worktree tree (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(c.Untracked, []string{"a.txt"}); diff != "" {
		t.Errorf("Untracked (-got +want):\n%s", diff)
	}
	for _, tc := range []struct {
		scope Scope
		want  []string
	}{
		{ScopeUncommitted, []string{"a.txt", "staged.txt"}},
		{ScopeStaged, []string{"staged.txt"}},
		{ScopeUnstaged, []string{"a.txt"}},
	} {
		res := mustRead(t, d, dir, ReadOptions{Scope: tc.scope})
		if diff := cmp.Diff(paths(res), tc.want); diff != "" {
			t.Errorf("%s files (-got +want):\n%s", tc.scope, diff)
		}
	}
}

func TestCaptureWithoutIndexFile(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	d := newDiffer(t)
	c := mustCapture(t, d, dir)
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); !os.IsNotExist(err) {
		t.Errorf("capture created the user's index (stat: %v)", err)
	}
	if c.IndexTree != gitcli.EmptyTreeSHA1 {
		t.Errorf("IndexTree = %s, want the empty tree", c.IndexTree)
	}
	if diff := cmp.Diff(treeFiles(t, dir, c.WorktreeTree), []string{"100644 a.txt"}); diff != "" {
		t.Errorf("worktree tree (-got +want):\n%s", diff)
	}
}

func TestCaptureFromSubdirectory(t *testing.T) {
	dir := gittest.InitCommit(t, "top.txt", "1\n", "sub/inner.txt", "1\n")
	gittest.Write(t, dir, "top.txt", "2\n")
	gittest.Write(t, dir, "sub/inner.txt", "2\n")
	gittest.Write(t, dir, "sub/new.txt", "n\n")
	gittest.Write(t, dir, "other/new.txt", "n\n")
	d := newDiffer(t)
	res := mustRead(t, d, filepath.Join(dir, "sub"), ReadOptions{})
	if res.Root != dir {
		t.Errorf("Root = %s, want %s", res.Root, dir)
	}
	if diff := cmp.Diff(paths(res), []string{"other/new.txt", "sub/inner.txt", "sub/new.txt", "top.txt"}); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	c := mustCapture(t, d, filepath.Join(dir, "sub"))
	if diff := cmp.Diff(c.Untracked, []string{"other/new.txt", "sub/new.txt"}); diff != "" {
		t.Errorf("Untracked (-got +want):\n%s", diff)
	}
}

func TestCaptureIntentToAdd(t *testing.T) {
	dir := gittest.InitCommit(t, "a.txt", "a\n")
	gittest.Write(t, dir, "ita.txt", "new\n")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	d := newDiffer(t)
	c := mustCapture(t, d, dir)
	if _, ok := blobAt(t, dir, c.IndexTree, "ita.txt"); ok {
		t.Errorf("index tree holds the intent-to-add entry")
	}
	if got, _ := blobAt(t, dir, c.WorktreeTree, "ita.txt"); got != "new\n" {
		t.Errorf("worktree tree ita.txt = %q, want %q", got, "new\n")
	}
	if len(c.Untracked) != 0 {
		t.Errorf("Untracked = %v, want none (ita.txt is in the index)", c.Untracked)
	}
	for _, tc := range []struct {
		scope Scope
		want  []string
	}{
		{ScopeUncommitted, []string{"ita.txt"}},
		{ScopeUnstaged, []string{"ita.txt"}},
		{ScopeStaged, []string{}},
	} {
		res := mustRead(t, d, dir, ReadOptions{Scope: tc.scope})
		if diff := cmp.Diff(paths(res), tc.want); diff != "" {
			t.Errorf("%s files (-got +want):\n%s", tc.scope, diff)
		}
	}
}

// conflicted makes a merge that stops with f.txt changed on both sides and
// g.txt deleted on ours and changed on theirs.
func conflicted(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, "f.txt", "base\n")
	gittest.Write(t, dir, "g.txt", "base\n")
	gittest.Write(t, dir, "h.txt", "base\n")
	gittest.CommitAll(t, dir, "base")
	gittest.Git(t, dir, "checkout", "-q", "-b", "other")
	gittest.Write(t, dir, "f.txt", "theirs\n")
	gittest.Write(t, dir, "g.txt", "theirs\n")
	gittest.CommitAll(t, dir, "theirs")
	gittest.Git(t, dir, "checkout", "-q", "main")
	gittest.Write(t, dir, "f.txt", "ours\n")
	gittest.Git(t, dir, "rm", "-q", "g.txt")
	gittest.Write(t, dir, "h.txt", "ours\n")
	gittest.CommitAll(t, dir, "ours")
	if _, err := gittest.Run(dir, nil, "merge", "-q", "other"); err == nil {
		t.Fatal("merge did not stop on a conflict")
	}
	return dir
}

func TestCaptureConflictedIndex(t *testing.T) {
	dir := conflicted(t)
	d := newDiffer(t)
	c := mustCapture(t, d, dir)
	if got, _ := blobAt(t, dir, c.IndexTree, "f.txt"); got != "ours\n" {
		t.Errorf("index tree f.txt = %q, want ours (stage 2)", got)
	}
	if _, ok := blobAt(t, dir, c.IndexTree, "g.txt"); ok {
		t.Errorf("index tree holds g.txt, which ours deleted")
	}
	wt, _ := blobAt(t, dir, c.WorktreeTree, "f.txt")
	if !strings.Contains(wt, "<<<<<<<") {
		t.Errorf("worktree tree f.txt = %q, want the file on disk with conflict markers", wt)
	}
	if got, _ := blobAt(t, dir, c.WorktreeTree, "g.txt"); got != "theirs\n" {
		t.Errorf("worktree tree g.txt = %q, want the file on disk", got)
	}
	for _, scope := range []Scope{ScopeUncommitted, ScopeUnstaged, ScopeStaged} {
		mustRead(t, d, dir, ReadOptions{Scope: scope})
	}
	res := mustRead(t, d, dir, ReadOptions{Scope: ScopeUnstaged})
	if diff := cmp.Diff(paths(res), []string{"f.txt", "g.txt"}); diff != "" {
		t.Errorf("unstaged files (-got +want):\n%s", diff)
	}
}

func TestCaseC13_CleanLinkedWorktreeHasNoChanges(t *testing.T) {
	d := newDiffer(t)
	t.Run("bare repository with worktrees", func(t *testing.T) {
		src := gittest.InitCommit(t, "a.txt", "x\n")
		proj, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		gittest.Git(t, proj, "clone", "-q", "--bare", src, ".bare")
		gittest.Git(t, proj, "--git-dir=.bare", "worktree", "add", "-q", "development", "main")
		wt := filepath.Join(proj, "development")
		ageIndex(t, wt)
		res := mustRead(t, d, wt, ReadOptions{})
		if len(res.Files) != 0 || res.Root != wt {
			t.Errorf("clean worktree: root %s, files %v; want %s, none", res.Root, paths(res), wt)
		}
		gittest.Write(t, wt, "a.txt", "y\n")
		res = mustRead(t, d, wt, ReadOptions{})
		if diff := cmp.Diff(paths(res), []string{"a.txt"}); diff != "" {
			t.Errorf("files after an edit (-got +want):\n%s", diff)
		}
		if _, err := d.Read(context.Background(), filepath.Join(proj, ".bare"), ReadOptions{}); !errors.Is(err, gitcli.ErrNotRepo) {
			t.Errorf("Read in the bare repository: %v, want ErrNotRepo", err)
		}
	})
	t.Run("linked worktree", func(t *testing.T) {
		dir := gittest.InitCommit(t, "a.txt", "x\n", "b.txt", "x\n")
		gittest.Write(t, dir, "a.txt", "dirty in the main checkout\n")
		wt := filepath.Join(t.TempDir(), "wt")
		gittest.Git(t, dir, "worktree", "add", "-q", "--detach", wt)
		wt, _ = filepath.EvalSymlinks(wt)
		ageIndex(t, wt)
		checkMain := guard(t, dir)
		res := mustRead(t, d, wt, ReadOptions{})
		if len(res.Files) != 0 {
			t.Errorf("clean linked worktree: files %v, want none", paths(res))
		}
		gittest.Write(t, wt, "b.txt", "y\n")
		res = mustRead(t, d, wt, ReadOptions{})
		if diff := cmp.Diff(paths(res), []string{"b.txt"}); diff != "" {
			t.Errorf("files after an edit (-got +want):\n%s", diff)
		}
		checkMain()
	})
}

func TestReadNotARepository(t *testing.T) {
	d := newDiffer(t)
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := d.Read(ctx, dir, ReadOptions{}); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Read: %v, want ErrNotRepo", err)
	}
	if _, err := d.Capture(ctx, dir); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Capture: %v, want ErrNotRepo", err)
	}
	if _, err := d.Read(ctx, filepath.Join(dir, "missing"), ReadOptions{}); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Read of a missing directory: %v, want ErrNotRepo", err)
	}
	repo := gittest.Init(t)
	if _, err := d.Read(ctx, filepath.Join(repo, ".git"), ReadOptions{}); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Read inside .git: %v, want ErrNotRepo", err)
	}
}

// writeMany writes n small files named <dir>/f<i>.txt.
func writeMany(t *testing.T, root, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(root, dir, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCaptureUntrackedLimits(t *testing.T) {
	d := newDiffer(t)
	t.Run("folder of 200+ left out, ignored files not counted", func(t *testing.T) {
		dir := gittest.InitCommit(t, ".gitignore", "*.log\nbuild/\n")
		writeMany(t, dir, "gen", 250)
		writeMany(t, dir, "a", 150)
		writeMany(t, dir, "b", 150)
		writeMany(t, dir, "build", 300) // ignored
		gittest.Write(t, dir, "a/debug.log", "ignored\n")
		gittest.Write(t, dir, "huge.bin", "")
		if err := os.Truncate(filepath.Join(dir, "huge.bin"), MaxUntrackedSize+1); err != nil {
			t.Fatal(err)
		}
		c := mustCapture(t, d, dir)
		if len(c.Untracked) != 300 || c.UntrackedSkipped != 251 || c.UntrackedDropped {
			t.Errorf("included %d, skipped %d, dropped %v; want 300, 251, false", len(c.Untracked), c.UntrackedSkipped, c.UntrackedDropped)
		}
		for _, p := range c.Untracked {
			if strings.HasPrefix(p, "gen/") || strings.HasPrefix(p, "build/") || strings.HasSuffix(p, ".log") || p == "huge.bin" {
				t.Errorf("%s included", p)
			}
		}
		if n := len(treeFiles(t, dir, c.WorktreeTree)); n != 301 {
			t.Errorf("worktree tree has %d files, want 301 (.gitignore + 300)", n)
		}
		res := mustRead(t, d, dir, ReadOptions{Budget: -1})
		if len(res.Files) != 300 || res.UntrackedSkipped != 251 {
			t.Errorf("read: %d files, untrackedSkipped %d; want 300, 251", len(res.Files), res.UntrackedSkipped)
		}
		staged := mustRead(t, d, dir, ReadOptions{Scope: ScopeStaged})
		if staged.UntrackedSkipped != 0 {
			t.Errorf("staged read untrackedSkipped = %d, want 0", staged.UntrackedSkipped)
		}
	})
	t.Run("more than 500 remain: none included", func(t *testing.T) {
		dir := gittest.InitCommit(t, "tracked.txt", "1\n")
		gittest.Write(t, dir, "tracked.txt", "2\n")
		for _, f := range []string{"a", "b", "c"} {
			writeMany(t, dir, f, 199)
		}
		c := mustCapture(t, d, dir)
		if len(c.Untracked) != 0 || c.UntrackedSkipped != 597 || !c.UntrackedDropped {
			t.Errorf("included %d, skipped %d, dropped %v; want 0, 597, true", len(c.Untracked), c.UntrackedSkipped, c.UntrackedDropped)
		}
		res := mustRead(t, d, dir, ReadOptions{})
		if diff := cmp.Diff(paths(res), []string{"tracked.txt"}); diff != "" {
			t.Errorf("files (-got +want):\n%s", diff)
		}
		if res.UntrackedSkipped != 597 {
			t.Errorf("untrackedSkipped = %d, want 597", res.UntrackedSkipped)
		}
	})
}

func TestCaptureRacyCleanEdit(t *testing.T) {
	// A same-size edit whose stat data still matches the index entry is
	// found only through git's racy-clean check (entry mtime >= index
	// mtime). The temporary index keeps the real index's mtime, so the
	// check fires there as it would for git status; a fresh mtime would
	// hide the edit.
	dir := gittest.Init(t)
	gittest.Git(t, dir, "config", "core.trustctime", "false")
	gittest.Git(t, dir, "config", "core.checkStat", "minimal")
	f := filepath.Join(dir, "a.txt")
	gittest.Write(t, dir, "a.txt", "aaaa\n")
	stamp := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(f, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	gittest.CommitAll(t, dir, "init")
	gittest.Write(t, dir, "a.txt", "bbbb\n")
	for _, p := range []string{f, filepath.Join(dir, ".git", "index")} {
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	if out := gittest.Git(t, dir, "status", "--porcelain"); out != " M a.txt\n" {
		t.Fatalf("git status = %q, want the edit seen", out)
	}
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	if diff := cmp.Diff(paths(res), []string{"a.txt"}); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
}

func TestCaptureSplitIndex(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "config", "core.splitIndex", "true")
	gittest.Git(t, dir, "config", "splitIndex.maxPercentChange", "100")
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.Write(t, dir, "b.txt", "b\n")
	gittest.CommitAll(t, dir, "init")
	gittest.Write(t, dir, "c.txt", "c\n")
	gittest.Git(t, dir, "add", "c.txt")
	gittest.Write(t, dir, "a.txt", "A\n")
	shared, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	if len(shared) == 0 {
		t.Fatal("the repository has no shared index")
	}
	d := newDiffer(t)
	for _, tc := range []struct {
		scope Scope
		want  []string
	}{
		{ScopeUncommitted, []string{"a.txt", "c.txt"}},
		{ScopeStaged, []string{"c.txt"}},
		{ScopeUnstaged, []string{"a.txt"}},
	} {
		res := mustRead(t, d, dir, ReadOptions{Scope: tc.scope})
		if diff := cmp.Diff(paths(res), tc.want); diff != "" {
			t.Errorf("%s files (-got +want):\n%s", tc.scope, diff)
		}
	}
	after, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	if diff := cmp.Diff(after, shared); diff != "" {
		t.Errorf("shared index files changed (-got +want):\n%s", diff)
	}
}
