package workspace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

func TestCreateDetachedAtHeadFromSubdirectory(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	branches := gittest.Git(t, src, "branch", "-a")
	c, err := m.Create(ctx, CreateOptions{Cwd: filepath.Join(src, "sub"), ThreadID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	w := c.Worktree
	re := regexp.MustCompile("^" + regexp.QuoteMeta(m.DefaultRoot()) + "/[0-9a-f]{4}/" + regexp.QuoteMeta(filepath.Base(src)) + "$")
	if !re.MatchString(w.Path) {
		t.Errorf("path %s is not <root>/<4 hex>/<repo name> under %s", w.Path, m.DefaultRoot())
	}
	if got, want := c.Cwd, filepath.Join(w.Path, "sub"); got != want {
		t.Errorf("Cwd = %s, want %s", got, want)
	}
	if got, want := headOf(t, w.Path), headOf(t, src); got != want {
		t.Errorf("worktree HEAD = %s, want the checkout's HEAD %s", got, want)
	}
	if out, err := gittest.Run(w.Path, nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Errorf("worktree HEAD is on a branch %q, want detached", out)
	}
	if got := gittest.Git(t, src, "branch", "-a"); got != branches {
		t.Errorf("branches changed:\n%s\nwant\n%s", got, branches)
	}
	if got := stateOf(t, w.Path); got != (gitState{}) {
		t.Errorf("new worktree not clean: %+v", got)
	}
	if got, want := gittest.Read(t, w.Path, "sub/a.txt"), gittest.Read(t, src, "sub/a.txt"); got != want {
		t.Errorf("sub/a.txt = %q, want %q", got, want)
	}
	st, err := os.Stat(filepath.Join(w.Path, "tools/run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh mode %v: want not executable (committed as 100644)", st.Mode())
	}
	if got := knightcodeRefs(t, src); len(got) != 0 {
		t.Errorf("refs written: %v", got)
	}
	got, ok, err := m.Registry().Get(w.Path)
	if err != nil || !ok {
		t.Fatalf("registry Get = %v, %v", ok, err)
	}
	want := Worktree{Path: w.Path, ProjectCwd: src, CommonDir: filepath.Join(src, ".git"), Head: headOf(t, src),
		Base: headOf(t, src), ThreadIDs: []string{"t1"}, CreatedAt: got.CreatedAt, LastUsedAt: got.LastUsedAt}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("registry entry (-got +want):\n%s", diff)
	}
}

// C15: the checkout's changes come along exactly (staged, unstaged, both
// in one file, untracked, exec bit, symlink, deletion, staged deletion,
// intent-to-add), ignored files do not, and the checkout is not written.
func TestCaseC15_CarryLocalChangesExactly(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	dirtyFixture(t, src)
	want := stateOf(t, src)
	index := indexBytes(t, src)

	c, err := m.Create(ctx, CreateOptions{Cwd: filepath.Join(src, "sub", "deep"), CarryLocalChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := indexBytes(t, src); !bytes.Equal(got, index) {
		t.Errorf("the source index changed (%d -> %d bytes)", len(index), len(got))
	}
	if diff := cmp.Diff(stateOf(t, c.Worktree.Path), want); diff != "" {
		t.Errorf("worktree state differs from the source's (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(stateOf(t, src), want); diff != "" {
		t.Errorf("source state changed (-got +want):\n%s", diff)
	}
	if got, want := c.Cwd, filepath.Join(c.Worktree.Path, "sub", "deep"); got != want {
		t.Errorf("Cwd = %s, want %s", got, want)
	}
	if _, err := os.Lstat(filepath.Join(c.Worktree.Path, "sub/build.log")); !os.IsNotExist(err) {
		t.Errorf("ignored sub/build.log was carried (lstat: %v)", err)
	}
	if target, err := os.Readlink(filepath.Join(c.Worktree.Path, "sub/link")); err != nil || target != "../README.md" {
		t.Errorf("sub/link = %q, %v; want a symlink to ../README.md", target, err)
	}
	if got, want := gittest.Read(t, c.Worktree.Path, "sub/intent.py"), "x\n"; got != want {
		t.Errorf("sub/intent.py = %q, want %q", got, want)
	}
	wantCarried := &Carried{Untracked: 3, IntentToAdd: []string{"sub/intent.py"}}
	if diff := cmp.Diff(c.Carried, wantCarried); diff != "" {
		t.Errorf("Carried (-got +want):\n%s", diff)
	}
	if got := knightcodeRefs(t, src); len(got) != 0 {
		t.Errorf("refs written: %v", got)
	}
}

// C13: in a bare-repository-plus-worktrees layout the per-worktree index
// is under <common>/worktrees/<id>/; a worktree made from such a checkout
// is clean (no file reported changed) and carries exactly its changes.
func TestCaseC13_CreateFromBareLayoutWorktree(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	origin := commitFixture(t)
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, proj, "clone", "-q", "--bare", origin, ".bare")
	gittest.Git(t, filepath.Join(proj, ".bare"), "worktree", "add", "-q", filepath.Join(proj, "development"), "main")
	dev := filepath.Join(proj, "development")

	c, err := m.Create(ctx, CreateOptions{Cwd: dev})
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, c.Worktree.Path); got != (gitState{}) {
		t.Errorf("worktree from a bare layout not clean: %+v", got)
	}
	if got, want := c.Worktree.ProjectCwd, dev; got != want {
		t.Errorf("ProjectCwd = %s, want the linked checkout %s (the main worktree is bare)", got, want)
	}

	dirtyFixture(t, dev)
	want := stateOf(t, dev)
	c, err = m.Create(ctx, CreateOptions{Cwd: dev, CarryLocalChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stateOf(t, c.Worktree.Path), want); diff != "" {
		t.Errorf("carried state differs (-got +want):\n%s", diff)
	}

	// A worktree made from a managed worktree (a thread there spawning
	// another) is clean too, with the same project.
	c2, err := m.Create(ctx, CreateOptions{Cwd: c.Cwd})
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, c2.Worktree.Path); got != (gitState{}) {
		t.Errorf("worktree made from a managed worktree not clean: %+v", got)
	}
	if got := c2.Worktree.ProjectCwd; got != dev {
		t.Errorf("ProjectCwd = %s, want %s", got, dev)
	}

	if _, err := m.Create(ctx, CreateOptions{Cwd: filepath.Join(proj, ".bare")}); !errors.Is(err, ErrBareRepository) {
		t.Errorf("Create in the bare repository: %v, want ErrBareRepository", err)
	}
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	unborn := gittest.Init(t)
	gittest.Write(t, unborn, "a.txt", "a\n")
	bare, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, bare, "init", "-q", "--bare")
	plain, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := commitFixture(t)

	tests := []struct {
		name  string
		opts  CreateOptions
		check func(error) bool
		want  string
	}{
		{"unborn HEAD", CreateOptions{Cwd: unborn}, func(e error) bool { return errors.Is(e, ErrUnbornHead) }, "ErrUnbornHead"},
		{"unborn HEAD carrying", CreateOptions{Cwd: unborn, CarryLocalChanges: true}, func(e error) bool { return errors.Is(e, ErrUnbornHead) }, "ErrUnbornHead"},
		{"bare repository", CreateOptions{Cwd: bare}, func(e error) bool { return errors.Is(e, ErrBareRepository) }, "ErrBareRepository"},
		{"git dir", CreateOptions{Cwd: filepath.Join(repo, ".git")}, func(e error) bool { return errors.Is(e, ErrBareRepository) }, "ErrBareRepository"},
		{"not a repository", CreateOptions{Cwd: plain}, func(e error) bool { return errors.Is(e, gitcli.ErrNotRepo) }, "gitcli.ErrNotRepo"},
		{"missing cwd", CreateOptions{Cwd: filepath.Join(plain, "nope")}, isParam("cwd"), "ParamError cwd"},
		{"bad baseRef", CreateOptions{Cwd: repo, BaseRef: "no-such-branch"}, isParam("baseRef"), "ParamError baseRef"},
		{"option-like baseRef", CreateOptions{Cwd: repo, BaseRef: "--all"}, isParam("baseRef"), "ParamError baseRef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Create(ctx, tt.opts)
			if !tt.check(err) {
				t.Errorf("Create: %v, want %s", err, tt.want)
			}
		})
	}
	if ents := topEntries(m.DefaultRoot()); len(ents) != 0 {
		t.Errorf("worktrees root holds %v after failed creations", ents)
	}
}

