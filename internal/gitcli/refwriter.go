package gitcli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// This file keeps a repository's ref writes with git without a process per
// write (issue 24: a one-hunk action's recovery point is a ref, and a git
// process costs about what `git apply` of the hunk costs): a long-lived
// `git update-ref --stdin` per repository takes one transaction per ref
// ("start", "create <ref> <id>", "commit"), each answered when git has
// committed it. Git writes the ref, its reflog and its lock exactly as a
// `git update-ref` process would; a failed transaction ends the process
// (git's "fatal: ..."), and the next write starts another.

// refWriterIdle is how long an unused ref writer lives.
const refWriterIdle = 2 * time.Minute

// refWriter is one repository's `update-ref --stdin`.
type refWriter struct {
	mu     sync.Mutex
	c      Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *capWriter
	done   chan error
	cancel context.CancelFunc
	timer  *time.Timer
}

// CreateRefKept points ref at id only if ref does not exist, as
// [Repo.CreateRef] does, through the Runner's long-lived `update-ref
// --stdin` of the repository (started on first use, ended after two idle
// minutes or by [Runner.Close]). A refusal (the ref exists, a lock is
// held) is git's *Error with its stderr, and ends that process.
func (r *Repo) CreateRefKept(ctx context.Context, ref, id string) error {
	if strings.ContainsAny(ref+id, " \n\x00") || ref == "" || id == "" {
		return fmt.Errorf("gitcli: update-ref %q %q: bad name", ref, id)
	}
	c := r.git.caches()
	c.mu.Lock()
	w := keptProcess(&c.refWriters, r.CommonDir, func() *refWriter { return &refWriter{} })
	c.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stdin == nil {
		if err := w.start(ctx, r.baseView()); err != nil {
			return err
		}
	} else {
		w.timer.Reset(refWriterIdle)
	}
	if _, err := io.WriteString(w.stdin, "start\ncreate "+ref+" "+id+"\ncommit\n"); err != nil {
		return w.fail(err)
	}
	for _, want := range []string{"start: ok\n", "commit: ok\n"} {
		line, err := w.stdout.ReadString('\n')
		if err != nil {
			return w.fail(err)
		}
		if line != want {
			return w.fail(fmt.Errorf("unexpected answer %q", line))
		}
	}
	return nil
}

// start starts the process (w.mu held); it outlives ctx.
func (w *refWriter) start(ctx context.Context, repo *Repo) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := write(repo.cmd("update-ref", "--stdin"))
	c.Timeout = 24 * time.Hour
	cmd, _, cancelRun, err := repo.git.command(ctx, c)
	if err != nil {
		cancel()
		return err
	}
	stderr := &capWriter{max: maxStderr}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	var stdout io.ReadCloser
	if err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		cancel()
		cancelRun()
		return repo.git.wrap(c, cmd, stderr, err)
	}
	done := make(chan error, 1)
	go func() {
		// Reaps the writer: ends when its stdin is closed, after a
		// failed transaction, or when it is cancelled.
		err := cmd.Wait()
		if err != nil {
			err = repo.git.wrap(c, cmd, stderr, err)
		}
		done <- err
	}()
	w.c, w.stdin, w.stdout, w.stderr, w.done = c, stdin, bufio.NewReader(stdout), stderr, done
	w.cancel = func() { cancel(); cancelRun() }
	w.timer = time.AfterFunc(refWriterIdle, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.stop()
	})
	return nil
}

// fail ends the process after a failed transaction (w.mu held) and
// returns git's error for it.
func (w *refWriter) fail(cause error) error {
	_ = w.stdin.Close()
	err := <-w.done
	w.done <- err
	w.stop()
	if err != nil {
		return err
	}
	return &Error{Args: w.c.Args, Dir: w.c.Dir, ExitCode: 0, Err: cause}
}

// stop ends the process (w.mu held).
func (w *refWriter) stop() {
	if w.stdin == nil {
		return
	}
	_ = w.stdin.Close()
	<-w.done
	w.cancel()
	w.timer.Stop()
	w.stdin, w.stdout = nil, nil
}

func (w *refWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stop()
}
