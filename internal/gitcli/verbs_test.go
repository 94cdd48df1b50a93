package gitcli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knightcode/knightcode/internal/gittest"
)

// recorder is a Runner whose exec seam records each Cmd instead of
// starting git, answering with out.
type recorder struct {
	cmds []Cmd
	out  string
}

func (rec *recorder) runner() *Runner {
	return &Runner{gitPath: "git", exec: func(_ context.Context, c Cmd, read func(io.Reader) error) error {
		rec.cmds = append(rec.cmds, c)
		return read(strings.NewReader(rec.out))
	}}
}

// TestVerbArgv pins the exact argv of the verbs whose flags hunk ids and
// the user's data depend on: the pinned diff flags, -z, literal paths
// after "--", temporary index views.
func TestVerbArgv(t *testing.T) {
	ctx := context.Background()
	pinnedDiff := []string{"--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/",
		"--diff-algorithm=myers", "--indent-heuristic", "--inter-hunk-context=0", "--full-index", "--submodule=short"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		call func(r *Repo) error
		args []string
		env  []string
	}{
		{"DiffTreePatch", func(r *Repo) error {
			return r.DiffTreePatch(ctx, "A", "B", PatchOptions{Context: 5}, func(io.Reader) error { return nil })
		}, cat([]string{"diff-tree", "-r", "--raw", "-z", "-p", "-M"}, pinnedDiff, []string{"-U5", "A", "B"}), nil},
		{"DiffTreePatch -w", func(r *Repo) error {
			return r.DiffTreePatch(ctx, "A", "B", PatchOptions{Context: 3, IgnoreWhitespace: true}, func(io.Reader) error { return nil })
		}, cat([]string{"diff-tree", "-r", "--raw", "-z", "-p", "-M"}, pinnedDiff, []string{"-U3", "-w", "A", "B"}), nil},
		{"DiffTreeNumstat", func(r *Repo) error {
			return r.DiffTreeNumstat(ctx, "A", "B", func(io.Reader) error { return nil })
		}, cat([]string{"diff-tree", "-r", "--raw", "--numstat", "-z", "-M"}, pinnedDiff, []string{"A", "B"}), nil},
		{"DiffTreeRaw", func(r *Repo) error {
			_, err := r.DiffTreeRaw(ctx, "A", "B", []string{"-x", "a b"})
			return err
		}, []string{"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--ignore-submodules=none", "A", "B", "--", "-x", "a b"}, nil},
		{"DiffIndexPatch cached", func(r *Repo) error {
			_, err := r.DiffIndexPatch(ctx, "T", DiffIndexOptions{Context: 2, Cached: true, Paths: []string{"f"}})
			return err
		}, cat([]string{"diff-index", "--cached", "-p"}, pinnedDiff, []string{"-U2", "--no-renames", "T", "--", "f"}), nil},
		{"DiffTreeBinaryPatch", func(r *Repo) error {
			return r.DiffTreeBinaryPatch(ctx, "A", "B", io.Discard)
		}, cat([]string{"diff-tree", "-r", "-p", "--binary"}, pinnedDiff, []string{"-U3", "A", "B"}), nil},
		{"Apply", func(r *Repo) error {
			return r.Apply(ctx, strings.NewReader(""), ApplyOptions{Cached: true, Reverse: true, Check: true})
		}, []string{"apply", "--whitespace=nowarn", "--no-ignore-whitespace", "--cached", "-R", "--check"}, nil},
		{"WriteTree in a temporary index", func(r *Repo) error {
			_, err := r.WithIndex("/tmp/i").WriteTree(ctx)
			return err
		}, []string{"-c", "core.splitIndex=false", "write-tree"}, []string{"GIT_INDEX_FILE=/tmp/i"}},
		{"CheckoutIndexPrefix", func(r *Repo) error {
			return r.WithIndex("/tmp/i").CheckoutIndexPrefix(ctx, "/tmp/stage/")
		}, []string{"-c", "core.splitIndex=false", "checkout-index", "-f", "-q", "-a", "--prefix=/tmp/stage/"}, []string{"GIT_INDEX_FILE=/tmp/i"}},
		{"UpdateIndexAdd", func(r *Repo) error {
			return r.UpdateIndexAdd(ctx, []string{"a"})
		}, []string{"update-index", "--add", "--remove", "--replace", "-z", "--stdin"}, nil},
		{"AtWorkTree", func(r *Repo) error {
			return r.AtWorkTree("/w").WithIndex("/tmp/i").WithConfig("core.untrackedCache=false").AddAll(ctx)
		}, []string{"--git-dir=/repo/.git", "--work-tree=/w", "-c", "core.splitIndex=false", "-c", "core.untrackedCache=false",
			"add", "--ignore-removal", "--", "."}, []string{"GIT_INDEX_FILE=/tmp/i"}},
		{"ReadTree", func(r *Repo) error {
			return r.WithConfig("filter.lfs.smudge=").ReadTree(ctx, "T", ReadTreeOptions{Reset: true, Update: true})
		}, []string{"-c", "filter.lfs.smudge=", "read-tree", "--reset", "-u", "T"}, nil},
		{"WorktreeRemove", func(r *Repo) error {
			return r.WorktreeRemove(ctx, "/w", 2)
		}, []string{"worktree", "remove", "--force", "--force", "/w"}, nil},
		{"ResolveCommit", func(r *Repo) error {
			_, _, err := r.ResolveCommit(ctx, "-x")
			return err
		}, []string{"rev-parse", "-q", "--verify", "--end-of-options", "-x^{commit}"}, nil},
		{"ForEachRef", func(r *Repo) error {
			_, err := r.ForEachRef(ctx, ForEachRefOptions{Count: 1, Format: "%(refname)", Contains: "C", Patterns: []string{"refs/heads/"}})
			return err
		}, []string{"for-each-ref", "--count=1", "--format=%(refname)", "--contains", "C", "refs/heads/"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			repo := &Repo{Root: "/repo", GitDir: "/repo/.git", CommonDir: "/repo/.git", git: rec.runner(), dir: "/repo"}
			if err := tt.call(repo); err != nil {
				t.Fatal(err)
			}
			if len(rec.cmds) != 1 {
				t.Fatalf("%d git calls, want 1", len(rec.cmds))
			}
			c := rec.cmds[0]
			if diff := cmp.Diff(c.Args, tt.args); diff != "" {
				t.Errorf("args (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(c.Env, tt.env); diff != "" {
				t.Errorf("env (-got +want):\n%s", diff)
			}
			wantDir := "/repo"
			if tt.name == "AtWorkTree" {
				wantDir = "/w"
			}
			if c.Dir != wantDir {
				t.Errorf("Dir = %q, want %q", c.Dir, wantDir)
			}
		})
	}
}

// TestArgvPinsConfig checks the -c options every call gets: the pinned
// diff configuration, and for the server's own calls no hook and no
// fsmonitor (a repository's fsmonitor hook is code git runs on status).
func TestArgvPinsConfig(t *testing.T) {
	has := func(argv []string, kv string) bool {
		for i := 0; i+1 < len(argv); i++ {
			if argv[i] == "-c" && argv[i+1] == kv {
				return true
			}
		}
		return false
	}
	own := argv(Cmd{Args: []string{"status"}})
	for _, kv := range []string{"core.fsmonitor=false", "core.hooksPath=/dev/null", "diff.noprefix=false", "core.quotePath=false"} {
		if !has(own, kv) {
			t.Errorf("argv of an internal call lacks -c %s: %v", kv, own)
		}
	}
	if got := own[len(own)-1]; got != "status" {
		t.Errorf("argv ends with %q, want the subcommand last", got)
	}
	user := argv(Cmd{Args: []string{"commit"}, Hooks: true})
	if has(user, "core.fsmonitor=false") || has(user, "core.hooksPath=/dev/null") {
		t.Errorf("git/commit (Hooks) must run the user's configuration: %v", user)
	}
}

// A repository-local fsmonitor hook is a program git runs on a plain
// status; the server's own calls must never run it.
func TestFsmonitorHookNeverRuns(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "f.txt", "f\n")
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	gittest.WriteMode(t, dir, ".git/fsmon.sh", "#!/bin/sh\ntouch '"+marker+"'\nexit 1\n", 0o755)
	gittest.Git(t, dir, "config", "core.fsmonitor", filepath.Join(dir, ".git", "fsmon.sh"))
	ctx := context.Background()
	repo, err := r.Discover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.StatusV2(ctx); err != nil {
		t.Fatal(err)
	}
	if err := repo.WithIndex(filepath.Join(t.TempDir(), "i")).AddUpdated(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the repository's fsmonitor hook ran on an internal call")
	}
}