func isParam(field string) func(error) bool {
	return func(err error) bool {
		var pe *ParamError
		return errors.As(err, &pe) && pe.Field == field
	}
}

// A creation that fails at any step leaves nothing: no directory under the
// root, the same `git worktree list`, no .git/worktrees entry, no ref, no
// registry entry.
func TestCreateFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	src := commitFixture(t)
	dirtyFixture(t, src)
	fileRoot := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(fileRoot, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opts   CreateOptions
		failAt string
	}{
		{"bad baseRef", CreateOptions{BaseRef: "nope"}, ""},
		{"root below a file (unwritable)", CreateOptions{Root: filepath.Join(fileRoot, "worktrees")}, ""},
		{"fails after registering", CreateOptions{CarryLocalChanges: true}, "registered"},
		{"fails after worktree add", CreateOptions{CarryLocalChanges: true}, "added"},
		{"fails after populating", CreateOptions{CarryLocalChanges: true}, "populated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t)
			if tt.failAt != "" {
				m.step = func(name string) error {
					if name == tt.failAt {
						return errors.New("injected failure at " + name)
					}
					return nil
				}
			}
			root := m.DefaultRoot()
			if tt.opts.Root != "" {
				root = tt.opts.Root
			} else if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			list := worktreeList(t, src)
			admin := topEntries(filepath.Join(src, ".git", "worktrees"))
			state := stateOf(t, src)
			opts := tt.opts
			opts.Cwd = src
			if _, err := m.Create(ctx, opts); err == nil {
				t.Fatal("Create succeeded")
			}
			if got := topEntries(root); len(got) != 0 {
				t.Errorf("left under the root: %v", got)
			}
			if got := worktreeList(t, src); got != list {
				t.Errorf("git worktree list changed:\n%s\nwant\n%s", got, list)
			}
			if got := topEntries(filepath.Join(src, ".git", "worktrees")); !cmp.Equal(got, admin) {
				t.Errorf(".git/worktrees = %v, want %v", got, admin)
			}
			if got := knightcodeRefs(t, src); len(got) != 0 {
				t.Errorf("refs left: %v", got)
			}
			if all, err := m.Registry().List(); err != nil || len(all) != 0 {
				t.Errorf("registry = %v, %v; want empty", all, err)
			}
			if diff := cmp.Diff(stateOf(t, src), state); diff != "" {
				t.Errorf("source changed (-got +want):\n%s", diff)
			}
		})
	}
}

