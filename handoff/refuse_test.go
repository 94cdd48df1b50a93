package handoff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/workspace"
)

// Every refusal is decided before anything is written: each case also
// checks that both checkouts, the refs and the agent dir are unchanged.
func TestRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type fixture struct{ main, wt string }
	tests := []struct {
		name   string
		setup  func(t *testing.T, e *env, f fixture) Options
		reason string // a ConflictError reason, or "param:<field>"
		paths  []string
		msg    string
		// gitPaths, when set, are the refusal's paths as files in a
		// checkout's git dir: "main:MERGE_HEAD", "wt:rebase-merge".
		gitPaths []string
	}{
		{"destination has unstaged changes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "README.md", "local edit\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"README.md"}, MsgLocalChanges, nil},
		{"destination has staged changes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "sub/b.txt", "staged\n")
			gittest.Git(t, f.main, "add", "sub/b.txt")
			gittest.Write(t, f.main, "sub/b.txt", "b\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"sub/b.txt"}, MsgLocalChanges, nil},
		{"destination has an untracked file", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "notes/todo.txt", "mine\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"notes/todo.txt"}, MsgLocalChanges, nil},
		{"worktree destination not clean", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "sub/a.txt", "edit in the worktree\n")
			gittest.Write(t, f.main, "sub/b.txt", "edit in main\n")
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonLocalChanges, []string{"sub/a.txt", "sub/moving.txt"}, MsgLocalChanges, nil},
		{"bisect in the destination", func(t *testing.T, e *env, f fixture) Options {
			gittest.Git(t, f.main, "bisect", "start")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"main:BISECT_LOG"}},
		{"cherry-pick in the source", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.wt, "cherry-pick", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"wt:CHERRY_PICK_HEAD"}},
		{"merge in the destination", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.main, "merge", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"main:MERGE_HEAD"}},
		{"merge in the source", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.main, "merge", "other")
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"main:MERGE_HEAD"}},
		{"merge in the source, to a new worktree", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.main, "merge", "other")
			return Options{To: ToWorktree, Cwd: f.main}
		}, ReasonOperationInProgress, nil, "", []string{"main:MERGE_HEAD"}},
		{"rebase in the source", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.wt, "rebase", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"wt:rebase-merge"}},
		{"rebase in the destination worktree", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.wt, "rebase", "other")
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"wt:rebase-merge"}},
		{"apply-backend rebase in the destination", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.main, "rebase", "--apply", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"main:rebase-apply"}},
		{"revert in the source", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.wt, "revert", "HEAD~1")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"wt:REVERT_HEAD"}},
		{"revert in the destination", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.main, "revert", "HEAD~1")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"main:REVERT_HEAD"}},
		{"merge in the destination and revert in the source", func(t *testing.T, e *env, f fixture) Options {
			stopInConflict(t, f.main, f.wt, "revert", "HEAD~1")
			gittest.Git(t, f.main, "branch", "-D", "other")
			stopInConflict(t, f.main, f.main, "merge", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, "", []string{"wt:REVERT_HEAD", "main:MERGE_HEAD"}},
		{"ignored file where the branch writes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "out/build.log", "from the worktree\n")
			gittest.Git(t, f.wt, "add", "-f", "out/build.log")
			gittest.CommitAll(t, f.wt, "tracked log")
			gittest.Write(t, f.main, "out/build.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"out/build.log"}, MsgOverwrite, nil},
		{"ignored file where a moved path goes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, ".gitignore", ".env\n")
			gittest.Write(t, f.wt, "x.log", "moved\n")
			gittest.Write(t, f.main, "x.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"x.log"}, MsgOverwrite, nil},
		{"ignored file where a moved folder goes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, ".gitignore", "")
			gittest.Write(t, f.wt, "cache.log/entry", "moved\n")
			gittest.Write(t, f.main, "cache.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"cache.log"}, MsgOverwrite, nil},
		{"ignored file a moved .gitignore unignores", func(t *testing.T, e *env, f fixture) Options {
			// The moved .gitignore no longer ignores *.log: main's own
			// cfg.log would become an untracked file of the moved
			// changes.
			gittest.Write(t, f.wt, ".gitignore", ".env\n")
			gittest.Write(t, f.main, "cfg.log", "the user's own\n")
			gittest.Write(t, f.main, "logs/a.log", "the user's own\n")
			gittest.Write(t, f.main, "keep.env.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"cfg.log", "keep.env.log", "logs/a.log"}, MsgUnignored, nil},
		{"ignored folder a moved .gitignore unignores in part", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, ".gitignore", "*.log\n.env\nbuild/\n")
			gittest.CommitAll(t, f.main, "ignore build")
			gittest.Git(t, f.wt, "checkout", "-q", "--detach", "main")
			gittest.Write(t, f.wt, "sub/moving.txt", "work\n")
			gittest.Write(t, f.wt, ".gitignore", "*.log\n.env\nbuild/*.o\n")
			gittest.Write(t, f.main, "build/a.o", "object\n")
			gittest.Write(t, f.main, "build/deep/b.o", "object\n")
			gittest.Write(t, f.main, "build/deep/out.bin", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"build/deep/b.o", "build/deep/out.bin"}, MsgUnignored, nil}, // build/*.o does not reach build/deep/
		{"ignored file a moved nested .gitignore unignores", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "sub/.gitignore", "!*.log\n")
			gittest.Write(t, f.main, "sub/x.log", "the user's own\n")
			gittest.Write(t, f.main, "y.log", "stays ignored\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"sub/x.log"}, MsgUnignored, nil},
		{"ignored file a moved .gitignore unignores, to a worktree", func(t *testing.T, e *env, f fixture) Options {
			gittest.Git(t, f.wt, "checkout", "-q", "--", ".")
			os.Remove(filepath.Join(f.wt, "sub/moving.txt"))
			gittest.Write(t, f.main, ".gitignore", ".env\n")
			gittest.Write(t, f.wt, "cfg.log", "the worktree's own\n")
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonLocalChanges, []string{"cfg.log"}, MsgUnignored, nil},
		{"ignored file where the moved changes delete a tracked file", func(t *testing.T, e *env, f fixture) Options {
			// `git rm --cached` of an ignored name, the user's own copy
			// kept: cleaning the worktree would write HEAD's file over
			// it (QA: the handoff overwrote it and kept it nowhere).
			trackIgnored(t, f.main, f.wt, "cfg.log")
			gittest.Git(t, f.wt, "rm", "-q", "--cached", "cfg.log")
			gittest.Write(t, f.wt, "cfg.log", "REAL SECRET\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"cfg.log"}, MsgIgnoredInSource, nil},
		{"ignored file where the moved changes delete a tracked file, to a new worktree", func(t *testing.T, e *env, f fixture) Options {
			trackIgnored(t, f.main, f.wt, "cfg.log")
			os.Remove(filepath.Join(f.wt, "sub/moving.txt"))
			gittest.Git(t, f.main, "rm", "-q", "--cached", "cfg.log")
			gittest.Write(t, f.main, "cfg.log", "REAL SECRET\n")
			return Options{To: ToWorktree, Cwd: f.main}
		}, ReasonLocalChanges, []string{"cfg.log"}, MsgIgnoredInSource, nil},
		{"tracked file turned into a folder of ignored files", func(t *testing.T, e *env, f fixture) Options {
			os.Remove(filepath.Join(f.wt, "README.md"))
			gittest.Write(t, f.wt, "README.md/cache.log", "ignored\n")
			gittest.Write(t, f.wt, "README.md/kept.txt", "untracked, moves\n")
			gittest.Git(t, f.wt, "init", "-q", "README.md/inner")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"README.md/cache.log", "README.md/inner"}, MsgIgnoredInSource, nil},
		{"tracked folder turned into a file where the destination has ignored files", func(t *testing.T, e *env, f fixture) Options {
			os.RemoveAll(filepath.Join(f.wt, "sub"))
			gittest.Write(t, f.wt, "sub", "now a file\n")
			gittest.Write(t, f.main, "sub/x.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"sub/x.log"}, MsgOverwrite, nil},
		{"nested repository where a moved path goes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "lib/moved.go", "moved\n")
			gittest.Git(t, f.main, "init", "-q", "lib")
			gittest.Write(t, f.main, "lib/own.go", "the nested repository's\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"lib"}, MsgOverwrite, nil},
		{"deleted worktree", func(t *testing.T, e *env, f fixture) Options {
			if _, err := e.ws.Delete(context.Background(), f.wt, workspace.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonWorktreeDeleted, nil, "", nil},
		{"deleted worktree to move into", func(t *testing.T, e *env, f fixture) Options {
			if _, err := e.ws.Delete(context.Background(), f.wt, workspace.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonWorktreeDeleted, nil, "", nil},
		{"to local from the main checkout", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.main}
		}, "param:to", nil, "", nil},
		{"to worktree from a worktree", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToWorktree, Cwd: f.wt}
		}, "param:to", nil, "", nil},
		{"branch with to worktree", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToWorktree, Cwd: f.main, Branch: "x"}
		}, "param:branch", nil, "", nil},
		{"environment with to local", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Environment: "dev"}
		}, "param:environment", nil, "", nil},
		{"branch named HEAD", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "HEAD"} // git branch refuses it too
		}, "param:branch", nil, "", nil},
		{"branch with a NUL", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "a\x00b"} // no argument can carry it to git
		}, "param:branch", nil, "", nil},
		{"branch given as a ref", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "refs/heads/main"} // would make refs/heads/refs/heads/main
		}, "param:branch", nil, "", nil},
		{"bad direction", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: "", Cwd: f.wt}
		}, "param:to", nil, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			f := fixture{main: commitFixture(t)}
			f.wt = e.newWorktree(t, f.main)
			gittest.Write(t, f.wt, "sub/moving.txt", "work\n")
			o := tc.setup(t, e, f)
			before := snapshotDirs(t, f.main, f.wt, e.agentDir)
			for _, run := range []bool{false, true} {
				var err error
				if run {
					_, err = e.h.Run(ctx, o)
				} else {
					_, err = e.h.Plan(ctx, o)
				}
				var ce *ConflictError
				var pe *ParamError
				switch {
				case errors.As(err, &pe) && "param:"+pe.Field == tc.reason:
				case errors.As(err, &ce) && ce.Reason == tc.reason:
					if tc.paths != nil {
						if diff := cmp.Diff(tc.paths, ce.Paths); diff != "" {
							t.Errorf("paths (-want +got):\n%s", diff)
						}
					}
					if tc.gitPaths != nil {
						var want []string
						for _, gp := range tc.gitPaths {
							side, name, _ := strings.Cut(gp, ":")
							dir := map[string]string{"main": f.main, "wt": f.wt}[side]
							gitDir := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--absolute-git-dir"))
							want = append(want, filepath.Join(gitDir, name))
						}
						if diff := cmp.Diff(want, ce.Paths); diff != "" {
							t.Errorf("paths (-want +got):\n%s", diff)
						}
						for _, p := range ce.Paths {
							if _, err := os.Lstat(p); err != nil {
								t.Errorf("reported path %s: %v", p, err)
							}
						}
					}
					if tc.msg != "" && ce.Output != tc.msg {
						t.Errorf("message = %q, want %q", ce.Output, tc.msg)
					}
				default:
					t.Fatalf("run=%v: err = %v, want %s", run, err, tc.reason)
				}
				after := snapshotDirs(t, f.main, f.wt, e.agentDir)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("run=%v wrote (-before +after):\n%s", run, diff)
				}
			}
		})
	}
}

// Plan (dryRun) writes nothing: refs, HEAD, index, config, logs/, working
// files and the agent dir are byte for byte (and mtime) as before, in
// both directions.
func TestPlanWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	dirtyFixture(t, wt)
	gittest.Write(t, main, ".env", "SECRET=1\n")
	before := snapshotDirs(t, main, wt, e.agentDir)
	p, err := e.h.Plan(ctx, Options{To: ToLocal, Cwd: wt, Title: "dry"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Branch == nil || p.Branch.Name != "knightcode/dry" || p.Destination != main || p.Head != head(t, wt) {
		t.Errorf("plan = %+v", p)
	}
	if diff := cmp.Diff(before, snapshotDirs(t, main, wt, e.agentDir)); diff != "" {
		t.Errorf("Plan wrote (-before +after):\n%s", diff)
	}
	for _, p := range []string{filepath.Join(e.agentDir, "handoff"), filepath.Join(main, ".git", lockFileName)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s made: %v", p, err)
		}
	}

	// The other way: main dirty, no worktree yet.
	main2 := commitFixture(t)
	dirtyFixture(t, main2)
	before = snapshotDirs(t, main2, e.agentDir)
	p, err = e.h.Plan(ctx, Options{To: ToWorktree, Cwd: main2})
	if err != nil {
		t.Fatal(err)
	}
	if !p.CreateWorktree || len(p.Paths) == 0 {
		t.Errorf("plan = %+v", p)
	}
	if diff := cmp.Diff(before, snapshotDirs(t, main2, e.agentDir)); diff != "" {
		t.Errorf("Plan wrote (-before +after):\n%s", diff)
	}
}

// stopInConflict leaves the git operation args (merge, rebase,
// cherry-pick, revert) stopped in a conflict in dir, a checkout of the
// repository whose main checkout is main (clean on branch main): branch
// other changes sub/b.txt one way, dir commits two other changes to it
// (so reverting HEAD~1 conflicts too), then args runs and is expected to
// stop.
func stopInConflict(t *testing.T, main, dir string, args ...string) {
	t.Helper()
	gittest.Git(t, main, "checkout", "-q", "-b", "other")
	gittest.Write(t, main, "sub/b.txt", "other\n")
	gittest.CommitAll(t, main, "other")
	gittest.Git(t, main, "checkout", "-q", "main")
	gittest.Write(t, dir, "sub/b.txt", "conflicting\n")
	gittest.CommitAll(t, dir, "first")
	gittest.Write(t, dir, "sub/b.txt", "conflicting again\n")
	gittest.CommitAll(t, dir, "second")
	if out, err := gittest.Run(dir, nil, args...); err == nil {
		t.Fatalf("git %v did not stop in a conflict:\n%s", args, out)
	}
}

// trackIgnored commits name, a file the fixture's .gitignore ignores, with
// `git add -f` in main and moves the worktree wt to that commit.
func trackIgnored(t *testing.T, main, wt, name string) {
	t.Helper()
	gittest.Write(t, main, name, "template\n")
	gittest.Git(t, main, "add", "-f", name)
	gittest.Git(t, main, "commit", "-qm", "track "+name)
	gittest.Git(t, wt, "checkout", "-q", "--detach", "main")
}

// CheckDestination refuses a checkout that is not clean as a handoff into
// it refuses first (localChanges, MsgLocalChanges, its changed paths), and
// passes a clean one whatever it ignores; it writes nothing.
func TestCheckDestination(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	gittest.Write(t, main, "x.log", "ignored\n")
	if err := e.h.CheckDestination(ctx, main); err != nil {
		t.Errorf("clean main: %v", err)
	}
	gittest.Write(t, main, "README.md", "edited\n")
	gittest.Write(t, main, "sub/new.txt", "untracked\n")
	before := snapshotDirs(t, main, wt, e.agentDir)
	err := e.h.CheckDestination(ctx, filepath.Join(main, "sub"))
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Reason != ReasonLocalChanges || ce.Output != MsgLocalChanges ||
		!cmp.Equal(ce.Paths, []string{"README.md", "sub/new.txt"}) {
		t.Errorf("dirty main: %v", err)
	}
	if diff := cmp.Diff(before, snapshotDirs(t, main, wt, e.agentDir)); diff != "" {
		t.Errorf("CheckDestination wrote (-before +after):\n%s", diff)
	}
}
