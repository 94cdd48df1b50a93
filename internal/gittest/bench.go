package gittest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// BenchRepo is a benchmark repository built once per test binary, shared
// by the benchmarks of a package. The zero value is ready to use.
type BenchRepo struct {
	once sync.Once
	dir  string
	err  error
}

// Dir returns the repository, building it on the first call with build(dir,
// files) in a new folder under $HOME (the temporary HOME that [Main]
// removes when the run ends). files is KNIGHTCODE_BENCH_FILES when set (a
// number below 100 or not a number fails every call), else def. A build
// error fails b on every call.
func (r *BenchRepo) Dir(b testing.TB, def int, build func(dir string, files int) error) string {
	b.Helper()
	r.once.Do(func() {
		files := def
		if s := os.Getenv("KNIGHTCODE_BENCH_FILES"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 100 {
				r.err = os.ErrInvalid
				return
			}
			files = n
		}
		dir, err := os.MkdirTemp(os.Getenv("HOME"), "bench-repo-")
		if err != nil {
			r.err = err
			return
		}
		r.dir = filepath.Join(dir, "repo")
		r.err = build(r.dir, files)
	})
	if r.err != nil {
		b.Fatalf("benchmark repository: %v", r.err)
	}
	return r.dir
}

// benchInit makes dir (created when missing) a repository on main with the
// generators' identity and core.autocrlf false.
func benchInit(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.email", "bench@example.com"},
		{"config", "user.name", "bench"},
		{"config", "core.autocrlf", "false"},
	} {
		if _, err := Run(dir, nil, args...); err != nil {
			return err
		}
	}
	return nil
}

// fastImport writes the commit "initial" on main of the repository dir
// with git fast-import; files writes its file entries (with
// fastImportFile) to w.
func fastImport(dir string, files func(w *bufio.Writer)) error {
	fi := exec.Command("git", "fast-import", "--quiet")
	fi.Dir = dir
	in, err := fi.StdinPipe()
	if err != nil {
		return err
	}
	fi.Stderr = os.Stderr
	if err := fi.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\ndata 7\ninitial\n")
	files(w)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := in.Close(); err != nil {
		return err
	}
	return fi.Wait()
}

// fastImportFile writes the fast-import entry of a regular file p (a
// slash path) holding body.
func fastImportFile(w *bufio.Writer, p, body string) {
	fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(body), body)
}