func TestDiscoverOneCall(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "sub/x.txt", "x\n")
	ctx := context.Background()
	repo, err := r.Discover(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	want := Repo{Root: dir, GitDir: filepath.Join(dir, ".git"), CommonDir: filepath.Join(dir, ".git"), Prefix: "sub/",
		ObjectFormat: "sha1", IndexPath: filepath.Join(dir, ".git", "index")}
	if diff := cmp.Diff(*repo, want, cmpopts.IgnoreUnexported(Repo{})); diff != "" {
		t.Errorf("Discover (-got +want):\n%s", diff)
	}
	if repo.Dir() != dir {
		t.Errorf("Dir() = %q, want the root", repo.Dir())
	}
	head, tree, err := repo.Head(ctx)
	if err != nil || head == "" || tree == "" {
		t.Errorf("Head = %q, %q, %v", head, tree, err)
	}
	gd, err := r.DiscoverGitDir(ctx, filepath.Join(dir, ".git"))
	if err != nil || gd.CommonDir != filepath.Join(dir, ".git") || gd.Root != "" {
		t.Errorf("DiscoverGitDir(.git) = %+v, %v", gd, err)
	}
	empty := gittest.Init(t)
	repo, err = r.Discover(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if head, tree, err := repo.Head(ctx); err != nil || head != "" || tree != EmptyTreeSHA1 {
		t.Errorf("Head of an unborn branch = %q, %q, %v", head, tree, err)
	}
	// DiscoverHead answers both at once, unborn HEAD included.
	for _, d := range []string{filepath.Join(dir, "sub"), empty} {
		want, err := r.Discover(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		wantHead, wantTree, err := want.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, head, tree, err := r.DiscoverHead(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(*want, *got, cmpopts.IgnoreUnexported(Repo{})); diff != "" || head != wantHead || tree != wantTree {
			t.Errorf("DiscoverHead(%s) = %q %q, want %q %q; repo (-want +got):\n%s", d, head, tree, wantHead, wantTree, diff)
		}
	}
	if _, _, _, err := r.DiscoverHead(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("DiscoverHead outside a repository = %v, want ErrNotRepo", err)
	}
}

// ChangedFiles lists files whose content differs from their index entries
// (a modified and a removed file), not a file merely touched, reading the
// index a view names and leaving the real one alone.
func TestChangedFiles(t *testing.T) {
	ctx := context.Background()
	dir := gittest.InitCommit(t, "a.txt", "a\n", "b.txt", "b\n", "c.txt", "c\n")
	repo, err := newRunner(t).Discover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "a.txt", "a changed\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "c.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(tmp, before, 0o644); err != nil {
		t.Fatal(err)
	}
	view := repo.WithIndex(tmp)
	got, err := view.ChangedFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "b.txt"}, got); diff != "" {
		t.Errorf("ChangedFiles (-want +got):\n%s", diff)
	}
	// Once the view's index records a.txt as it is, only b.txt differs.
	if err := view.UpdateIndexAdd(ctx, []string{"a.txt"}); err != nil {
		t.Fatal(err)
	}
	if got, err := view.ChangedFiles(ctx); err != nil || !cmp.Equal(got, []string{"b.txt"}) {
		t.Errorf("after add: ChangedFiles = %v, %v; want [b.txt]", got, err)
	}
	if after, _ := os.ReadFile(index); string(after) != string(before) {
		t.Error("the real index was written")
	}
}

// A name holding a NUL names no commit, and no git runs for it (exec
// would refuse the argument: QA got internal for such a baseRef).
func TestResolveCommitNUL(t *testing.T) {
	rec := &recorder{}
	repo := &Repo{Root: "/repo", GitDir: "/repo/.git", CommonDir: "/repo/.git", git: rec.runner(), dir: "/repo"}
	id, ok, err := repo.ResolveCommit(context.Background(), "a\x00b")
	if id != "" || ok || err != nil || len(rec.cmds) != 0 {
		t.Errorf("ResolveCommit(NUL) = %q, %v, %v after %d commands; want no commit and no git", id, ok, err, len(rec.cmds))
	}
}

// TestApplyErrorPaths reads the paths out of git apply's refusals, as git
// 2.39+ prints them (a path holding ": " included); other lines name none.
func TestApplyErrorPaths(t *testing.T) {
	stderr := "Applied patch to 'app.txt' cleanly.\n" +
		"error: lib.txt: does not exist in index\n" +
		"error: we: ird.txt: does not exist in index\n" +
		"error: patch failed: dir/a:b.txt:12\n" +
		"error: dir/a:b.txt: patch does not apply\n" +
		"error: new.txt: already exists in index\r\n" +
		"error: repository lacks the necessary blob to perform 3-way merge.\n"
	want := []string{"lib.txt", "we: ird.txt", "dir/a:b.txt", "new.txt"}
	if got := ApplyErrorPaths(stderr); !slices.Equal(got, want) {
		t.Errorf("ApplyErrorPaths = %q, want %q", got, want)
	}
	if got := ApplyErrorPaths("error: unrecognized input\n"); got != nil {
		t.Errorf("ApplyErrorPaths of a message naming no path = %q", got)
	}
}
