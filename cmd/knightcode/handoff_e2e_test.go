package main

// End-to-end tests of thread/handoff over the built binary (spec: Method
// reference, thread/handoff; "Workspaces, diffs and git"; issue 9).

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
	"github.com/knightcode/knightcode/workspace"
)

// checkoutState is what a handoff must carry byte for byte: git status
// --porcelain=v2, git diff, git diff --cached, and every untracked file's
// bytes.
func checkoutState(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := map[string]string{
		"status": fixtureGit(t, dir, "status", "--porcelain=v2", "--untracked-files=all"),
		"diff":   fixtureGit(t, dir, "diff", "--binary"),
		"cached": fixtureGit(t, dir, "diff", "--cached", "--binary"),
	}
	for _, p := range strings.Split(fixtureGit(t, dir, "ls-files", "-o", "--exclude-standard", "-z"), "\x00") {
		if p != "" {
			s["untracked:"+p] = readFile(t, dir, p)
		}
	}
	return s
}

// repoWrites is what a dry run must leave as it was (issue 9: "compare
// the whole .git and agentDir before/after"): every file of the
// repository's .git (refs, both HEADs, both index files, config, logs/,
// objects), the working files' states, and every file of the agent
// directory, the thread list's cache of the session files
// (session.IndexFileName) included.
func repoWrites(t *testing.T, home, repo, wt string) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, dir := range []string{repo, wt} {
		for k, v := range checkoutState(t, dir) {
			s[dir+":"+k] = v
		}
	}
	digestTree(t, s, filepath.Join(repo, ".git"))
	digestTree(t, s, filepath.Join(home, "agent"))
	return s
}

