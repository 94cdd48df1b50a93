package handoff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// A handoff to local and back reproduces status, diffs, untracked files,
// exec bits and symlinks byte for byte, leaves the source clean, and
// touches neither the stash list nor the main branch's reflog.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	dirtyFixture(t, wt)
	// Staged changes whose files hold them: the destination's index
	// entries must get the files' stat data (statFresh).
	gittest.Write(t, wt, "README.md", "staged readme\n")
	gittest.Write(t, wt, "sub/added.txt", "staged new file\n")
	gittest.Git(t, wt, "add", "README.md", "sub/added.txt")
	gittest.Write(t, main, "local.log", "ignored, elsewhere\n")
	want := stateOf(t, wt)
	cleanWT := head(t, wt)
	reflog := gittest.Git(t, main, "reflog", "show", "refs/heads/main")

	var recorded []*Landed
	record := func(_ context.Context, l *Landed) error { recorded = append(recorded, l); return nil }
	res, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: filepath.Join(wt, "sub"), ThreadID: "T1", Title: "Fix the login bug!", Record: record})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch == nil || res.Branch.Name != "knightcode/fix-the-login-bug" || res.Branch.Source != BranchDerived {
		t.Fatalf("branch = %+v", res.Branch)
	}
	if res.Cwd != filepath.Join(main, "sub") || res.Destination != main || len(recorded) != 1 || recorded[0].ThreadID != "T1" || recorded[0].Workspace != "local" {
		t.Errorf("landed = %+v, recorded %d", res.Landed, len(recorded))
	}
	statFresh(t, main)
	got := stateOf(t, main)
	delete(got.Files, "local.log")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("main after handoff (-want +got):\n%s", diff)
	}
	if s := symref(t, main); s != "refs/heads/knightcode/fix-the-login-bug" {
		t.Errorf("main HEAD = %q", s)
	}
	if st := stateOf(t, wt); st.Status != "" || st.Diff != "" || st.Cached != "" || head(t, wt) != cleanWT || symref(t, wt) != "" {
		t.Errorf("worktree not clean and detached at %s: %+v, HEAD %s %q", cleanWT, st, head(t, wt), symref(t, wt))
	}
	if b, _ := os.ReadFile(filepath.Join(main, "local.log")); string(b) != "ignored, elsewhere\n" {
		t.Errorf("ignored file in main = %q", b)
	}

	res, err = e.h.Run(ctx, Options{To: ToWorktree, Cwd: filepath.Join(main, "sub"), Worktree: wt, ThreadID: "T1", Record: record})
	if err != nil {
		t.Fatal(err)
	}
	if res.Destination != wt || res.Cwd != filepath.Join(wt, "sub") {
		t.Errorf("landed = %+v", res.Landed)
	}
	statFresh(t, wt)
	statFresh(t, main)
	wantState(t, "worktree after the way back", want, wt)
	if st := stateOf(t, main); st.Status != "" || st.Diff != "" || st.Cached != "" {
		t.Errorf("main not clean: %+v", st)
	}
	if s := symref(t, main); s != "refs/heads/knightcode/fix-the-login-bug" {
		t.Errorf("main HEAD = %q after the way back", s)
	}
	if out := gittest.Git(t, main, "stash", "list"); out != "" {
		t.Errorf("stash list = %q", out)
	}
	if got := gittest.Git(t, main, "reflog", "show", "refs/heads/main"); got != reflog {
		t.Errorf("reflog of main changed:\n%s\nwant\n%s", got, reflog)
	}
	e.noJournals(t)
}

// statFresh fails the test when an index entry of the checkout dir whose
// file holds its content lacks the file's stat data (a handoff wrote the
// index without refreshing it): `git diff-files`, which trusts the stat
// data, must list exactly what the refreshing `git diff` lists. Call it
// before anything that refreshes the index (git status).
func statFresh(t *testing.T, dir string) {
	t.Helper()
	raw := gittest.Git(t, dir, "diff-files", "--name-only")
	if real := gittest.Git(t, dir, "diff", "--name-only"); raw != real {
		t.Errorf("%s: index entries without their files' stat data: diff-files lists\n%s\ngit diff\n%s", dir, raw, real)
	}
}

