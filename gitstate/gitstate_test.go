package gitstate

import (
	"bytes"
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

func TestMain(m *testing.M) { gittest.Main(m) }

func discover(t *testing.T, dir string) *gitcli.Repo {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := r.Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// treePaths lists the paths of tree, recursively.
func treePaths(t *testing.T, dir, tree string) []string {
	t.Helper()
	out := gittest.Git(t, dir, "ls-tree", "-r", "-z", "--name-only", tree)
	return strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
}

// Complete keeps every untracked file (past the diff limits), the
// intent-to-add entries, and never writes the user's index.
func TestCompleteKeepsEverything(t *testing.T) {
	dir := gittest.InitCommit(t, "a.txt", "a\n")
	for i := range MaxUntracked + 20 {
		gittest.Write(t, dir, fmt.Sprintf("gen/f%04d", i), "x\n")
	}
	gittest.Write(t, dir, "ita.txt", "later\n")
	gittest.Git(t, dir, "add", "-N", "ita.txt")
	gittest.Write(t, dir, "a.txt", "changed\n")
	index := filepath.Join(dir, ".git", "index")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(index, past, past); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(index)
	st1, _ := os.Stat(index)

	s, err := Complete(context.Background(), discover(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if s.Untracked != MaxUntracked+20 {
		t.Errorf("Untracked = %d, want %d", s.Untracked, MaxUntracked+20)
	}
	if got := len(treePaths(t, dir, s.WorktreeTree)); got != MaxUntracked+20+2 {
		t.Errorf("worktree tree holds %d files, want every untracked file plus a.txt and ita.txt", got)
	}
	if diff := cmp.Diff(s.IntentToAdd, []string{"ita.txt"}); diff != "" {
		t.Errorf("IntentToAdd (-got +want):\n%s", diff)
	}
	if got := gittest.Git(t, dir, "cat-file", "-p", s.WorktreeTree+":a.txt"); got != "changed\n" {
		t.Errorf("a.txt in the worktree tree = %q", got)
	}
	after, _ := os.ReadFile(index)
	st2, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !st1.ModTime().Equal(st2.ModTime()) {
		t.Errorf("Complete wrote the user's index")
	}
}

// WriteSnapshot writes git's stash shape: IC = tree indexTree, parent
// HEAD; WC = tree worktreeTree, parents HEAD, IC [, Ignored].
func TestWriteSnapshotShape(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	head := gittest.CommitAll(t, dir, "init")
	gittest.Write(t, dir, "a.txt", "staged\n")
	gittest.Git(t, dir, "add", "a.txt")
	gittest.Write(t, dir, "a.txt", "worktree\n")
	ctx := context.Background()
	repo := discover(t, dir)
	s, err := Complete(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	ign := strings.TrimSpace(gittest.GitStdin(t, dir, []byte("ignored\n"), "commit-tree", gitcli.EmptyTreeSHA1))
	for _, tc := range []struct {
		name    string
		ignored string
		parents int
	}{{"two parents", "", 2}, {"kept ignored files", ign, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := WriteSnapshot(ctx, repo, SnapshotSpec{Head: s.Head, IndexTree: s.IndexTree, WorktreeTree: s.WorktreeTree,
				Ignored: tc.ignored, IndexMessage: "index\n", Message: "snapshot\n"})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{head, snap.IndexCommit}
			if tc.ignored != "" {
				want = append(want, tc.ignored)
			}
			got := strings.Fields(gittest.Git(t, dir, "rev-parse", snap.Commit+"^@"))
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("parents of the snapshot commit (-got +want):\n%s", diff)
			}
			if got := gittest.Git(t, dir, "rev-parse", snap.IndexCommit+"^@"); strings.TrimSpace(got) != head {
				t.Errorf("index commit parents = %q, want HEAD", got)
			}
			for rev, tree := range map[string]string{snap.Commit: s.WorktreeTree, snap.IndexCommit: s.IndexTree} {
				if got := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", rev+"^{tree}")); got != tree {
					t.Errorf("tree of %s = %s, want %s", rev, got, tree)
				}
			}
			if got := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>", snap.Commit); strings.TrimSpace(got) != "knightcode <knightcode@localhost>" {
				t.Errorf("author = %q", got)
			}
		})
	}
	if _, err := WriteSnapshot(ctx, repo, SnapshotSpec{IndexTree: s.IndexTree, WorktreeTree: s.WorktreeTree}); !errors.Is(err, ErrUnbornHead) {
		t.Errorf("without Head: err = %v, want ErrUnbornHead", err)
	}
}

// Complete lists the intent-to-add entries in both object formats, and
// only them: a staged empty file has the same blob id but is not one.
// CompleteKeepingIndex leaves the index the worktree tree was written
// from.
func TestCompleteIntentToAdd(t *testing.T) {
	tests := []struct {
		name, format string
		ita          bool
		want         []string
	}{
		{"sha1 none", "sha1", false, nil},
		{"sha1", "sha1", true, []string{"ita.txt"}},
		{"sha256 none", "sha256", false, nil},
		{"sha256", "sha256", true, []string{"ita.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Git(t, dir, "init", "-q", "--object-format="+tt.format)
			gittest.Write(t, dir, "a.txt", "a\n")
			gittest.CommitAll(t, dir, "init")
			gittest.Write(t, dir, "empty.txt", "")
			gittest.Git(t, dir, "add", "empty.txt")
			if tt.ita {
				gittest.Write(t, dir, "ita.txt", "later\n")
				gittest.Git(t, dir, "add", "-N", "ita.txt")
			}
			kept := filepath.Join(t.TempDir(), "index")
			repo := discover(t, dir)
			s, err := CompleteKeepingIndex(context.Background(), repo, kept)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.IntentToAdd); diff != "" {
				t.Errorf("IntentToAdd (-want +got):\n%s", diff)
			}
			tree, err := repo.WithIndex(kept).WriteTree(context.Background())
			if err != nil || tree != s.WorktreeTree {
				t.Errorf("kept index writes %s (%v), want the worktree tree %s", tree, err, s.WorktreeTree)
			}
		})
	}
}