// digestTree adds to s, for every file under root (symlinks as their
// targets, folders as their names), its mode and the SHA-256 of its bytes,
// keyed by its path.
func digestTree(t *testing.T, s map[string]string, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + tgt
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		s[p] = v
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// A worktree thread's changes go to the main checkout and back: each side
// reproduces status, both diffs and the untracked files byte for byte, the
// stash list is never touched, subscribers get thread/replaced with the
// same id, the thread's cwd and workspace follow, a dirty main checkout is
// refused with the spec's message, and a dry run writes nothing.
func TestE2EHandoffRoundTrip(t *testing.T) {
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": script(map[string]any{"text": "done"})})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
		Cwd: filepath.Join(repo, "sub"), ApprovalMode: "fullAccess",
		Model:     &protocol.ModelRef{Provider: "scripted", ID: "say"},
		Workspace: worktreeMode(),
	}, &started)
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path

	// No message yet: nothing to hand off (the thread's state, not its id).
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "noHistory"})
	s.runTurn(t, thread, "fix the login bug")
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"},
		wireErr{Code: protocol.CodeInvalidParams, Field: "to"})
	branch := "x"
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree", Branch: &branch},
		wireErr{Code: protocol.CodeInvalidParams, Field: "branch"})

	// The thread has no name: the branch is named after the title the
	// thread list shows, its first message.
	wantBranch := "knightcode/fix-the-login-bug"
	makeLocalChanges(t, wt)
	want := checkoutState(t, wt)
	stashes := fixtureGit(t, repo, "stash", "list")
	mainReflog := fixtureGit(t, repo, "reflog", "show", "refs/heads/main")

	// A dirty main checkout is refused with the spec's message.
	writeFile(t, repo, "mine.txt", "the user's\n")
	err := s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"}, nil)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Message != "Stash or commit your local changes to hand off." {
		t.Fatalf("dirty main: %v", err)
	}
	if got := toWireErr(t, err); got.Code != protocol.CodeGitConflict || got.Reason != "localChanges" {
		t.Errorf("dirty main: %+v", got)
	}
	if err := os.Remove(filepath.Join(repo, "mine.txt")); err != nil {
		t.Fatal(err)
	}

	// A dry run answers with the branch and the unchanged thread and
	// writes nothing.
	before := repoWrites(t, s.home, repo, wt)
	dry := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local", DryRun: true})
	if dry.Branch != wantBranch || dry.Thread.Cwd != started.Thread.Cwd || dry.Thread.Workspace.Mode != "worktree" {
		t.Errorf("dry run = %+v", dry)
	}
	if diff := cmp.Diff(before, repoWrites(t, s.home, repo, wt)); diff != "" {
		t.Errorf("the dry run wrote (-before +after):\n%s", diff)
	}

	// To the main checkout.
	from := s.mark()
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})
	if res.Branch != wantBranch || res.Thread.ID != thread || res.Thread.Cwd != filepath.Join(repo, "sub") ||
		res.Thread.Workspace.Mode != "local" || res.Warnings == nil {
		t.Errorf("handoff to local = %+v", res)
	}
	var replaced protocol.ThreadReplacedParams
	if err := json.Unmarshal(s.waitNote(t, &from, protocol.ThreadReplaced.Name, nil), &replaced); err != nil {
		t.Fatal(err)
	}
	if replaced.ThreadID != thread || replaced.Thread.Cwd != filepath.Join(repo, "sub") {
		t.Errorf("thread/replaced = %+v", replaced)
	}
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout after the handoff (-want +got):\n%s", diff)
	}
	if got := checkoutState(t, wt); got["status"] != "" || got["diff"] != "" || got["cached"] != "" {
		t.Errorf("worktree not clean: %v", got)
	}
	if got := strings.TrimSpace(fixtureGit(t, repo, "symbolic-ref", "HEAD")); got != "refs/heads/"+wantBranch {
		t.Errorf("main checkout HEAD = %s", got)
	}
	// The thread runs there now: its diff is the main checkout's.
	var dr protocol.ThreadDiffReadResult
	s.must(t, protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread}, &dr)
	if len(dr.Files) == 0 {
		t.Errorf("the thread's diff in the main checkout is empty")
	}
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"},
		wireErr{Code: protocol.CodeInvalidParams, Field: "to"})

	// And back into its worktree, which is not new: an environment is not
	// used there, and a warning says so.
	envName := "node"
	back := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree", Environment: &envName})
	if back.Thread.Cwd != started.Thread.Cwd || back.Thread.Workspace.Mode != "worktree" || back.Thread.Workspace.Path != wt {
		t.Errorf("handoff back = %+v", back.Thread)
	}
	// The changes were made by hand, not by the thread's turns: the
	// warnings name them too.
	if len(back.Warnings) != 2 || !strings.Contains(back.Warnings[0].Message, `environment "node" was not used`) ||
		!strings.HasPrefix(back.Warnings[1].Message, "8 paths that no turn of this thread changed moved with it") {
		t.Errorf("handoff back with an environment: warnings %+v", back.Warnings)
	}
	if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
		t.Errorf("worktree after the way back (-want +got):\n%s", diff)
	}
	if got := checkoutState(t, repo); got["status"] != "" || got["diff"] != "" || got["cached"] != "" {
		t.Errorf("main checkout not clean: %v", got)
	}
	if got := fixtureGit(t, repo, "stash", "list"); got != stashes {
		t.Errorf("stash list = %q, want %q", got, stashes)
	}
	if got := fixtureGit(t, repo, "reflog", "show", "refs/heads/main"); got != mainReflog {
		t.Errorf("reflog of main changed:\n%s\nwant\n%s", got, mainReflog)
	}

	// The placement survives a reload: thread/read of the saved thread
	// reports the worktree again after a resume by a new server would; here
	// the loaded thread's resume says so.
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if resumed.Thread.Cwd != started.Thread.Cwd {
		t.Errorf("resumed cwd = %s", resumed.Thread.Cwd)
	}
}

