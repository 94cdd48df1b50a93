package diffscope

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// TestMain isolates every test and benchmark of the package from the user's
// environment (HOME, git config). gittest.Main removes its temporary HOME at
// the end, and with it the benchmark repository built there.
func TestMain(m *testing.M) {
	gittest.Main(m)
}

// newDiffer returns a Differ over a fresh Runner, with its operation log
// in a temporary folder of the test.
func newDiffer(t testing.TB) *Differ {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	return NewWithConfig(r, Config{OplogDir: t.TempDir()})
}

// indexSnapshot is the real index of a checkout: its bytes and mtime.
type indexSnapshot struct {
	data  []byte
	mtime time.Time
	found bool
}

// guard snapshots the real index of checkout (found through rev-parse
// --git-path index, so linked worktrees check their own) and returns a check
// that fails the test unless the index is still byte-identical with the same
// mtime and no index.lock is left.
func guard(t testing.TB, checkout string) func() {
	t.Helper()
	p := strings.TrimSpace(gittest.Git(t, checkout, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	s := snapshotIndexFile(t, p)
	return func() {
		t.Helper()
		now := snapshotIndexFile(t, p)
		if now.found != s.found || !bytes.Equal(now.data, s.data) || !now.mtime.Equal(s.mtime) {
			t.Errorf("the user's index %s changed: found %v->%v, %d->%d bytes, mtime %v->%v",
				p, s.found, now.found, len(s.data), len(now.data), s.mtime, now.mtime)
		}
		if _, err := os.Stat(p + ".lock"); err == nil {
			t.Errorf("%s.lock left behind", p)
		}
	}
}

func snapshotIndexFile(t testing.TB, p string) indexSnapshot {
	t.Helper()
	s := indexSnapshot{}
	st, err := os.Stat(p)
	if os.IsNotExist(err) {
		return s
	}
	if err != nil {
		t.Fatal(err)
	}
	s.found, s.mtime = true, st.ModTime()
	if s.data, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	return s
}

// mustRead reads a scope of checkout, failing the test on error, and checks
// that the read left the user's index byte-identical with the same mtime.
func mustRead(t testing.TB, d *Differ, checkout string, opts ReadOptions) *Result {
	t.Helper()
	check := guard(t, checkout)
	res, err := d.Read(context.Background(), checkout, opts)
	if err != nil {
		t.Fatalf("Read(%s, %+v): %v", checkout, opts, err)
	}
	check()
	return res
}

// mustCapture captures checkout with the same index check.
func mustCapture(t testing.TB, d *Differ, checkout string) *Capture {
	t.Helper()
	check := guard(t, checkout)
	c, err := d.Capture(context.Background(), checkout)
	if err != nil {
		t.Fatalf("Capture(%s): %v", checkout, err)
	}
	check()
	return c
}

// ageIndex moves the index's mtime two seconds into the past so that a
// refresh of the real index (which would rewrite it) shows as an mtime
// change even within the same second.
func ageIndex(t testing.TB, checkout string) {
	t.Helper()
	p := strings.TrimSpace(gittest.Git(t, checkout, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	old := time.Now().Add(-2 * time.Second)
	if err := os.Chtimes(p, old, old); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// fileByPath returns the file of res at path.
func fileByPath(t testing.TB, res *Result, path string) File {
	t.Helper()
	for _, f := range res.Files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no file %q in %v", path, paths(res))
	return File{}
}

// paths lists the paths of res's files.
func paths(res *Result) []string {
	out := []string{}
	for _, f := range res.Files {
		out = append(out, f.Path)
	}
	return out
}

func intp(n int) *int { return &n }
