package gitcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/knightcode/knightcode/internal/procgroup"
)

// Supervisor starts the git calls that run the user's hooks ([Cmd.Hooks]:
// commit, push, a switch's post-checkout hook) under a process of its own
// that outlives nothing: whatever the hooks leave running (a background
// job, a daemon that left git's session) stays its descendant and is ended
// when the server exits in whatever way, SIGKILL included (issue 22 QA,
// M4: such processes were re-parented to init and kept running). The
// server's command reaper (agent/tools.ProcessGroups.Supervise) is one;
// the Runner starts git itself without one.
type Supervisor interface {
	// Supervise starts cmd (Path, Args, Dir and Env set; Stdin, Stdout
	// and Stderr files or nil; SysProcAttr and Cancel not used) as the
	// leader of a new session and process group, and returns its pid
	// (the group's id) and wait, which returns once cmd has exited: its
	// exit code (-1 when a signal ended it), or an error when that cannot
	// be known. An error matching errors.ErrUnsupported means there is no
	// supervision here; the Runner then starts git itself.
	Supervise(cmd *exec.Cmd) (pid int, wait func() (code int, err error), err error)
}

// WithSupervisor returns a Runner like r whose calls that run the user's
// hooks start under s ([Supervisor]); r is not changed. Their deadline
// and turn/interrupt stop them as they stop any hook call: SIGTERM to
// git's process group, SIGKILL hookKillGrace later.
func (r *Runner) WithSupervisor(s Supervisor) *Runner {
	c := *r
	c.supervisor = s
	return &c
}

// exitStatus is how a started git ended: code is its exit code (-1 when
// it did not exit normally), err nil for code 0.
type exitStatus struct {
	code int
	err  error
}

// process is a started git: wait returns once it has exited.
type process struct {
	wait func() exitStatus
}

// ExitCodeError is the cause (in [Error.Err]) of a supervised git call
// that exited with a non-zero Code (-1: a signal ended it), where os/exec
// would give an *exec.ExitError.
type ExitCodeError struct {
	Code int
}

func (e *ExitCodeError) Error() string {
	if e.Code < 0 {
		return "git was ended by a signal"
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// start starts cmd, the git call c: under r's supervisor for a call that
// runs hooks (its context's end stops git's group: procgroup.Stop), else
// with os/exec (its context's end as procgroup.Setup or SetupGraceful
// says). The caller keeps its goroutine on its OS thread until wait
// returns (git's parent-death signal, setDeathSignal).
func (r *Runner) start(ctx context.Context, cmd *exec.Cmd, c Cmd) (process, error) {
	if c.Hooks && r.supervisor != nil {
		pid, wait, err := r.supervisor.Supervise(cmd)
		if err == nil {
			stop := context.AfterFunc(ctx, func() { _ = procgroup.Stop(pid, hookKillGrace) })
			return process{wait: func() exitStatus {
				code, err := wait()
				stop()
				if err == nil && code != 0 {
					err = &ExitCodeError{Code: code}
				}
				return exitStatus{code: code, err: err}
			}}, nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return process{}, err
		}
	}
	if err := cmd.Start(); err != nil {
		return process{}, err
	}
	return process{wait: func() exitStatus {
		err := cmd.Wait()
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return exitStatus{code: code, err: err}
	}}, nil
}

// childPipes are a git call's stdin, stdout and stderr (pipes.go).
type childPipes struct {
	stdout, stderr *childPipe
	stdin          *stdinPipe // nil: no reader to copy (none, or a file given to git itself)
	child          []*os.File // the child's ends, closed here once it started
}

// pipes makes cmd's stdin (in: nil for none, a file handed to git as it
// is, else copied through a pipe), stdout and stderr.
func (r *Runner) pipes(cmd *exec.Cmd, in io.Reader) (p *childPipes, err error) {
	p = &childPipes{}
	defer func() {
		if err != nil {
			p.started(false, nil)
			p.close()
		}
	}()
	var w *os.File
	if p.stdout, w, err = newChildPipe(); err != nil {
		return p, err
	}
	p.child = append(p.child, w)
	cmd.Stdout = w
	if p.stderr, w, err = newChildPipe(); err != nil {
		return p, err
	}
	p.child = append(p.child, w)
	cmd.Stderr = w
	switch in := in.(type) {
	case nil:
	case *os.File:
		cmd.Stdin = in
	default:
		var r *os.File
		if r, p.stdin, err = newStdinPipe(); err != nil {
			return p, err
		}
		p.child = append(p.child, r)
		cmd.Stdin = r
	}
	return p, nil
}

// started closes the child's ends of the pipes and, when git started
// (ok), begins copying in to its stdin.
func (p *childPipes) started(ok bool, in io.Reader) {
	for _, f := range p.child {
		_ = f.Close()
	}
	p.child = nil
	if ok && p.stdin != nil {
		p.stdin.start(in)
	}
}

// settle ends the reads of stdout and stderr once git has exited
// ([childPipe.settle]) and closes its stdin.
func (p *childPipes) settle(stopped bool, linger time.Duration) {
	if p.stdout != nil {
		p.stdout.settle(stopped, linger)
	}
	if p.stderr != nil {
		p.stderr.settle(stopped, linger)
	}
	if p.stdin != nil {
		p.stdin.close()
	}
}

// close releases every pipe.
func (p *childPipes) close() {
	for _, cp := range []*childPipe{p.stdout, p.stderr} {
		if cp != nil {
			cp.close()
		}
	}
	if p.stdin != nil {
		p.stdin.close()
	}
}
