//go:build linux

package gitcli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/internal/proctest"
)

// leftoverHook installs the hook name in dir: it starts a background sleep
// that keeps the hook's stdout and stderr (git's stderr) open, prints
// "hook ran" and exits with code. It returns the sleep's argument
// (proctest.UniqueSleep: the test's end kills it).
func leftoverHook(t *testing.T, dir, name string, code string) string {
	t.Helper()
	arg := proctest.UniqueSleep(t, 120)
	gittest.WriteMode(t, dir, ".git/hooks/"+name, "#!/bin/sh\nsleep "+arg+" &\necho hook ran\nexit "+code+"\n", 0o755)
	return arg
}

// leftoverCommit makes a repository with a change staged and the
// pre-commit hook of leftoverHook exiting with code, and returns it opened
// by r, and the hook's sleep argument.
func leftoverCommit(t *testing.T, r *Runner, code string) (*Repo, string) {
	t.Helper()
	dir := gittest.Init(t)
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.CommitAll(t, dir, "base")
	sleep := leftoverHook(t, dir, "pre-commit", code)
	gittest.Write(t, dir, "a.txt", "b\n")
	gittest.Git(t, dir, "add", "a.txt")
	repo, err := r.Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, sleep
}

// TestHookLeftoverDoesNotHoldTheCall commits under a pre-commit hook that
// leaves a background child holding git's stderr (issue 22 QA, M4: the
// commit landed but the call failed after git's 6 s WaitDelay with
// exec.ErrWaitDelay, and with a hook deadline shorter than the child's life
// it failed as timed out): the answer follows git's exit status, at once,
// whatever the child still holds; the child keeps running.
func TestHookLeftoverDoesNotHoldTheCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		hookTimeout time.Duration
	}{
		{"no deadline", 0},
		{"a deadline shorter than the child's life", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t)
			if tc.hookTimeout > 0 {
				r = r.WithHookTimeout(tc.hookTimeout)
			}
			repo, sleep := leftoverCommit(t, r, "0")
			start := time.Now()
			out, err := repo.Commit(context.Background(), "kept")
			if err != nil {
				t.Fatalf("commit under a hook that left a child: %v", err)
			}
			if took := time.Since(start); took > 2500*time.Millisecond {
				t.Errorf("the commit answered after %v: it waited for the hook's child", took)
			}
			if !strings.Contains(string(out), "kept") {
				t.Errorf("git's summary = %q", out)
			}
			if len(proctest.Sleeping(sleep)) == 0 {
				t.Error("the hook's child did not keep running")
			}
		})
	}
}

// TestHookLeftoverRefusal: a hook that refuses and leaves a child holding
// git's stderr is a refusal at once, with the hook's words.
func TestHookLeftoverRefusal(t *testing.T) {
	t.Parallel()
	repo, _ := leftoverCommit(t, newRunner(t), "1")
	start := time.Now()
	_, err := repo.Commit(context.Background(), "refused")
	ge, ok := errors.AsType[*Error](err)
	if !ok || ge.ExitCode != 1 || !strings.Contains(ge.Stderr, "hook ran") {
		t.Fatalf("commit under a refusing hook: %v, want exit 1 with the hook's words", err)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("the refusal came after %v", took)
	}
}

// fakeGit writes an executable "git" script with body into a new folder
// and returns a Runner that starts it.
func fakeGit(t *testing.T, body string) *Runner {
	t.Helper()
	script := filepath.Join(t.TempDir(), "git")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Runner{gitPath: script, env: scrubEnv(os.Environ())}
}

// TestStdoutHeldByLeftover: git's stdout held open by a process git left
// behind (a pre-push hook's background job, issue 22 QA: git/push held the
// checkout for 98 s) ends the read when git exits, with all git wrote.
func TestStdoutHeldByLeftover(t *testing.T) {
	t.Parallel()
	arg := proctest.UniqueSleep(t, 120)
	r := fakeGit(t, "echo pushed\nsleep "+arg+" &\nexit 0\n")
	start := time.Now()
	out, err := r.run(context.Background(), Cmd{Dir: t.TempDir(), Args: []string{"push"}, Timeout: 4 * time.Second})
	if err != nil || string(out) != "pushed\n" {
		t.Fatalf("Run = %q, %v", out, err)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("Run answered after %v: it waited for the leftover", took)
	}
}

// TestSlowReaderGetsEverything: a reader slower than git gets every byte
// git wrote before it exited.
func TestSlowReaderGetsEverything(t *testing.T) {
	t.Parallel()
	r := fakeGit(t, "head -c 1048576 /dev/zero | tr '\\0' x\nexit 0\n")
	var got bytes.Buffer
	err := r.Stream(context.Background(), Cmd{Dir: t.TempDir(), Args: []string{"cat-file"}}, func(stdout io.Reader) error {
		buf := make([]byte, 16<<10)
		for {
			n, err := stdout.Read(buf)
			got.Write(buf[:n])
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	if err != nil || got.Len() != 1<<20 || strings.Trim(got.String(), "x") != "" {
		t.Fatalf("read %d bytes, err %v; want 1 MiB of x", got.Len(), err)
	}
}
