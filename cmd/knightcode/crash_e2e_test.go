package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// crashShape is the repository of the binary-level crash matrix: modified
// files, files staged and then modified again, and untracked files (issue
// 15 found the 2,000/300/400 shape half-reverted after a kill -9).
type crashShape struct{ modified, staged, untracked int }

// makeCrashRepo builds a repository of shape s and returns its root.
func makeCrashRepo(t *testing.T, s crashShape) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, dir, "init", "-q", "-b", "main")
	fixtureGit(t, dir, "config", "core.autocrlf", "false")
	body := func(i int, tag string) string {
		var b strings.Builder
		for l := range 10 {
			fmt.Fprintf(&b, "file %d line %d%s\n", i, l, tag)
		}
		return b.String()
	}
	for i := range s.modified {
		writeFile(t, dir, fmt.Sprintf("m/f%04d.txt", i), body(i, ""))
	}
	for i := range s.staged {
		writeFile(t, dir, fmt.Sprintf("s/f%04d.txt", i), body(i, ""))
	}
	fixtureGit(t, dir, "add", "-A")
	fixtureGit(t, dir, "commit", "-q", "-m", "base")
	for i := range s.staged {
		writeFile(t, dir, fmt.Sprintf("s/f%04d.txt", i), body(i, " staged"))
	}
	fixtureGit(t, dir, "add", "s")
	for i := range s.staged {
		writeFile(t, dir, fmt.Sprintf("s/f%04d.txt", i), body(i, " staged then edited"))
	}
	for i := range s.modified {
		writeFile(t, dir, fmt.Sprintf("m/f%04d.txt", i), body(i, " edited"))
	}
	for i := range s.untracked {
		writeFile(t, dir, fmt.Sprintf("u/n%04d.txt", i), body(i, " untracked"))
	}
	return dir
}

// TestE2ECrashDuringRevertMatrix kills the server with SIGKILL at several moments
// of a whole-scope thread/diff/revert over the wire and starts it again:
// once a thread starts in the checkout, the checkout is exactly as before
// the revert or exactly as after it (status, both diffs, untracked files
// byte for byte), nothing named .git/knightcode-* is left, and when the
// revert got as far as changing anything, a recovery point under
// refs/knightcode/oplog/ gives the before state back with plain git. A
// crash matrix (gittest.CrashMatrix).
func TestE2ECrashDuringRevertMatrix(t *testing.T) {
	gittest.CrashMatrix(t)
	t.Parallel()
	shape := crashShape{modified: 2000, staged: 300, untracked: 400}
	if testing.Short() {
		shape = crashShape{modified: 200, staged: 30, untracked: 40}
	}
	template := makeCrashRepo(t, shape)
	before := checkoutState(t, template)

	copyRepo := func(t *testing.T) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "repo")
		if out, err := exec.Command("cp", "-a", template, dst).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		return dst
	}

	// One revert that runs to the end gives the after state and how long
	// its writing phase takes here: from its journal's appearance in
	// <agentDir>/oplog to the answer.
	env, _ := testEnv(t)
	full := copyRepo(t)
	c, _ := crashServer(t, env)
	th := crashCall(t, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: full, ApprovalMode: "fullAccess"}).Thread.ID
	journaled := watchJournal(t, env)
	crashCall(t, c, protocol.ThreadDiffRevert, protocol.ThreadDiffRevertParams{ThreadID: th})
	answered := time.Now()
	var writing time.Duration
	select {
	case at := <-journaled:
		writing = answered.Sub(at)
	default:
		t.Fatal("the revert wrote no journal")
	}
	after := checkoutState(t, full)
	if cmp.Equal(before, after) {
		t.Fatal("the revert changed nothing")
	}
	t.Logf("the writing phase of an uninterrupted revert took %v", writing)

	// Kill points: just before the journal, as it appears, then spread over
	// the writing phase.
	for _, frac := range []float64{-1, 0, 0.1, 0.3, 0.5, 0.7, 0.9} {
		t.Run(fmt.Sprintf("kill at %.0f%% of writing", frac*100), func(t *testing.T) {
			env, _ := testEnv(t)
			repo := copyRepo(t)
			c, cmd := crashServer(t, env)
			th := crashCall(t, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"}).Thread.ID
			journaled := watchJournal(t, env)
			done := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*rpctest.DefaultTimeout)
				defer cancel()
				_, err := client.Call(ctx, c, protocol.ThreadDiffRevert, protocol.ThreadDiffRevertParams{ThreadID: th})
				done <- err
			}()
			if frac >= 0 {
				select {
				case <-journaled:
				case err := <-done:
					t.Fatalf("the revert answered (%v) before its journal was seen", err)
				}
				time.Sleep(time.Duration(frac * float64(writing)))
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-done
			_ = cmd.Wait()

			// Start again; a thread in the checkout runs recovery first.
			c2, _ := crashServer(t, env)
			crashCall(t, c2, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"})
			got := checkoutState(t, repo)
			state := "before"
			switch {
			case cmp.Equal(got, before):
			case cmp.Equal(got, after):
				state = "after"
			default:
				t.Fatalf("after a kill -9 and a restart the checkout is neither before nor after the revert:\n-before +got:\n%s", cmp.Diff(before, got))
			}
			t.Logf("state: %s", state)
			journals, _ := filepath.Glob(filepath.Join(env0(env, "KNIGHTCODE_CODING_AGENT_DIR"), "oplog", "*.json"))
			t.Logf("journals left: %v", journals)
			leftovers, _ := filepath.Glob(filepath.Join(repo, ".git", "knightcode-*"))
			if len(leftovers) > 0 {
				t.Errorf("leftovers in .git: %v", leftovers)
			}
			points := strings.Fields(fixtureGit(t, repo, "for-each-ref", "--format=%(refname)", "refs/knightcode/oplog/"))
			if state == "after" && len(points) == 0 {
				t.Fatal("the revert landed but left no recovery point")
			}
			t.Logf("recovery points: %d", len(points))
			if len(points) == 0 {
				return
			}
			// The newest recovery point gives the before state back with
			// plain git (README: "Recovery points").
			point := points[len(points)-1]
			fixtureGit(t, repo, "restore", "--source="+point, "--worktree", "--", ".")
			fixtureGit(t, repo, "restore", "--source="+point+"^2", "--staged", "--", ".")
			if got := checkoutState(t, repo); !cmp.Equal(got, before) {
				t.Errorf("the recovery point %s does not give the before state back:\n%s", point, cmp.Diff(before, got))
			}
		})
	}
}

// env0 returns the value of name in env ("" when absent).
func env0(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// watchJournal returns a channel that receives the time a journal file
// first appears in the oplog folder of the agent directory of env (polled
// every millisecond for at most a minute, and no longer than t runs).
func watchJournal(t *testing.T, env []string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	stop := make(chan struct{})
	finished := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		<-finished
	})
	dir := filepath.Join(env0(env, "KNIGHTCODE_CODING_AGENT_DIR"), "oplog")
	go func() {
		defer close(finished)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if m, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(m) > 0 {
				ch <- time.Now()
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return ch
}
