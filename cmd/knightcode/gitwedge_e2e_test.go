package main

// Tests of issue 22's wedges around long git work: a pre-commit hook that
// sleeps and a gh that never exits must not hold the thread's requests (its
// reads answer, its writes are refused naming the running operation), each
// has a deadline of its own setting, and turn/interrupt of the thread stops
// it, leaving the checkout exactly as a refused commit does. Over the
// binary, and over the wired server with two connections.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// sleepingHook installs the hook name in work: it creates the file started
// when it runs, and on SIGTERM (asked to end) creates stopped and exits 1;
// otherwise it sleeps for two minutes. It returns both paths.
func sleepingHook(t *testing.T, work, name string) (started, stopped string) {
	t.Helper()
	dir := t.TempDir()
	started, stopped = filepath.Join(dir, name+"-started"), filepath.Join(dir, name+"-stopped")
	script := "#!/bin/sh\ntrap ': > \"" + stopped + "\"; exit 1' TERM\n: > \"" + started + "\"\nsleep 120 &\nwait\n"
	writeFile(t, work, ".git/hooks/"+name, script)
	if err := os.Chmod(filepath.Join(work, ".git/hooks", name), 0o755); err != nil {
		t.Fatal(err)
	}
	return started, stopped
}

// awaitFile waits until path exists.
func awaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, rpctest.DefaultTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// partlyStaged gives work a staged change, an unstaged change to the same
// file and an untracked file, and returns the checkout's state
// (commitState).
func partlyStaged(t *testing.T, work string) map[string]string {
	t.Helper()
	writeFile(t, work, "a.txt", replaceLines(map[int]string{2: "staged"}))
	fixtureGit(t, work, "add", "a.txt")
	writeFile(t, work, "a.txt", replaceLines(map[int]string{2: "staged", 5: "unstaged"}))
	writeFile(t, work, "c.txt", "untracked\n")
	s := commitState(t, work)
	s[indexFileKey] = indexDigest(t, work)
	return s
}

// indexFileKey is the state key of the index file's bytes (indexDigest):
// a stopped commit puts them back exactly, stat data included (issue 22
// QA, L1: a partly staged entry's came back zeroed).
const indexFileKey = "index file"

// indexDigest is the SHA-256 of work's .git/index and its
// `ls-files --stage --debug` listing (git's stat data of every entry),
// read without writing it.
func indexDigest(t *testing.T, work string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(work, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x\n%s", sha256.Sum256(data), fixtureGit(t, work, "-c", "core.fsmonitor=false", "ls-files", "--stage", "--debug"))
}

// commitState is checkoutState with HEAD and the index's entries: what a
// refused commit leaves exactly as it was.
func commitState(t *testing.T, work string) map[string]string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(work, ".git", "index.lock")); err == nil {
		t.Error("index.lock is left in the repository")
	}
	s := checkoutState(t, work)
	s["HEAD"] = fixtureGit(t, work, "rev-parse", "HEAD")
	s["stage"] = fixtureGit(t, work, "ls-files", "--stage")
	return s
}

// wantSameState reports how the checkout changed since before.
func wantSameState(t *testing.T, what string, work string, before map[string]string) {
	t.Helper()
	after := map[string]string{}
	if _, ok := before[indexFileKey]; ok {
		after[indexFileKey] = indexDigest(t, work) // before commitState's git status refreshes it
	}
	maps.Copy(after, commitState(t, work))
	if diff := cmp.Diff(after, before); diff != "" {
		t.Errorf("%s changed the checkout (-after +before):\n%s", what, diff)
	}
}

// wantRefusedNaming checks that err is turnInProgress and its message names
// the running operation.
func wantRefusedNaming(t *testing.T, what string, err error, running string) {
	t.Helper()
	e, ok := errors.AsType[*client.Error](err)
	if !ok || e.Code != protocol.CodeTurnInProgress || !strings.Contains(e.Message, running) {
		t.Errorf("%s while %s runs: %v, want turnInProgress naming %s", what, running, err, running)
	}
}

// wantConflict checks that err is gitConflict with reason, its output
// holding each of outputs.
func wantConflict(t *testing.T, what string, err error, reason string, outputs ...string) {
	t.Helper()
	if got := toWireErr(t, err); got.Code != protocol.CodeGitConflict || got.Reason != reason {
		t.Errorf("%s: %v, want gitConflict %s", what, err, reason)
		return
	}
	data := mustJSON(err.(*client.Error).Data)
	for _, o := range outputs {
		if !strings.Contains(data, o) {
			t.Errorf("%s: data %s lacks %q", what, data, o)
		}
	}
}

