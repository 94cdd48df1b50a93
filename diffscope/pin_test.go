package diffscope

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// TestPin checks that Pin points a ref under refs/knightcode/ at a captured
// tree (reachable for gc) and refuses other refs, bad ids and non-repos.
func TestPin(t *testing.T) {
	ctx := context.Background()
	d := newDiffer(t)
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	gittest.CommitAll(t, repo, "base")
	gittest.Write(t, repo, "new.txt", "untracked\n")
	c, err := d.Capture(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	ref := "refs/knightcode/turns/thread-1/turn-1/after"
	if err := d.Pin(ctx, repo, ref, c.WorktreeTree); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", ref)); got != c.WorktreeTree {
		t.Errorf("%s = %s, want %s", ref, got, c.WorktreeTree)
	}
	if got := gittest.Git(t, repo, "ls-tree", "--name-only", ref); got != "a.txt\nnew.txt\n" {
		t.Errorf("pinned tree lists %q", got)
	}
	for _, c := range []struct {
		name, ref, id, field string
	}{
		{"outside the namespace", "refs/heads/x", c.WorktreeTree, "ref"},
		{"the bare prefix", "refs/knightcode/", c.WorktreeTree, "ref"},
		{"short id", ref, c.WorktreeTree[:12], "objectID"},
		{"not hex", ref, strings.Repeat("g", 40), "objectID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := d.Pin(ctx, repo, c.ref, c.id)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != c.field {
				t.Errorf("Pin = %v, want a ParamError for %s", err, c.field)
			}
		})
	}
	var ge *gitcli.Error
	if err := d.Pin(ctx, repo, "refs/knightcode/bad..name", c.WorktreeTree); !errors.As(err, &ge) {
		t.Errorf("Pin of a malformed ref name = %v, want git's refusal", err)
	}
	if err := d.Pin(ctx, t.TempDir(), ref, c.WorktreeTree); !errors.Is(err, gitcli.ErrNotRepo) {
		t.Errorf("Pin outside a repository = %v, want ErrNotRepo", err)
	}
}
