package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

func asConflict(t *testing.T, err error, reason string) *ConflictError {
	t.Helper()
	ce, ok := errors.AsType[*ConflictError](err)
	if !ok || ce.Reason != reason {
		t.Fatalf("error %v (%T), want a ConflictError %s", err, err, reason)
	}
	return ce
}

// asRefused returns err as a *ParamError with reason, failing the test
// unless it is one. A refusal caused by the checkout's state names no
// field (the thread id was fine); only an empty message names "message".
func asRefused(t *testing.T, err error, reason string) *ParamError {
	t.Helper()
	re, ok := errors.AsType[*ParamError](err)
	if !ok || re.Reason != reason {
		t.Fatalf("error %v (%T), want a ParamError with reason %s", err, err, reason)
	}
	wantField := ""
	if reason == ReasonEmptyMessage {
		wantField = "message"
	}
	if re.Field != wantField {
		t.Errorf("refusal %s names field %q, want %q", reason, re.Field, wantField)
	}
	return re
}

// commitRepo has a.txt committed, an ignored *.log pattern, and changes:
// a.txt modified (unstaged), b.txt staged, new.txt untracked, x.log
// ignored.
func commitRepo(t *testing.T) string {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, ".gitignore", "*.log\n")
	gittest.Write(t, dir, "a.txt", "one\n")
	gittest.CommitAll(t, dir, "first")
	gittest.Write(t, dir, "a.txt", "two\n")
	gittest.Write(t, dir, "b.txt", "b\n")
	gittest.Git(t, dir, "add", "b.txt")
	gittest.Write(t, dir, "new.txt", "new\n")
	gittest.Write(t, dir, "x.log", "ignored\n")
	return dir
}