// asyncCall sends the typed request m on its own goroutine; the channel
// gets its error.
func asyncCall[P, R any](s *diffServer, m protocol.ClientRequest[P, R], p P) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*rpctest.DefaultTimeout)
		defer cancel()
		_, err := client.Call(ctx, s.c, m, p)
		done <- err
	}()
	return done
}

// commitUnderSleepingHook installs a sleeping pre-commit hook in work
// (sleepingHook), stages part of a change (partlyStaged) and sends
// git/commit for thread id from s; once the hook runs it returns the
// commit's answer channel, the checkout's state before the commit and the
// hook's stopped marker.
func commitUnderSleepingHook(t *testing.T, s *diffServer, work, id string) (done <-chan error, before map[string]string, stopped string) {
	t.Helper()
	started, stopped := sleepingHook(t, work, "pre-commit")
	before = partlyStaged(t, work)
	done = asyncCall(s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "wedged"})
	awaitFile(t, started)
	return done, before, stopped
}

// wantThreadReads sends the thread's reads, which must answer.
func wantThreadReads(t *testing.T, s *diffServer, id string) {
	t.Helper()
	mustCall(t, s, protocol.GitStatus, protocol.GitStatusParams{ThreadID: id})
	mustCall(t, s, protocol.ThreadDiffRead, protocol.ThreadDiffReadParams{ThreadID: id})
	mustCall(t, s, protocol.GitLog, protocol.GitLogParams{ThreadID: id})
	mustCall(t, s, protocol.FileRead, protocol.FileReadParams{ThreadID: id, Path: "a.txt"})
	mustCall(t, s, protocol.FileList, protocol.FileListParams{ThreadID: id})
	mustCall(t, s, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: id})
}

func receive(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * rpctest.DefaultTimeout):
		t.Fatal("no answer")
		return nil
	}
}

// TestE2EGitCommitHookDoesNotHoldTheThread commits under a pre-commit hook
// that sleeps, over the binary (issue 22: the commit blocked every later
// request of its thread, with no timeout): the thread's reads answer
// meanwhile, its writes answer turnInProgress naming git/commit, and
// turn/interrupt stops the hook (asked first, SIGTERM) and the commit
// answers gitConflict interrupted, leaving HEAD, the index (partial
// staging included) and the working tree exactly as before, as a refused
// commit does. Then the checkout takes a commit again.
func TestE2EGitCommitHookDoesNotHoldTheThread(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, _ := gitRemoteRepo(t)
	fixtureGit(t, work, "branch", "other")
	id := s.startThread(t, work, "")
	done, before, stopped := commitUnderSleepingHook(t, s, work, id)
	wantThreadReads(t, s, id)
	_, err := gitCall(t, s, protocol.GitStage, protocol.GitStageParams{ThreadID: id})
	wantRefusedNaming(t, "git/stage", err, "git/commit")
	_, err = gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "second"})
	wantRefusedNaming(t, "a second git/commit", err, "git/commit")
	_, err = gitCall(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "other"})
	wantRefusedNaming(t, "git/branch/switch", err, "git/commit")
	_, err = gitCall(t, s, protocol.ThreadDiffRevert, protocol.ThreadDiffRevertParams{ThreadID: id, Path: "a.txt"})
	wantRefusedNaming(t, "thread/diff/revert", err, "git/commit")
	_, err = gitCall(t, s, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: id})
	wantRefusedNaming(t, "thread/archive", err, "git/commit")

	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id})
	wantConflict(t, "the interrupted commit", receive(t, done), "interrupted", "git/commit was stopped by turn/interrupt")
	if _, err := os.Stat(stopped); err != nil {
		t.Errorf("the hook was not asked to end: %v", err)
	}
	wantSameState(t, "an interrupted commit", work, before)

	if err := os.Remove(filepath.Join(work, ".git/hooks/pre-commit")); err != nil {
		t.Fatal(err)
	}
	if res := mustCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "after"}); res.Commit == "" {
		t.Errorf("git/commit after the interrupt: %+v", res)
	}
}

