package workspace

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

// Environment of a crash child (names outside KNIGHTCODE_, which
// gittest.Main clears).
const (
	envCrashChild  = "WSCRASH_CHILD"
	envCrashAction = "WSCRASH_ACTION"
	envCrashRepo   = "WSCRASH_REPO"
	envCrashOplog  = "WSCRASH_OPLOG"
	envCrashStep   = "WSCRASH_STEP"
)

// crashActions are what a crash child runs, by name.
var crashActions = map[string]func(ctx context.Context, t testing.TB, o *gitstate.Oplog, dir string) error{
	"switch": func(ctx context.Context, t testing.TB, o *gitstate.Oplog, dir string) error {
		return BranchSwitch(ctx, newRunner(t), o, dir, "other")
	},
	"commit": func(ctx context.Context, t testing.TB, o *gitstate.Oplog, dir string) error {
		_, err := Commit(ctx, newRunner(t), o, dir, "everything\n", true, "")
		return err
	},
}

// TestCrashChild is the child of the kill tests of this package's
// journaled actions: it runs one (switch to other; commit everything) and
// SIGKILLs itself at the named step of its journal, unless a hook kills
// it first. It does nothing in a normal test run.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envCrashChild) != "1" {
		t.Skip("run by the kill tests")
	}
	step := os.Getenv(envCrashStep)
	o := &gitstate.Oplog{Dir: os.Getenv(envCrashOplog), StepHook: func(s string) {
		if s == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}}
	if err := crashActions[os.Getenv(envCrashAction)](context.Background(), t, o, os.Getenv(envCrashRepo)); err != nil {
		t.Fatal(err)
	}
}

// runCrashChild runs action in a crash child on the checkout dir with the
// operation log oplogDir, killed at step (or after delay).
func runCrashChild(t *testing.T, action, dir, oplogDir, step string, delay time.Duration) {
	t.Helper()
	gittest.RunKilled(t, "TestCrashChild", []string{envCrashChild + "=1", envCrashAction + "=" + action,
		envCrashRepo + "=" + dir, envCrashOplog + "=" + oplogDir, envCrashStep + "=" + step}, delay)
}

// commitState is what a commit may change: HEAD's tree, parents and
// subject (not its id: the time is in it), the index entries, status,
// and the untracked files' bytes.
func commitState(t testing.TB, dir string) map[string]string {
	t.Helper()
	s := map[string]string{
		"HEAD":   gittest.Git(t, dir, "log", "-1", "--format=%T %P %s"),
		"index":  gittest.Git(t, dir, "ls-files", "-s"),
		"status": gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all"),
		"diff":   gittest.Git(t, dir, "diff", "--binary"),
	}
	for _, p := range strings.Split(gittest.Git(t, dir, "ls-files", "-o", "--exclude-standard", "-z"), "\x00") {
		if p != "" {
			s["untracked:"+p] = gittest.Read(t, dir, p)
		}
	}
	return s
}

// killServerHook is a hook that SIGKILLs the process that ran git (the
// server), as a crash would while git commit runs.
const killServerHook = "kill -9 $(awk '{print $4}' /proc/$PPID/stat)\nsleep 5\n"

// git/commit killed at any step of its staging, or while git commit runs
// its hooks (before and after the commit lands), is, after the recovery
// a server runs at start, exactly the state before (the user's partial
// staging intact) or after (the commit made, everything staged in it),
// with nothing left behind. A crash matrix (gittest.CrashMatrix).
func TestCommitKilledMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	git := newRunner(t)
	template := gittest.Init(t)
	for i := range 30 {
		gittest.Write(t, template, fmt.Sprintf("f/%02d.txt", i), fmt.Sprintf("file %d\nline 2\n", i))
	}
	gittest.Write(t, template, ".gitignore", "*.o\n")
	gittest.CommitAll(t, template, "init")
	for i := range 30 {
		gittest.Write(t, template, fmt.Sprintf("f/%02d.txt", i), fmt.Sprintf("file %d staged\nline 2\n", i))
	}
	gittest.Git(t, template, "add", "f/00.txt", "f/01.txt")
	gittest.Write(t, template, "f/00.txt", "file 0 staged\nline 2 and then edited\n")
	gittest.Write(t, template, "new.txt", "untracked\n")
	gittest.Write(t, template, "build.o", "ignored\n")
	os.Remove(template + "/f/29.txt")
	before := commitState(t, template)
	var after map[string]string
	{
		dir := gittest.CopyCheckout(t, template)
		if _, err := Commit(ctx, git, testOplog(t), dir, "everything\n", true, ""); err != nil {
			t.Fatal(err)
		}
		after = commitState(t, dir)
	}
	cases := []struct {
		name, step, hook string
		delay            time.Duration
		want             map[string]string
	}{
		{name: "recorded", step: "recorded#1", want: before},
		{name: "index", step: "index#1", want: before},
		{name: "index-locked", step: "index-locked#1", want: before},
		{name: "in pre-commit", hook: "pre-commit", want: before},
		{name: "in post-commit", hook: "post-commit", want: after},
		{name: "done", step: "done#1", want: after},
		{name: "after 60ms", delay: 60 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := gittest.CopyCheckout(t, template)
			if c.hook != "" {
				writeHook(t, dir, c.hook, killServerHook)
			}
			oplogDir := t.TempDir()
			runCrashChild(t, "commit", dir, oplogDir, c.step, c.delay)
			o := &gitstate.Oplog{Dir: oplogDir}
			if _, err := o.Recover(ctx, git, ""); err != nil {
				t.Fatal(err)
			}
			got := commitState(t, dir)
			switch {
			case c.want != nil:
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("state (-want +got):\n%s", diff)
				}
			case !cmp.Equal(got, before) && !cmp.Equal(got, after):
				t.Errorf("neither before nor after:\nvs before (-got +want):\n%s\nvs after (-got +want):\n%s",
					cmp.Diff(got, before), cmp.Diff(got, after))
			}
			if left := gittest.OplogLeftovers(dir, oplogDir); len(left) > 0 {
				t.Errorf("leftovers: %v", left)
			}
		})
	}
}
