package gitcli

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// A git child's stdin, stdout and stderr are pipes the Runner makes itself
// (os.Pipe) and hands to git as files, rather than os/exec's pipes: os/exec
// waits, in Wait, until every process holding the write end of a pipe has
// closed it, and a process git leaves behind holds them (a hook's
// background job: `sleep 120 &` in pre-commit or pre-push inherits git's
// stdout and stderr). So the call would last as long as that process, or
// fail with exec.ErrWaitDelay although git succeeded (issue 22 QA, M4).
// Here the reads end when git has exited: what git wrote before it exited
// is in the pipe and is read to the last byte; what its leftovers write
// afterwards is not waited for.

// childPipe is the read end of the pipe a git child writes its stdout or
// stderr to. Reads block as on any pipe while git runs. Once git has
// exited (settle):
//   - after a normal exit, reads return what the pipe holds and then
//     io.EOF as soon as it is empty, even while a process git left behind
//     holds the write end;
//   - after the call was stopped (its context ended), reads go on until
//     every holder closed the write end (the stopped hook's group was given
//     hookKillGrace to clean up and then killed), for at most linger after
//     the exit.
type childPipe struct {
	f       *os.File
	settled chan struct{} // closed by settle
	once    sync.Once
	drain   bool // set by settle, before settled is closed
}

// newChildPipe makes a pipe: r is ours to read, w goes to the child (and
// is closed here once it started).
func newChildPipe() (r *childPipe, w *os.File, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return &childPipe{f: pr, settled: make(chan struct{})}, pw, nil
}

// settle is called once git has exited: stopped reports that the call's
// context had ended (the call was stopped), linger bounds the reads then.
func (p *childPipe) settle(stopped bool, linger time.Duration) {
	p.once.Do(func() {
		p.drain = !stopped
		p.wake(stopped, linger)
		close(p.settled)
	})
}

// Read reads the pipe as childPipe says.
func (p *childPipe) Read(b []byte) (int, error) {
	select {
	case <-p.settled:
		return p.readSettled(b)
	default:
	}
	n, err := p.f.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
		// settle woke the read (or is waking it).
		<-p.settled
		if n > 0 {
			return n, nil
		}
		return p.readSettled(b)
	}
	return n, err
}

// readSettled reads after settle.
func (p *childPipe) readSettled(b []byte) (int, error) {
	if p.drain {
		return p.readBuffered(b)
	}
	n, err := p.f.Read(b)
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
		return n, io.EOF
	}
	return n, err
}

// close releases the read end.
func (p *childPipe) close() { _ = p.f.Close() }

// stdinPipe feeds in to a git child through a pipe: the child gets r, a
// goroutine copies in to the write end and closes it. close ends the copy
// (a write blocked on a child that stopped reading, or left a process
// holding the read end, returns); a reader in that never returns is the
// caller's.
type stdinPipe struct {
	w *os.File
}

// newStdinPipe makes the pipe; start begins the copy once the child
// started (r closed in the parent).
func newStdinPipe() (r *os.File, p *stdinPipe, err error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return pr, &stdinPipe{w: pw}, nil
}

// start copies in to the child on a goroutine of its own, which ends when
// in ends or the pipe is closed.
func (p *stdinPipe) start(in io.Reader) {
	go func() {
		_, _ = io.Copy(p.w, in)
		_ = p.w.Close()
	}()
}

// close closes the write end (the copy's next write fails).
func (p *stdinPipe) close() { _ = p.w.Close() }