// An unwritable root (permissions) fails without leaving anything; root
// bypasses permissions, so this runs only as an ordinary user.
func TestCreateUnwritableRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("permissions do not apply to root; TestCreateFailureLeavesNothing covers a root below a file")
	}
	m := newManager(t)
	src := commitFixture(t)
	root := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(root, 0o555); err != nil {
		t.Fatal(err)
	}
	list := worktreeList(t, src)
	if _, err := m.Create(ctx, CreateOptions{Cwd: src, Root: root}); err == nil {
		t.Fatal("Create under a read-only root succeeded")
	}
	if got := worktreeList(t, src); got != list {
		t.Errorf("git worktree list changed:\n%s", got)
	}
	if got := topEntries(root); len(got) != 0 {
		t.Errorf("left under the root: %v", got)
	}
}

func TestCreateConcurrentInOneRepository(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	src := commitFixture(t)
	dirtyFixture(t, src)
	want := stateOf(t, src)
	const n = 10
	type result struct {
		c   *Created
		err error
	}
	results := make(chan result, n)
	for i := 0; i < n; i++ {
		go func() {
			c, err := m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: i%2 == 0})
			results <- result{c, err}
		}()
	}
	paths := map[string]bool{}
	for i := 0; i < n; i++ {
		r := <-results
		if r.err != nil {
			t.Errorf("Create: %v", r.err)
			continue
		}
		paths[r.c.Worktree.Path] = true
		if r.c.Carried != nil {
			if diff := cmp.Diff(stateOf(t, r.c.Worktree.Path), want); diff != "" {
				t.Errorf("%s differs (-got +want):\n%s", r.c.Worktree.Path, diff)
			}
		} else if got := stateOf(t, r.c.Worktree.Path); got != (gitState{}) {
			t.Errorf("%s not clean: %+v", r.c.Worktree.Path, got)
		}
	}
	if len(paths) != n {
		t.Errorf("%d distinct paths, want %d", len(paths), n)
	}
	if got := len(parsePorcelain([]byte(gittest.Git(t, src, "worktree", "list", "--porcelain", "-z")))); got != n+1 {
		t.Errorf("git lists %d worktrees, want %d", got, n+1)
	}
	if all, err := m.Registry().List(); err != nil || len(all) != n {
		t.Errorf("registry has %d entries (%v), want %d", len(all), err, n)
	}
}