// A thread's placement after a handoff is read back from its session by a
// new server: the workspace entry wins over the header.
func TestE2EHandoffPlacementSurvivesRestart(t *testing.T) {
	repo, _ := wtRepo(t)
	scripts := map[string]string{"say": script(map[string]any{"text": "done"})}
	env, home := testEnv(t)
	writeScripts(t, home, scripts)
	s := startWith(t, env, home)
	thread, wt := s.modelWorktreeThread(t, repo, "say", "hello")
	writeFile(t, wt, "a.txt", "changed\n")
	restart := func(s *diffServer) *diffServer {
		if err := s.c.Close(); err != nil {
			t.Fatal(err)
		}
		return startWith(t, env, home)
	}

	// A dry run of a thread that is not loaded writes nothing (QA: it
	// loaded the thread, which wrote the worktree registry).
	s = restart(s)
	before := repoWrites(t, home, repo, wt)
	dry := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local", DryRun: true})
	if dry.Thread.Cwd != wt || dry.Thread.Workspace.Mode != "worktree" || dry.Branch != "knightcode/hello" {
		t.Errorf("dry run of the saved thread: %+v", dry)
	}
	if diff := cmp.Diff(before, repoWrites(t, home, repo, wt)); diff != "" {
		t.Errorf("the dry run of a thread that was not loaded wrote (-before +after):\n%s", diff)
	}
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})

	// Not loaded after a restart: thread/read and a fork read where it
	// runs from the workspace entry too (QA: both used the header's
	// worktree), and so does a resume.
	s = restart(s)
	if got := s.readThread(t, thread).Thread; got.Cwd != repo || got.Workspace.Mode != "local" {
		t.Errorf("thread/read of the saved thread: cwd %s workspace %+v", got.Cwd, got.Workspace)
	}
	var fork protocol.ThreadForkResult
	s.must(t, protocol.ThreadFork.Name, protocol.ThreadForkParams{ThreadID: thread}, &fork)
	if fork.Thread.Cwd != repo || fork.Thread.Workspace.Mode != "local" {
		t.Errorf("fork of the saved thread: cwd %s workspace %+v", fork.Thread.Cwd, fork.Thread.Workspace)
	}
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if resumed.Thread.Cwd != repo || resumed.Thread.Workspace.Mode != "local" {
		t.Errorf("resumed after restart: cwd %s workspace %+v", resumed.Thread.Cwd, resumed.Thread.Workspace)
	}
	if got := readFile(t, repo, "a.txt"); got != "changed\n" {
		t.Errorf("main a.txt = %q", got)
	}
}

// startWith starts the binary with env (HOME home), initialized.
func startWith(t *testing.T, env []string, home string) *diffServer {
	t.Helper()
	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	return s
}

// A handoff is refused with turnInProgress while a turn runs in the
// destination checkout (a dry run too); nothing moves. Another thread
// loaded in the source worktree, idle, does not refuse it (issue 22: it
// was worktreeInUse): it stays loaded there.
func TestE2EHandoffFencing(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": script(map[string]any{"text": "done"}), "slow": slowScript})
	var a protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
		Cwd: repo, ApprovalMode: "fullAccess", Model: &protocol.ModelRef{Provider: "scripted", ID: "say"}, Workspace: worktreeMode(),
	}, &a)
	s.runTurn(t, a.Thread.ID, "hello")
	wt := a.Thread.Workspace.Path
	writeFile(t, wt, "a.txt", "agent work\n")
	want := checkoutState(t, wt)

	b := s.startThread(t, repo, "slow")
	turnID, from := s.startTurn(t, b, "take your time")
	busy := wireErr{Code: protocol.CodeTurnInProgress}
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local"}, busy)
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local", DryRun: true}, busy)
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: b, TurnID: turnID})
	s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, nil)

	if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
		t.Errorf("the worktree changed (-want +got):\n%s", diff)
	}
	if got := checkoutState(t, repo); got["status"] != "" {
		t.Errorf("main checkout changed: %q", got["status"])
	}

	joined := s.startWT(t, wt, nil).Thread.ID // a second thread joins the worktree
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local"})
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout after the handoff (-want +got):\n%s", diff)
	}
	if got := s.readThread(t, joined).Thread; got.Status.Type == protocol.ThreadStatusNotLoaded || got.Cwd != wt {
		t.Errorf("the joined thread after the handoff: %s", mustJSON(got))
	}
}

