package gittest

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// MkRepoOptions sizes a [MkRepo] repository. Zero fields take the defaults
// noted on each.
type MkRepoOptions struct {
	Files     int   // tracked files in the commit (10000)
	Lines     int   // lines per file (60)
	Modified  int   // tracked files edited in 3 places each (200)
	Deleted   int   // tracked files deleted (20)
	Renamed   int   // tracked files renamed (20)
	Staged    int   // edited files also staged (50)
	Untracked int   // new untracked files (100)
	Seed      int64 // random seed (1)
}

func (o *MkRepoOptions) defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&o.Files, 10000)
	def(&o.Lines, 60)
	def(&o.Modified, 200)
	def(&o.Deleted, 20)
	def(&o.Renamed, 20)
	def(&o.Staged, 50)
	def(&o.Untracked, 100)
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// MkRepo builds a deterministic repository in dir for benchmarks: one commit
// of o.Files text files over nested folders written with git fast-import,
// checked out, then a working state of edited (3 hunks each), staged,
// deleted, renamed and untracked files, one changed binary file, one mode
// change, one symlink and one ignored file. Same options, same repository.
// It is the project's own copy of the benchmark generator the design
// describes (shared/bench/mkrepo.go), so benchmarks run without shared/.
func MkRepo(dir string, o MkRepoOptions) error {
	o.defaults()
	if err := benchInit(dir); err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(o.Seed))
	paths := make([]string, o.Files)
	for i := range paths {
		paths[i] = fmt.Sprintf("pkg%02d/mod%03d/file%06d.go", i%37, (i/37)%97, i)
	}
	err := fastImport(dir, func(w *bufio.Writer) {
		for i, p := range paths {
			fastImportFile(w, p, mkContent(i, o.Lines, 0))
		}
		fastImportFile(w, "assets/logo.bin", mkBinary(rng, 4096))
		fastImportFile(w, "tools/build.sh", "#!/bin/sh\necho build\n")
		fastImportFile(w, ".gitignore", "*.log\nout/\n")
	})
	if err != nil {
		return err
	}
	if _, err := Run(dir, nil, "checkout", "-q", "-f", "main"); err != nil {
		return err
	}
	perm := rng.Perm(o.Files)
	next := 0
	take := func(n int) []string {
		out := make([]string, 0, n)
		for ; n > 0 && next < len(perm); n-- {
			out = append(out, paths[perm[next]])
			next++
		}
		return out
	}
	mod := take(o.Modified)
	for _, p := range mod {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(mkContent(mkIndexOf(p), o.Lines, 1)), 0o644); err != nil {
			return err
		}
	}
	staged := min(o.Staged, len(mod))
	if staged > 0 {
		if _, err := Run(dir, nil, append([]string{"add", "--"}, mod[:staged]...)...); err != nil {
			return err
		}
	}
	for _, p := range take(o.Deleted) {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			return err
		}
	}
	for _, p := range take(o.Renamed) {
		if err := os.Rename(filepath.Join(dir, p), filepath.Join(dir, strings.Replace(p, ".go", "_moved.go", 1))); err != nil {
			return err
		}
	}
	for i := 0; i < o.Untracked; i++ {
		p := filepath.Join(dir, fmt.Sprintf("new/area%02d/untracked%05d.go", i%10, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(mkContent(o.Files+i, o.Lines/2, 0)), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "assets/logo.bin"), []byte(mkBinary(rng, 4096)), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(filepath.Join(dir, "tools/build.sh"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "new"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink("../tools/build.sh", filepath.Join(dir, "new/build-link")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "out/ignored.log"), []byte("ignored\n"), 0o644)
}

// mkContent is a Go-looking file; variant 1 changes lines near the start,
// middle and end (three hunks at context 3).
func mkContent(i, n, variant int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package mod%d\n\n", i%97)
	for l := 0; l < n; l++ {
		if variant == 1 && (l == 2 || l == n/2 || l == n-3) {
			fmt.Fprintf(&b, "// edited line %d of file %d\n", l, i)
			continue
		}
		fmt.Fprintf(&b, "func f%d_%d() int { return %d }\n", i, l, (i*31+l*7)%1000)
	}
	return b.String()
}

func mkBinary(rng *rand.Rand, n int) string {
	buf := make([]byte, n)
	rng.Read(buf)
	buf[0] = 0
	return string(buf)
}

func mkIndexOf(p string) int {
	var i int
	fmt.Sscanf(p[strings.LastIndex(p, "file")+4:], "%06d", &i)
	return i
}