// TestE2EGitHookDeadlines sets git.hookTimeoutSeconds to 1: a pre-commit
// hook that sleeps is stopped and git/commit answers gitConflict timedOut
// naming the setting, the checkout exactly as before; a pre-push hook that
// sleeps stops git/push the same way (issue 22: no timeout at all).
func TestE2EGitHookDeadlines(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, _ := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	writeFile(t, filepath.Join(s.home, "agent"), "settings.json", `{"git": {"hookTimeoutSeconds": 1}}`)
	_, stopped := sleepingHook(t, work, "pre-commit")
	before := partlyStaged(t, work)
	_, err := gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "too slow"})
	wantConflict(t, "git/commit past the hook deadline", err, "timedOut", "git.hookTimeoutSeconds", "1s")
	if _, err := os.Stat(stopped); err != nil {
		t.Errorf("the pre-commit hook was not asked to end: %v", err)
	}
	wantSameState(t, "a stopped commit", work, before)

	_, stopped = sleepingHook(t, work, "pre-push")
	_, err = gitCall(t, s, protocol.GitPush, protocol.GitPushParams{ThreadID: id})
	wantConflict(t, "git/push past the hook deadline", err, "timedOut", "git.hookTimeoutSeconds")
	if _, err := os.Stat(stopped); err != nil {
		t.Errorf("the pre-push hook was not asked to end: %v", err)
	}
}

// hangingGhServer starts the binary with a gh on its PATH that creates
// started when it runs and then sleeps for two minutes.
func hangingGhServer(t *testing.T) (s *diffServer, started string) {
	t.Helper()
	path, _ := fakeGh(t, false)
	started = filepath.Join(t.TempDir(), "gh-started")
	if err := os.WriteFile(filepath.Join(path, "gh"), []byte("#!/bin/sh\n: > '"+started+"'\nexec sleep 120\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return startGitServer(t, "", path+string(os.PathListSeparator)+"/bin"), started
}

// TestE2EGitPRCreateGhDoesNotHoldTheThread runs git/pr/create with a gh
// that never exits, over the binary (issue 22: the thread's diff and
// status reads got no answer for 5 minutes): the reads answer meanwhile, a
// commit answers turnInProgress naming git/pr/create, turn/interrupt stops
// gh (gitConflict interrupted); with git.ghTimeoutSeconds 1, gh is stopped
// at its deadline (gitConflict timedOut).
func TestE2EGitPRCreateGhDoesNotHoldTheThread(t *testing.T) {
	t.Parallel()
	s, started := hangingGhServer(t)
	work, _ := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	fixtureGit(t, work, "push", "-q", "origin", "main") // the base gh is given
	fixtureGit(t, work, "switch", "-q", "-c", "topic")
	writeFile(t, work, "t.txt", "t\n")
	fixtureGit(t, work, "add", "t.txt")
	fixtureGit(t, work, "commit", "-q", "-m", "topic")
	fixtureGit(t, work, "push", "-q", "-u", "origin", "topic")
	writeFile(t, work, "b.txt", "a change to commit\n")

	done := asyncCall(s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Topic"})
	awaitFile(t, started)
	wantThreadReads(t, s, id)
	_, err := gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "meanwhile"})
	wantRefusedNaming(t, "git/commit", err, "git/pr/create")
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id})
	wantConflict(t, "the interrupted git/pr/create", receive(t, done), "interrupted", "git/pr/create was stopped by turn/interrupt")

	writeFile(t, filepath.Join(s.home, "agent"), "settings.json", `{"git": {"ghTimeoutSeconds": 1}}`)
	_, err = gitCall(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Topic"})
	wantConflict(t, "git/pr/create past gh's deadline", err, "timedOut", "git.ghTimeoutSeconds", "may have been opened")
}

// TestE2EGitPRCreateInterruptedAfterThePush interrupts git/pr/create while
// gh runs, after it pushed the branch, which had no upstream (issue 22 QA
// M5): the answer is gitConflict interrupted, as for the thread's other
// stopped git calls, and says what was done: the branch stays pushed, the
// pull request may have been opened.
func TestE2EGitPRCreateInterruptedAfterThePush(t *testing.T) {
	t.Parallel()
	s, started := hangingGhServer(t)
	work, remote := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	fixtureGit(t, work, "push", "-q", "origin", "main")
	fixtureGit(t, work, "switch", "-q", "-c", "topic")
	writeFile(t, work, "t.txt", "t\n")
	fixtureGit(t, work, "add", "t.txt")
	fixtureGit(t, work, "commit", "-q", "-m", "topic")

	done := asyncCall(s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Topic"})
	awaitFile(t, started)
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id})
	wantConflict(t, "git/pr/create interrupted while gh ran", receive(t, done), "interrupted",
		"git/pr/create was stopped by turn/interrupt", "pushed the branch topic to origin", "stays pushed", "may have been opened")
	if got, want := fixtureGit(t, remote, "rev-parse", "refs/heads/topic"), fixtureGit(t, work, "rev-parse", "HEAD"); got != want {
		t.Errorf("the remote's topic is %q, want the pushed %q", got, want)
	}
}

