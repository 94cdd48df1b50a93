package gitcli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gittest"
)

func TestMain(m *testing.M) { gittest.Main(m) }

func newRunner(t *testing.T) *Runner {
	t.Helper()
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// discoverRepo is the Repo of dir over a new Runner.
func discoverRepo(t *testing.T, dir string) *Repo {
	t.Helper()
	repo, err := newRunner(t).Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestRunReturnsStdout(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	out, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"rev-parse", "--is-inside-work-tree"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "true\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

// An inherited GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE (a parent running
// knightcode from a hook) must not redirect a call to another repository.
func TestInheritedGitEnvironmentCannotRedirect(t *testing.T) {
	a := gittest.Init(t)
	b := gittest.Init(t)
	gittest.Write(t, a, "a.txt", "a\n")
	gittest.CommitAll(t, a, "a")
	gittest.Write(t, b, "b.txt", "b\n")
	gittest.CommitAll(t, b, "b")
	t.Setenv("GIT_DIR", filepath.Join(b, ".git"))
	t.Setenv("GIT_WORK_TREE", b)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(b, ".git", "index"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'diff.noprefix'='true'")
	r := newRunner(t) // reads the environment when built
	ctx := context.Background()
	out, err := r.run(ctx, Cmd{Dir: a, Args: []string{"ls-files"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "a.txt\n"; got != want {
		t.Errorf("ls-files = %q, want %q (redirected to the other repository?)", got, want)
	}
	repo, err := r.Discover(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := repo.Root, a; got != want {
		t.Errorf("Root = %q, want %q", got, want)
	}
	gittest.Write(t, a, "a.txt", "changed\n")
	out, err = r.run(ctx, Cmd{Dir: a, Args: append([]string{"diff"}, DiffFlags(3)...)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "--- a/a.txt\n+++ b/a.txt\n") {
		t.Errorf("diff lost its a/ b/ prefixes:\n%s", out)
	}
}

// The user's configuration must not change what knightcode parses
// (shared/cases C01, C07, C08).
func TestPinnedConfigOverridesUserConfig(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "lib/app/code.ex", "a\nb\n")
	for _, kv := range [][2]string{{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"},
		{"diff.context", "0"}, {"color.ui", "always"}, {"core.quotePath", "true"}, {"diff.external", "false"},
		{"diff.algorithm", "patience"}, {"diff.indentHeuristic", "false"}} {
		gittest.Git(t, dir, "config", kv[0], kv[1])
	}
	gittest.Write(t, dir, "lib/app/code.ex", "a\nB\n")
	out, err := r.run(context.Background(), Cmd{Dir: dir, Args: append([]string{"diff"}, DiffFlags(3)...)})
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/lib/app/code.ex\n+++ b/lib/app/code.ex\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("diff = %q, want it to contain %q", out, want)
	}
}

func TestErrorCarriesExitCodeAndStderr(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	_, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"rev-parse", "--verify", "no-such-ref"}})
	var gerr *Error
	if !errors.As(err, &gerr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if gerr.ExitCode != 128 {
		t.Errorf("ExitCode = %d, want 128", gerr.ExitCode)
	}
	if !strings.Contains(gerr.Stderr, "Needed a single revision") {
		t.Errorf("Stderr = %q", gerr.Stderr)
	}
	if errors.Is(err, ErrNotRepo) {
		t.Errorf("a bad ref is not ErrNotRepo")
	}
}

func TestNotARepository(t *testing.T) {
	r := newRunner(t)
	for name, dir := range map[string]string{
		"plain directory": t.TempDir(),
		"missing":         filepath.Join(t.TempDir(), "nope"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.Discover(context.Background(), dir)
			if !errors.Is(err, ErrNotRepo) {
				t.Errorf("err = %v, want ErrNotRepo", err)
			}
		})
	}
}

func TestDiscoverSubdirectoryAndLinkedWorktree(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "sub/x.txt", "x\n")
	ctx := context.Background()
	repo, err := r.Discover(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if repo.Root != dir || repo.Prefix != "sub/" || repo.Bare || repo.CommonDir != filepath.Join(dir, ".git") {
		t.Errorf("Discover(sub) = %+v", repo)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, dir, "worktree", "add", "-q", "--detach", wt)
	wt, _ = filepath.EvalSymlinks(wt)
	repo, err = r.Discover(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if repo.Root != wt || repo.CommonDir != filepath.Join(dir, ".git") || !strings.HasPrefix(repo.GitDir, filepath.Join(dir, ".git", "worktrees")) {
		t.Errorf("Discover(worktree) = %+v", repo)
	}
}

func TestOutputCap(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "big.txt", strings.Repeat("x", 4096))
	gittest.CommitAll(t, dir, "big")
	_, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"show", "HEAD:big.txt"}, MaxOutput: 1000})
	if !errors.Is(err, ErrOutputTooLarge) {
		t.Errorf("err = %v, want ErrOutputTooLarge", err)
	}
	out, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"show", "HEAD:big.txt"}, MaxOutput: 4096})
	if err != nil || len(out) != 4096 {
		t.Errorf("exactly at the cap: len %d, err %v", len(out), err)
	}
}

