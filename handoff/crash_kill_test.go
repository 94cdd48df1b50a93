package handoff

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/workspace"
)

// Environment of a handoff crash child (names outside KNIGHTCODE_ and
// GIT_, which gittest.Main clears).
const (
	envKillChild    = "HANDOFFKILL_CHILD"    // "1": TestHandoffCrashChild runs
	envKillAgent    = "HANDOFFKILL_AGENT"    // the agent dir
	envKillCwd      = "HANDOFFKILL_CWD"      // Options.Cwd (the source)
	envKillTo       = "HANDOFFKILL_TO"       // Options.To
	envKillWorktree = "HANDOFFKILL_WORKTREE" // Options.Worktree
	envKillStep     = "HANDOFFKILL_STEP"     // the step to die at, or to arm the watch at
	envKillWatch    = "HANDOFFKILL_WATCH"    // a path whose change kills the child once armed
	envKillWatchFor = "HANDOFFKILL_WATCHFOR" // see watched
	envKillTimes    = "HANDOFFKILL_TIMES"    // "1": print each step's time to stderr
)

// TestHandoffCrashChild is the child process of the handoff kill matrix:
// it runs one handoff with the parameters in its environment and
// SIGKILLs itself at the named step, or, with a watch, once the watched
// path changes after that step (a kill while git writes the checkout), or
// is killed by its parent after a delay. The git children it started die
// with it (gitcli's parent-death signal). It does nothing in a normal
// test run.
func TestHandoffCrashChild(t *testing.T) {
	if os.Getenv(envKillChild) != "1" {
		t.Skip("run by the handoff kill matrix")
	}
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	agentDir := os.Getenv(envKillAgent)
	h := New(r, workspace.New(r, agentDir), agentDir)
	step, watch, watchFor := os.Getenv(envKillStep), os.Getenv(envKillWatch), os.Getenv(envKillWatchFor)
	times := os.Getenv(envKillTimes) == "1"
	h.StepHook = func(s string) error {
		if times {
			fmt.Fprintf(os.Stderr, "handoffkill step %s %d\n", s, time.Now().UnixNano())
		}
		if s != step {
			return nil
		}
		if watch == "" {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		go func() {
			for !watched(watch, watchFor) {
				time.Sleep(20 * time.Microsecond)
			}
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}()
		return nil
	}
	o := Options{To: Direction(os.Getenv(envKillTo)), Cwd: os.Getenv(envKillCwd), Worktree: os.Getenv(envKillWorktree), Title: "crash"}
	if _, err := h.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if times {
		fmt.Fprintf(os.Stderr, "handoffkill step end %d\n", time.Now().UnixNano())
	}
}

// watched reports whether path is as cond says: "exists", "size:<n>" (a
// file of n bytes), or "partial:<n>" (no file, or one of fewer than n
// bytes: a file of n bytes being rewritten in place of another of n).
func watched(path, cond string) bool {
	fi, err := os.Lstat(path)
	switch {
	case cond == "exists":
		return err == nil
	case strings.HasPrefix(cond, "size:"):
		n, _ := strconv.ParseInt(strings.TrimPrefix(cond, "size:"), 10, 64)
		return err == nil && fi.Size() == n
	case strings.HasPrefix(cond, "partial:"):
		n, _ := strconv.ParseInt(strings.TrimPrefix(cond, "partial:"), 10, 64)
		return err != nil || fi.Size() < n
	}
	panic("watch condition " + cond)
}

// Sizes of the kill fixture.
const (
	killModified  = 240 // tracked files modified, c/dNN/fNNN.txt
	killStaged    = 10  // staged then modified again, s/fNN.txt
	killUntracked = 40  // untracked, in new folders u/dNN/nNNN.txt
)

// killBigPath is the fixture's large file (killBig): git writes it in
// several write calls, long enough for a watch to see it half written.
const killBigPath = "big/data.txt"

// killBig is the large file, about 2 MiB of numbered lines; changed
// changes three lines, keeping its size.
func killBig(changed bool) string {
	var b strings.Builder
	for l := range 75_000 {
		tag := "committed"
		if changed && (l == 7 || l == 37_000 || l == 74_000) {
			tag = "changed!!"
		}
		fmt.Fprintf(&b, "big line %08d %s\n", l, tag)
	}
	return b.String()
}

// killBody is a kill fixture file of about 3 KB; changed gives the
// modified version (two lines changed, one added: another size).
func killBody(i int, changed bool) string {
	var b strings.Builder
	for l := range 40 {
		tag := ""
		if changed && (l == 3 || l == 30) {
			tag = " changed by the thread"
		}
		fmt.Fprintf(&b, "file %04d line %02d: the quick brown fox jumps over the lazy dog%s\n", i, l, tag)
	}
	if changed {
		b.WriteString("one more line\n")
	}
	return b.String()
}

func killModifiedPath(i int) string  { return fmt.Sprintf("c/d%02d/f%03d.txt", i/30, i) }
func killUntrackedPath(i int) string { return fmt.Sprintf("u/d%02d/n%03d.txt", i/10, i) }

// killSides is a kill matrix's repositories, at fixed paths under live:
// the main checkout and the agent dir (holding the managed worktree),
// copied from tpl before each case; the handoff's source and
// destination, its options, and the sides' states before.
type killSides struct {
	live, tpl string
	agentDir  string
	to        Direction
	src, dst  string
	o         Options
	// want is the source before (the changes); srcClean and dstClean are
	// each side clean (the source before its changes); srcRef and
	// dstRef their symbolic HEADs before.
	want, srcClean, dstClean checkout
	srcRef, dstRef           string
}

// newKillSides makes, under a new temporary folder, a main checkout with
// the kill fixture committed and a managed worktree of it; the source (the
// worktree on a branch of its own for ToLocal, the main checkout for
// ToWorktree) gets every kind of change: killModified modified files,
// killStaged staged then modified again, a staged new file, killUntracked
// untracked files in new folders, a deletion, a staged deletion, an exec
// bit, a symlink and an intent-to-add entry. The result is kept as the
// template each case starts from ([killSides.reset]).
func newKillSides(t *testing.T, to Direction) *killSides {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := &killSides{live: filepath.Join(root, "live"), tpl: filepath.Join(root, "tpl"), to: to}
	k.agentDir = filepath.Join(k.live, "agent")
	main := filepath.Join(k.live, "main")
	for _, d := range []string{k.agentDir, main} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Git(t, main, "init", "-q", "-b", "main")
	gittest.Git(t, main, "config", "core.autocrlf", "false")
	files := map[string]string{
		"README.md":       "readme\n",
		".gitignore":      "*.log\n",
		"tools/run.sh":    "#!/bin/sh\necho run\n",
		"gone.txt":        "to delete\n",
		"staged-gone.txt": "staged delete\n",
	}
	for i := range killModified {
		files[killModifiedPath(i)] = killBody(i, false)
	}
	for i := range killStaged {
		files[fmt.Sprintf("s/f%02d.txt", i)] = killBody(1000+i, false)
	}
	files[killBigPath] = killBig(false)
	for p, c := range files {
		writeFile(t, main, p, c)
	}
	gittest.CommitAll(t, main, "init")
	e := k.env(t)
	wt := e.newWorktree(t, main)
	k.src, k.dst, k.o = wt, main, Options{To: to, Cwd: wt, Title: "crash"}
	if to == ToLocal {
		gittest.Git(t, wt, "checkout", "-q", "-b", "own")
	} else {
		k.src, k.dst = main, wt
		k.o.Cwd, k.o.Worktree = main, wt
	}
	k.srcClean, k.dstClean = killState(t, k.src), killState(t, k.dst)
	src := k.src
	for i := range killStaged {
		writeFile(t, src, fmt.Sprintf("s/f%02d.txt", i), killBody(2000+i, false))
	}
	writeFile(t, src, "added.txt", "staged new file\n")
	gittest.Git(t, src, "add", "s", "added.txt")
	for i := range killStaged {
		writeFile(t, src, fmt.Sprintf("s/f%02d.txt", i), killBody(2000+i, true))
	}
	for i := range killModified {
		writeFile(t, src, killModifiedPath(i), killBody(i, true))
	}
	writeFile(t, src, killBigPath, killBig(true))
	for i := range killUntracked {
		writeFile(t, src, killUntrackedPath(i), fmt.Sprintf("untracked %d\n", i))
	}
	if err := os.Remove(filepath.Join(src, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, src, "rm", "-q", "staged-gone.txt")
	if err := os.Chmod(filepath.Join(src, "tools/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, src, "intent.py", "x = 1\n")
	gittest.Git(t, src, "add", "-N", "intent.py")
	k.want = killState(t, src)
	k.srcRef, k.dstRef = symref(t, k.src), symref(t, k.dst)
	gittest.Git(t, main, "repack", "-adq") // one pack to copy for each case
	if out, err := exec.Command("cp", "-a", k.live, k.tpl).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return k
}

// reset puts the template back at the live paths (the worktree's and
// the main checkout's git dirs name each other by absolute path) and
// refreshes both indexes' stat data, as a copy needs.
func (k *killSides) reset(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(k.live); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", k.tpl, k.live).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	for _, d := range []string{k.src, k.dst} {
		gittest.Git(t, d, "update-index", "-q", "--refresh")
	}
}

// env is a new Handoff over k's agent dir, as a new server process has.
func (k *killSides) env(t *testing.T) *env {
	t.Helper()
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace.New(r, k.agentDir)
	return &env{h: New(r, ws, k.agentDir), ws: ws, agentDir: k.agentDir}
}

// writeFile is gittest.WriteFile: gittest.Write without its chmod (the
// fixture writes many files).
var writeFile = gittest.WriteFile

// killCase is one kill of a handoff's process: at a named step, once a
// watched path changes after a named step, or after a delay from the
// child's start.
type killCase struct {
	name string
	step string
	// watch, relative to the destination (watchSrc: the source), and
	// watchFor: see watched.
	watch    string
	watchSrc bool
	watchFor string
	after    time.Duration
	// mayFinish: the handoff may finish before the kill (a timed kill,
	// or a watch for a file only the current implementation writes).
	mayFinish bool
}

// childEnv is the environment of a crash child running k's handoff.
func (k *killSides) childEnv(t *testing.T) []string {
	return []string{envKillChild + "=1", envKillAgent + "=" + k.agentDir, envKillCwd + "=" + k.o.Cwd,
		envKillTo + "=" + string(k.o.To), envKillWorktree + "=" + k.o.Worktree, "TMPDIR=" + t.TempDir()}
}

// runChild runs TestHandoffCrashChild with env added and, when after >
// 0, SIGKILLs it after that long. It reports whether the child died by a
// signal, and its output; a child that fails on its own fails t.
func runChild(t *testing.T, env []string, after time.Duration) (killed bool, start time.Time, out string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHandoffCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	start = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if after > 0 {
		timer := time.AfterFunc(after, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return true, start, b.String()
	}
	if err != nil {
		t.Fatalf("the crash child failed: %v\n%s", err, b.String())
	}
	return false, start, b.String()
}

// waitCapturesFree waits until no process holds the lock of a capture
// folder in root (captureDirPrefix), failing t after 10 s. A server
// restarts after the killed one is gone with everything it started: a git
// child it forked (gitcli starts each in a process group of its own) that
// was still between fork and exec when its parent died holds a copy of
// the capture's lock until its parent-death signal ends it, and the next
// start's sweep rightly leaves a held capture alone.
func waitCapturesFree(t *testing.T, root string) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(10 * time.Second)
	for {
		held := ""
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), captureDirPrefix) {
				continue
			}
			lock := flock.New(filepath.Join(root, e.Name(), "lock"))
			if ok, err := lock.TryLock(); err == nil && ok {
				_ = lock.Unlock()
			} else if err == nil {
				held = e.Name()
			}
		}
		if held == "" {
			if d := time.Since(start); d > 5*time.Millisecond {
				t.Logf("a capture's lock was held %v after the kill", d.Round(time.Millisecond))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capture %s is still locked 10 s after the handoff's process was killed", held)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stepTimes runs k's handoff unkilled in a child and returns when each
// step came, from the child's start, with "end" when Run returned.
func stepTimes(t *testing.T, k *killSides) map[string]time.Duration {
	t.Helper()
	_, start, out := runChild(t, append(k.childEnv(t), envKillTimes+"=1"), 0)
	times := map[string]time.Duration{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 4 && f[0] == "handoffkill" && f[1] == "step" {
			ns, _ := strconv.ParseInt(f[3], 10, 64)
			times[f[2]] = time.Unix(0, ns).Sub(start)
		}
	}
	if _, ok := times["end"]; !ok {
		t.Fatalf("no step times:\n%s", out)
	}
	return times
}

// killCases are the kills of one direction's matrix (times: the step
// times of an unkilled run, from the child's start): every named step
// that run reached, kills while git writes the destination (after "head")
// and cleans the source (after "cleaning"), watched as they happen, and
// kills at times of the run.
func (k *killSides) killCases(t *testing.T, times map[string]time.Duration) []killCase {
	for _, s := range []string{"begun", "head", StepCleaning} {
		if _, ok := times[s]; !ok {
			t.Fatalf("an unkilled handoff never reached step %q, which the kill matrix arms its kills at", s)
		}
	}
	// The handoff's own steps, and those of its journal's writes where
	// each side's files and index change hands (gitstate's steps of
	// every file placed would make hundreds of cases).
	journalSteps := map[string]bool{"recorded#1": true, "checkout#1": true, "index#1": true, "index-locked#1": true,
		"index#2": true, "index-locked#2": true}
	var steps []string
	for s := range times {
		if s != "end" && (!strings.Contains(s, "#") || journalSteps[s]) {
			steps = append(steps, s)
		}
	}
	sort.Slice(steps, func(i, j int) bool { return times[steps[i]] < times[steps[j]] })
	var cases []killCase
	for _, s := range steps {
		cases = append(cases, killCase{name: s, step: s})
	}
	// The moment git takes the index's lock to write the checkout (or the
	// source's kept index is linked as the lock), and the moment the
	// middle modified file has been written (the destination at its
	// changed bytes, the source back at its committed bytes).
	mid := killModified / 2
	cases = append(cases,
		killCase{name: "writing/index.lock", step: "head", watch: ".git/index.lock", watchFor: "exists", mayFinish: true},
		killCase{name: "writing/middle", step: "head", watch: killModifiedPath(mid), watchFor: killSize(killBody(mid, true))},
		killCase{name: "cleaning/index.lock", step: StepCleaning, watchSrc: true, watch: ".git/index.lock", watchFor: "exists", mayFinish: true},
		killCase{name: "cleaning/middle", step: StepCleaning, watchSrc: true, watch: killModifiedPath(mid), watchFor: killSize(killBody(mid, false))},
	)
	// The moment the large file is gone or shorter than both its versions:
	// a handoff that writes each file whole (a new file renamed over the
	// old) never shows that, and finishes unkilled.
	big := "partial:" + strconv.Itoa(len(killBig(false)))
	cases = append(cases,
		killCase{name: "writing/big", step: "head", watch: killBigPath, watchFor: big, mayFinish: true},
		killCase{name: "cleaning/big", step: StepCleaning, watchSrc: true, watch: killBigPath, watchFor: big, mayFinish: true},
	)
	// Timed kills: while the journal begins, half-way through the rest of
	// the run, and right after git starts writing either side (each case
	// costs about 3 s of CPU, a handoff and a half: no denser sweep).
	timed := func(name string, after time.Duration) {
		cases = append(cases, killCase{name: name, after: after, mayFinish: true})
	}
	begun, end := times["begun"], times["end"]
	timed("timed/begun-30ms", begun-30*time.Millisecond)
	timed("timed/half", begun+(end-begun)/2)
	timed("timed/head+10ms", times["head"]+10*time.Millisecond)
	timed("timed/cleaning+10ms", times[StepCleaning]+10*time.Millisecond)
	return cases
}

// killOutcome is the outcome of a recovery after a kill at a named step:
// rolled forward once the destination verifies (a step this map does not
// know may have either).
var killOutcome = map[string]string{"begun": RolledBack, StepSaved: RolledBack, StepMoving: RolledBack, "detached": RolledBack,
	"head": RolledBack, "moved": RolledForward, StepVerified: RolledForward, StepRecorded: RolledForward,
	StepCleaning: RolledForward, "cleaned": RolledForward,
	"recorded#1": RolledBack, "checkout#1": RolledBack, "index#1": RolledBack, "index-locked#1": RolledBack,
	"index#2": RolledForward, "index-locked#2": RolledForward}

// killSize is the watch condition "a file of len(s) bytes".
func killSize(s string) string { return "size:" + strconv.Itoa(len(s)) }

// TestHandoffKillMatrix kills a real process running a handoff of about
// 300 changed paths (a 2 MiB file among them), both directions, at every
// named step, while git writes the destination or cleans the source, and
// at moments of the run; then recovers as the next server start would
// (the operation log's recovery, then the handoff's). Recovery must
// succeed and roll back (the source as before, the destination clean as
// before) or forward (the destination as the source was, the source
// clean), byte for byte, never report recoveryRequired (nobody edited
// anything), and leave no index.lock, journal, patch, oplog file or stage
// folder; a second handoff then works (issue 9: a kill -9 at every step
// of both directions loses no byte).
func TestHandoffKillMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for _, to := range []Direction{ToLocal, ToWorktree} {
		t.Run(string(to), func(t *testing.T) {
			t.Parallel()
			k := newKillSides(t, to)
			k.reset(t)
			times := stepTimes(t, k)
			t.Logf("step times of an unkilled run: %v", times)
			for _, c := range k.killCases(t, times) {
				t.Run(c.name, func(t *testing.T) { k.runKill(t, c) })
			}
		})
	}
}

// runKill runs one kill case on a fresh copy of the template and checks
// what recovery leaves.
func (k *killSides) runKill(t *testing.T, c killCase) {
	ctx := context.Background()
	k.reset(t)
	env := append(k.childEnv(t), envKillStep+"="+c.step)
	if c.watch != "" {
		dir := k.dst
		if c.watchSrc {
			dir = k.src
		}
		w := filepath.Join(dir, filepath.FromSlash(c.watch))
		if c.watch == ".git/index.lock" {
			w = strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index.lock"))
		}
		env = append(env, envKillWatch+"="+w, envKillWatchFor+"="+c.watchFor)
	}
	killed, _, out := runChild(t, env, c.after)
	if !killed && !c.mayFinish {
		t.Fatalf("the child was never killed:\n%s", out)
	}
	if killed {
		waitCapturesFree(t, filepath.Join(k.agentDir, "handoff"))
	}

	// The next server start: the differ's recovery of the operation log
	// (diffscope.Differ.RecoverStart: it sweeps the temporary files of
	// journal writes a kill interrupted, and leaves handoff journals
	// alone), then the handoff's, as a thread load runs it.
	e := k.env(t)
	if err := e.h.oplog.RecoverPending(ctx, e.h.git, ""); err != nil {
		t.Fatalf("the operation log's recovery: %v", err)
	}
	recs, err := e.h.Recover(ctx, RecoverOptions{})
	if err != nil {
		t.Fatalf("Recover: %v\n%s", err, k.damage(t))
	}
	if len(recs) > 1 || (c.step != "" && c.watch == "" && len(recs) != 1) {
		t.Fatalf("recovered %d journals: %+v", len(recs), recs)
	}
	outcome := "none"
	if len(recs) == 1 {
		outcome = recs[0].Outcome
		if outcome == RecoveryRequired {
			t.Fatalf("outcome %s: %v\n%s", outcome, recs[0].Err, k.damage(t))
		}
	}
	t.Logf("killed %v (after %v), recovered %d journals, outcome %s", killed, c.after, len(recs), outcome)
	if want, ok := killOutcome[c.step]; ok && c.watch == "" && outcome != want {
		t.Errorf("outcome %s, want %s", outcome, want)
	}
	src, dst := killState(t, k.src), killState(t, k.dst)
	before := cmp.Equal(src, k.want) && cmp.Equal(dst, k.dstClean)
	after := cmp.Equal(dst, k.want) && cmp.Equal(src, k.srcClean)
	switch {
	case outcome == RolledBack && !before, outcome == RolledForward && !after, !before && !after:
		t.Errorf("outcome %s: neither side as before nor as after\nsource vs before (-want +got):\n%s\ndestination vs before (-want +got):\n%s\nsource vs after (-want +got):\n%s\ndestination vs after (-want +got):\n%s",
			outcome, cmp.Diff(k.want, src), cmp.Diff(k.dstClean, dst), cmp.Diff(k.srcClean, src), cmp.Diff(k.want, dst))
	case before:
		if symref(t, k.src) != k.srcRef || symref(t, k.dst) != k.dstRef {
			t.Errorf("HEADs: source %q, destination %q, want %q, %q", symref(t, k.src), symref(t, k.dst), k.srcRef, k.dstRef)
		}
	default: // the destination on the source's branch (to local) or detached, the source detached (worktree) or on its branch (main)
		wantSrc, wantDst := "", k.srcRef
		if k.to == ToWorktree {
			wantSrc, wantDst = k.srcRef, ""
		}
		if symref(t, k.src) != wantSrc || symref(t, k.dst) != wantDst || head(t, k.src) != head(t, k.dst) {
			t.Errorf("HEADs: source %q at %s, destination %q at %s, want %q, %q at one commit",
				symref(t, k.src), head(t, k.src), symref(t, k.dst), head(t, k.dst), wantSrc, wantDst)
		}
	}
	k.noLeftovers(t, e)
	if t.Failed() {
		return
	}

	// The next handoff: the same again when rolled back, else back.
	o, from, to := k.o, k.src, k.dst
	if after {
		from, to = k.dst, k.src
		o = Options{To: ToWorktree, Cwd: k.dst, Worktree: k.src}
		if k.to == ToWorktree {
			o = Options{To: ToLocal, Cwd: k.dst, Title: "crash"}
		}
	}
	if _, err := e.h.Run(ctx, o); err != nil {
		t.Fatalf("the next handoff (%s): %v", o.To, err)
	}
	clean := k.dstClean
	if after {
		clean = k.srcClean
	}
	// Byte for byte the move is TestRoundTrip's; here status says it ran.
	if got := statusOf(t, to); got != k.want.Status {
		t.Errorf("after the next handoff, %s: status %q, want %q", to, got, k.want.Status)
	}
	if got := statusOf(t, from); got != clean.Status {
		t.Errorf("after the next handoff, %s: status %q, want %q", from, got, clean.Status)
	}
	k.noLeftovers(t, e)
}

// noLeftovers fails t when a journal, patch or oplog file is left, or in
// either checkout an index.lock, a stage folder (knightcode-oplog-*) in
// its git dirs or at its top, or an index git cannot lock.
func (k *killSides) noLeftovers(t *testing.T, e *env) {
	t.Helper()
	e.noJournals(t)
	for _, dir := range []string{k.src, k.dst} {
		lock := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index.lock"))
		if _, err := os.Lstat(lock); err == nil {
			t.Errorf("%s is left", lock)
		}
		gitDir := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--absolute-git-dir"))
		common := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-common-dir"))
		for _, d := range []string{gitDir, common, dir} {
			ents, _ := os.ReadDir(d)
			for _, ent := range ents {
				if strings.Contains(ent.Name(), "knightcode-oplog-") {
					t.Errorf("stage folder left: %s", filepath.Join(d, ent.Name()))
				}
			}
		}
		if out, err := gittest.Run(dir, nil, "add", "-A", "--dry-run"); err != nil {
			t.Errorf("git add -A --dry-run in %s: %v\n%s", dir, err, out)
		}
	}
}

// damage describes, for a failure's message, what a kill left that no
// handoff writes: an index.lock in either checkout's git dir, and files
// of the fixture at neither their committed nor their changed bytes
// (a file git was writing when it died).
func (k *killSides) damage(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, dir := range []string{k.src, k.dst} {
		side := "source"
		if dir == k.dst {
			side = "destination"
		}
		lock := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index.lock"))
		if _, err := os.Lstat(lock); err == nil {
			fmt.Fprintf(&b, "%s: stale %s\n", side, lock)
		}
		var partial []string
		for i := range killModified {
			p := killModifiedPath(i)
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				partial = append(partial, p+" (missing)")
			} else if g := string(got); g != killBody(i, false) && g != killBody(i, true) {
				partial = append(partial, fmt.Sprintf("%s (%d bytes of %d or %d)", p, len(g), len(killBody(i, false)), len(killBody(i, true))))
			}
		}
		if got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(killBigPath))); err != nil {
			partial = append(partial, killBigPath+" (missing)")
		} else if g := string(got); g != killBig(false) && g != killBig(true) {
			partial = append(partial, fmt.Sprintf("%s (%d bytes of %d)", killBigPath, len(g), len(killBig(false))))
		}
		if len(partial) > 0 {
			fmt.Fprintf(&b, "%s: files at neither version: %s\n", side, strings.Join(partial, ", "))
		}
	}
	return b.String()
}

// statusOf is stateOf's Status alone.
func statusOf(t *testing.T, dir string) string {
	t.Helper()
	out := gittest.Git(t, dir, "-c", "core.quotePath=false", "status", "--porcelain=v2", "--untracked-files=all")
	return strings.ReplaceAll(out, dir, "<DIR>")
}

// killState is stateOf with the bytes of files over 64 KiB as their
// SHA-256 (a difference stays readable).
func killState(t *testing.T, dir string) checkout {
	t.Helper()
	c := stateOf(t, dir)
	for p, v := range c.Files {
		if len(v) > 64<<10 {
			mode, content, _ := strings.Cut(v, ":")
			c.Files[p] = fmt.Sprintf("%s:sha256:%x (%d bytes)", mode, sha256.Sum256([]byte(content)), len(content))
		}
	}
	return c
}
