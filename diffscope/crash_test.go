package diffscope

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// long runs the larger crash matrices (more kill points on the
// 2,000/300/400 shape) and property tests (go test ./diffscope -long).
var long = flag.Bool("long", false, "run the long crash matrices and the larger property tests")

// Environment of a crash child (names outside KNIGHTCODE_, which
// gittest.Main clears).
const (
	envCrashChild  = "OPLOGCRASH_CHILD"
	envCrashRepo   = "OPLOGCRASH_REPO"
	envCrashOplog  = "OPLOGCRASH_OPLOG"
	envCrashStep   = "OPLOGCRASH_STEP"
	envCrashAction = "OPLOGCRASH_ACTION"
)

// crashActions are the actions a crash child runs, by name.
var crashActions = map[string]func(ctx context.Context, d *Differ, dir string) error{
	"revertAll": func(ctx context.Context, d *Differ, dir string) error {
		_, err := d.Revert(ctx, dir, RevertOptions{})
		return err
	},
	"revertUnstagedAll": func(ctx context.Context, d *Differ, dir string) error {
		_, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}})
		return err
	},
	"revertFile": func(ctx context.Context, d *Differ, dir string) error {
		_, err := d.Revert(ctx, dir, RevertOptions{Path: "m/f001.txt"})
		return err
	},
	"revertHunk": func(ctx context.Context, d *Differ, dir string) error {
		res, err := d.Read(ctx, dir, ReadOptions{})
		if err != nil {
			return err
		}
		for _, f := range res.Files {
			if f.Path == "s/f001.txt" && len(f.Hunks) > 0 {
				_, err := d.Revert(ctx, dir, RevertOptions{Path: f.Path, HunkID: f.Hunks[0].ID})
				return err
			}
		}
		return errors.New("no hunk in s/f001.txt")
	},
	"revertHunkUnstaged": func(ctx context.Context, d *Differ, dir string) error {
		return actOnFirstHunk(ctx, d, dir, ScopeUnstaged, "m/f001.txt", func(id string) error {
			_, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: "m/f001.txt", HunkID: id})
			return err
		})
	},
	"stageHunk": func(ctx context.Context, d *Differ, dir string) error {
		return actOnFirstHunk(ctx, d, dir, ScopeUnstaged, "s/f001.txt", func(id string) error {
			_, err := d.Stage(ctx, dir, StageOptions{Path: "s/f001.txt", HunkID: id})
			return err
		})
	},
	"unstageHunk": func(ctx context.Context, d *Differ, dir string) error {
		return actOnFirstHunk(ctx, d, dir, ScopeStaged, "s/f001.txt", func(id string) error {
			_, err := d.Unstage(ctx, dir, StageOptions{Path: "s/f001.txt", HunkID: id})
			return err
		})
	},
	"stageAll": func(ctx context.Context, d *Differ, dir string) error {
		_, err := d.Stage(ctx, dir, StageOptions{})
		return err
	},
	"unstageAll": func(ctx context.Context, d *Differ, dir string) error {
		_, err := d.Unstage(ctx, dir, StageOptions{})
		return err
	},
}

// actOnFirstHunk reads scope as a client does and runs act with the id of
// path's first hunk.
func actOnFirstHunk(ctx context.Context, d *Differ, dir string, scope Scope, path string, act func(id string) error) error {
	res, err := d.Read(ctx, dir, ReadOptions{Scope: scope})
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		if f.Path == path && len(f.Hunks) > 0 {
			return act(f.Hunks[0].ID)
		}
	}
	return fmt.Errorf("no hunk in %s", path)
}