// A thread born in the main checkout gets a new managed worktree. An
// untracked nested repository, which no tree can hold, stays in the main
// checkout, and the result's warning names it (audit: it stayed behind
// unsaid).
func TestToNewWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	main := commitFixture(t)
	gittest.Git(t, main, "checkout", "-q", "-b", "feature")
	dirtyFixture(t, main)
	want := stateOf(t, main)
	gittest.Git(t, main, "init", "-q", "vendor/lib")
	gittest.Write(t, main, "vendor/lib/lib.go", "package lib\n")
	plan, err := e.h.Plan(ctx, Options{To: ToWorktree, Cwd: main, ThreadID: "T9"})
	if err != nil {
		t.Fatal(err)
	}
	if w := plan.Warnings(); len(w) != 1 || !strings.Contains(w[0], "vendor/lib") || slices.Contains(plan.Paths, "vendor/lib/") {
		t.Errorf("plan warnings %q, paths %q; want vendor/lib warned of, not a path", w, plan.Paths)
	}
	res, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: main, ThreadID: "T9"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Worktree == nil || res.Destination != res.Worktree.Path {
		t.Fatalf("landed = %+v", res.Landed)
	}
	wantState(t, "new worktree", want, res.Destination)
	if st := stateOf(t, main); st.Status != "? vendor/lib/\n" || gittest.Read(t, main, "vendor/lib/lib.go") != "package lib\n" {
		t.Errorf("main not clean but for the nested repository: %q", st.Status)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "a nested repository stayed in "+main) || !strings.Contains(res.Warnings[0], "vendor/lib") {
		t.Errorf("warnings %q; want one naming vendor/lib", res.Warnings)
	}
	// The nested repository does not make the main checkout dirty: the
	// changes come back (QA: the way back was refused, "Stash or commit").
	if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: res.Destination, ThreadID: "T9", Branch: "feature"}); err != nil {
		t.Fatalf("handoff back with the nested repository in main: %v", err)
	}
	got := stateOf(t, main)
	got.Status = strings.Replace(got.Status, "? vendor/lib/\n", "", 1)
	delete(got.Files, "vendor/lib/lib.go")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("main after the way back (-want +got):\n%s", diff)
	}
	if s := symref(t, main); s != "refs/heads/feature" {
		t.Errorf("main left its branch: %q", s)
	}
}

