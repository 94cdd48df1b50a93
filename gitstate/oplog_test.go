package gitstate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// stateOf is everything a test compares of a checkout: status, both diffs
// and every non-ignored untracked file's bytes.
func stateOf(t *testing.T, dir string) map[string]string {
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

// leftovers lists knightcode files left in the git dir and the oplog
// folder.
func leftovers(t *testing.T, dir, oplogDir string) []string {
	t.Helper()
	return gittest.OplogLeftovers(dir, oplogDir)
}

// oplogRepo is a repository with a modified, a staged-then-modified, a
// deleted and an untracked file.
func oplogRepo(t *testing.T) string {
	dir := gittest.InitCommit(t, "a.txt", "a\n", "b.txt", "b\n", "d/c.txt", "c\n")
	gittest.Write(t, dir, "a.txt", "a changed\n")
	gittest.Write(t, dir, "b.txt", "b staged\n")
	gittest.Git(t, dir, "add", "b.txt")
	gittest.Write(t, dir, "b.txt", "b staged then changed\n")
	gittest.Write(t, dir, "new.txt", "untracked\n")
	return dir
}

// revertAll writes, through j, the revert of every change of oplogRepo:
// the files to HEAD, new.txt deleted, the index to HEAD.
func revertAll(ctx context.Context, t *testing.T, j *Journal, dir string) error {
	t.Helper()
	head := map[string]Entry{}
	for _, p := range []string{"a.txt", "b.txt"} {
		oid := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD:"+p))
		head[p] = Entry{Mode: "100644", OID: oid}
	}
	if err := j.Remove(ctx, []string{"new.txt"}); err != nil {
		return err
	}
	if err := j.Checkout(ctx, head); err != nil {
		return err
	}
	return j.WriteIndex(ctx, []string{"b.txt"}, func(tmp *gitcli.Repo) error {
		return tmp.UpdateIndexInfo(ctx, []gitcli.IndexInfo{{Mode: "100644", OID: head["b.txt"].OID, Path: "b.txt"}})
	})
}

// crash is the panic value a StepHook uses to stop an action at a step.
type crash struct{}

// runUntil runs revertAll under a journal whose hook panics at step, and
// leaves the journal unfinished (its lock released) as a dead process
// would.
func runUntil(t *testing.T, o *Oplog, repo *gitcli.Repo, dir, step string) {
	t.Helper()
	runActionUntil(t, o, repo, dir, step, Action{Name: "revert", Full: true})
}

// actionPaths are the paths revertAll writes: what a partial recovery
// point of it records.
var actionPaths = []string{"a.txt", "b.txt", "new.txt"}

// runActionUntil is runUntil with the journal's action a.
func runActionUntil(t *testing.T, o *Oplog, repo *gitcli.Repo, dir, step string, a Action) {
	t.Helper()
	ctx := context.Background()
	o.StepHook = func(s string) {
		if s == step {
			panic(crash{})
		}
	}
	defer func() { o.StepHook = nil }()
	var j *Journal
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(crash); !ok {
					panic(r)
				}
			}
		}()
		var err error
		j, err = o.Begin(ctx, repo, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := revertAll(ctx, t, j, dir); err != nil {
			t.Fatal(err)
		}
		if err := j.Done(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	if j != nil {
		j.Close()
	}
}

// Every step of a journaled action, crashed there and recovered, ends in
// the exact before or after state, with no leftovers, and a recovery point
// that plain git turns back into the before state.
func TestJournalCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	template := oplogRepo(t)
	before := stateOf(t, template)
	var after map[string]string
	{
		dir := gittest.CopyCheckout(t, template)
		o := &Oplog{Dir: t.TempDir()}
		runUntil(t, o, discover(t, dir), dir, "never")
		after = stateOf(t, dir)
		if diff := cmp.Diff(leftovers(t, dir, o.Dir), []string(nil)); diff != "" {
			t.Fatalf("leftovers after a finished action:\n%s", diff)
		}
	}
	if cmp.Equal(before, after) {
		t.Fatal("the action changed nothing")
	}
	steps := []string{"recorded#1", "remove#1", "checkout#1", "checkout#2", "index#1", "index-locked#1", "done#1"}
	for _, partial := range []bool{false, true} {
		a, spec := Action{Name: "revert", Full: true}, []string{"."}
		name := "full"
		if partial {
			// A partial point (issue 24): the paths on top of HEAD, its
			// objects written in-process before the ref.
			a, spec, name = Action{Name: "revert", Paths: actionPaths}, actionPaths, "partial"
			steps = append([]string{"point-objects#1"}, steps...)
		}
		for _, step := range steps {
			t.Run(name+"/"+step, func(t *testing.T) {
				dir := gittest.CopyCheckout(t, template)
				o := &Oplog{Dir: t.TempDir()}
				runActionUntil(t, o, discover(t, dir), dir, step, a)
				reps, err := o.Recover(ctx, discover(t, dir).Runner(), "")
				if err != nil {
					t.Fatal(err)
				}
				got := stateOf(t, dir)
				if !cmp.Equal(got, before) && !cmp.Equal(got, after) {
					t.Errorf("state after recovery is neither before nor after:\nvs before:\n%s\nvs after:\n%s", cmp.Diff(got, before), cmp.Diff(got, after))
				}
				if diff := cmp.Diff(leftovers(t, dir, o.Dir), []string(nil)); diff != "" {
					t.Errorf("leftovers:\n%s", diff)
				}
				gittest.Git(t, dir, "fsck", "--strict", "--no-dangling", "--no-progress")
				if step == "point-objects#1" {
					// Killed before the ref: nothing written, no point.
					if len(reps) != 1 || reps[0].Outcome != OutcomeNothingWritten {
						t.Fatalf("reports = %+v", reps)
					}
					return
				}
				if len(reps) != 1 || len(reps[0].Conflicts) != 0 || reps[0].Ref == "" {
					t.Fatalf("reports = %+v", reps)
				}
				// The README's plain-git instructions give the before
				// state back (a partial point: naming its paths).
				ref := reps[0].Ref
				gittest.Git(t, dir, append([]string{"restore", "--source=" + ref, "--worktree", "--"}, spec...)...)
				if partial {
					gittest.Git(t, dir, append([]string{"reset", "-q", ref + "^2", "--"}, spec...)...)
				} else {
					gittest.Git(t, dir, append([]string{"restore", "--source=" + ref + "^2", "--staged", "--"}, spec...)...)
				}
				if diff := cmp.Diff(stateOf(t, dir), before); diff != "" {
					t.Errorf("restore from %s (-got +want):\n%s", ref, diff)
				}
			})
		}
	}
}