// TestCrashChild is the child process of the crash matrix: it runs one
// action and SIGKILLs itself at the named step. It does nothing in a
// normal test run.
func TestCrashChild(t *testing.T) {
	if os.Getenv(envCrashChild) != "1" {
		t.Skip("run by the crash matrix")
	}
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	step := os.Getenv(envCrashStep)
	d := NewWithConfig(r, Config{OplogDir: os.Getenv(envCrashOplog), StepHook: func(s string) {
		if s == step {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}})
	act := crashActions[os.Getenv(envCrashAction)]
	if err := act(context.Background(), d, os.Getenv(envCrashRepo)); err != nil {
		t.Fatal(err)
	}
}

// crashState is what the matrix compares: status, both diffs, and the
// bytes of every untracked file.
func crashState(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{
		"status": gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all"),
		"diff":   gittest.Git(t, dir, "diff", "--binary"),
		"cached": gittest.Git(t, dir, "diff", "--cached", "--binary"),
	}
	for _, p := range strings.Split(gittest.Git(t, dir, "ls-files", "-o", "--exclude-standard", "-z"), "\x00") {
		if p != "" {
			s["untracked:"+p] = gittest.Read(t, dir, p)
		}
	}
	return s
}

// crashRepo makes a repository with modified files, files staged and then
// modified again, deleted files, a staged new file and untracked files:
// mod, staged and untracked of each, under m/, s/ and u/.
func crashRepo(t *testing.T, mod, staged, untracked int) string {
	t.Helper()
	dir := gittest.Init(t)
	body := func(i int, tag string) string {
		var b strings.Builder
		for l := range 12 {
			fmt.Fprintf(&b, "file %d line %d %s\n", i, l, tag)
		}
		return b.String()
	}
	for i := range mod {
		gittest.Write(t, dir, fmt.Sprintf("m/f%03d.txt", i), body(i, ""))
	}
	for i := range staged {
		gittest.Write(t, dir, fmt.Sprintf("s/f%03d.txt", i), body(i, ""))
	}
	gittest.Write(t, dir, "gone.txt", "to be deleted\n")
	gittest.CommitAll(t, dir, "init")
	for i := range staged {
		p := fmt.Sprintf("s/f%03d.txt", i)
		gittest.Write(t, dir, p, strings.Replace(body(i, ""), "line 2 ", "line 2 staged ", 1))
	}
	gittest.Write(t, dir, "added.txt", "staged new file\n")
	gittest.Git(t, dir, "add", "s", "added.txt")
	for i := range staged {
		p := fmt.Sprintf("s/f%03d.txt", i)
		gittest.Write(t, dir, p, strings.Replace(strings.Replace(body(i, ""), "line 2 ", "line 2 staged ", 1), "line 9 ", "line 9 again ", 1))
	}
	for i := range mod {
		gittest.Write(t, dir, fmt.Sprintf("m/f%03d.txt", i), body(i, "changed"))
	}
	for i := range untracked {
		gittest.Write(t, dir, fmt.Sprintf("u/n%03d.txt", i), fmt.Sprintf("untracked %d\n", i))
	}
	os.Remove(filepath.Join(dir, "gone.txt"))
	return dir
}

// crashCase is one kill: at a named step, or after a delay.
type crashCase struct {
	step  string
	after time.Duration
}

func (c crashCase) String() string {
	if c.step != "" {
		return c.step
	}
	return "after" + c.after.String()
}

// runCrashMatrix runs action in a child process on a copy of template
// for each case, kills it there, recovers, and checks the checkout is
// exactly as before or as after the action, with no leftovers, and that
// the recovery point gives the before state back with plain git.
func runCrashMatrix(t *testing.T, template, action string, pathspec []string, cases []crashCase) {
	ctx := context.Background()
	before := crashState(t, template)
	var after map[string]string
	{
		dir := gittest.CopyCheckout(t, template)
		if err := crashActions[action](ctx, newDiffer(t), dir); err != nil {
			t.Fatal(err)
		}
		after = crashState(t, dir)
	}
	if cmp.Equal(before, after) {
		t.Fatal("the action changes nothing")
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			dir := gittest.CopyCheckout(t, template)
			oplogDir := t.TempDir()
			gittest.RunKilled(t, "TestCrashChild", []string{envCrashChild + "=1", envCrashRepo + "=" + dir,
				envCrashOplog + "=" + oplogDir, envCrashStep + "=" + c.step, envCrashAction + "=" + action}, c.after)
			d := NewWithConfig(newRunner(t), Config{OplogDir: oplogDir})
			if _, err := d.Recover(ctx, ""); err != nil {
				t.Fatal(err)
			}
			got := crashState(t, dir)
			if !cmp.Equal(got, before) && !cmp.Equal(got, after) {
				t.Fatalf("neither before nor after:\nvs before (-got +want):\n%s\nvs after (-got +want):\n%s",
					cmp.Diff(got, before), cmp.Diff(got, after))
			}
			left := gittest.OplogLeftovers(dir, oplogDir)
			if len(left) > 0 {
				t.Errorf("leftovers: %v", left)
			}
			// Objects written in-process before the kill, referenced or
			// not, are sound (issue 24).
			if out, err := gittest.Run(dir, nil, "fsck", "--strict", "--no-dangling", "--no-progress"); err != nil || strings.TrimSpace(out) != "" {
				t.Errorf("git fsck --strict: %v\n%s", err, out)
			}
			ref := strings.TrimSpace(gittest.Git(t, dir, "for-each-ref", "--sort=-refname", "--count=1", "--format=%(refname)", "refs/knightcode/oplog/"))
			if ref == "" {
				if !cmp.Equal(got, before) {
					t.Fatal("the state changed without a recovery point")
				}
				return
			}
			// The README's instructions.
			spec := append([]string{"--"}, pathspec...)
			gittest.Git(t, dir, append([]string{"restore", "--source=" + ref, "--worktree"}, spec...)...)
			if slices.Equal(pathspec, []string{"."}) {
				gittest.Git(t, dir, append([]string{"restore", "--source=" + ref + "^2", "--staged"}, spec...)...)
			} else {
				// A partial point: its paths' index entries (git reset
				// also takes a path neither side has).
				gittest.Git(t, dir, append([]string{"reset", "-q", ref + "^2"}, spec...)...)
			}
			if diff := cmp.Diff(crashState(t, dir), before); diff != "" {
				t.Errorf("plain-git restore from %s (-got +want):\n%s", ref, diff)
			}
		})
	}
}

