package workspace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// benchFiles is KNIGHTCODE_BENCH_FILES, read before gittest.Main removes
// every KNIGHTCODE_* variable from the environment.
var benchFiles string

// TestMain isolates every test and benchmark from the user's environment.
func TestMain(m *testing.M) {
	benchFiles = os.Getenv("KNIGHTCODE_BENCH_FILES")
	gittest.Main(m)
}

// newManager returns a Manager with a fresh agent directory.
func newManager(t testing.TB) *Manager {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	agentDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return New(r, agentDir)
}

var ctx = context.Background()

// gitState is what a user sees of a checkout: status, both diffs.
type gitState struct {
	Status, Diff, Cached string
}

// stateOf reads `git status --porcelain=v2`, `git diff` and `git diff
// --cached` in dir (with -c core.quotePath=false so names compare as they
// are), replacing dir by <DIR> in case a path appears.
func stateOf(t testing.TB, dir string) gitState {
	t.Helper()
	run := func(args ...string) string {
		out := gittest.Git(t, dir, append([]string{"-c", "core.quotePath=false"}, args...)...)
		return strings.ReplaceAll(out, dir, "<DIR>")
	}
	return gitState{
		Status: run("status", "--porcelain=v2", "--untracked-files=all"),
		Diff:   run("diff"),
		Cached: run("diff", "--cached"),
	}
}

// indexBytes returns the bytes of dir's real index.
func indexBytes(t testing.TB, dir string) []byte {
	t.Helper()
	p := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index"))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// knightcodeRefs lists the refs under refs/knightcode/ of dir's repository.
func knightcodeRefs(t testing.TB, dir string) []string {
	t.Helper()
	out := gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/knightcode/")
	return nonEmptyLines(out)
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// worktreeList is `git worktree list --porcelain` of dir's repository.
func worktreeList(t testing.TB, dir string) string {
	t.Helper()
	return gittest.Git(t, dir, "worktree", "list", "--porcelain")
}

// dirEntries lists the names under dir, recursively, with file modes and
// symlink targets; "" for a missing dir.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		s := rel + " " + fi.Mode().String()
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			s += " -> " + target
		} else if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			s += " " + string(bytes.TrimSpace(b))
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// commitFixture makes a repository with a committed tree used by most
// commitFixture is gittest.CommitFixture ignoring *.log.
func commitFixture(t testing.TB) string {
	t.Helper()
	return gittest.CommitFixture(t, "*.log\n")
}

// dirtyFixture is gittest.DirtyFixture plus an ignored file (C15).
func dirtyFixture(t testing.TB, dir string) {
	t.Helper()
	gittest.DirtyFixture(t, dir)
	gittest.Write(t, dir, "sub/build.log", "ignored\n")
}

func headOf(t testing.TB, dir string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}
