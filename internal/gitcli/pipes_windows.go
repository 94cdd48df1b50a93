//go:build windows

package gitcli

import (
	"errors"
	"io"
	"os"
	"time"
)

// wake closes the read end linger after git exited, as os/exec's WaitDelay
// would: pipes take no deadlines on Windows, so a process git left behind
// holding the write end holds the read for that long.
func (p *childPipe) wake(stopped bool, linger time.Duration) {
	time.AfterFunc(linger, p.close)
}

// readBuffered reads until every writer closed the pipe or wake closed
// it.
func (p *childPipe) readBuffered(b []byte) (int, error) {
	n, err := p.f.Read(b)
	if errors.Is(err, os.ErrClosed) {
		return n, io.EOF
	}
	return n, err
}