// TestGitCommitHookSecondConnection commits under a sleeping pre-commit
// hook from one connection of the wired server: another connection
// subscribed to the thread gets answers to the thread's reads meanwhile,
// its git/stage is refused naming git/commit (it would otherwise stage
// under the running commit), and its turn/interrupt stops the commit,
// which leaves the checkout as it was.
func TestGitCommitHookSecondConnection(t *testing.T) {
	inProcessHome(t)
	srv := wiredServerShutAtCleanup(t)
	decline := func(context.Context, protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		return protocol.ItemToolCallRequestApprovalResult{Decision: "decline"}, nil
	}
	a, b := connect(t, srv, decline), connect(t, srv, decline)
	defer a.c.Close()
	defer b.c.Close()
	work, _ := gitRemoteRepo(t)
	id := a.startThread(t, work, "")
	mustCall(t, b, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: id})
	done, before, _ := commitUnderSleepingHook(t, a, work, id)
	wantThreadReads(t, b, id)
	_, err := gitCall(t, b, protocol.GitStage, protocol.GitStageParams{ThreadID: id})
	wantRefusedNaming(t, "git/stage from another connection", err, "git/commit")
	mustCall(t, b, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id})
	wantConflict(t, "the commit interrupted from another connection", receive(t, done), "interrupted")
	wantSameState(t, "an interrupted commit", work, before)
}

// TestE2EGitHookStoppedAfterTheWork stops the hooks that run after git did
// its part (issue 22 QA, L3): a post-checkout hook stopped by
// turn/interrupt or git.hookTimeoutSeconds made git/branch/switch answer
// success, and a post-commit hook stopped at its deadline made git/commit
// say nothing was committed. Each answers what happened: interrupted or
// timedOut, saying the switch or the commit is made (and it is).
func TestE2EGitHookStoppedAfterTheWork(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, _ := gitRemoteRepo(t)
	fixtureGit(t, work, "branch", "other")
	id := s.startThread(t, work, "")
	started, stopped := sleepingHook(t, work, "post-checkout")

	done := asyncCall(s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "other"})
	awaitFile(t, started)
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id})
	wantConflict(t, "a switch whose post-checkout hook was interrupted", receive(t, done), "interrupted",
		"git/branch/switch was stopped by turn/interrupt", "the switch to other is made")
	if _, err := os.Stat(stopped); err != nil {
		t.Errorf("the post-checkout hook was not asked to end: %v", err)
	}
	if got := strings.TrimSpace(fixtureGit(t, work, "symbolic-ref", "--short", "HEAD")); got != "other" {
		t.Errorf("HEAD is on %q after the switch", got)
	}

	writeFile(t, filepath.Join(s.home, "agent"), "settings.json", `{"git": {"hookTimeoutSeconds": 1}}`)
	_, err := gitCall(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "main"})
	wantConflict(t, "a switch whose post-checkout hook ran past its deadline", err, "timedOut",
		"git.hookTimeoutSeconds", "the switch to main is made")
	if got := strings.TrimSpace(fixtureGit(t, work, "symbolic-ref", "--short", "HEAD")); got != "main" {
		t.Errorf("HEAD is on %q after the switch", got)
	}

	sleepingHook(t, work, "post-commit")
	writeFile(t, work, "a.txt", "a change\n")
	_, err = gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "made"})
	wantConflict(t, "a commit whose post-commit hook ran past its deadline", err, "timedOut",
		"git.hookTimeoutSeconds", "recorded the commit")
	if got := strings.TrimSpace(fixtureGit(t, work, "log", "-1", "--format=%s")); got != "made" {
		t.Errorf("HEAD's subject is %q: the commit was not made", got)
	}
}
