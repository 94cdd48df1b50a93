package gitstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// checkoutToHead is the write that puts every change of oplogRepo back to
// HEAD, folder swap included: a.txt and b.txt as HEAD has them, new.txt
// removed, d/c.txt written after the file d that a swap left is removed,
// and the index HEAD's tree.
func checkoutToHead(t *testing.T, repo *gitcli.Repo) CheckoutWrite {
	t.Helper()
	ents, err := TreeEntries(context.Background(), repo, "HEAD^{tree}", []string{"a.txt", "b.txt", "d/c.txt"})
	if err != nil {
		t.Fatal(err)
	}
	return CheckoutWrite{
		Write:  ents,
		Remove: []string{"new.txt", "d"},
		Index: func(ctx context.Context, tmp *gitcli.Repo) error {
			if err := tmp.ReadTree(ctx, "HEAD", gitcli.ReadTreeOptions{Reset: true}); err != nil {
				return err
			}
			return tmp.RefreshIndex(ctx)
		},
	}
}

// WriteCheckout writes the files and then the index of a checkout; a
// Check that refuses writes nothing; a held index.lock refuses the index
// (the files stay written, the user's lock untouched); and a kill at any
// of its steps leaves each file old or new, with RecoverExternal removing
// the journal's own index lock and stage folder before the resolver.
func TestWriteCheckout(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (string, *Oplog, *Journal) {
		dir := oplogRepo(t)
		gittest.Git(t, dir, "rm", "-rq", "d")
		gittest.Write(t, dir, "d", "a file where a folder was\n")
		o := &Oplog{Dir: t.TempDir()}
		j, err := o.Begin(ctx, discover(t, dir), Action{Name: "handoff", Full: true, External: true})
		if err != nil {
			t.Fatal(err)
		}
		return dir, o, j
	}
	clean := func(t *testing.T, dir string) {
		t.Helper()
		if st := gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all"); st != "" {
			t.Errorf("not clean:\n%s", st)
		}
		if got := gittest.Read(t, dir, "d/c.txt"); got != "c\n" {
			t.Errorf("d/c.txt = %q", got)
		}
	}

	t.Run("written", func(t *testing.T) {
		dir, o, j := setup(t)
		defer j.Close()
		if err := j.WriteCheckout(ctx, discover(t, dir), checkoutToHead(t, discover(t, dir))); err != nil {
			t.Fatal(err)
		}
		clean(t, dir)
		if err := j.Done(ctx); err != nil {
			t.Fatal(err)
		}
		if left := leftovers(t, dir, o.Dir); len(left) > 0 {
			t.Errorf("left over: %v", left)
		}
	})

	t.Run("check refuses", func(t *testing.T) {
		dir, _, j := setup(t)
		defer j.Close()
		before := stateOf(t, dir)
		w := checkoutToHead(t, discover(t, dir))
		refused := errors.New("refused")
		w.Check = func(context.Context, *gitcli.Repo) error { return refused }
		if err := j.WriteCheckout(ctx, discover(t, dir), w); !errors.Is(err, refused) {
			t.Fatalf("err = %v", err)
		}
		if diff := cmp.Diff(before, stateOf(t, dir)); diff != "" {
			t.Errorf("written despite the refusal (-before +after):\n%s", diff)
		}
	})

	t.Run("file changed after the check", func(t *testing.T) {
		dir, _, j := setup(t)
		defer j.Close()
		w := checkoutToHead(t, discover(t, dir))
		w.Check = func(context.Context, *gitcli.Repo) error {
			gittest.Write(t, dir, "d", "written after the check read it\n") // same size would do: the mtime moves
			return nil
		}
		err := j.WriteCheckout(ctx, discover(t, dir), w)
		if fe, ok := errors.AsType[*FileChangedError](err); !ok || fe.Path != "d" || !errors.Is(err, ErrFileChanged) {
			t.Fatalf("err = %v, want a FileChangedError for d", err)
		}
		if got := gittest.Read(t, dir, "d"); got != "written after the check read it\n" {
			t.Errorf("d = %q: the change was replaced", got)
		}
	})

	t.Run("copy left by a writer killed before it recorded", func(t *testing.T) {
		dir, _, j := setup(t)
		defer j.Close()
		// What a kill between the index copy and the journal's save leaves
		// (the CI's timed kill found recovery refused by it).
		gittest.Write(t, j.work, "checkout-0-index", "a copy from the dead writer\n")
		if err := j.WriteCheckout(ctx, discover(t, dir), checkoutToHead(t, discover(t, dir))); err != nil {
			t.Fatal(err)
		}
		clean(t, dir)
	})

	t.Run("index locked", func(t *testing.T) {
		dir, _, j := setup(t)
		defer j.Close()
		gittest.Write(t, dir, ".git/index.lock", "held by git\n")
		err := j.WriteCheckout(ctx, discover(t, dir), checkoutToHead(t, discover(t, dir)))
		if !errors.Is(err, gitcli.ErrLocked) {
			t.Fatalf("err = %v, want a lock refusal", err)
		}
		if got := gittest.Read(t, dir, ".git/index.lock"); got != "held by git\n" {
			t.Errorf("index.lock = %q", got)
		}
		if got := gittest.Read(t, dir, "a.txt"); got != "a\n" {
			t.Errorf("a.txt = %q, want the file written before the index", got)
		}
	})

	for _, step := range []string{"remove#1", "remove#2", "checkout#1", "checkout#3", "index#1", "index-locked#1"} {
		t.Run("killed at "+step, func(t *testing.T) {
			dir := oplogRepo(t)
			gittest.Git(t, dir, "rm", "-rq", "d")
			gittest.Write(t, dir, "d", "a file where a folder was\n")
			o := &Oplog{Dir: t.TempDir()}
			o.StepHook = func(s string) {
				if s == step {
					runtime.Goexit() // the deferred Close releases the lock, as the kernel would
				}
			}
			repo := discover(t, dir)
			done := make(chan struct{})
			go func() {
				defer close(done)
				j, err := o.Begin(ctx, repo, Action{Name: "handoff", Full: true, External: true})
				if err != nil {
					t.Error(err)
					return
				}
				defer j.Close()
				_ = j.WriteCheckout(ctx, repo, checkoutToHead(t, repo))
				t.Errorf("never reached %s", step)
			}()
			<-done
			o.StepHook = nil
			for _, f := range []string{"a.txt", "b.txt", "d", "d/c.txt", "new.txt"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err == nil && (len(b) == 0 || !strings.Contains("a\na changed\nb\nb staged then changed\na file where a folder was\nc\nuntracked\n", string(b))) {
					t.Errorf("%s half written: %q", f, b)
				}
			}
			reps, err := o.RecoverExternal(ctx, "handoff", "", func(ctx context.Context, j *Journal) (RecoveryReport, error) {
				if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
					t.Error("the journal's index.lock is still there for the resolver")
				}
				// Roll forward: the same write again.
				return RecoveryReport{Outcome: OutcomeCompleted}, j.WriteCheckout(ctx, repo, checkoutToHead(t, repo))
			})
			if err != nil || len(reps) != 1 {
				t.Fatalf("RecoverExternal = %+v, %v", reps, err)
			}
			clean(t, dir)
			if left := leftovers(t, dir, o.Dir); len(left) > 0 {
				t.Errorf("left over: %v", left)
			}
		})
	}
}

