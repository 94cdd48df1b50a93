package main

// More end-to-end tests of thread/handoff over the built binary (spec:
// Method reference, thread/handoff; issue 9): a handoff into a new
// worktree with an environment, the previous handoff branch reused,
// fencing of both checkouts, queued inputs following the thread, and
// .worktreeinclude.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// says is a script of n plain replies, so several turns (or threads) can
// share it.
func says(n int) string {
	r := make([]map[string]any, n)
	for i := range r {
		r[i] = map[string]any{"text": "done"}
	}
	return script(r...)
}

// worktreeThread starts a fullAccess thread of the scripted model in a new
// worktree of repo and runs one turn saying text (a thread with no message
// cannot be handed off); it returns the thread and its worktree.
func (s *diffServer) worktreeThread(t *testing.T, repo, model, text string) (thread, wt string) {
	t.Helper()
	started := s.startWT(t, repo, worktreeMode())
	thread, wt = started.Thread.ID, started.Thread.Workspace.Path
	mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
		ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: model}})
	s.runTurn(t, thread, text)
	return thread, wt
}

// modelWorktreeThread is worktreeThread with the model given in
// thread/start itself.
func (s *diffServer) modelWorktreeThread(t *testing.T, repo, model, text string) (thread, wt string) {
	t.Helper()
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
		Cwd: repo, ApprovalMode: "fullAccess", Model: &protocol.ModelRef{Provider: "scripted", ID: model}, Workspace: worktreeMode(),
	}, &started)
	thread, wt = started.Thread.ID, started.Thread.Workspace.Path
	s.runTurn(t, thread, text)
	return thread, wt
}

// wantClean fails t when dir has staged, unstaged or untracked changes.
func wantClean(t *testing.T, what, dir string) {
	t.Helper()
	if got := checkoutState(t, dir); got["status"] != "" || got["diff"] != "" || got["cached"] != "" {
		t.Errorf("%s %s not clean: %v", what, dir, got)
	}
}

// A thread born in the main checkout, handed off with to "worktree" and an
// environment of its trusted project, gets a new managed worktree at the
// main checkout's HEAD: the environment's setup script ran there (its
// marker holds the worktree's path), the thread's cwd and workspace are
// the new worktree's, its uncommitted changes moved byte for byte, and the
// main checkout keeps its branch and ends clean.
func TestE2EHandoffToNewWorktreeRunsEnvironmentSetup(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	marker := filepath.Join(t.TempDir(), "setup-ran.txt")
	s := startDiffServer(t, map[string]string{"say": says(1)})
	s.must(t, protocol.EnvironmentSave.Name, protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{{
		Name: "dev", Setup: protocol.EnvironmentScript{Default: `{ pwd; echo "$KNIGHTCODE_WORKTREE_PATH"; } > '` + marker + `'`},
	}}}, nil)
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
	thread := s.startThread(t, filepath.Join(repo, "sub"), "say")
	s.runTurn(t, thread, "start here")
	makeLocalChanges(t, repo)
	want := checkoutState(t, repo)
	head := fixtureGit(t, repo, "rev-parse", "HEAD")

	env := "dev"
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree", Environment: &env})
	wt := res.Thread.Workspace.Path
	if res.Thread.Workspace.Mode != "worktree" || wt == "" || wt == repo || res.Thread.Cwd != filepath.Join(wt, "sub") || res.Branch != "" {
		t.Fatalf("handoff to a new worktree = %s", mustJSON(res))
	}
	if _, ok := s.listWorktrees(t, repo)[wt]; !ok {
		t.Errorf("%s is not among worktree/list's managed worktrees", wt)
	}
	if got := readFile(t, filepath.Dir(marker), filepath.Base(marker)); got != wt+"\n"+wt+"\n" {
		t.Errorf("setup marker = %q, want the new worktree's path twice", got)
	}
	if got := fixtureGit(t, wt, "rev-parse", "HEAD"); got != head {
		t.Errorf("new worktree HEAD = %s, want the main checkout's %s", got, head)
	}
	if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
		t.Errorf("new worktree (-want +got):\n%s", diff)
	}
	wantClean(t, "main checkout", repo)
	if got := strings.TrimSpace(fixtureGit(t, repo, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("main checkout HEAD = %s, want refs/heads/main", got)
	}
	var read protocol.ThreadReadResult
	s.must(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: thread}, &read)
	if read.Thread.Cwd != res.Thread.Cwd || read.Thread.Workspace.Path != wt {
		t.Errorf("thread/read after the handoff: cwd %s workspace %+v", read.Thread.Cwd, read.Thread.Workspace)
	}
}

