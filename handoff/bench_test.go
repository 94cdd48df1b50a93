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
// --index` doing the same two moves (goal: no slower). Each side gets its
// own copy of the generated repository (same options, same content), so
// neither finds the objects of the changed files already written by the
// other: the first capture of a checkout writes them, as the first
// `git stash push` does. Besides the time, each reports cpu-s/op: the CPU
// time (user and system) of the process and its git children, which a
// loaded machine inflates less than the wall clock.
func BenchmarkHandoff(b *testing.B) {
	ctx := context.Background()
	kRepo, sRepo := benchRepo(b), benchRepo(b)
	e := newEnv(b)
	kWt := e.newWorktree(b, kRepo)
	sWt := newEnv(b).newWorktree(b, sRepo)
	b.Run("knightcode", func(b *testing.B) {
		cpu := cpuTime()
		defer func() { b.ReportMetric((cpuTime()-cpu)/float64(b.N), "cpu-s/op") }()
		for i := 0; i < b.N; i++ {
			if _, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: kRepo, Worktree: kWt}); err != nil {
				b.Fatal(err)
			}
			if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: kWt, PreviousBranch: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-stash", func(b *testing.B) {
		cpu := cpuTime()
		defer func() { b.ReportMetric((cpuTime()-cpu)/float64(b.N), "cpu-s/op") }()
		for i := 0; i < b.N; i++ {
			gittest.Git(b, sRepo, "stash", "push", "-q", "-u")
			gittest.Git(b, sWt, "stash", "apply", "-q", "--index")
			gittest.Git(b, sWt, "stash", "drop", "-q")
			gittest.Git(b, sWt, "stash", "push", "-q", "-u")
			gittest.Git(b, sRepo, "stash", "apply", "-q", "--index")
			gittest.Git(b, sRepo, "stash", "drop", "-q")
		}
	})
}