// C31: carried changes are based on the source checkout's own HEAD by
// default, even when the local default branch is stale; an explicit base
// they do not apply to is refused before anything is created.
func TestCaseC31_CarryDefaultBaseIsSourceHead(t *testing.T) {
	t.Parallel()
	m := newManager(t)
	r := gittest.Init(t)
	gittest.Write(t, r, "app.txt", "v1\n")
	v1 := gittest.CommitAll(t, r, "v1")
	gittest.Git(t, r, "switch", "-q", "-c", "newer")
	gittest.Write(t, r, "lib.txt", "lib\n")
	gittest.CommitAll(t, r, "add lib")
	gittest.Git(t, r, "switch", "-q", "main")
	src := filepath.Join(t.TempDir(), "src")
	gittest.Git(t, r, "worktree", "add", "-q", "--detach", src, "newer")
	src, _ = filepath.EvalSymlinks(src)
	gittest.Write(t, src, "lib.txt", "lib changed\n")
	gittest.Write(t, src, "app.txt", "v2\n")
	want := stateOf(t, src)

	c, err := m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := headOf(t, c.Worktree.Path), headOf(t, src); got != want {
		t.Errorf("base = %s, want the source's HEAD %s", got, want)
	}
	if diff := cmp.Diff(stateOf(t, c.Worktree.Path), want); diff != "" {
		t.Errorf("state (-got +want):\n%s", diff)
	}

	// The stale main lacks lib.txt: refused, nothing created.
	list := worktreeList(t, r)
	_, err = m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: true, BaseRef: "main"})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != diffscope.ReasonPatchFailed || !cmp.Equal(ce.Paths, []string{"lib.txt"}) {
		t.Fatalf("Create at stale main: %#v, want ConflictError patchFailed [lib.txt]", err)
	}
	if got := worktreeList(t, r); got != list {
		t.Errorf("worktree list changed:\n%s", got)
	}
	if diff := cmp.Diff(stateOf(t, src), want); diff != "" {
		t.Errorf("source changed (-got +want):\n%s", diff)
	}

	// An explicit base the changes apply to: a 3-way apply onto it.
	gittest.Git(t, r, "switch", "-q", "newer")
	gittest.Write(t, r, "other.txt", "other\n")
	gittest.CommitAll(t, r, "other")
	c, err = m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: true, BaseRef: "newer"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Carried.Rebased {
		t.Errorf("Carried.Rebased = false")
	}
	for file, want := range map[string]string{"app.txt": "v2\n", "lib.txt": "lib changed\n", "other.txt": "other\n"} {
		if got := gittest.Read(t, c.Worktree.Path, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if got := gittest.Git(t, c.Worktree.Path, "status", "--porcelain"); got != " M app.txt\n M lib.txt\n" {
		t.Errorf("status = %q", got)
	}
	_ = v1

	// A base whose app.txt changed the other way: a 3-way conflict,
	// refused, nothing created.
	gittest.Write(t, r, "app.txt", "v3\n")
	gittest.CommitAll(t, r, "v3")
	list = worktreeList(t, r)
	_, err = m.Create(ctx, CreateOptions{Cwd: src, CarryLocalChanges: true, BaseRef: "newer"})
	if !errors.As(err, &ce) || ce.Reason != diffscope.ReasonPatchFailed || !cmp.Equal(ce.Paths, []string{"app.txt"}) {
		t.Fatalf("Create onto a conflicting base: %v, want patchFailed [app.txt]", err)
	}
	if got := worktreeList(t, r); got != list {
		t.Errorf("worktree list changed:\n%s", got)
	}
}