func filesOf(t *testing.T, dir, rev string) []string {
	t.Helper()
	return strings.Fields(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", rev))
}

func TestCommitStagesEverythingButIgnored(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := commitRepo(t)
	msg := "$(touch pwned) `x` -n\n\n--amend body\n"
	// In a shared repository git writes the index group-writable; the
	// staged index that replaces it must be too.
	gittest.Git(t, dir, "config", "core.sharedRepository", "group")
	index := filepath.Join(dir, ".git", "index")
	res, err := Commit(ctx, git, testOplog(t), dir, msg, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(index); err != nil || fi.Mode().Perm() != 0o664 {
		t.Errorf("index mode after the commit: %v, %v; want 0664", fi.Mode(), err)
	}
	if res.Commit != revParse(t, dir, "HEAD") || res.Branch != "main" || res.Summary == "" {
		t.Errorf("result %+v", res)
	}
	if diff := cmp.Diff([]string{".gitignore", "a.txt", "b.txt", "new.txt"}, filesOf(t, dir, "HEAD")); diff != "" {
		t.Errorf("committed files (-want +got):\n%s", diff)
	}
	if got := gittest.Git(t, dir, "log", "-1", "--format=%B"); got != msg+"\n" {
		t.Errorf("message %q, want %q", got, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("the message ran through a shell")
	}
	if gittest.Read(t, dir, "x.log") != "ignored\n" {
		t.Error("ignored file changed")
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("status after commit: %q", st)
	}
}

func TestCommitStagedOnly(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := commitRepo(t)
	if _, err := Commit(ctx, git, testOplog(t), dir, "staged only", false, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".gitignore", "a.txt", "b.txt"}, filesOf(t, dir, "HEAD")); diff != "" {
		t.Errorf("committed files (-want +got):\n%s", diff)
	}
	if got := gittest.Git(t, dir, "show", "HEAD:a.txt"); got != "one\n" {
		t.Errorf("unstaged change committed: a.txt = %q", got)
	}
	// Nothing staged now: nothing to commit, and no hook ran for it.
	writeHook(t, dir, "pre-commit", "touch hook-ran\n")
	_, err := Commit(ctx, git, testOplog(t), dir, "again", false, "")
	asRefused(t, err, ReasonNothingToCommit)
	if _, err := os.Stat(filepath.Join(dir, "hook-ran")); err == nil {
		t.Error("a hook ran for a refused commit")
	}
	_, err = Commit(ctx, git, testOplog(t), dir, " \n\t", true, "")
	asRefused(t, err, ReasonEmptyMessage)
}

func TestCommitDetachedAndUnborn(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a", "a\n")
	if _, err := Commit(ctx, git, testOplog(t), dir, "root", true, ""); err != nil {
		t.Fatalf("unborn: %v", err)
	}
	gittest.Git(t, dir, "checkout", "-q", "--detach")
	gittest.Write(t, dir, "a", "b\n")
	res, err := Commit(ctx, git, testOplog(t), dir, "detached", true, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Branch != "" || res.Commit != revParse(t, dir, "HEAD") {
		t.Errorf("detached result %+v", res)
	}
	if got := revParse(t, dir, "main"); got == res.Commit {
		t.Error("main moved")
	}
}

func TestCommitHooks(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	t.Run("refusing pre-commit", func(t *testing.T) {
		dir := commitRepo(t)
		writeHook(t, dir, "pre-commit", "echo 'lint: 3 problems' ; echo 'to stderr' >&2; exit 1\n")
		before := revParse(t, dir, "HEAD")
		_, err := Commit(ctx, git, testOplog(t), dir, "msg", true, "")
		ce := asConflict(t, err, ReasonHookRejected)
		if !strings.Contains(ce.Output, "lint: 3 problems") || !strings.Contains(ce.Output, "to stderr") {
			t.Errorf("output %q lacks the hook's output", ce.Output)
		}
		if revParse(t, dir, "HEAD") != before {
			t.Error("a commit was made")
		}
	})
	t.Run("refused: the index is exactly as before, intent-to-add entries included", func(t *testing.T) {
		dir := commitRepo(t)
		gittest.Write(t, dir, "ita.txt", "intent to add\n")
		gittest.Write(t, dir, "ita-empty.txt", "")
		gittest.Git(t, dir, "add", "-N", "ita.txt", "ita-empty.txt")
		writeHook(t, dir, "pre-commit", "exit 1\n")
		status := func() string {
			return gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all") + gittest.Git(t, dir, "ls-files", "-s")
		}
		before := status()
		asConflict(t, commitErr(Commit(ctx, git, testOplog(t), dir, "msg", true, "")), ReasonHookRejected)
		if diff := cmp.Diff(before, status()); diff != "" {
			t.Errorf("index after the refused commit (-before +after):\n%s", diff)
		}
	})
	t.Run("refusing commit-msg in core.hooksPath", func(t *testing.T) {
		dir := commitRepo(t)
		hooks := t.TempDir()
		gittest.WriteMode(t, hooks, "commit-msg", "#!/bin/sh\necho 'bad message'\nexit 1\n", 0o755)
		gittest.Git(t, dir, "config", "core.hooksPath", hooks)
		_, err := Commit(ctx, git, testOplog(t), dir, "msg", true, "")
		ce := asConflict(t, err, ReasonHookRejected)
		if !strings.Contains(ce.Output, "bad message") {
			t.Errorf("output %q", ce.Output)
		}
	})
	t.Run("pre-commit changing the index is not a concurrent change", func(t *testing.T) {
		dir := commitRepo(t)
		draft, err := PrepareCommit(ctx, git, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		writeHook(t, dir, "pre-commit", "echo formatted > fmt.txt && git add fmt.txt\n")
		if _, err := Commit(ctx, git, testOplog(t), dir, "msg", true, draft.IndexTree); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(filesOf(t, dir, "HEAD"), " "), "fmt.txt") {
			t.Error("the hook's change was not committed")
		}
	})
}

func TestPrepareCommitAndConcurrentChange(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := commitRepo(t)
	index := filepath.Join(dir, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := PrepareCommit(ctx, git, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("PrepareCommit wrote the user's index")
	}
	for _, want := range []string{"+two", "+b", "new.txt", "+new"} {
		if !strings.Contains(draft.Diff, want) {
			t.Errorf("staged diff lacks %q:\n%s", want, draft.Diff)
		}
	}
	if strings.Contains(draft.Diff, "x.log") {
		t.Error("the staged diff holds an ignored file")
	}
	staged, err := PrepareCommit(ctx, git, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(staged.Diff, "new.txt") || !strings.Contains(staged.Diff, "b.txt") {
		t.Errorf("staged-only diff:\n%s", staged.Diff)
	}

	// The checkout changes between reading the diff and committing.
	gittest.Write(t, dir, "new.txt", "edited meanwhile\n")
	head := revParse(t, dir, "HEAD")
	_, err = Commit(ctx, git, testOplog(t), dir, "msg", true, draft.IndexTree)
	asConflict(t, err, ReasonConcurrentChange)
	if revParse(t, dir, "HEAD") != head {
		t.Error("a commit was made")
	}

	// Unchanged since the read: the commit records exactly the draft's tree.
	draft, err = PrepareCommit(ctx, git, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(ctx, git, testOplog(t), dir, "msg", true, draft.IndexTree); err != nil {
		t.Fatal(err)
	}
	if got := revParse(t, dir, "HEAD^{tree}"); got != draft.IndexTree {
		t.Errorf("committed tree %s, draft %s", got, draft.IndexTree)
	}
	_, err = PrepareCommit(ctx, git, dir, true)
	asRefused(t, err, ReasonNothingToCommit)
}

// TestCommitIndexChangedBeforeComparison: another process stages a file
// after the read; the commit is refused and nothing is committed.
func TestCommitIndexChangedBeforeComparison(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := commitRepo(t)
	draft, err := PrepareCommit(ctx, git, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "new.txt")
	head := revParse(t, dir, "HEAD")
	_, err = Commit(ctx, git, testOplog(t), dir, "msg", false, draft.IndexTree)
	asConflict(t, err, ReasonConcurrentChange)
	if revParse(t, dir, "HEAD") != head {
		t.Error("a commit was made")
	}
}

func TestCommitUnmerged(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := conflictRepo(t)
	gittest.Run(dir, nil, "merge", "side")
	_, err := Commit(ctx, git, testOplog(t), dir, "merge", false, "")
	asConflict(t, err, ReasonOperationInProgress)
	_, err = PrepareCommit(ctx, git, dir, false)
	asConflict(t, err, ReasonOperationInProgress)
	// Resolved to HEAD's content: a merge commit may record HEAD's tree.
	gittest.Git(t, dir, "checkout", "--ours", "a.txt")
	gittest.Git(t, dir, "add", "a.txt")
	res, err := Commit(ctx, git, testOplog(t), dir, "merge side", false, "")
	if err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(gittest.Git(t, dir, "log", "-1", "--format=%P", res.Commit)); len(parents) != 2 {
		t.Errorf("parents %v, want a merge commit", parents)
	}
}

// Commit messages.

// scriptedModel answers with answer and records every prompt.
type scriptedModel struct {
	answer  string
	err     error
	prompts []string
}

func (m *scriptedModel) call(_ context.Context, prompt string) (string, error) {
	m.prompts = append(m.prompts, prompt)
	return m.answer, m.err
}

func TestCommitMessageFromStagedDiff(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	dir := commitRepo(t)
	draft, err := PrepareCommit(ctx, git, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{answer: "Here is the commit message:\n\n```\nAdd b and new files\n\nAlso change a.\n```\n"}
	msg, err := CommitMessage(ctx, draft.Diff, m.call)
	if err != nil {
		t.Fatal(err)
	}
	if msg != "Add b and new files\n\nAlso change a." {
		t.Errorf("message %q", msg)
	}
	p := m.prompts[0]
	for _, want := range []string{"a.txt", "b.txt", "new.txt", "-one", "+two", "+new"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	// Identical diffs give identical prompts.
	again, err := PrepareCommit(ctx, git, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CommitMessage(ctx, again.Diff, m.call); err != nil {
		t.Fatal(err)
	}
	if m.prompts[0] != m.prompts[1] {
		t.Error("two prompts for one diff differ")
	}
	if _, err := Commit(ctx, git, testOplog(t), dir, msg, true, draft.IndexTree); err != nil {
		t.Fatal(err)
	}

	for _, answer := range []string{"", "  \n", "```\n```", "Here is the commit message:", `""`} {
		_, err := CommitMessage(ctx, "diff", (&scriptedModel{answer: answer}).call)
		asRefused(t, err, ReasonEmptyMessage)
	}
	boom := errors.New("model down")
	if _, err := CommitMessage(ctx, "diff", (&scriptedModel{err: boom}).call); !errors.Is(err, boom) {
		t.Errorf("model error: %v", err)
	}
}

// bigDiff is a staged diff of n files of lines lines each.
func bigDiff(t *testing.T, n, lines int) string {
	t.Helper()
	git := newRunner(t)
	dir := gittest.Init(t)
	gittest.Write(t, dir, "seed", "s\n")
	gittest.CommitAll(t, dir, "seed")
	for i := range n {
		var b strings.Builder
		for j := range lines {
			fmt.Fprintf(&b, "file %d line %d\n", i, j)
		}
		gittest.Write(t, dir, fmt.Sprintf("dir/file-%03d.txt", i), b.String())
	}
	gittest.Git(t, dir, "rm", "-q", "seed")
	draft, err := PrepareCommit(ctx, git, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	return draft.Diff
}

func TestCommitPromptBudget(t *testing.T) {
	t.Parallel()
	diff := bigDiff(t, 60, 200)
	const budget = 4 << 10
	p := CommitPrompt(diff, budget)
	for i := range 60 {
		if name := fmt.Sprintf("dir/file-%03d.txt", i); !strings.Contains(p, name) {
			t.Errorf("prompt does not name %s", name)
		}
	}
	if !strings.Contains(p, "deleted seed") {
		t.Error("prompt does not name the deleted file")
	}
	if !strings.Contains(p, "left out") {
		t.Error("no note that the diff was cut")
	}
	// The list of paths plus the budget bounds the prompt.
	list := strings.Count(p, "\n- ")
	if list != 61 {
		t.Errorf("%d listed files, want 61", list)
	}
	if max := len(commitInstructions) + 61*60 + budget + 400; len(p) > max {
		t.Errorf("prompt is %d bytes, over %d", len(p), max)
	}
	if p != CommitPrompt(diff, budget) {
		t.Error("prompt is not deterministic")
	}
	// A small diff is whole.
	small := bigDiff(t, 1, 3)
	if p := CommitPrompt(small, budget); strings.Contains(p, "left out") || !strings.Contains(p, "+file 0 line 2") {
		t.Errorf("small diff prompt:\n%s", p)
	}
}

func TestCleanCommitMessage(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Fix the parser", "Fix the parser"},
		{"  Fix the parser  \n\n", "Fix the parser"},
		{"\"Fix the parser\"", "Fix the parser"},
		{"`Fix the parser`", "Fix the parser"},
		{"```\nFix the parser\n\nBody line.\n```", "Fix the parser\n\nBody line."},
		{"```text\nFix the parser\n```", "Fix the parser"},
		{"Sure! Here's a commit message:\n\nFix the parser", "Fix the parser"},
		{"Here is a concise commit message:\n```\nFix the parser\n```\nLet me know if you want changes.", "Fix the parser"},
		{"Commit message: Fix the parser", "Fix the parser"},
		{"Subject: Fix the parser\n\nBody", "Fix the parser\n\nBody"},
		{"Fix the parser   \n\n\n\nBody   \nmore", "Fix the parser\n\nBody\nmore"},
		{"Fix \"quoted\" word", "Fix \"quoted\" word"},
		{"Refactor: split the reader", "Refactor: split the reader"},
		{"", ""},
		{"```\n\n```", ""},
	}
	for _, tt := range tests {
		if got := CleanCommitMessage(tt.in); got != tt.want {
			t.Errorf("CleanCommitMessage(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCommitFailurePutsIndexBack: a partly staged file keeps its staged
// content when a commit with includeUnstaged is not made.
func TestCommitFailurePutsIndexBack(t *testing.T) {
	t.Parallel()
	git := newRunner(t)
	setup := func(t *testing.T) (dir, cached string) {
		dir = commitRepo(t)
		gittest.Write(t, dir, "a.txt", "staged version\n")
		gittest.Git(t, dir, "add", "a.txt")
		gittest.Write(t, dir, "a.txt", "work tree version\n")
		return dir, gittest.Git(t, dir, "diff", "--cached")
	}
	t.Run("hook refuses", func(t *testing.T) {
		dir, cached := setup(t)
		writeHook(t, dir, "pre-commit", "exit 1\n")
		_, err := Commit(ctx, git, testOplog(t), dir, "msg", true, "")
		asConflict(t, err, ReasonHookRejected)
		if got := gittest.Git(t, dir, "diff", "--cached"); got != cached {
			t.Errorf("staged diff changed:\n%s\nwant:\n%s", got, cached)
		}
		if gittest.Read(t, dir, "a.txt") != "work tree version\n" {
			t.Error("work tree changed")
		}
	})
	t.Run("concurrent change", func(t *testing.T) {
		dir, cached := setup(t)
		draft, err := PrepareCommit(ctx, git, dir, true)
		if err != nil {
			t.Fatal(err)
		}
		gittest.Write(t, dir, "new.txt", "edited meanwhile\n")
		_, err = Commit(ctx, git, testOplog(t), dir, "msg", true, draft.IndexTree)
		asConflict(t, err, ReasonConcurrentChange)
		if got := gittest.Git(t, dir, "diff", "--cached"); got != cached {
			t.Errorf("staged diff changed:\n%s\nwant:\n%s", got, cached)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
			t.Error("index.lock left behind")
		}
	})
	t.Run("another git holds index.lock", func(t *testing.T) {
		dir, _ := setup(t)
		gittest.Write(t, dir, ".git/index.lock", "")
		_, err := Commit(ctx, git, testOplog(t), dir, "msg", true, "")
		asConflict(t, err, ReasonConcurrentChange)
	})
}

// commitErr drops Commit's result.
func commitErr(_ *CommitResult, err error) error { return err }

// git/commit stages with `git add --all` once: the journal's index write
// takes the copy staged while the paths were listed, as long as the real
// index is still the file that copy came from; once the real index was
// rewritten, `git add --all` runs again on the journal's copy.
func TestCommitStagesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, rewritten := range []bool{false, true} {
		t.Run(fmt.Sprintf("index rewritten %v", rewritten), func(t *testing.T) {
			dir := commitRepo(t)
			repo, err := openCheckout(ctx, newRunner(t), dir)
			if err != nil {
				t.Fatal(err)
			}
			staged, err := stageByAddAll(ctx, repo)
			if err != nil {
				t.Fatal(err)
			}
			defer staged.done()
			if diff := cmp.Diff([]string{"a.txt", "new.txt"}, staged.paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			// A file written after the listing: a second `git add --all`
			// would stage it.
			gittest.Write(t, dir, "later.txt", "later\n")
			if rewritten {
				gittest.Write(t, dir, "b.txt", "b changed\n")
				gittest.Git(t, dir, "add", "b.txt")
			}
			tmp := repo.WithIndex(filepath.Join(t.TempDir(), "index"))
			if _, err := gitstate.CopyIndex(repo.IndexPath, tmp.IndexFile()); err != nil {
				t.Fatal(err)
			}
			if err := staged.install(ctx, tmp); err != nil {
				t.Fatal(err)
			}
			entries, err := allIndexEntries(ctx, tmp)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Keys(entries))
			want := []string{".gitignore", "a.txt", "b.txt", "new.txt"}
			if rewritten {
				want = []string{".gitignore", "a.txt", "b.txt", "later.txt", "new.txt"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the journal's index lists (-want +got):\n%s", diff)
			}
		})
	}
}

// A commit where git knows no identity is a ParamError identityUnknown
// carrying git's advice, not an internal error, and the staging is rolled
// back.
func TestCommitIdentityUnknown(t *testing.T) {
	dir := commitRepo(t)
	before := gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all")
	gittest.Git(t, dir, "config", "user.useConfigOnly", "true")
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	git := newRunner(t) // takes the environment as it is now
	_, err := Commit(ctx, git, testOplog(t), dir, "message", true, "")
	re := asRefused(t, err, ReasonIdentityUnknown)
	if !strings.Contains(re.Message, "user.email") {
		t.Errorf("refusal %+v", re)
	}
	if got := gittest.Git(t, dir, "status", "--porcelain=v2", "--untracked-files=all"); got != before {
		t.Errorf("status after the refused commit:\n%s\nwant\n%s", got, before)
	}
}
