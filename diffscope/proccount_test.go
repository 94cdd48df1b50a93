package diffscope

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// procLog records the git processes a Runner starts: each one's verb (the
// first argument that is not a -c option or its value).
type procLog struct {
	mu    sync.Mutex
	verbs []string
}

func (l *procLog) hook(args []string) {
	verb := ""
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		if !strings.HasPrefix(args[i], "-") {
			verb = args[i]
			if verb == "update-index" && slices.Contains(args, "--add") {
				verb = "update-index --add"
			}
			break
		}
	}
	l.mu.Lock()
	l.verbs = append(l.verbs, verb)
	l.mu.Unlock()
}

// take returns the verbs recorded since the last take.
func (l *procLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.verbs
	l.verbs = nil
	return v
}

// wholeIndex are the verbs that read or write every entry of the index
// (or hash the working tree): none may run for one hunk once the index
// cache is warm.
var wholeIndex = []string{"ls-files", "write-tree", "add", "update-index --add", "diff-index", "diff-files", "status", "read-tree", "rev-parse"}

// The git processes of each one-hunk action, counted (issue 24, Decision
// 2): once the checkout was read (and the Runner's long-lived helpers
// started: the HEAD resolver, the ref writer), a hunk revert starts no git
// process, a stage or unstage one (the index update), a revert whose hunk
// is also staged one more (the diff of the index's side), an id read
// elsewhere one diff-tree; none reads or writes the whole index. A
// regression to whole-index work per hunk fails here, not only in a
// benchmark. Before issue 24 these actions started 21 to 25 processes.
func TestHunkActionProcessCounts(t *testing.T) {
	t.Parallel()
	dir := gittest.Init(t)
	var body strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	edit := func(s string, lines ...int) string {
		for _, n := range lines {
			s = strings.Replace(s, fmt.Sprintf("line %d\n", n), fmt.Sprintf("LINE %d\n", n), 1)
		}
		return s
	}
	for i := range 20 {
		gittest.Write(t, dir, fmt.Sprintf("d%d/f%d.txt", i%4, i), body.String())
	}
	gittest.CommitAll(t, dir, "init")
	const f = "d1/f1.txt"
	gittest.Write(t, dir, f, edit(body.String(), 10, 30, 50))
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	var log procLog
	r = r.WithStartHook(log.hook)
	t.Cleanup(func() { _ = r.Close() })
	d := NewWithConfig(r, Config{OplogDir: t.TempDir()})
	ctx := context.Background()
	hunk := func(scope Scope, i int) string {
		t.Helper()
		_, h := actHunk(t, d, dir, ReadOptions{Scope: scope}, f, i)
		log.take()
		return h.ID
	}
	// Warm up: the first action lists the index, reads the configuration,
	// starts the HEAD resolver and the ref writer, and prunes the recovery
	// points.
	if _, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: f, HunkID: hunk(ScopeUnstaged, 0)}); err != nil {
		t.Fatal(err)
	}
	log.take()

	check := func(name string, want []string, run func() error) {
		t.Helper()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := log.take()
		if name == "read uncommitted" {
			slices.Sort(got) // ls-files and add run side by side
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: git processes (-want +got):\n%s", name, diff)
		}
		for _, v := range got {
			if slices.Contains(wholeIndex, v) && name != "read uncommitted" {
				t.Errorf("%s ran %s", name, v)
			}
		}
	}
	check("revert unstaged", nil, func() error {
		_, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: f, HunkID: hunk(ScopeUnstaged, 0)})
		return err
	})
	check("revert uncommitted", nil, func() error {
		_, err := d.Revert(ctx, dir, RevertOptions{Path: f, HunkID: hunk(ScopeUncommitted, 0)})
		return err
	})
	gittest.Write(t, dir, f, edit(body.String(), 10, 20, 30, 40, 50))
	check("stage", []string{"update-index"}, func() error {
		_, err := d.Stage(ctx, dir, StageOptions{Path: f, HunkID: hunk(ScopeUnstaged, 0)})
		return err
	})
	check("unstage", []string{"update-index"}, func() error {
		_, err := d.Unstage(ctx, dir, StageOptions{Path: f, HunkID: hunk(ScopeStaged, 0)})
		return err
	})
	check("stage again", []string{"update-index"}, func() error {
		_, err := d.Stage(ctx, dir, StageOptions{Path: f, HunkID: hunk(ScopeUnstaged, 1)})
		return err
	})
	// The hunk at line 20 is staged: its revert in the uncommitted scope
	// reverts the index's side too.
	check("revert uncommitted, staged too", []string{"diff-tree", "update-index"}, func() error {
		_, err := d.Revert(ctx, dir, RevertOptions{Path: f, HunkID: hunk(ScopeUncommitted, 1)})
		return err
	})
	// A read of another context is not the action's: the path is read
	// again, with one diff-tree.
	// An id this Differ did not read (another server's, or the file moved
	// since): the path is read again, with one diff-tree.
	check("revert unstaged, id read elsewhere", []string{"diff-tree"}, func() error {
		_, h := actHunk(t, newDiffer(t), dir, ReadOptions{Scope: ScopeUnstaged}, f, 0)
		log.take()
		_, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: f, HunkID: h.ID})
		return err
	})
	// A read: no discovery process once the checkout is known; the diff
	// runs on the capture's index while git writes the tree.
	check("read uncommitted", []string{"add", "diff-index", "ls-files", "write-tree"}, func() error {
		_, err := d.Read(ctx, dir, ReadOptions{})
		return err
	})
}