// A handoff killed after its destination verified (here: the handoff
// library stopped there in this process, as kill -9 would stop the
// server) is finished by the next server as it starts: thread/resume
// reports it as a warning, the thread runs in the main checkout with the changes, and the
// worktree is clean.
func TestE2EHandoffRecoveredAtResume(t *testing.T) {
	repo, _ := wtRepo(t)
	env, home := testEnv(t)
	writeScripts(t, home, map[string]string{"say": script(map[string]any{"text": "done"})})
	s := startWith(t, env, home)
	thread, wt := s.modelWorktreeThread(t, repo, "say", "hello")
	makeLocalChanges(t, wt)
	want := checkoutState(t, wt)
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}

	// The "server" that dies: the handoff library, stopped once the main
	// checkout verified, before the thread's workspace entry was written.
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "HOME" || k == "XDG_CONFIG_HOME" || k == "GIT_CONFIG_NOSYSTEM") {
			t.Setenv(k, v)
		}
	}
	r, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() }) // its long-lived git helpers
	agentDir := filepath.Join(home, "agent")
	h := handoff.New(r, workspace.New(r, agentDir), agentDir)
	crashed := false
	h.StepHook = func(step string) error {
		if step == handoff.StepVerified {
			crashed = true
			runtime.Goexit()
		}
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := h.Run(context.Background(), handoff.Options{To: handoff.ToLocal, Cwd: wt, ThreadID: thread})
		t.Errorf("the handoff was not stopped: %v", err)
	}()
	<-done
	if !crashed {
		t.Fatal("never reached the verified step")
	}

	s2 := startWith(t, env, home)
	// The server's start finished it, before any thread request: the
	// worktree it left holding the changes too is clean.
	if got := checkoutState(t, wt); got["status"] != "" || got["diff"] != "" || got["cached"] != "" {
		t.Errorf("worktree not clean once the server started: %v", got)
	}
	var resumed protocol.ThreadResumeResult
	s2.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	found := false
	for _, w := range resumed.Warnings {
		found = found || strings.Contains(w.Message, "interrupted handoff")
	}
	if !found {
		t.Errorf("no warning about the interrupted handoff: %+v", resumed.Warnings)
	}
	if resumed.Thread.Cwd != repo || resumed.Thread.Workspace.Mode != "local" {
		t.Errorf("resumed thread: cwd %s workspace %+v", resumed.Thread.Cwd, resumed.Thread.Workspace)
	}
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout (-want +got):\n%s", diff)
	}
	if got := checkoutState(t, wt); got["status"] != "" || got["diff"] != "" || got["cached"] != "" {
		t.Errorf("worktree not clean: %v", got)
	}
	// The way back works from there.
	back := mustCall(t, s2, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"})
	if back.Thread.Workspace.Path != wt {
		t.Errorf("handoff back: %+v", back.Thread.Workspace)
	}
	if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
		t.Errorf("worktree after the way back (-want +got):\n%s", diff)
	}
}

// A handoff is refused with turnInProgress while a background shell of the
// thread runs (it would go on writing into the checkout the handoff left
// clean, as QA found); once the shell is stopped the handoff goes.
func TestE2EHandoffRefusedWhileBackgroundShellRuns(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"bg": script(
		toolReply(call("s1", "bash", map[string]any{"command": "sleep 60", "run_in_background": true})),
		map[string]any{"text": "started"},
	)})
	var a protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
		Cwd: repo, ApprovalMode: "fullAccess", Model: &protocol.ModelRef{Provider: "scripted", ID: "bg"}, Workspace: worktreeMode(),
	}, &a)
	s.runTurn(t, a.Thread.ID, "start it")
	list := mustCall(t, s, protocol.ThreadBackgroundShellsList, protocol.BackgroundShellsListParams{ThreadID: a.Thread.ID})
	if len(list.Shells) != 1 || list.Shells[0].Status != "running" {
		t.Fatalf("background shells: %+v", list.Shells)
	}
	busy := wireErr{Code: protocol.CodeTurnInProgress}
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local"}, busy)
	s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local", DryRun: true}, busy)
	mustCall(t, s, protocol.ThreadBackgroundShellsStop, protocol.BackgroundShellsStopParams{ThreadID: a.Thread.ID, ID: list.Shells[0].ID})
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for {
		l := mustCall(t, s, protocol.ThreadBackgroundShellsList, protocol.BackgroundShellsListParams{ThreadID: a.Thread.ID})
		if l.Shells[0].Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stopped shell still runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a.Thread.ID, To: "local"})
}

