//go:build linux

package main

// Tests of what the user's git hooks leave running (issue 22 QA, M4): a
// pre-commit or pre-push hook that starts a background job and exits 0
// made git/commit answer internal after 7 s (the commit had landed),
// held git/push's checkout until the job ended, and answered timedOut
// for a push that had reached the remote; the jobs outlived the server,
// even one killed with SIGKILL.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// leavingHook installs the hook name in work: it starts `sleep <arg> &`
// (which keeps git's stdout and stderr open) and runs rest. It returns
// the sleep's argument (proctest.UniqueSleep).
func leavingHook(t *testing.T, work, name, rest string) string {
	t.Helper()
	arg := proctest.UniqueSleep(t, 3136)
	writeFile(t, work, ".git/hooks/"+name, "#!/bin/sh\nsleep "+arg+" &\n"+rest)
	if err := os.Chmod(filepath.Join(work, ".git/hooks", name), 0o755); err != nil {
		t.Fatal(err)
	}
	return arg
}

// TestE2EGitHookLeftovers: git/commit and git/push under hooks that leave
// a background job and exit 0 answer success as soon as git exits, with
// git.hookTimeoutSeconds shorter than the job's life too (the push reached
// the remote); the jobs keep running, and end when the server exits.
func TestE2EGitHookLeftovers(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, bare := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	writeFile(t, filepath.Join(s.home, "agent"), "settings.json", `{"git": {"hookTimeoutSeconds": 3}}`)

	committed := leavingHook(t, work, "pre-commit", "exit 0\n")
	writeFile(t, work, "a.txt", "a change\n")
	start := time.Now()
	res, err := gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "kept"})
	if err != nil || res.Commit == "" {
		t.Fatalf("git/commit under a hook that left a job: %+v, %v", res, err)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("git/commit answered after %v: it waited for the hook's job", took)
	}

	pushed := leavingHook(t, work, "pre-push", "exit 0\n")
	start = time.Now()
	if _, err := gitCall(t, s, protocol.GitPush, protocol.GitPushParams{ThreadID: id}); err != nil {
		t.Fatalf("git/push under a hook that left a job: %v", err)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("git/push answered after %v: it waited for the hook's job", took)
	}
	if got, want := fixtureGit(t, bare, "rev-parse", "main"), fixtureGit(t, work, "rev-parse", "HEAD"); got != want {
		t.Errorf("the remote's main is %s, HEAD %s", got, want)
	}
	// The checkout takes the next write at once.
	mustCall(t, s, protocol.GitStage, protocol.GitStageParams{ThreadID: id})
	proctest.WaitSleeping(t, committed, pushed)

	if err := s.c.Close(); err != nil {
		t.Fatalf("server exit: %v", err)
	}
	if left := proctest.Survivors(committed, pushed); len(left) > 0 {
		t.Errorf("what the hooks left running outlived the server: %q", left)
	}
}

// TestE2EGitHookLeftoversEndWhenTheServerIsKilled kills the server with
// SIGKILL while a pre-commit hook runs with a background job of its own
// and another that left git's session: all of them end (each hook call
// runs under a reaper, which sees the server go).
func TestE2EGitHookLeftoversEndWhenTheServerIsKilled(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skipf("no setsid: %v", err)
	}
	env, _ := testEnv(t)
	c, cmd := crashServer(t, env)
	work, _ := gitRemoteRepo(t)
	escaped, running := proctest.UniqueSleep(t, 3137), proctest.UniqueSleep(t, 3138)
	background := leavingHook(t, work, "pre-commit", "setsid -f sleep "+escaped+"\nexec sleep "+running+"\n")
	writeFile(t, work, "a.txt", "a change\n")
	id := crashCall(t, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: work, ApprovalMode: "fullAccess"}).Thread.ID
	go func() { // answered by the server's death
		ctx, cancel := context.WithTimeout(context.Background(), 2*rpctest.DefaultTimeout)
		defer cancel()
		_, _ = client.Call(ctx, c, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "never"})
	}()
	proctest.WaitSleeping(t, background, escaped, running)

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	if left := proctest.Survivors(background, escaped, running); len(left) > 0 {
		t.Errorf("the hook and what it started outlived the killed server: %q", left)
	}
}
