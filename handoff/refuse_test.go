package handoff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/workspace"
)

// Every refusal is decided before anything is written: each case also
// checks that both checkouts, the refs and the agent dir are unchanged.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	type fixture struct{ main, wt string }
	tests := []struct {
		name   string
		setup  func(t *testing.T, e *env, f fixture) Options
		reason string // a ConflictError reason, or "param:<field>"
		paths  []string
		msg    string
	}{
		{"destination has unstaged changes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "README.md", "local edit\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"README.md"}, MsgLocalChanges},
		{"destination has staged changes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "sub/b.txt", "staged\n")
			gittest.Git(t, f.main, "add", "sub/b.txt")
			gittest.Write(t, f.main, "sub/b.txt", "b\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"sub/b.txt"}, MsgLocalChanges},
		{"destination has an untracked file", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.main, "notes/todo.txt", "mine\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"notes/todo.txt"}, MsgLocalChanges},
		{"worktree destination not clean", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "sub/a.txt", "edit in the worktree\n")
			gittest.Write(t, f.main, "sub/b.txt", "edit in main\n")
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonLocalChanges, []string{"sub/a.txt", "sub/moving.txt"}, MsgLocalChanges},
		{"bisect in the destination", func(t *testing.T, e *env, f fixture) Options {
			gittest.Git(t, f.main, "bisect", "start")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, ""},
		{"cherry-pick in the source", func(t *testing.T, e *env, f fixture) Options {
			gittest.Git(t, f.main, "checkout", "-q", "-b", "other")
			gittest.Write(t, f.main, "sub/b.txt", "other\n")
			gittest.CommitAll(t, f.main, "other")
			gittest.Git(t, f.main, "checkout", "-q", "main")
			gittest.Write(t, f.wt, "sub/b.txt", "conflicting\n")
			gittest.CommitAll(t, f.wt, "wt")
			gittest.Run(f.wt, nil, "cherry-pick", "other")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonOperationInProgress, nil, ""},
		{"ignored file where the branch writes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, "out/build.log", "from the worktree\n")
			gittest.Git(t, f.wt, "add", "-f", "out/build.log")
			gittest.CommitAll(t, f.wt, "tracked log")
			gittest.Write(t, f.main, "out/build.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"out/build.log"}, MsgOverwrite},
		{"ignored file where a moved path goes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, ".gitignore", ".env\n")
			gittest.Write(t, f.wt, "x.log", "moved\n")
			gittest.Write(t, f.main, "x.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"x.log"}, MsgOverwrite},
		{"ignored file where a moved folder goes", func(t *testing.T, e *env, f fixture) Options {
			gittest.Write(t, f.wt, ".gitignore", "")
			gittest.Write(t, f.wt, "cache.log/entry", "moved\n")
			gittest.Write(t, f.main, "cache.log", "the user's own\n")
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonLocalChanges, []string{"cache.log"}, MsgOverwrite},
		{"another thread in the source", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, InUse: func(root string) bool { return root == f.wt }}
		}, ReasonWorktreeInUse, nil, ""},
		{"deleted worktree", func(t *testing.T, e *env, f fixture) Options {
			if _, err := e.ws.Delete(context.Background(), f.wt, workspace.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return Options{To: ToLocal, Cwd: f.wt}
		}, ReasonWorktreeDeleted, nil, ""},
		{"deleted worktree to move into", func(t *testing.T, e *env, f fixture) Options {
			if _, err := e.ws.Delete(context.Background(), f.wt, workspace.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return Options{To: ToWorktree, Cwd: f.main, Worktree: f.wt}
		}, ReasonWorktreeDeleted, nil, ""},
		{"to local from the main checkout", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.main}
		}, "param:to", nil, ""},
		{"to worktree from a worktree", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToWorktree, Cwd: f.wt}
		}, "param:to", nil, ""},
		{"branch with to worktree", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToWorktree, Cwd: f.main, Branch: "x"}
		}, "param:branch", nil, ""},
		{"environment with to local", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Environment: "dev"}
		}, "param:environment", nil, ""},
		{"branch named HEAD", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "HEAD"} // git branch refuses it too
		}, "param:branch", nil, ""},
		{"branch with a NUL", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "a\x00b"} // no argument can carry it to git
		}, "param:branch", nil, ""},
		{"branch given as a ref", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: ToLocal, Cwd: f.wt, Branch: "refs/heads/main"} // would make refs/heads/refs/heads/main
		}, "param:branch", nil, ""},
		{"bad direction", func(t *testing.T, e *env, f fixture) Options {
			return Options{To: "", Cwd: f.wt}
		}, "param:to", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
	ctx := context.Background()
	e := newEnv(t)
	main := commitFixture(t)
	wt := e.newWorktree(t, main)
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