// Branch choice: the worktree's own branch, the branch param, the previous
// handoff's branch fast-forwarded, a derived name with -2 when taken.
func TestBranchChoice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		setup   func(t *testing.T, main, wt string)
		o       Options
		want    string
		src     BranchSource
		wantErr string
	}{
		{"derived", nil, Options{Title: "Add a thing"}, "knightcode/add-a-thing", BranchDerived, ""},
		{"derived from the id", nil, Options{ThreadID: "thr_42"}, "knightcode/thr-42", BranchDerived, ""},
		{"derived taken", func(t *testing.T, main, wt string) {
			gittest.Git(t, main, "branch", "knightcode/add-a-thing")
		}, Options{Title: "Add a thing"}, "knightcode/add-a-thing-2", BranchDerived, ""},
		{"prefix setting", nil, Options{Title: "x", BranchPrefix: "me/"}, "me/x", BranchDerived, ""},
		{"param new", nil, Options{Branch: "topic"}, "topic", BranchParam, ""},
		{"param behind: fast-forward", func(t *testing.T, main, wt string) {
			gittest.Git(t, main, "branch", "topic", "HEAD~1")
		}, Options{Branch: "topic"}, "topic", BranchParam, ""},
		{"param diverged", func(t *testing.T, main, wt string) {
			gittest.Git(t, main, "branch", "topic", "HEAD~1")
			gittest.Git(t, main, "checkout", "-q", "topic")
			gittest.Write(t, main, "other.txt", "x\n")
			gittest.CommitAll(t, main, "diverge")
			gittest.Git(t, main, "checkout", "-q", "main")
		}, Options{Branch: "topic"}, "", "", ReasonBranchExists},
		{"param checked out elsewhere", func(t *testing.T, main, wt string) {
			gittest.Git(t, main, "worktree", "add", "-q", "-b", "topic", filepath.Join(t.TempDir(), "other"))
		}, Options{Branch: "topic"}, "", "", ReasonBranchExists},
		{"param invalid", nil, Options{Branch: "a..b"}, "", "", "branch"},
		{"previous fast-forwarded", func(t *testing.T, main, wt string) {
			gittest.Git(t, main, "branch", "prev", "HEAD~1")
		}, Options{PreviousBranch: "prev", Title: "t"}, "prev", BranchPrevious, ""},
		{"own branch", func(t *testing.T, main, wt string) {
			gittest.Git(t, wt, "checkout", "-q", "-b", "mine")
		}, Options{Branch: "ignored"}, "mine", BranchOwn, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			main := commitFixture(t)
			gittest.Write(t, main, "second.txt", "2\n")
			gittest.CommitAll(t, main, "second")
			wt := e.newWorktree(t, main)
			if tc.setup != nil {
				tc.setup(t, main, wt)
			}
			o := tc.o
			o.To, o.Cwd = ToLocal, wt
			p, err := e.h.Plan(ctx, o)
			if tc.wantErr != "" {
				var ce *ConflictError
				var pe *ParamError
				switch {
				case errors.As(err, &ce) && ce.Reason == tc.wantErr:
				case errors.As(err, &pe) && pe.Field == tc.wantErr:
				default:
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Branch.Name != tc.want || p.Branch.Source != tc.src {
				t.Fatalf("branch = %+v, want %s (%s)", p.Branch, tc.want, tc.src)
			}
			if _, err := e.h.Run(ctx, o); err != nil {
				t.Fatal(err)
			}
			if s := symref(t, main); s != "refs/heads/"+tc.want || head(t, main) != head(t, wt) {
				t.Errorf("main at %q %s, want %s at %s", s, head(t, main), tc.want, head(t, wt))
			}
		})
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Fix the login bug!":      "fix-the-login-bug",
		"  --Ünïcode  title ":     "n-code-title",
		"":                        "",
		"!!!":                     "",
		strings.Repeat("ab ", 40): strings.TrimRight(strings.Repeat("ab-", 17)[:50], "-"),
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// A thread with no uncommitted changes hands off too: only HEAD moves.
func TestCleanSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	gittest.Write(t, wt, "sub/b.txt", "committed\n")
	gittest.CommitAll(t, wt, "work")
	res, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch.Name != "knightcode/t1" || head(t, main) != head(t, wt) {
		t.Errorf("branch %+v, main at %s", res.Branch, head(t, main))
	}
	for _, d := range []string{main, wt} {
		if st := stateOf(t, d); st.Status != "" {
			t.Errorf("%s not clean: %q", d, st.Status)
		}
	}
	if recs, err := e.h.Recover(ctx, RecoverOptions{}); err != nil || len(recs) != 0 {
		t.Errorf("Recover = %+v, %v; want nothing to do", recs, err)
	}
}

// The source's cleanup after a verified move removes exactly the saved
// changes: a file edited while the handoff ran (same size, so only its
// stat data tells) is never overwritten and the handoff ends in
// recoveryRequired naming it; an index rewritten meanwhile (`git add` of
// an unchanged file) does not stop the cleanup. A cleaned source has an
// index whose stat data matches its files (diff-files, which does not
// refresh, lists nothing).
func TestEditDuringHandoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		edit  func(t *testing.T, src string)
		paths []string // nil: the handoff completes
	}{
		{"none", func(*testing.T, string) {}, nil},
		{"tracked file, same size", func(t *testing.T, src string) {
			gittest.Write(t, src, "sub/b.txt", "B CHANGED\n")
		}, []string{"sub/b.txt"}},
		{"untracked file, same size", func(t *testing.T, src string) {
			gittest.Write(t, src, "sub/new.txt", "UNTRACKED\n")
		}, []string{"sub/new.txt"}},
		{"index rewritten", func(t *testing.T, src string) {
			gittest.Git(t, src, "add", "sub/b.txt")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, main, wt := newWorktreeEnv(t)
			dirtyFixture(t, wt)
			want := stateOf(t, wt)
			e.h.StepHook = func(s string) error {
				if s == StepRecorded {
					tt.edit(t, wt)
				}
				return nil
			}
			_, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1"})
			e.h.StepHook = nil
			wantState(t, "main", want, main)
			if tt.paths == nil {
				if err != nil {
					t.Fatal(err)
				}
				if st := stateOf(t, wt); st.Status != "" {
					t.Errorf("source not clean: %q", st.Status)
				}
				if out := gittest.Git(t, wt, "diff-files", "--name-only"); out != "" {
					t.Errorf("index stat data stale for %q", out)
				}
				return
			}
			var re *RecoveryError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RecoveryError", err)
			}
			if diff := cmp.Diff(tt.paths, re.Conflict.Paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			before := want.Files[tt.paths[0]]
			if got := stateOf(t, wt).Files[tt.paths[0]]; got == before || got == "" {
				t.Errorf("%s is %q: the edit was overwritten", tt.paths[0], got)
			}
		})
	}
}