// A worktree thread handed off to local, back, then (after a new commit
// in its worktree) to local again reuses its previous handoff branch, read
// from its session's workspace entry by a new server, fast-forwarded to
// the worktree's new HEAD: no "-2" branch is made.
func TestE2EHandoffReusesPreviousBranch(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{"say": says(1)})
	s := startWith(t, env, home)
	thread, wt := s.worktreeThread(t, repo, "say", "reuse me")
	const branch = "knightcode/reuse-me"

	writeFile(t, wt, "b.txt", "b\nfirst\n")
	first := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})
	if first.Branch != branch {
		t.Fatalf("first handoff branch = %q, want %q", first.Branch, branch)
	}
	tip1 := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "refs/heads/"+branch))
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"})
	fixtureGit(t, wt, "commit", "-q", "-am", "work in the worktree")
	tip2 := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
	writeFile(t, wt, "sub/c.txt", "c\nsecond\n")
	want := checkoutState(t, wt)
	// A new server knows the branch from the session alone.
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}
	s = startWith(t, env, home)

	dry := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local", DryRun: true})
	if dry.Branch != branch {
		t.Errorf("dry run of the second handoff: branch %q, want %q", dry.Branch, branch)
	}
	second := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})
	if second.Branch != branch {
		t.Errorf("second handoff branch = %q, want the previous %q", second.Branch, branch)
	}
	if got := strings.TrimSpace(fixtureGit(t, repo, "symbolic-ref", "HEAD")); got != "refs/heads/"+branch {
		t.Errorf("main checkout HEAD = %s", got)
	}
	if got := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "refs/heads/"+branch)); got != tip2 {
		t.Errorf("%s at %s, want fast-forwarded to the worktree's %s", branch, got, tip2)
	}
	fixtureGit(t, repo, "merge-base", "--is-ancestor", tip1, tip2) // fails unless a fast-forward
	if got := fixtureGit(t, repo, "branch", "--list", "knightcode/*"); strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(got), "*")) != branch {
		t.Errorf("branches = %q, want only %s", got, branch)
	}
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout after the second handoff (-want +got):\n%s", diff)
	}
	wantClean(t, "worktree", wt)
}

// Fencing (issue 9's decisions, issue 22's): a handoff, and its dry run,
// is refused with turnInProgress naming the thread and its turn while
// another thread's turn runs in either checkout: in the source worktree
// of a to-local handoff, in the destination worktree of a to-worktree
// handoff, and in the source main checkout of a to-worktree handoff.
// Nothing moves while refused; once the turn ended, its thread stays
// loaded, idle, and the handoff goes.
func TestE2EHandoffFencedByTurnsInEitherCheckout(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": says(2), "slow1": slowScript, "slow2": slowScript, "slow3": slowScript})
	worktreeThread := func() (string, string) {
		thread, wt := s.worktreeThread(t, repo, "say", "hello")
		writeFile(t, wt, "a.txt", "agent work\n")
		return thread, wt
	}
	// refused starts a slow turn of a new thread in where, checks that
	// handing thread off to "to" (dry run or not) is turnInProgress and
	// moves nothing, and interrupts the turn; the new thread stays loaded.
	refused := func(thread, wt, to, where, model string) {
		t.Helper()
		other := s.startThread(t, where, model)
		turnID, from := s.startTurn(t, other, "take your time")
		wtBefore, mainBefore := checkoutState(t, wt), checkoutState(t, repo)
		for _, dry := range []bool{true, false} {
			err := s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: to, DryRun: dry}, nil)
			if got := busyData(t, err); got.ThreadID != other || got.TurnID != turnID {
				t.Errorf("dry run %v: data %+v, want thread %s turn %s", dry, got, other, turnID)
			}
		}
		if diff := cmp.Diff(wtBefore, checkoutState(t, wt)); diff != "" {
			t.Errorf("the worktree changed while refused (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(mainBefore, checkoutState(t, repo)); diff != "" {
			t.Errorf("the main checkout changed while refused (-before +after):\n%s", diff)
		}
		mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: other, TurnID: turnID})
		s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == other })
	}
	// A turn in the source worktree of a to-local handoff: turnInProgress
	// while it runs; once it ended (its thread stays loaded there) the
	// handoff goes, and back.
	a, awt := worktreeThread()
	refused(a, awt, "local", filepath.Join(awt, "sub"), "slow1")
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local"})
	if got := readFile(t, repo, "a.txt"); got != "agent work\n" {
		t.Errorf("main a.txt = %q", got)
	}
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "worktree"})

	// A thread handed off to local: a turn in its destination (its own
	// worktree) and one in its source (the main checkout) of the way back.
	b, bwt := worktreeThread()
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: b, To: "local"})
	if res.Thread.Workspace.Mode != "local" || readFile(t, repo, "a.txt") != "agent work\n" {
		t.Fatalf("handoff to local: %s", mustJSON(res.Thread))
	}
	refused(b, bwt, "worktree", bwt, "slow2")
	refused(b, bwt, "worktree", repo, "slow3")
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: b, To: "worktree"})
	if got := readFile(t, bwt, "a.txt"); got != "agent work\n" {
		t.Errorf("b's worktree a.txt = %q", got)
	}
	wantClean(t, "main checkout", repo)
}