func newRunner(t *testing.T) *gitcli.Runner {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCrashMatrix kills actions on about 50 files at every kind of step
// (TestCrashMatrixTimed kills them at moments in between).
func TestCrashMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	if testing.Short() {
		t.Skip("spawns processes")
	}
	template := crashRepo(t, 20, 10, 10)
	named := func(steps ...string) []crashCase {
		var out []crashCase
		for _, s := range steps {
			out = append(out, crashCase{step: s})
		}
		return out
	}
	tests := []struct {
		action   string
		pathspec []string
		cases    []crashCase
	}{
		{"revertAll", []string{"."}, named("locked#1", "recorded#1", "remove#1", "remove#6", "remove#11", "checkout#1",
			"checkout#15", "checkout#31", "index#1", "index-locked#1", "done#1", "unjournaled#1")},
		{"revertUnstagedAll", []string{"."}, named("remove#5", "checkout#1", "checkout#20", "done#1")},
		{"revertFile", []string{"m/f001.txt"}, named("recorded#1", "checkout#1", "done#1")},
		{"revertHunk", []string{"s/f001.txt"}, named("point-objects#1", "recorded#1", "checkout#1", "index#1", "index-locked#1", "done#1")},
		{"revertHunkUnstaged", []string{"m/f001.txt"}, named("point-objects#1", "checkout#1")},
		{"stageHunk", []string{"s/f001.txt"}, named("point-objects#1", "index#1", "index-locked#1")},
		{"unstageHunk", []string{"s/f001.txt"}, named("index#1", "index-locked#1")},
		{"stageAll", []string{"."}, named("recorded#1", "index#1", "index-locked#1", "done#1")},
		{"unstageAll", []string{"."}, named("index#1", "index-locked#1", "done#1")},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			runCrashMatrix(t, template, tt.action, tt.pathspec, tt.cases)
		})
	}
}

// TestCrashMatrixTimed kills four actions at moments spread over their
// whole run (every 45 ms from 5 ms to 700 ms; every 11 ms with -long), so
// kills land between the named steps too: inside a journal write, while
// a report is saved, between a journal's lock and its first save. Each
// of these windows once left files behind (CI caught a kill 400 ms into
// a whole-scope revert; this sweep found the others).
func TestCrashMatrixTimed(t *testing.T) {
	gittest.CrashMatrix(t)
	if testing.Short() {
		t.Skip("spawns processes")
	}
	template := crashRepo(t, 20, 10, 10)
	every := 45 * time.Millisecond
	if *long {
		every = 11 * time.Millisecond
	}
	var cases []crashCase
	for after := 5 * time.Millisecond; after <= 700*time.Millisecond; after += every {
		cases = append(cases, crashCase{after: after})
	}
	for _, tt := range []struct {
		action   string
		pathspec []string
	}{{"revertAll", []string{"."}}, {"revertHunk", []string{"s/f001.txt"}}, {"stageAll", []string{"."}}, {"unstageAll", []string{"."}}} {
		t.Run(tt.action, func(t *testing.T) {
			runCrashMatrix(t, template, tt.action, tt.pathspec, cases)
		})
	}
}