// Recovery never overwrites a path edited after the crash: it is reported
// and left as it is; the other paths are put back.
func TestRecoverKeepsEditsAfterTheCrash(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	o := &Oplog{Dir: t.TempDir()}
	repo := discover(t, dir)
	runUntil(t, o, repo, dir, "done#1") // every write landed
	gittest.Write(t, dir, "a.txt", "edited after the crash\n")
	reps, err := o.Recover(ctx, repo.Runner(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 {
		t.Fatalf("reports = %+v", reps)
	}
	r := reps[0]
	if r.Outcome != OutcomeRolledBack || !cmp.Equal(r.Conflicts, []string{"a.txt"}) || !cmp.Equal(r.Restored, []string{"b.txt", "new.txt"}) {
		t.Errorf("report = %+v", r)
	}
	if got := gittest.Read(t, dir, "a.txt"); got != "edited after the crash\n" {
		t.Errorf("a.txt = %q: the later edit was overwritten", got)
	}
	if got := gittest.Read(t, dir, "new.txt"); got != "untracked\n" {
		t.Errorf("new.txt = %q", got)
	}
	if got := gittest.Git(t, dir, "diff", "--cached", "--name-only"); got != "b.txt\n" {
		t.Errorf("staged = %q", got)
	}
	if !strings.Contains(r.Message(), "a.txt") || !strings.Contains(r.Message(), r.Ref) {
		t.Errorf("message %q", r.Message())
	}
	// The report is given once.
	if reps, err := o.Recover(ctx, repo.Runner(), dir); err != nil || len(reps) != 0 {
		t.Errorf("second Recover = %+v, %v", reps, err)
	}
}

// A running action's journal (lock held) is not recovered; Begin recovers
// the checkout's dead journals first and keeps their reports for Recover.
func TestRecoverSkipsRunningAndBeginRecovers(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	before := stateOf(t, dir)
	o := &Oplog{Dir: t.TempDir()}
	repo := discover(t, dir)
	j, err := o.Begin(ctx, repo, Action{Name: "revert", Paths: []string{"a.txt", "b.txt", "new.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := revertAll(ctx, t, j, dir); err != nil {
		t.Fatal(err)
	}
	if reps, err := o.Recover(ctx, repo.Runner(), ""); err != nil || len(reps) != 0 {
		t.Fatalf("Recover of a running action = %+v, %v", reps, err)
	}
	if c, err := o.Counts(ctx, repo); err != nil || c.Running != 1 || c.Unfinished != 0 || c.RecoveryPoints != 1 {
		t.Errorf("counts = %+v, %v", c, err)
	}
	j.Close() // dies without Done
	if c, err := o.Counts(ctx, repo); err != nil || c.Running != 0 || c.Unfinished != 1 {
		t.Errorf("counts = %+v, %v", c, err)
	}
	j2, err := o.Begin(ctx, repo, Action{Name: "stage", Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	// Not marked done: rolled back, although every write it journaled
	// had landed (more might have followed).
	if len(j2.Recovered) != 1 || j2.Recovered[0].Outcome != OutcomeRolledBack {
		t.Errorf("Recovered = %+v", j2.Recovered)
	}
	if err := j2.Abort(ctx, errors.New("x")); err == nil {
		t.Fatal("Abort lost its cause")
	}
	reps, err := o.Recover(ctx, repo.Runner(), dir)
	if err != nil || len(reps) != 1 || reps[0].Outcome != OutcomeRolledBack {
		t.Errorf("Recover = %+v, %v", reps, err)
	}
	if diff := cmp.Diff(before, stateOf(t, dir)); diff != "" {
		t.Errorf("the unfinished action was not rolled back exactly (-before +after):\n%s", diff)
	}
}

// An action that fails is rolled back by Abort, byte for byte.
func TestAbortRollsBack(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	before := stateOf(t, dir)
	o := &Oplog{Dir: t.TempDir()}
	j, err := o.Begin(ctx, discover(t, dir), Action{Name: "revert", Full: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := revertAll(ctx, t, j, dir); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("a later step failed")
	if err := j.Abort(ctx, cause); err != cause {
		t.Fatalf("Abort = %v", err)
	}
	if diff := cmp.Diff(stateOf(t, dir), before); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(leftovers(t, dir, o.Dir), []string(nil)); diff != "" {
		t.Errorf("leftovers:\n%s", diff)
	}
}

// A held index.lock refuses the index commit with git's words, and
// changes nothing.
func TestWriteIndexRefusesHeldLock(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	before := stateOf(t, dir)
	o := &Oplog{Dir: t.TempDir()}
	j, err := o.Begin(ctx, discover(t, dir), Action{Name: "stage", Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = j.WriteIndex(ctx, []string{"a.txt"}, func(tmp *gitcli.Repo) error { return tmp.UpdateIndexAdd(ctx, []string{"a.txt"}) })
	if !errors.Is(err, gitcli.ErrLocked) || !strings.Contains(err.Error(), "index.lock': File exists") {
		t.Fatalf("err = %v", err)
	}
	if err := j.Abort(ctx, err); !errors.Is(err, gitcli.ErrLocked) {
		t.Fatalf("Abort = %v", err)
	}
	os.Remove(lock)
	if diff := cmp.Diff(stateOf(t, dir), before); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// Prune keeps the newest Keep points and those younger than MaxAge, and
// never a point an unfinished journal names.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	repo := discover(t, dir)
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var refs []string
	for i := range 6 {
		ref := OplogRefPrefix + now.Add(-time.Duration(i)*24*time.Hour).Format(refTimeLayout)
		gittest.Git(t, dir, "update-ref", ref, head)
		refs = append(refs, ref)
	}
	gittest.Git(t, dir, "update-ref", OplogRefPrefix+"not-a-time", head)
	o := &Oplog{Dir: t.TempDir(), Keep: 3, MaxAge: 36 * time.Hour, Now: func() time.Time { return now }}
	// An unfinished journal names the oldest point.
	if err := os.WriteFile(filepath.Join(o.Dir, "j1.json"), []byte(`{"version":1,"id":"j1","root":"/nowhere","ref":"`+refs[5]+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := o.Prune(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("pruned %d, want 3", n)
	}
	got := strings.Fields(gittest.Git(t, dir, "for-each-ref", "--format=%(refname)", "refs/knightcode/oplog"))
	want := []string{refs[5], refs[1], refs[0], OplogRefPrefix + "not-a-time"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("refs left (-got +want):\n%s", diff)
	}
}

// A journal's lock file and work folder without its journal file (an
// action killed between taking its lock and first saving its journal, or
// between removing its journal and its lock), and the temporary files of
// an interrupted journal or report write, are removed by the next
// recovery; those of an action still holding its lock are not. Found by
// the diffscope crash matrix (kills 400 ms into a whole-scope revert and
// 126 ms into a whole-scope unstage).
func TestRecoverSweepsOrphanedLocks(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	o := &Oplog{Dir: t.TempDir()}
	repo := discover(t, dir)
	for _, name := range []string{"0001.lock", "0002.lock", "0003.lock"} {
		gittest.Write(t, o.Dir, name, "")
	}
	gittest.Write(t, o.Dir, "0001.d/index", "copy")
	gittest.Write(t, o.Dir, "0004.d/index", "copy")
	gittest.Write(t, o.Dir, ".0005.json.tmp-123", "{")
	gittest.Write(t, o.Dir, ".0006.report.json.tmp-456", "{")
	gittest.Write(t, o.Dir, ".0003.json.tmp-789", "{")
	held := flock.New(o.lockPath("0003"))
	if ok, err := held.TryLock(); err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer held.Unlock()
	if _, err := o.Recover(ctx, repo.Runner(), ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"oplog/.0003.json.tmp-789", "oplog/0003.lock"}, leftovers(t, dir, o.Dir)); diff != "" {
		t.Errorf("after Recover (-want +got):\n%s", diff)
	}
	_ = held.Unlock()
	gittest.Write(t, o.Dir, ".0007.json.tmp-1", "{")
	// Begin sweeps too, and its own journal ends with nothing left.
	j, err := o.Begin(ctx, repo, Action{Name: "stage", Paths: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Done(ctx); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, dir, o.Dir); len(left) != 0 {
		t.Errorf("leftovers: %v", left)
	}
}

// A copy of the index keeps its mtime (git's racy-clean check) and its
// permissions: the copy may become the index (Journal.WriteIndex,
// CommitIndex), and a shared repository's index is group-writable.
func TestCopyIndexKeepsTimeAndMode(t *testing.T) {
	dir := oplogRepo(t)
	index := filepath.Join(dir, ".git", "index")
	if err := os.Chmod(index, 0o664); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(index, old, old); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "index")
	if ok, err := CopyIndex(index, dst); err != nil || !ok {
		t.Fatal(ok, err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o664 || !fi.ModTime().Equal(old) {
		t.Errorf("copy: mode %v, mtime %v; want 0664, %v", fi.Mode().Perm(), fi.ModTime(), old)
	}
}

// A path-scoped action's recovery point records exactly its paths, on top
// of HEAD (issue 24, Decision 1): the working-tree and index entries of
// the named paths, HEAD's entries elsewhere (not the index's, not the
// working tree's), its message says partial and names them; recovering the
// action and restoring from the point with plain git put back only them.
func TestPartialPointIsHeadPlusItsPaths(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t) // a.txt modified, b.txt staged then modified, new.txt untracked
	gittest.Write(t, dir, "d/c.txt", "c staged, not named\n")
	gittest.Git(t, dir, "add", "d/c.txt")
	o := &Oplog{Dir: t.TempDir()}
	runActionUntil(t, o, discover(t, dir), dir, "done#1", Action{Name: "revert", Paths: actionPaths})
	reps, err := o.Recover(ctx, discover(t, dir).Runner(), "")
	if err != nil || len(reps) != 1 {
		t.Fatalf("Recover = %+v, %v", reps, err)
	}
	ref := reps[0].Ref
	show := func(rev string) string {
		out, err := gittest.Run(dir, nil, "show", rev)
		if err != nil {
			return "(absent)"
		}
		return out
	}
	for rev, want := range map[string]string{
		ref + ":a.txt":     "a changed\n",             // the working file
		ref + ":b.txt":     "b staged then changed\n", // the working file
		ref + ":new.txt":   "untracked\n",             // untracked, named
		ref + ":d/c.txt":   "c\n",                     // not named: HEAD's, not the index's
		ref + "^2:a.txt":   "a\n",                     // the index entry
		ref + "^2:b.txt":   "b staged\n",              // the index entry
		ref + "^2:new.txt": "(absent)",                // not in the index
		ref + "^2:d/c.txt": "c\n",                     // not named: HEAD's
		ref + "^1":         show("HEAD"),              // on top of HEAD
	} {
		if got := show(rev); got != want {
			t.Errorf("%s = %q, want %q", rev, got, want)
		}
	}
	msg := gittest.Git(t, dir, "log", "-1", "--format=%B", ref)
	for _, want := range []string{"recorded: partial", "path: a.txt", "path: b.txt", "path: new.txt"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "d/c.txt") {
		t.Errorf("message names a path the action did not:\n%s", msg)
	}
	// The README's instructions for a partial point leave d/c.txt staged.
	gittest.Git(t, dir, "restore", "--source="+ref, "--worktree", "--", "a.txt", "b.txt", "new.txt")
	gittest.Git(t, dir, "reset", "-q", ref+"^2", "--", "a.txt", "b.txt", "new.txt")
	if got := gittest.Git(t, dir, "diff", "--cached", "--name-only"); got != "b.txt\nd/c.txt\n" {
		t.Errorf("staged after the restore: %q", got)
	}
	if got := gittest.Read(t, dir, "new.txt"); got != "untracked\n" {
		t.Errorf("new.txt = %q", got)
	}
}

// The README's plain-git restore of a partial point takes its paths
// literally (git --literal-pathspecs): a listed f[1].txt is a glob matching
// f1.txt too, whose uncommitted edit a plain `git restore -- 'f[1].txt'`
// overwrote with HEAD's content, the point's for every path it does not
// list (final QA).
func TestPartialPointReadmeRestoreIsLiteral(t *testing.T) {
	ctx := context.Background()
	dir := gittest.Init(t)
	gittest.Write(t, dir, "f[1].txt", "glob-named\n")
	gittest.Write(t, dir, "f1.txt", "one\n")
	gittest.CommitAll(t, dir, "init")
	gittest.Write(t, dir, "f[1].txt", "glob-named, changed\n")
	gittest.Write(t, dir, "f1.txt", "one, changed and not in the point\n")
	o := &Oplog{Dir: t.TempDir()}
	j, err := o.Begin(ctx, discover(t, dir), Action{Name: "revert", Paths: []string{"f[1].txt"}})
	if err != nil {
		t.Fatal(err)
	}
	ref := j.Ref()
	gittest.Write(t, dir, "f[1].txt", "glob-named\n") // the revert
	if err := j.Done(ctx); err != nil {
		t.Fatal(err)
	}
	j.Close()
	// As README.md's "Recovery points" gives them for a partial point.
	gittest.Git(t, dir, "--literal-pathspecs", "restore", "--source="+ref, "--worktree", "--", "f[1].txt")
	gittest.Git(t, dir, "--literal-pathspecs", "reset", "-q", ref+"^2", "--", "f[1].txt")
	for path, want := range map[string]string{"f[1].txt": "glob-named, changed\n", "f1.txt": "one, changed and not in the point\n"} {
		if got := gittest.Read(t, dir, path); got != want {
			t.Errorf("%s = %q after the restore, want %q", path, got, want)
		}
	}
}