// A .worktreeinclude at the project root (gitignore syntax) is honoured by
// thread/start in worktree mode: the ignored files it lists are copied
// from the main checkout into the new worktree (mode kept), an ignored
// file it does not list and an untracked file that is not ignored are not.
// The worktree's own .env (edited there) survives thread/archive, which
// deletes the worktree, and comes back, as edited, with thread/unarchive
// and thread/worktree/restore.
func TestE2EWorktreeIncludeAndIgnoredFilesSurviveArchive(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	writeFile(t, repo, ".gitignore", "*.log\n.env\n")
	writeFile(t, repo, ".worktreeinclude", ".env\nnotes.txt\n")
	fixtureGit(t, repo, "add", ".gitignore", ".worktreeinclude")
	fixtureGit(t, repo, "commit", "-q", "-m", "ignore .env")
	writeFile(t, repo, ".env", "SECRET=main\n")
	if err := os.Chmod(filepath.Join(repo, ".env"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, repo, "sub/.env", "SUB=1\n")
	writeFile(t, repo, "debug.log", "not listed\n")
	writeFile(t, repo, "notes.txt", "listed, not ignored\n")

	s := startDiffServer(t, nil)
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	if got := readFile(t, wt, ".env"); got != "SECRET=main\n" {
		t.Errorf(".env in the new worktree = %q, want the main checkout's", got)
	}
	if fi, err := os.Stat(filepath.Join(wt, ".env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf(".env in the new worktree: %v; want mode 0600", fileMode(fi, err))
	}
	if got := readFile(t, wt, "sub/.env"); got != "SUB=1\n" {
		t.Errorf("sub/.env in the new worktree = %q", got)
	}
	for _, p := range []string{"debug.log", "notes.txt"} {
		if exists(wt, p) {
			t.Errorf("%s was copied into the new worktree", p)
		}
	}
	wantClean(t, "new worktree", wt)

	writeFile(t, wt, ".env", "SECRET=edited in the worktree\n")
	s.archiveRestore(t, thread, wt)
	if got := readFile(t, wt, ".env"); got != "SECRET=edited in the worktree\n" {
		t.Errorf("restored .env = %q, want the worktree's edit", got)
	}
	if got := readFile(t, wt, "sub/.env"); got != "SUB=1\n" {
		t.Errorf("restored sub/.env = %q", got)
	}
	if got := readFile(t, repo, ".env"); got != "SECRET=main\n" {
		t.Errorf("main checkout .env = %q", got)
	}
	wantClean(t, "restored worktree", wt)
}

// A private ignored file (.env, mode 0600) that an archive keeps comes
// back from thread/worktree/restore private, not readable by all (QA: it
// came back 0644, as the snapshot's tree holds only 644 and 755; the
// snapshot's metadata keeps the bits now).
func TestE2ERestoredIgnoredFileStaysPrivate(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	writeFile(t, wt, "secrets.log", "TOKEN=1\n")
	if err := os.Chmod(filepath.Join(wt, "secrets.log"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.archiveRestore(t, thread, wt)
	if fi, err := os.Stat(filepath.Join(wt, "secrets.log")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("restored secrets.log: %v; want mode 0600", fileMode(fi, err))
	}
}

// fileMode is what an os.Stat answered, for a message.
func fileMode(fi os.FileInfo, err error) string {
	if err != nil {
		return err.Error()
	}
	return fi.Mode().String()
}

// archiveRestore archives thread, checks that its worktree wt was deleted,
// then unarchives it and restores the worktree.
func (s *diffServer) archiveRestore(t *testing.T, thread, wt string) {
	t.Helper()
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
	if exists(wt, "") {
		t.Fatalf("the worktree %s is still there after the archive", wt)
	}
	s.must(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, nil)
	s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, nil)
}

// Queued inputs follow a thread across its handoff (issue 9: "queued
// inputs follow it"). Thread A, born in the main checkout, has an input
// queued while that checkout is fenced (thread X's handoff into a new
// worktree holds it while X's environment setup runs, waiting for the
// test). A is handed off to a new worktree of its own meanwhile; its
// queued input then starts at once where A now runs, while the main
// checkout is still fenced: the turn's bash call prints A's new cwd.
func TestE2EHandoffQueuedInputFollowsThread(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	out := t.TempDir()
	where, release := filepath.Join(out, "where.txt"), filepath.Join(out, "go")
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{
		"say":   says(1),
		"where": script(toolReply(bashCall("w1", "pwd >> '"+where+"'")), map[string]any{"text": "done"}),
	})

	// The first server: both threads get a message in the main checkout,
	// and the project an environment whose setup waits for the test.
	s := startWith(t, env, home)
	s.must(t, protocol.EnvironmentSave.Name, protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{{
		Name: "hold", Setup: protocol.EnvironmentScript{Default: `echo waiting; while [ ! -e '` + release + `' ]; do sleep 0.05; done`},
	}}}, nil)
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
	x := s.startThread(t, repo, "say")
	s.runTurn(t, x, "first")
	a := s.startThread(t, repo, "where")
	s.runTurn(t, a, "where am I")
	if got := readFile(t, out, "where.txt"); got != repo+"\n" {
		t.Fatalf("where.txt = %q", got)
	}
	writeFile(t, repo, "x.txt", "X's work\n")
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}

	// The second server: no thread loaded; X's handoff holds the main
	// checkout's fence while its setup waits.
	s = startWith(t, env, home)
	from := s.mark()
	hold := "hold"
	xDone := make(chan error, 1)
	var xRes protocol.ThreadHandoffResult
	go func() {
		xDone <- s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: x, To: "worktree", Environment: &hold}, &xRes)
	}()
	defer func() {
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Error(err)
		}
		if err := <-xDone; err != nil {
			t.Errorf("X's handoff: %v", err)
		} else if got := readFile(t, xRes.Thread.Workspace.Path, "x.txt"); got != "X's work\n" || exists(repo, "x.txt") {
			t.Errorf("X's handoff: x.txt in its new worktree %q, left in main %v", got, exists(repo, "x.txt"))
		}
	}()
	s.waitNote(t, &from, protocol.ThreadWorkspaceProgress.Name, func(r json.RawMessage) bool {
		p := decode[protocol.ThreadWorkspaceProgressParams](t, r)
		return p.ThreadID == x && p.Phase == protocol.WorkspacePhaseSetup
	})

	mustCall(t, s, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: a})
	from = s.mark()
	mustCall(t, s, protocol.TurnQueueAdd, protocol.TurnQueueAddParams{ThreadID: a, Text: "and now?"})
	s.waitNote(t, &from, protocol.TurnQueueUpdated.Name, func(r json.RawMessage) bool {
		p := decode[protocol.TurnQueueUpdatedParams](t, r)
		return p.ThreadID == a && len(p.FollowUp) == 1
	})

	from = s.mark()
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "worktree"})
	if res.Thread.Workspace.Mode != "worktree" || res.Thread.Cwd == repo {
		t.Fatalf("A's handoff: %s", mustJSON(res.Thread))
	}
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == a }), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnCompleted {
		t.Errorf("the queued turn ended %+v", done.Turn)
	}
	if got, want := readFile(t, out, "where.txt"), repo+"\n"+res.Thread.Cwd+"\n"; got != want {
		t.Errorf("where.txt = %q, want %q: the queued input ran where A runs now", got, want)
	}
	select {
	case err := <-xDone:
		t.Errorf("X's handoff ended before its setup was let go: %v", err)
	default:
	}
}

// A worktree thread handed off to local keeps its worktree as its home:
// archiving another thread that joined that worktree meanwhile does not
// delete it, and the thread's handoff back finds it (QA: the archive
// deleted it, and the handoff back was worktreeDeleted).
func TestE2EHandedOffThreadKeepsItsWorktreeHome(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": says(1)})
	thread, wt := s.worktreeThread(t, repo, "say", "hello")
	writeFile(t, wt, "a.txt", "agent work\n")
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})
	joined := s.startWT(t, wt, nil)
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: joined.Thread.ID}, nil)
	if !exists(wt, "a.txt") {
		t.Errorf("archiving a thread that joined %s deleted it, the home of thread %s", wt, thread)
	}
	back := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"})
	if back.Thread.Workspace.Path != wt || readFile(t, wt, "a.txt") != "agent work\n" {
		t.Errorf("handoff back: %s", mustJSON(back.Thread))
	}
}