func TestTimeoutKillsTheCall(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	pr, pw := io.Pipe() // never written: hash-object waits for stdin
	defer pw.Close()
	_, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"hash-object", "--stdin"}, Stdin: pr, Timeout: 200 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
}

func TestStreamReaderErrorStopsGit(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	stop := errors.New("enough")
	err := r.Stream(context.Background(), Cmd{Dir: dir, Args: []string{"hash-object", "--stdin"}, Stdin: strings.NewReader("x")},
		func(io.Reader) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("err = %v, want the reader's error", err)
	}
}

// A read (Write: false) runs with GIT_OPTIONAL_LOCKS=0: `git status` then
// does not refresh and rewrite the user's index.
func TestReadsDoNotWriteTheIndex(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "f.txt", "f\n")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "f.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	before, _ := os.ReadFile(index)
	st1, _ := os.Stat(index)
	if _, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"status", "--porcelain=v2", "-z"}}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(index)
	st2, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Errorf("status rewrote the index")
	}
}

func TestHooksDisabledUnlessAsked(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	gittest.WriteMode(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\ntouch '"+marker+"'\n", 0o755)
	ctx := context.Background()
	commit := func(hooks bool) {
		t.Helper()
		if _, err := r.run(ctx, Cmd{Dir: dir, Args: []string{"commit", "-q", "--allow-empty", "-m", "x"}, Write: true, Hooks: hooks}); err != nil {
			t.Fatal(err)
		}
	}
	commit(false)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("hook ran on an internal call")
	}
	commit(true)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("hook did not run with Hooks: true")
	}
}