// A file written into the worktree a local-to-worktree handoff made,
// while the handoff ran (neither the handoff's version nor HEAD's), is
// not lost when the handoff is undone and that worktree deleted: its
// snapshot is kept and the error names it (a KeptWorktreeError; when the
// verification caught the file, the localChanges refusal's output and
// paths too, which is what a client shows). The main checkout keeps its
// changes.
func TestRollbackKeepsFilesWrittenIntoNewWorktree(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		step string
		fail bool // the hook stops the handoff there (else the verification does)
	}{{"head", true}, {"moved", false}} {
		t.Run(tt.step, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			main := commitFixture(t)
			dirtyFixture(t, main)
			want := stateOf(t, main)
			var made string
			e.h.StepHook = func(s string) error {
				if s != tt.step {
					return nil
				}
				for _, line := range strings.Split(gittest.Git(t, main, "worktree", "list", "--porcelain"), "\n") {
					if p, ok := strings.CutPrefix(line, "worktree "); ok && p != main {
						made = p
					}
				}
				gittest.Write(t, made, "notes/mine.txt", "written meanwhile\n")
				if tt.fail {
					return errors.New("stopped for the test")
				}
				return nil
			}
			_, err := e.h.Run(context.Background(), Options{To: ToWorktree, Cwd: main, ThreadID: "T9"})
			e.h.StepHook = nil
			kept, ok := errors.AsType[*KeptWorktreeError](err)
			if !ok || made == "" || kept.Path != made || !slices.Equal(kept.Paths, []string{"notes/mine.txt"}) || kept.Snapshot == "" {
				t.Fatalf("err = %v, want a KeptWorktreeError for notes/mine.txt in %q", err, made)
			}
			if ce, ok := errors.AsType[*ConflictError](err); !tt.fail && (!ok || ce.Reason != ReasonLocalChanges ||
				!slices.Contains(ce.Paths, "notes/mine.txt") || !strings.Contains(ce.Output, kept.Snapshot)) {
				t.Errorf("err = %v, want localChanges naming notes/mine.txt and the kept snapshot", err)
			}
			if got := gittest.Git(t, main, "show", kept.Snapshot+":notes/mine.txt"); got != "written meanwhile\n" {
				t.Errorf("snapshot holds %q", got)
			}
			if _, err := os.Stat(made); !os.IsNotExist(err) {
				t.Errorf("the worktree is still there: %v", err)
			}
			wantState(t, "main", want, main)
			e.noJournals(t)
		})
	}
}

// A file of the destination written while the handoff writes it is
// someone else's and is never overwritten: written after the check read
// it and before its turn to be placed (the first file is about to be
// placed; tools/run.sh is placed last), or after the move and before the
// verification. The handoff answers localChanges naming it (not an
// internal error), is undone, and the file keeps what was written.
func TestEditInDestinationIsKept(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ step, path string }{
		{"checkout#1", "tools/run.sh"},
		{"moved", "README.md"},
	} {
		t.Run(tt.step, func(t *testing.T) {
			t.Parallel()
			e, main, wt := newWorktreeEnv(t)
			dirtyFixture(t, wt)
			want := stateOf(t, wt)
			e.h.StepHook = func(s string) error {
				if s == tt.step {
					gittest.Write(t, main, tt.path, "written meanwhile\n")
				}
				return nil
			}
			_, err := e.h.Run(context.Background(), Options{To: ToLocal, Cwd: wt, ThreadID: "T1"})
			e.h.StepHook = nil
			ce, ok := errors.AsType[*ConflictError](err)
			if !ok || ce.Reason != ReasonLocalChanges || !slices.Equal(ce.Paths, []string{tt.path}) {
				t.Fatalf("err = %v, want localChanges naming %s", err, tt.path)
			}
			if got := gittest.Read(t, main, tt.path); got != "written meanwhile\n" {
				t.Errorf("%s = %q: the write was replaced", tt.path, got)
			}
			wantState(t, "the worktree lost its changes", want, wt)
			if st := stateOf(t, main); strings.Count(st.Status, "\n") != 1 || !strings.HasPrefix(st.Status, "1 .M ") ||
				!strings.HasSuffix(st.Status, " "+tt.path+"\n") || st.Cached != "" {
				t.Errorf("main status = %q, cached %q, want only the write", st.Status, st.Cached)
			}
			e.noJournals(t)
		})
	}
}

