package diffscope

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// pinRefs lists the refs under refs/knightcode/ of dir's repository as
// "ref id" lines.
func pinRefs(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Fields(strings.ReplaceAll(gittest.Git(t, dir, "for-each-ref", "--format=%(refname)=%(objectname)", PinPrefix), "\n", " "))
}

// pinFixture is a repository with one commit and its captured trees.
func pinFixture(t *testing.T) (d *Differ, repo string, c *Capture) {
	t.Helper()
	d = newDiffer(t)
	repo = gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	gittest.CommitAll(t, repo, "base")
	gittest.Write(t, repo, "new.txt", "untracked\n")
	c, err := d.Capture(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	return d, repo, c
}

// TestPinAll checks that PinAll moves several refs in one transaction: all
// of them, or none when git refuses one.
func TestPinAll(t *testing.T) {
	ctx := context.Background()
	d, repo, c := pinFixture(t)
	base := "refs/knightcode/turns/thread-1/turn-1/"
	pins := map[string]string{
		base + "before": c.HeadTree, base + "after": c.WorktreeTree,
		base + "before-index": c.IndexTree, base + "after-index": c.IndexTree,
	}
	if err := d.PinAll(ctx, repo, pins); err != nil {
		t.Fatal(err)
	}
	want := []string{
		base + "after=" + c.WorktreeTree, base + "after-index=" + c.IndexTree,
		base + "before=" + c.HeadTree, base + "before-index=" + c.IndexTree,
	}
	if diff := cmp.Diff(pinRefs(t, repo), want); diff != "" {
		t.Errorf("refs after PinAll (-got +want):\n%s", diff)
	}

	// One malformed name: git refuses the transaction and no ref moves.
	other := "refs/knightcode/turns/thread-1/turn-2/"
	var ge *gitcli.Error
	err := d.PinAll(ctx, repo, map[string]string{other + "before": c.HeadTree, other + "bad..name": c.WorktreeTree})
	if !errors.As(err, &ge) {
		t.Errorf("PinAll with a malformed ref = %v, want git's refusal", err)
	}
	if diff := cmp.Diff(pinRefs(t, repo), want); diff != "" {
		t.Errorf("a refused PinAll moved refs (-got +want):\n%s", diff)
	}
	// A missing object: refused as a whole too.
	missing := strings.Repeat("1", len(c.WorktreeTree))
	if err := d.PinAll(ctx, repo, map[string]string{other + "before": c.HeadTree, other + "after": missing}); !errors.As(err, &ge) {
		t.Errorf("PinAll of a missing object = %v, want git's refusal", err)
	}
	if diff := cmp.Diff(pinRefs(t, repo), want); diff != "" {
		t.Errorf("a refused PinAll moved refs (-got +want):\n%s", diff)
	}

	for _, tc := range []struct {
		name  string
		pins  map[string]string
		field string
	}{
		{"outside the namespace", map[string]string{other + "a": c.HeadTree, "refs/heads/x": c.HeadTree}, "ref"},
		{"a NUL in the name", map[string]string{other + "a\x00b": c.HeadTree}, "ref"},
		{"short id", map[string]string{other + "a": c.HeadTree[:12]}, "objectID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pe *ParamError
			if err := d.PinAll(ctx, repo, tc.pins); !errors.As(err, &pe) || pe.Field != tc.field {
				t.Errorf("PinAll = %v, want a ParamError for %s", err, tc.field)
			}
		})
	}
	if err := d.PinAll(ctx, repo, nil); err != nil {
		t.Errorf("PinAll of nothing = %v", err)
	}
}

// TestUnpin checks that Unpin deletes exactly the refs under its prefix,
// from any directory of the repository, and refuses other prefixes.
func TestUnpin(t *testing.T) {
	ctx := context.Background()
	d, repo, c := pinFixture(t)
	keep := []string{
		"refs/knightcode/turns/thread-10/turn-1/before", // shares the prefix's first characters
		"refs/knightcode/turns/thread-2/turn-1/after",
		"refs/knightcode/snapshots/ab12/20250101",
	}
	drop := []string{
		"refs/knightcode/turns/thread-1/turn-1/before",
		"refs/knightcode/turns/thread-1/turn-1/after",
		"refs/knightcode/turns/thread-1/turn-2/before-index",
	}
	pins := map[string]string{}
	for _, r := range append(append([]string{}, keep...), drop...) {
		pins[r] = c.WorktreeTree
	}
	wt := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, repo, "worktree", "add", "-q", "--detach", wt)

	for _, tc := range []struct {
		name string
		dir  string
	}{
		{"from the checkout", repo},
		{"from a subdirectory of a linked worktree", filepath.Join(wt, "sub")},
		{"from the git dir", filepath.Join(repo, ".git")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gittest.Write(t, wt, "sub/x.txt", "x\n")
			if err := d.PinAll(ctx, repo, pins); err != nil {
				t.Fatal(err)
			}
			if err := d.Unpin(ctx, tc.dir, "refs/knightcode/turns/thread-1/"); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, r := range []string{keep[2], keep[0], keep[1]} {
				want = append(want, r+"="+c.WorktreeTree)
			}
			if diff := cmp.Diff(pinRefs(t, repo), want); diff != "" {
				t.Errorf("refs after Unpin (-got +want):\n%s", diff)
			}
			// Nothing left under the prefix: not an error.
			if err := d.Unpin(ctx, tc.dir, "refs/knightcode/turns/thread-1/"); err != nil {
				t.Errorf("Unpin of an empty namespace = %v", err)
			}
		})
	}

	for _, p := range []string{"refs/heads/", "refs/knightcode/", "refs/knightcode/turns/thread-2", "refs/knightcode/turns/*/", "refs/knightcode/turns/t[1]/"} {
		var pe *ParamError
		if err := d.Unpin(ctx, repo, p); !errors.As(err, &pe) || pe.Field != "prefix" {
			t.Errorf("Unpin(%q) = %v, want a ParamError for prefix", p, err)
		}
	}
	if err := d.Unpin(ctx, t.TempDir(), "refs/knightcode/turns/thread-2/"); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Unpin outside a repository = %v, want ErrNotRepo", err)
	}
	if err := d.Unpin(ctx, filepath.Join(t.TempDir(), "gone"), "refs/knightcode/turns/thread-2/"); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Unpin in a missing directory = %v, want ErrNotRepo", err)
	}

	// It waits for the repository lock: with the lock held and a context
	// that ends, nothing is deleted.
	lock, err := gitcli.LockCommonDir(ctx, filepath.Join(repo, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Unpin(cctx, repo, "refs/knightcode/turns/thread-2/"); !errors.Is(err, context.Canceled) {
		t.Errorf("Unpin while the lock is held = %v, want the context's error", err)
	}
	lock.Unlock()
	if got := pinRefs(t, repo); len(got) != 3 {
		t.Errorf("Unpin without the lock deleted refs: %v", got)
	}
}