// TestCrashMatrixLargeScope kills a whole-scope revert of 2,000 modified
// files, 300 staged then modified again and 400 untracked files (issue
// 15's reproduction) once mid-way through its writes; -long adds more
// points.
func TestCrashMatrixLargeScope(t *testing.T) {
	gittest.CrashMatrix(t)
	if testing.Short() {
		t.Skip("spawns processes")
	}
	template := crashRepo(t, 2000, 300, 400)
	cases := []crashCase{{step: "checkout#1200"}}
	if *long {
		cases = append(cases, crashCase{step: "remove#200"}, crashCase{step: "index-locked#1"},
			crashCase{after: 500 * time.Millisecond}, crashCase{after: 2 * time.Second})
	}
	runCrashMatrix(t, template, "revertAll", []string{"."}, cases)
}

// Recovery never overwrites an edit made after the crash: the file is
// left as the user wrote it and reported; the rest is rolled back.
func TestRecoveryKeepsEditAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	dir := crashRepo(t, 5, 2, 2)
	oplogDir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashChild+"=1", envCrashRepo+"="+dir, envCrashOplog+"="+oplogDir,
		envCrashStep+"=index#1", envCrashAction+"=revertAll")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the child was not killed:\n%s", out)
	}
	// The working tree was reverted (m/f001.txt back to HEAD) when the
	// server died; the user edits it before the next start.
	gittest.Write(t, dir, "m/f001.txt", "written after the crash\n")
	d := NewWithConfig(newRunner(t), Config{OplogDir: oplogDir})
	reps, err := d.Recover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || !cmp.Equal(reps[0].Conflicts, []string{"m/f001.txt"}) || reps[0].Outcome != "rolledBack" {
		t.Fatalf("reports = %+v", reps)
	}
	if got := gittest.Read(t, dir, "m/f001.txt"); got != "written after the crash\n" {
		t.Errorf("m/f001.txt = %q: the edit made after the crash was overwritten", got)
	}
	if got := gittest.Read(t, dir, "m/f000.txt"); !strings.Contains(got, "changed") {
		t.Errorf("m/f000.txt was not rolled back: %q", got)
	}
	if got := gittest.Read(t, dir, "u/n000.txt"); got != "untracked 0\n" {
		t.Errorf("u/n000.txt = %q", got)
	}
}

// An action whose plan was made before an interrupted action of the same
// checkout was recovered (the window between recoverFirst and the
// repository lock) writes nothing and is planned again: begin reports the
// stale plan after Begin recovered the other journal, and retryStale runs
// the action once more (twice stale: concurrentChange).
func TestStalePlanIsRedone(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	ctx := context.Background()
	template := crashRepo(t, 5, 2, 2)
	before := crashState(t, template)
	dir := gittest.CopyCheckout(t, template)
	oplogDir := t.TempDir()
	d := NewWithConfig(newRunner(t), Config{OplogDir: oplogDir})
	// The plan, made while no journal was unfinished.
	st, err := d.actionRead(ctx, dir, ReadOptions{}, "m/f001.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	sel, err := selectTarget(st, "m/f001.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	// Another server dies mid-revert in the same checkout.
	gittest.RunKilled(t, "TestCrashChild", []string{envCrashChild + "=1", envCrashRepo + "=" + dir,
		envCrashOplog + "=" + oplogDir, envCrashStep + "=checkout#3", envCrashAction + "=revertAll"}, 0)
	if err := d.begin(ctx, st, "revert", sel); !errors.Is(err, errPlanStale) {
		t.Fatalf("begin = %v, want errPlanStale", err)
	}
	if diff := cmp.Diff(before, crashState(t, dir)); diff != "" {
		t.Errorf("after the stale plan (-want +got):\n%s", diff)
	}
	// Only the recovery's report stays, for the next thread load's warning.
	for _, l := range gittest.OplogLeftovers(dir, oplogDir) {
		if !strings.HasSuffix(l, ".report.json") {
			t.Errorf("left over: %s", l)
		}
	}

	runs := 0
	paths, err := retryStale(func() ([]string, error) {
		if runs++; runs == 1 {
			return nil, errPlanStale
		}
		return []string{"a"}, nil
	})
	if err != nil || runs != 2 || !slices.Equal(paths, []string{"a"}) {
		t.Errorf("retryStale once stale = %v, %v after %d runs", paths, err, runs)
	}
	_, err = retryStale(func() ([]string, error) { return nil, errPlanStale })
	if ce, ok := errors.AsType[*ConflictError](err); !ok || ce.Reason != ReasonConcurrentChange {
		t.Errorf("retryStale twice stale = %v, want concurrentChange", err)
	}
}
