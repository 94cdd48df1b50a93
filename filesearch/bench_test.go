package filesearch

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchTree writes a generated tree of n files, shaped like a source
// repository: 50 top folders of 20 subfolders, files named by a small
// vocabulary, a few deep paths.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	words := []string{"config", "server", "handler", "client", "model", "store", "index", "util", "parser", "render"}
	exts := []string{".go", ".ts", ".md", ".json", "_test.go"}
	files := make([]string, 0, n)
	for i := range n {
		dir := filepath.Join(fmt.Sprintf("pkg%02d", i%50), words[(i/50)%len(words)]+fmt.Sprint((i/500)%20))
		if i%97 == 0 {
			dir = filepath.Join(dir, "internal", "deep", words[i%len(words)])
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("%s_%s%d%s", words[i%len(words)], words[(i/7)%len(words)], i, exts[i%len(exts)])))
	}
	writeFiles(b, root, files...)
	return root
}

// BenchmarkSearch measures file/search on a generated 50,000-file tree:
// cold (fd listing + ranking), warm (cached listing, ranking only; goal
// under 50 ms), and in the same run fd alone and, when fzf is installed,
// fd | fzf --filter.
func BenchmarkSearch(b *testing.B) {
	requireFd(b)
	root := benchTree(b, 50_000)
	const query = "cfgserver"
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
	fd, _ := findFd()
	b.Run("fd", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(fd, fdArgs...)
			cmd.Dir = root
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	if fzf, err := exec.LookPath("fzf"); err == nil {
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
}