func TestLockRepoExcludes(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	ctx := context.Background()
	l1, err := r.LockRepo(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := r.LockRepo(short, dir); err == nil {
		t.Fatal("second lock taken while the first is held")
	}
	if err := l1.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := r.LockRepo(ctx, dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestCatFile(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "a.txt", "alpha\n", "b.bin", "x\x00y")
	cf, err := r.StartCatFile(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	obj, err := cf.Read("HEAD:a.txt")
	if err != nil || obj.Type != "blob" || string(obj.Data) != "alpha\n" || obj.Size != 6 {
		t.Errorf("Read(HEAD:a.txt) = %+v, %v", obj, err)
	}
	obj, err = cf.Read("HEAD:b.bin")
	if err != nil || string(obj.Data) != "x\x00y" {
		t.Errorf("Read(HEAD:b.bin) = %+v, %v", obj, err)
	}
	info, err := cf.Info("HEAD^{tree}")
	if err != nil || info.Type != "tree" || info.Data != nil {
		t.Errorf("Info(tree) = %+v, %v", info, err)
	}
	if _, err := cf.Read("HEAD:missing.txt"); !errors.Is(err, ErrObjectMissing) {
		t.Errorf("missing: err = %v", err)
	}
	if _, err := cf.Read("a\nb"); !errors.Is(err, ErrObjectMissing) {
		t.Errorf("newline in name: err = %v", err)
	}
	// A missing object is an answer: the process still serves requests.
	if obj, err := cf.Read("HEAD:a.txt"); err != nil || string(obj.Data) != "alpha\n" {
		t.Errorf("Read after a missing object = %+v, %v", obj, err)
	}
	if err := cf.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, req := range []func(string) (Object, error){cf.Read, cf.Info} {
		if _, err := req("HEAD:a.txt"); !errors.Is(err, ErrCatFileClosed) {
			t.Errorf("request after Close: err = %v, want ErrCatFileClosed", err)
		}
	}
	if err := cf.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestCatFileBrokenAfterFailure kills the process under a CatFile: the next
// request fails on the dead stream, and every later one fails at once with
// ErrCatFileBroken instead of reading answers that may belong to another
// request.
func TestCatFileBrokenAfterFailure(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "a.txt", "alpha\n")
	ctx, cancel := context.WithCancel(context.Background())
	cf, err := r.StartCatFile(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cf.Read("HEAD:a.txt"); err != nil {
		t.Fatalf("Read before the kill: %v", err)
	}
	cancel()
	// Wait until the process was reaped (Wait closed the pipes), then put
	// the result back for Close.
	waitErr := <-cf.done
	cf.done <- waitErr
	_, err = cf.Read("HEAD:a.txt")
	if err == nil || errors.Is(err, ErrCatFileBroken) || errors.Is(err, ErrObjectMissing) {
		t.Fatalf("Read on a dead process: err = %v, want the I/O failure", err)
	}
	for _, req := range []func(string) (Object, error){cf.Read, cf.Info} {
		if _, err := req("HEAD:a.txt"); !errors.Is(err, ErrCatFileBroken) {
			t.Errorf("request after a failure: err = %v, want ErrCatFileBroken", err)
		}
	}
	_ = cf.Close() // the process was killed: Close reports that
	if _, err := cf.Read("HEAD:a.txt"); !errors.Is(err, ErrCatFileClosed) {
		t.Errorf("Read after Close: err = %v, want ErrCatFileClosed", err)
	}
}

func TestScrubEnv(t *testing.T) {
	got := scrubEnv([]string{"PATH=/bin", "GIT_DIR=/x", "GIT_INDEX_FILE=/y", "GIT_AUTHOR_NAME=a", "LANG=de_DE.UTF-8", "GIT_EXTERNAL_DIFF=evil"})
	joined := strings.Join(got, "\n")
	for _, bad := range []string{"GIT_DIR=", "GIT_INDEX_FILE=", "LANG=", "GIT_EXTERNAL_DIFF="} {
		if strings.Contains(joined, bad) {
			t.Errorf("scrubbed env keeps %s: %v", bad, got)
		}
	}
	for _, good := range []string{"PATH=/bin", "GIT_AUTHOR_NAME=a", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1"} {
		if !strings.Contains(joined, good) {
			t.Errorf("scrubbed env lacks %s: %v", good, got)
		}
	}
}

// Every git child gets glibc's malloc trim threshold, merged into the
// user's own GLIBC_TUNABLES, whose own trim threshold wins.
func TestScrubEnvMallocTrim(t *testing.T) {
	tests := []struct {
		env  []string
		want string
	}{
		{nil, "GLIBC_TUNABLES=" + mallocTrim},
		{[]string{"GLIBC_TUNABLES="}, "GLIBC_TUNABLES=" + mallocTrim},
		{[]string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, "GLIBC_TUNABLES=glibc.malloc.arena_max=2:" + mallocTrim},
		{[]string{"GLIBC_TUNABLES=glibc.malloc.trim_threshold=1"}, "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1"},
	}
	for _, tt := range tests {
		var got []string
		for _, kv := range scrubEnv(tt.env) {
			if strings.HasPrefix(kv, "GLIBC_TUNABLES=") {
				got = append(got, kv)
			}
		}
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("scrubEnv(%q) gives %q, want %q", tt.env, got, tt.want)
		}
	}
}

// TestLockedIndexAndRef checks that git refusing to take a lock file that
// exists (another git process holds the index or a ref) matches ErrLocked,
// and that other failures do not.
func TestLockedIndexAndRef(t *testing.T) {
	r := newRunner(t)
	dir := gittest.InitCommit(t, "f.txt", "one\n")
	// f.txt's stat data no longer matches its index entry, so that
	// update-index --refresh has an index to write (with nothing to
	// write, git never reports the lock it could not take: racily, when
	// the file and the index were written in one timestamp tick, it did).
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "f.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	for _, lock := range []string{"index.lock", "refs/heads/side.lock"} {
		if err := os.WriteFile(filepath.Join(gitDir, lock), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		args   []string
		locked bool
	}{
		{"update-index", []string{"update-index", "--refresh"}, true},
		{"read-tree", []string{"read-tree", "HEAD"}, true},
		{"update-ref", []string{"update-ref", "refs/heads/side", "HEAD"}, true},
		{"bad ref", []string{"update-ref", "refs/heads/other", "no-such-commit"}, false},
	}
	for _, tt := range tests {
		_, err := r.run(context.Background(), Cmd{Dir: dir, Args: tt.args, Write: true})
		if err == nil {
			t.Errorf("%s: succeeded, want a failure", tt.name)
			continue
		}
		if got := errors.Is(err, ErrLocked); got != tt.locked {
			t.Errorf("%s: errors.Is(ErrLocked) = %v, want %v (%v)", tt.name, got, tt.locked, err)
		}
	}
}

// TestFileChanging checks that git's "short read while indexing" (a file
// whose size changed between its stat and its read) matches
// ErrFileChanging. A sysfs file, whose stat size (4096) is not what a read
// gives, makes git say it every time.
func TestFileChanging(t *testing.T) {
	const sysfs = "/sys/kernel/mm/transparent_hugepage/enabled"
	if fi, err := os.Stat(sysfs); err != nil || fi.Size() == 0 {
		t.Skipf("no sysfs file to read short: %v", err)
	}
	r := newRunner(t)
	dir := gittest.Init(t)
	_, err := r.run(context.Background(), Cmd{Dir: dir, Args: []string{"hash-object", sysfs}})
	if !errors.Is(err, ErrFileChanging) {
		t.Errorf("hash-object of %s: %v, want ErrFileChanging", sysfs, err)
	}
	_, err = r.run(context.Background(), Cmd{Dir: dir, Args: []string{"hash-object", filepath.Join(dir, "missing")}})
	if err == nil || errors.Is(err, ErrFileChanging) {
		t.Errorf("hash-object of a missing file: %v, want another error", err)
	}
}

// TestHookTimeoutStopsTheHook commits under a pre-commit hook that sleeps,
// with a Runner whose hook timeout is short: the commit is stopped with a
// *TimeoutError for a hook call, nothing is committed, the hook is asked
// to end (its SIGTERM trap runs) and git leaves no lock file (issue 22).
// The same Runner's calls without hooks keep their own timeout.
func TestHookTimeoutStopsTheHook(t *testing.T) {
	r := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	head := gittest.CommitAll(t, dir, "base")
	trapped := filepath.Join(t.TempDir(), "trapped")
	gittest.WriteMode(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\ntrap 'echo yes > \""+trapped+"\"; exit 1' TERM\nsleep 300 &\nwait\n", 0o755)
	gittest.Write(t, dir, "a.txt", "b\n")
	gittest.Git(t, dir, "add", "a.txt")
	repo, err := r.WithHookTimeout(300*time.Millisecond).Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Commit(context.Background(), "stopped")
	te, ok := errors.AsType[*TimeoutError](err)
	if !ok || !te.Hooks || te.Timeout != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("commit under a sleeping hook: %v, want a hook TimeoutError", err)
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD")); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
	if b, err := os.ReadFile(trapped); err != nil || strings.TrimSpace(string(b)) != "yes" {
		t.Errorf("the hook was not asked to end (SIGTERM): %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Error("git left index.lock behind")
	}
	if _, err := repo.WriteTree(context.Background()); err != nil {
		t.Errorf("a call without hooks: %v", err)
	}
}