// The branch a to-local handoff derives takes the worktrees.branchPrefix
// setting: the default knightcode/, the global setting, and a trusted
// project's own setting over it (audit: only the global file was read).
func TestE2EHandoffBranchPrefix(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": script(map[string]any{"text": "done"})})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
		Cwd: repo, ApprovalMode: "fullAccess", Model: &protocol.ModelRef{Provider: "scripted", ID: "say"}, Workspace: worktreeMode(),
	}, &started)
	s.runTurn(t, started.Thread.ID, "hello")
	dryBranch := func() string {
		return mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: started.Thread.ID, To: "local", DryRun: true}).Branch
	}
	if got := dryBranch(); got != "knightcode/hello" {
		t.Errorf("default branch %q", got)
	}
	// A prefix that makes no valid branch name (config/write takes any
	// value) falls back to the default, with a warning (QA: every handoff
	// was invalidParams "branchPrefix", a member it does not take).
	writeFile(t, s.home, "agent/settings.json", `{"worktrees": {"branchPrefix": "my prefix/"}}`)
	bad := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: started.Thread.ID, To: "local", DryRun: true})
	if bad.Branch != "knightcode/hello" || len(bad.Warnings) != 1 || !strings.Contains(bad.Warnings[0].Message, `"my prefix/"`) {
		t.Errorf("dry run with an invalid prefix: branch %q, warnings %+v", bad.Branch, bad.Warnings)
	}
	writeFile(t, s.home, "agent/settings.json", `{"worktrees": {"branchPrefix": "team/"}}`)
	if got := dryBranch(); got != "team/hello" {
		t.Errorf("branch with the global prefix %q", got)
	}
	writeFile(t, repo, ".git/info/exclude", ".knightcode/\n") // the main checkout stays clean
	writeFile(t, repo, ".knightcode/settings.json", `{"worktrees": {"branchPrefix": "me/"}}`)
	if got := dryBranch(); got != "team/hello" {
		t.Errorf("branch with an untrusted project's prefix %q, want the global one", got)
	}
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
	if got := dryBranch(); got != "me/hello" {
		t.Errorf("branch with the trusted project's prefix %q", got)
	}
}

// A worktree a handoff makes for a thread born in the main checkout is made
// as thread/start makes one: past worktrees.keep (here 1), the project's
// least recently used worktree no thread is loaded in is pruned (audit: a
// handoff's worktree never pruned).
func TestE2EHandoffNewWorktreePrunes(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	home := t.TempDir()
	writeFile(t, home, "agent/settings.json", `{"worktrees": {"keep": 1}}`)
	writeScripts(t, home, map[string]string{"say": script(map[string]any{"text": "done"})})
	a := startIn(t, home)
	old := a.startWT(t, repo, worktreeMode()).Thread.Workspace.Path
	thread := a.startThread(t, repo, "say")
	a.runTurn(t, thread, "hello")
	a.close(t)

	b := startIn(t, home) // the first worktree's thread is not loaded now
	writeFile(t, repo, "a.txt", "moved\n")
	res := mustCall(t, b.diffServer, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"})
	made := res.Thread.Workspace.Path
	if made == old || readFile(t, made, "a.txt") != "moved\n" {
		t.Fatalf("handoff to a new worktree = %+v", res.Thread)
	}
	list := b.listWorktrees(t, repo)
	if !list[old].Deleted || list[made].Deleted || exists(old, "") {
		t.Errorf("worktree/list after the handoff: %s; want %s pruned and %s live", mustJSON(list), old, made)
	}
}
