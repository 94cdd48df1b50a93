package filesearch

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// The benchmark repository (issue 13, "Benchmark"): gittest.MkSourceRepo
// with 50,000 tracked files, plus untracked, hidden and ignored ones.
// KNIGHTCODE_BENCH_FILES changes its size. It is built once per run under
// the temporary HOME that gittest.Main removes when the run ends.
//
//	go test -run '^$' -bench Search -benchtime 20x ./filesearch
var benchRepo gittest.BenchRepo

func benchDir(b *testing.B) string {
	b.Helper()
	return benchRepo.Dir(b, 50_000, func(dir string, files int) error {
		return gittest.MkSourceRepo(dir, gittest.MkSourceRepoOptions{Files: files})
	})
}

// benchQueries are typical queries: a file-name abbreviation, a camel-case
// component, a folder-and-name path, and a short one matching most paths.
var benchQueries = []string{"sessstore", "ButtonLayout", "internal/diff/patch", "cfg"}

// BenchmarkSearch measures file/search on the generated repository, per
// query: cold (a new Searcher: fd listing plus ranking), warm (cached
// listing, ranking only; the goal is under 50 ms), and in the same run the
// command-line baseline, `fd | fzf --filter QUERY` when fzf is installed,
// else fd alone.
func BenchmarkSearch(b *testing.B) {
	requireFd(b)
	root := benchDir(b)
	fd, _ := findFd()
	fzf, fzfErr := exec.LookPath("fzf")
	for _, query := range benchQueries {
		b.Run("query="+strings.ReplaceAll(query, "/", "_"), func(b *testing.B) {
			b.Run("cold", func(b *testing.B) {
				for b.Loop() {
					s := New(Options{})
					if _, err := s.Search(ctx, Request{Cwd: root, Query: query}); err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
			})
			b.Run("warm", func(b *testing.B) {
				s := New(Options{})
				defer s.Close()
				if _, err := s.Search(ctx, Request{Cwd: root, Query: query}); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := s.Search(ctx, Request{Cwd: root, Query: query}); err != nil {
						b.Fatal(err)
					}
				}
			})
			if fzfErr == nil {
				b.Run("fd|fzf", func(b *testing.B) {
					for b.Loop() {
						cmd := exec.Command("sh", "-c", `"$0" -t f --hidden --exclude .git --strip-cwd-prefix | "$1" --filter "$2" >/dev/null`, fd, fzf, query)
						cmd.Dir = root
						if err := cmd.Run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
	if fzfErr != nil {
		b.Run("fd", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(fd, fdArgs...)
				cmd.Dir = root
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
