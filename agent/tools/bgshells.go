package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
	"unicode/utf8"
)

// ShellStatus is a background shell's status (spec,
// thread/backgroundShells/list): running, completed, failed, stopped or
// timed_out.
type ShellStatus string

// The background shell statuses.
const (
	ShellRunning   ShellStatus = "running"
	ShellCompleted ShellStatus = "completed" // exited with code 0
	ShellFailed    ShellStatus = "failed"    // a non-zero exit code, or killed by a signal (Error)
	ShellStopped   ShellStatus = "stopped"   // stopped by the user, or by the end of the session
	ShellTimedOut  ShellStatus = "timed_out" // its timeout passed
)

// Background shell limits.
const (
	// MaxEndedShells is how many ended background shells a thread keeps
	// (the oldest go first).
	MaxEndedShells = 50
	// NoticeTailLines and NoticeTailBytes bound ShellInfo.OutputTail, the
	// end of the output the model is told when a command ends.
	NoticeTailLines = 20
	NoticeTailBytes = 4 * 1024
)

// ErrUnknownShell is returned for a background shell id the registry does
// not know (never started, or dropped among the oldest ended).
var ErrUnknownShell = errors.New("tools: unknown background shell id")

// ShellInfo is a snapshot of one background shell. StartedAt and EndedAt are
// Unix milliseconds (EndedAt 0 while running). ExitCode is set when the
// command exited by itself with a code; Error says why it failed or was
// stopped without one. OutputTail (set only in the end event given to
// BackgroundShells.OnChange) is the output's last NoticeTailLines lines
// within NoticeTailBytes.
type ShellInfo struct {
	ID         string
	Command    string
	Cwd        string
	Status     ShellStatus
	StartedAt  int64
	EndedAt    int64
	ExitCode   *int
	Error      string
	OutputTail string
}

// ShellEvent is what BackgroundShells.OnChange receives: a shell started
// (Ended false) or ended. ByUser says an ended shell was stopped by Stop;
// SessionEnded that it was stopped because its session ended
// (ProcessGroups.StopAll).
type ShellEvent struct {
	Shell        ShellInfo
	Ended        bool
	ByUser       bool
	SessionEnded bool
}

// BackgroundShells is a thread's registry of the commands bash ran with
// run_in_background (spec, thread/backgroundShells/*): the running ones and
// the last MaxEndedShells that ended, each with the last MaxLines lines or
// MaxBytes of its output (terminal escapes kept), kept after it ended. It
// belongs to a ProcessGroups (ProcessGroups.Shells), whose StopAll ends the
// running ones with the session. Its methods are safe for concurrent use.
type BackgroundShells struct {
	groups *ProcessGroups

	mu       sync.Mutex
	shells   []*bgShell // oldest first
	onChange func(ShellEvent)
	ending   bool // StopAll has run: the session is ending
}

// bgShell is one background command.
type bgShell struct {
	info     ShellInfo // Status stays running until the goroutine ends it
	out      *ringBuffer
	cancel   context.CancelFunc // stops it (SIGTERM, then SIGKILL)
	stopping bool               // Stop asked
	timedOut bool
	done     chan struct{} // closed once it has ended
}

// SetOnChange makes f receive an event whenever a background shell starts
// or ends, on the goroutine that started or ended it, never under the
// registry's lock (f may call List and Output). nil stops the events.
func (s *BackgroundShells) SetOnChange(f func(ShellEvent)) {
	s.mu.Lock()
	s.onChange = f
	s.mu.Unlock()
}

// List returns the shells, oldest first.
func (s *BackgroundShells) List() []ShellInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ShellInfo, len(s.shells))
	for i, sh := range s.shells {
		out[i] = sh.info
	}
	return out
}

// Running returns how many shells are running.
func (s *BackgroundShells) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sh := range s.shells {
		if sh.info.Status == ShellRunning {
			n++
		}
	}
	return n
}

// Output returns the end of shell id's output: its last MaxLines lines
// within MaxBytes, terminal escapes kept. Errors: ErrUnknownShell.
func (s *BackgroundShells) Output(id string) (string, error) {
	s.mu.Lock()
	sh := s.findLocked(id)
	s.mu.Unlock()
	if sh == nil {
		return "", ErrUnknownShell
	}
	return sh.out.tail(MaxLines, MaxBytes), nil
}

// Stop stops running shell id as the user: its process group gets SIGTERM
// and, after the bash tool's KillGrace, SIGKILL. It reports false when the
// shell had already ended or was already stopping; it stays running until
// it has exited (spec: "A command asked to stop stays running until it
// exits"). Errors: ErrUnknownShell.
func (s *BackgroundShells) Stop(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.findLocked(id)
	if sh == nil {
		return false, ErrUnknownShell
	}
	if sh.info.Status != ShellRunning || sh.stopping || s.ending {
		return false, nil
	}
	sh.stopping = true
	sh.cancel()
	return true, nil
}

