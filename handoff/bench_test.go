package handoff

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// benchRepo builds a gittest.MkRepo repository of KNIGHTCODE_BENCH_FILES
// files (default 50000) with 2,000 modified files (300 of them staged, 400
// untracked files), or half the files when fewer.
func benchRepo(b *testing.B) string {
	b.Helper()
	files := 50000
	if s := os.Getenv("KNIGHTCODE_BENCH_FILES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		files = n
	}
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	if err := gittest.MkRepo(repo, gittest.MkRepoOptions{Files: files, Modified: min(2000, files/2), Staged: min(300, files/8), Untracked: 400}); err != nil {
		b.Fatal(err)
	}
	return repo
}

// BenchmarkHandoff times a round trip of the generated repository's
// changes (2,000 modified files) from the main checkout into a managed
// worktree and back, against `git stash push -u` + `git stash apply
// --index` doing the same two moves (goal: no slower).
func BenchmarkHandoff(b *testing.B) {
	ctx := context.Background()
	repo := benchRepo(b)
	e := newEnv(b)
	wt := e.newWorktree(b, repo)
	b.Run("knightcode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: repo, Worktree: wt}); err != nil {
				b.Fatal(err)
			}
			if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, PreviousBranch: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-stash", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			gittest.Git(b, repo, "stash", "push", "-q", "-u")
			gittest.Git(b, wt, "stash", "apply", "-q", "--index")
			gittest.Git(b, wt, "stash", "drop", "-q")
			gittest.Git(b, wt, "stash", "push", "-q", "-u")
			gittest.Git(b, repo, "stash", "apply", "-q", "--index")
			gittest.Git(b, repo, "stash", "drop", "-q")
		}
	})
}
