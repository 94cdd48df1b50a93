package handoff

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/workspace"
)

func TestMain(m *testing.M) { gittest.Main(m) }

type env struct {
	h        *Handoff
	ws       *workspace.Manager
	agentDir string
	main     string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	agentDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(r, agentDir)
	return &env{h: New(r, ws, agentDir), ws: ws, agentDir: agentDir}
}

// checkout is what a test compares of a checkout, byte for byte.
type checkout struct {
	Status, Diff, Cached string
	Files                map[string]string // untracked and tracked files: content, mode, link target
}

func stateOf(t testing.TB, dir string) checkout {
	t.Helper()
	run := func(args ...string) string {
		out := gittest.Git(t, dir, append([]string{"-c", "core.quotePath=false"}, args...)...)
		return strings.ReplaceAll(out, dir, "<DIR>")
	}
	c := checkout{
		Status: run("status", "--porcelain=v2", "--untracked-files=all"),
		Diff:   run("diff"),
		Cached: run("diff", "--cached"),
		Files:  map[string]string{},
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == ".git" {
			return nil
		}
		fi, _ := os.Lstat(p)
		if fi.Mode()&fs.ModeSymlink != 0 {
			tgt, _ := os.Readlink(p)
			c.Files[rel] = "link:" + tgt
			return nil
		}
		b, _ := os.ReadFile(p)
		c.Files[rel] = fi.Mode().String() + ":" + string(b)
		return nil
	})
	return c
}

// commitFixture is gittest.CommitFixture ignoring *.log and .env.
func commitFixture(t testing.TB) string {
	t.Helper()
	return gittest.CommitFixture(t, "*.log\n.env\n")
}

// dirtyFixture is gittest.DirtyFixture.
func dirtyFixture(t testing.TB, dir string) {
	t.Helper()
	gittest.DirtyFixture(t, dir)
}

// newWorktree makes a managed worktree of main for thread T1.
func (e *env) newWorktree(t testing.TB, main string) string {
	t.Helper()
	c, err := e.ws.Create(context.Background(), workspace.CreateOptions{Cwd: main, ThreadID: "T1"})
	if err != nil {
		t.Fatal(err)
	}
	return c.Worktree.Path
}

// newWorktreeEnv is newEnv with commitFixture as the main checkout and a
// managed worktree of it (newWorktree).
func newWorktreeEnv(t testing.TB) (e *env, main, wt string) {
	t.Helper()
	e = newEnv(t)
	main = commitFixture(t)
	return e, main, e.newWorktree(t, main)
}

// wantState reports an error naming what when dir's state (stateOf) is not
// want.
func wantState(t testing.TB, what string, want checkout, dir string) {
	t.Helper()
	if diff := cmp.Diff(want, stateOf(t, dir)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func head(t testing.TB, dir string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

func symref(t testing.TB, dir string) string {
	t.Helper()
	out, _ := gittest.Run(dir, nil, "symbolic-ref", "-q", "HEAD")
	return strings.TrimSpace(out)
}

// snapshotDirs maps every file under dirs (a checkout with its .git, the
// agent dir) except objects to its mode, mtime and bytes: what a refusal
// or a Plan must not change.
func snapshotDirs(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return nil
			}
			if strings.Contains(p, string(filepath.Separator)+"objects"+string(filepath.Separator)) {
				return nil
			}
			if filepath.Base(p) == lockFileName {
				// Run's repository lock (an empty flock file; Plan never
				// makes it): the only file a refused Run may create.
				if fi, err := os.Lstat(p); err == nil && fi.Size() == 0 {
					return nil
				}
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			b, _ := os.ReadFile(p)
			out[p] = fi.Mode().String() + fi.ModTime().String() + ":" + string(b)
			return nil
		})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// noJournals fails t when a handoff journal (in the operation log) or a
// saved patch is left.
func (e *env) noJournals(t *testing.T) {
	t.Helper()
	if infos, err := e.h.oplog.ExternalJournals(JournalAction, ""); err != nil || len(infos) != 0 {
		t.Errorf("journals left: %+v, %v", infos, err)
	}
	ents, _ := os.ReadDir(filepath.Join(e.agentDir, "handoff"))
	ents = slices.DeleteFunc(ents, func(d os.DirEntry) bool { return d.Name() == "reports" }) // RecoverStart's, taken by the thread layer
	if len(ents) != 0 {
		t.Errorf("patches left: %v", ents)
	}
	if ents, _ := os.ReadDir(filepath.Join(e.agentDir, "oplog")); len(ents) != 0 {
		t.Errorf("oplog files left: %v", ents)
	}
}