// Moved .gitignore files change what each side ignores: a handoff whose
// new rules leave the destination's ignored files ignored goes through
// and keeps them, and a file the new rules ignored in the source stays
// there (ignored files never move) and shows as untracked once the
// source's rules are back to HEAD's, which the result warns of.
func TestMovedIgnoreRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	gittest.Write(t, wt, ".gitignore", "*.log\n.env\n*.tmp\ndist/\n")
	gittest.Write(t, wt, "scratch.tmp", "ignored by the moved rules\n")
	gittest.Write(t, wt, "dist/a.js", "built\n")
	gittest.Write(t, wt, "dist/b.js", "built\n")
	gittest.Write(t, wt, "sub/moving.txt", "work\n")
	gittest.Git(t, wt, "init", "-q", "vendor/lib") // stays, named by its own warning
	gittest.Write(t, wt, "vendor/lib/own.go", "the nested repository's\n")
	gittest.Write(t, main, "cfg.log", "the user's own\n")
	want := stateOf(t, wt)
	for _, p := range []string{"scratch.tmp", "dist/a.js", "dist/b.js", "vendor/lib/own.go"} {
		delete(want.Files, p)
	}
	want.Status = strings.ReplaceAll(want.Status, "? vendor/lib/\n", "")
	if _, err := e.h.Plan(ctx, Options{To: ToLocal, Cwd: wt}); err != nil {
		t.Fatalf("plan: %v", err)
	}
	res, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1", Title: "ignore"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "vendor/lib") ||
		!strings.Contains(res.Warnings[1], "2 files or folders stayed in "+wt) || !strings.Contains(res.Warnings[1], "(dist/, scratch.tmp)") {
		t.Errorf("warnings %q, want the nested repository's, then one naming dist/ and scratch.tmp", res.Warnings)
	}
	got := stateOf(t, main)
	for name, content := range map[string]string{"cfg.log": "-rw-r--r--:the user's own\n"} {
		if got.Files[name] != content {
			t.Errorf("main's ignored %s = %q", name, got.Files[name])
		}
		delete(got.Files, name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("main after handoff (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(wt, "scratch.tmp")); err != nil || string(b) != "ignored by the moved rules\n" {
		t.Errorf("the source's scratch.tmp = %q, %v", b, err)
	}
	if st := gittest.Git(t, wt, "status", "--porcelain"); st != "?? dist/\n?? scratch.tmp\n?? vendor/\n" {
		t.Errorf("source status = %q", st)
	}
	e.noJournals(t)
}

// `git rm --cached` of a file that is not ignored keeps it as an
// untracked file: the handoff moves the staged deletion and the file, and
// the source ends clean at HEAD (only an ignored file there is refused,
// TestRefusals).
func TestRmCachedMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	gittest.Git(t, wt, "rm", "-q", "--cached", "README.md")
	gittest.Write(t, wt, "README.md", "kept, now untracked\n")
	want := stateOf(t, wt)
	if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1", Title: "rm cached"}); err != nil {
		t.Fatal(err)
	}
	wantState(t, "main after handoff", want, main)
	if st := gittest.Git(t, wt, "status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("source status = %q", st)
	}
}

// A moved .gitattributes (untracked in the source) changes how files
// check out, but each side's files are written with the attributes that
// side ends with: the source, clean again, is byte for byte at HEAD
// (QA: its files came back with the moved eol=crlf, all modified), and
// the way back reproduces the source as git sees it.
func TestMovedAttributes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, main, wt := newWorktreeEnv(t)
	gittest.Write(t, wt, ".gitattributes", "*.txt text eol=crlf\n")
	gittest.Write(t, wt, "sub/moving.txt", "work\n")
	gittest.Write(t, wt, "sub/a.txt", "edited\n")
	want := stateOf(t, wt)
	if _, err := e.h.Run(ctx, Options{To: ToLocal, Cwd: wt, ThreadID: "T1", Title: "attrs"}); err != nil {
		t.Fatal(err)
	}
	if st := gittest.Git(t, wt, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("source status after the handoff = %q", st)
	}
	for _, p := range strings.Fields(gittest.Git(t, wt, "ls-files")) {
		if got, want := gittest.Read(t, wt, p), gittest.Git(t, wt, "show", "HEAD:"+p); got != want {
			t.Errorf("source %s = %q, want HEAD's %q", p, got, want)
		}
	}
	if _, err := e.h.Run(ctx, Options{To: ToWorktree, Cwd: main, Worktree: wt, ThreadID: "T1"}); err != nil {
		t.Fatal(err)
	}
	// Files move as git stores them: the moved eol=crlf converts the
	// text files the way back writes, as a checkout would (README); git
	// sees the same status and diffs.
	got := stateOf(t, wt)
	for p, c := range got.Files {
		got.Files[p] = strings.ReplaceAll(c, "\r\n", "\n")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worktree after the way back (-want +got):\n%s", diff)
	}
	if st := gittest.Git(t, main, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("main status after the way back = %q", st)
	}
}
