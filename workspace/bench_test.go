package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

var (
	benchOnce sync.Once
	benchRepo string
	benchErr  error
)

// benchRepository builds the gittest.MkRepo repository once per run, with
// KNIGHTCODE_BENCH_FILES files (default 50000; read in TestMain), under the
// temporary HOME
// gittest.Main removes at the end.
func benchRepository(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		files := 50000
		if s := benchFiles; s != "" {
			if files, benchErr = strconv.Atoi(s); benchErr != nil {
				return
			}
		}
		var dir string
		if dir, benchErr = os.MkdirTemp(os.Getenv("HOME"), "bench-repo-"); benchErr != nil {
			return
		}
		if dir, benchErr = filepath.EvalSymlinks(dir); benchErr != nil {
			return
		}
		benchRepo = filepath.Join(dir, "repo")
		benchErr = gittest.MkRepo(benchRepo, gittest.MkRepoOptions{Files: files})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRepo
}

// BenchmarkCreateWorktree compares Manager.Create (no carried changes) with
// `git worktree add --detach <path> HEAD` on the same repository; goal:
// within 1.2x of git. Each iteration's worktree is removed with the timer
// stopped.
func BenchmarkCreateWorktree(b *testing.B) {
	repo := benchRepository(b)
	b.Run("knightcode", func(b *testing.B) {
		m := newManager(b)
		for i := 0; i < b.N; i++ {
			c, err := m.Create(ctx, CreateOptions{Cwd: repo})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			gittest.Git(b, repo, "worktree", "remove", "--force", c.Worktree.Path)
			os.RemoveAll(filepath.Dir(c.Worktree.Path))
			b.StartTimer()
		}
	})
	b.Run("git-worktree-add", func(b *testing.B) {
		root := b.TempDir()
		for i := 0; i < b.N; i++ {
			path := filepath.Join(root, strconv.Itoa(i), "repo")
			gittest.Git(b, repo, "worktree", "add", "-q", "--detach", path, "HEAD")
			b.StopTimer()
			gittest.Git(b, repo, "worktree", "remove", "--force", path)
			b.StartTimer()
		}
	})
}
