//go:build unix

package gitcli

import (
	"io"
	"syscall"
	"time"
)

// wake makes a read blocked on p return: at once after a normal exit, at
// the latest linger from now after a stopped call. The read end of an
// os.Pipe is non-blocking and takes deadlines here. Where it does not
// take one, it is closed linger from now instead.
func (p *childPipe) wake(stopped bool, linger time.Duration) {
	at := time.Now()
	if stopped {
		at = at.Add(linger)
	}
	if err := p.f.SetReadDeadline(at); err != nil {
		time.AfterFunc(linger, p.close)
	}
}

// readBuffered reads what the pipe holds now without waiting for more:
// io.EOF once it is empty or closed, even when a writer still holds it.
func (p *childPipe) readBuffered(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0, io.EOF
	}
	var (
		n    int
		rerr error
	)
	if err := rc.Control(func(fd uintptr) {
		for {
			n, rerr = syscall.Read(int(fd), b)
			if rerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, io.EOF // closed
	}
	switch {
	case rerr == syscall.EAGAIN:
		return 0, io.EOF // empty: git has exited, the rest is its leftovers'
	case rerr != nil:
		return 0, rerr
	case n <= 0:
		return 0, io.EOF
	}
	return n, nil
}