// Wait waits until shell id has ended or ctx is done. Errors:
// ErrUnknownShell; ctx's error.
func (s *BackgroundShells) Wait(ctx context.Context, id string) error {
	s.mu.Lock()
	sh := s.findLocked(id)
	s.mu.Unlock()
	if sh == nil {
		return ErrUnknownShell
	}
	select {
	case <-sh.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *BackgroundShells) findLocked(id string) *bgShell {
	for _, sh := range s.shells {
		if sh.info.ID == id {
			return sh
		}
	}
	return nil
}

// sessionEnding marks the shells' session as ending (StopAll): the shells
// that end from now on end stopped, SessionEnded, and no Stop is taken.
func (s *BackgroundShells) sessionEnding() {
	s.mu.Lock()
	s.ending = true
	s.mu.Unlock()
}

// emit sends e to the OnChange function, if any.
func (s *BackgroundShells) emit(e ShellEvent) {
	s.mu.Lock()
	f := s.onChange
	s.mu.Unlock()
	if f != nil {
		f(e)
	}
}

// newShellID returns 8 random hex digits.
func newShellID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// startBackground starts command with bash t (t.Groups not nil) as a
// background shell, with timeout when positive, and returns its id at once.
// Its process group is tracked in the ProcessGroups from the start, so
// StopAll stops it. Errors: the command could not start; the session is
// ending.
func (s *BackgroundShells) startBackground(t *Bash, command string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
	}
	out := newRingBuffer(MaxBytes)
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		cancel()
		return "", errors.New("the thread is unloading")
	}
	id := newShellID()
	for s.findLocked(id) != nil {
		id = newShellID()
	}
	s.mu.Unlock()
	rc, err := t.start(command, out)
	if err != nil {
		cancel()
		return "", err
	}
	s.groups.track(rc.pgid)
	sh := &bgShell{
		info: ShellInfo{ID: id, Command: command, Cwd: t.cwd, Status: ShellRunning, StartedAt: time.Now().UnixMilli()},
		out:  out, cancel: cancel, done: make(chan struct{}),
	}
	s.mu.Lock()
	s.shells = append(s.shells, sh)
	started := sh.info
	s.mu.Unlock()
	s.emit(ShellEvent{Shell: started})
	go s.wait(sh, rc, ctx, t.KillGrace)
	return id, nil
}

// wait waits for sh's command, then records how it ended, drops the oldest
// ended shells past MaxEndedShells and sends the end event.
func (s *BackgroundShells) wait(sh *bgShell, rc *runningCmd, ctx context.Context, grace time.Duration) {
	waitErr := rc.wait(ctx, grace)
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	sh.cancel()
	s.mu.Lock()
	info := &sh.info
	info.EndedAt = time.Now().UnixMilli()
	code, killed, exited := exitStatus(waitErr)
	ev := ShellEvent{Ended: true}
	switch {
	case s.ending:
		info.Status, info.Error = ShellStopped, "the session ended"
		ev.SessionEnded = true
	case sh.stopping:
		info.Status, info.Error = ShellStopped, "stopped by the user"
		ev.ByUser = true
	case timedOut:
		info.Status, info.Error = ShellTimedOut, "timed out"
	case waitErr == nil:
		code := 0
		info.Status, info.ExitCode = ShellCompleted, &code
	case exited && code >= 0:
		info.Status, info.ExitCode = ShellFailed, &code
	case exited:
		info.Status, info.Error = ShellFailed, "killed: "+killed
	default:
		info.Status, info.Error = ShellFailed, waitErr.Error()
	}
	ev.Shell = *info
	ev.Shell.OutputTail = sh.out.tail(NoticeTailLines, NoticeTailBytes)
	s.pruneLocked()
	close(sh.done)
	s.mu.Unlock()
	s.emit(ev)
}

// pruneLocked drops the oldest ended shells beyond MaxEndedShells (s.mu
// held).
func (s *BackgroundShells) pruneLocked() {
	ended := 0
	for _, sh := range s.shells {
		if sh.info.Status != ShellRunning {
			ended++
		}
	}
	kept := s.shells[:0]
	for _, sh := range s.shells {
		if sh.info.Status != ShellRunning && ended > MaxEndedShells {
			ended--
			continue
		}
		kept = append(kept, sh)
	}
	clear(s.shells[len(kept):])
	s.shells = kept
}

// ringBuffer keeps the last bytes written to it, for the output of a
// background shell; safe for concurrent use.
type ringBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte // the last bytes written: at most 2*max, at least the last max
	cut bool   // bytes were dropped from buf's start
}

func newRingBuffer(max int) *ringBuffer { return &ringBuffer{max: max} }

// Write keeps p's tail; it never fails.
func (b *ringBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(p) >= b.max {
		b.cut = b.cut || len(b.buf) > 0 || len(p) > b.max
		b.buf = append(b.buf[:0], p[len(p)-b.max:]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max {
		b.cut = true
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

// tail returns the last maxLines lines of what was written within maxBytes
// (maxBytes <= the buffer's max); a line cut by the byte bound keeps its
// end, without a split UTF-8 sequence at its start.
func (b *ringBuffer) tail(maxLines, maxBytes int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(tailOf(b.buf, b.cut, maxLines, maxBytes))
}

// tailOf returns the last maxLines lines of p within maxBytes (see
// ringBuffer.tail); cut says p is itself the end of a longer output.
func tailOf(p []byte, cut bool, maxLines, maxBytes int) []byte {
	if len(p) > maxBytes || cut {
		p = p[max(0, len(p)-maxBytes):]
		for len(p) > 0 && !utf8.RuneStart(p[0]) {
			p = p[1:]
		}
	}
	// A last line without its newline counts as a line.
	end := len(p)
	if end > 0 && p[end-1] == '\n' {
		end--
	}
	n := 0
	for i := end - 1; i >= 0; i-- {
		if p[i] == '\n' {
			n++
			if n == maxLines {
				return p[i+1:]
			}
		}
	}
	return p
}