// A gitlink WriteCheckout removes takes its folder with it when the folder
// holds no file (an uninitialized submodule), and keeps one holding files
// (an initialized submodule); a file goes where a folder holding no file
// is, as git checks it out (issue 22 item 6).
func TestWriteCheckoutEmptyFolders(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	for _, d := range []string{"mod/empty", "kept", "in/the/way/x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Write(t, dir, "kept/.git", "gitdir: elsewhere\n")
	o := &Oplog{Dir: t.TempDir()}
	repo := discover(t, dir)
	j, err := o.Begin(ctx, repo, Action{Name: "handoff", Full: true, External: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ents, err := TreeEntries(ctx, repo, "HEAD^{tree}", []string{"a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	w := CheckoutWrite{Write: map[string]Entry{"in/the/way": ents["a.txt"]}, RemoveLinks: []string{"mod", "kept", "absent"}}
	if err := j.WriteCheckout(ctx, repo, w); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "mod")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mod: %v, want it removed", err)
	}
	if got := gittest.Read(t, dir, "kept/.git"); got != "gitdir: elsewhere\n" {
		t.Errorf("kept/.git = %q", got)
	}
	if got, want := gittest.Read(t, dir, "in/the/way"), gittest.Git(t, dir, "show", "HEAD:a.txt"); got != want {
		t.Errorf("in/the/way = %q, want HEAD:a.txt %q", got, want)
	}
	if err := j.Done(ctx); err != nil {
		t.Fatal(err)
	}
}

// EmptyFolder tells a folder holding no file (only folders holding none)
// from anything else; RemoveEmptyFolder removes only such a folder.
func TestEmptyFolder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"empty", "nested/a/b", "nested/c", "full/a"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Write(t, root, "full/a/f", "x\n")
	gittest.Write(t, root, "file", "x\n")
	if err := os.Symlink("empty", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range []string{"empty", "nested", "full", "full/a", "file", "link", "absent"} {
		got[p] = EmptyFolder(filepath.Join(root, p))
	}
	want := map[string]bool{"empty": true, "nested": true, "full": false, "full/a": false, "file": false, "link": false, "absent": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EmptyFolder (-want +got):\n%s", diff)
	}
	for p, gone := range map[string]bool{"nested": true, "full": false, "file": false, "absent": true} {
		if RemoveEmptyFolder(filepath.Join(root, p)) != gone {
			t.Errorf("RemoveEmptyFolder(%s) = %v", p, !gone)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "full/a/f")); err != nil {
		t.Errorf("full/a/f: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "nested")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("nested: %v, want it removed", err)
	}
}
