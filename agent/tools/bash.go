package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/knightcode/knightcode/agent"
)

// Bash is the bash tool: {command, timeout?, run_in_background?}. It runs `bash -c command` in the
// cwd with stdin from /dev/null, stdout and stderr combined, in a new session
// (so its own process group, without a controlling terminal: nothing can stop
// on a terminal prompt). timeout is in seconds (none by default).
//
// When the call's ctx is cancelled (an interrupt) or the timeout passes, the
// whole process group gets SIGTERM and, if anything of it is still alive after
// KillGrace, SIGKILL; Execute returns once the group is gone. When the command
// exits by itself, processes it left in the background keep running, but their
// output is no longer read (the pipe closes 100 ms after the command exits);
// the group is then recorded in Groups, whose owner stops it later.
//
// With run_in_background (and Groups set), the command starts the same way
// but the call returns at once with the id of the background shell it became
// in Groups.Shells() (details.backgroundShellId); timeout still applies,
// counted from the start, and an interrupt of the turn does not stop it.
//
// The result is the output's last MaxLines lines within MaxBytes, with a note
// when cut; the exit code is in details.exitCode and, when non-zero, in the
// text. A non-zero exit, a timeout, an interrupt and a failure to start are
// error results.
type Bash struct {
	cwd string
	// KillGrace is how long the process group has to exit after SIGTERM
	// before it gets SIGKILL (NewBash sets 2s).
	KillGrace time.Duration
	// Groups, when not nil, receives the process group of every command
	// that ended while members of its group were still alive (processes it
	// started in the background), and every command's environment carries
	// its token (EnvProcTag), by which it finds the processes that left the
	// group. nil leaves them running untracked.
	Groups *ProcessGroups
}

// NewBash returns the bash tool working in cwd.
func NewBash(cwd string) *Bash { return &Bash{cwd: cwd, KillGrace: 2 * time.Second} }

// drainDelay is how long output is still read after the command exited, for
// background processes that hold the pipe.
const drainDelay = 100 * time.Millisecond

var bashSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "Bash command to run in the working directory"},
    "timeout": {"type": "number", "exclusiveMinimum": 0, "description": "Timeout in seconds (optional, no timeout by default)"},
    "run_in_background": {"type": "boolean", "description": "Run the command in the background and return at once with its shell id; you are told when it ends"}
  },
  "required": ["command"],
  "additionalProperties": false
}`)

// Definition describes bash to the model.
func (t *Bash) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{
		Name: BashName,
		Description: fmt.Sprintf("Run a bash command in the working directory and return its combined "+
			"stdout and stderr. Output is cut to its last %d lines or %dKB. There is no input: commands "+
			"must not wait for the terminal. A non-zero exit code is reported as an error. With "+
			"run_in_background the command keeps running after the call returns (for servers, watchers, "+
			"long builds); you are told how it ended, with the end of its output.",
			MaxLines, MaxBytes/1024),
		Parameters: bashSchema,
	}
}

type bashArgs struct {
	Command         string   `json:"command"`
	Timeout         *float64 `json:"timeout"`
	RunInBackground bool     `json:"run_in_background"`
}

// Execute runs the command (see Bash).
func (t *Bash) Execute(ctx context.Context, raw json.RawMessage) agent.ToolResult {
	var args bashArgs
	if err := decodeArgs(BashName, raw, &args); err != nil {
		return agent.ErrorResult(err.Error())
	}
	if args.Command == "" {
		return agent.ErrorResult(`bash: "command" is empty`)
	}
	runCtx := ctx
	var timeout time.Duration
	if args.Timeout != nil {
		secs := *args.Timeout
		if !(secs > 0) || secs > math.MaxInt64/float64(time.Second) {
			return agent.ErrorResult(fmt.Sprintf("bash: timeout must be a positive number of seconds, got %v", secs))
		}
		timeout = time.Duration(secs * float64(time.Second))
	}
	if args.RunInBackground {
		return t.background(args.Command, timeout)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, waitErr, err := t.run(runCtx, args.Command)
	if err != nil {
		return agent.ErrorResult("bash: " + err.Error())
	}
	text, truncated := out.render()
	res := agent.ToolResult{}
	res.Details.Truncated = truncated
	switch {
	case ctx.Err() != nil:
		text = withNote(text, "Command aborted: the turn was interrupted.")
		res.IsError = true
	case runCtx.Err() != nil:
		text = withNote(text, fmt.Sprintf("Command timed out after %s seconds.", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)))
		res.IsError = true
	default:
		code, killed, exited := exitStatus(waitErr)
		switch {
		case waitErr == nil:
			code := 0
			res.Details.ExitCode = &code
		case exited && code >= 0:
			res.Details.ExitCode = &code
			text = withNote(text, fmt.Sprintf("Command exited with code %d.", code))
			res.IsError = true
		case exited:
			text = withNote(text, fmt.Sprintf("Command was killed: %s.", killed))
			res.IsError = true
		default:
			text = withNote(text, "Command failed: "+waitErr.Error())
			res.IsError = true
		}
	}
	if text == "" {
		text = "(no output)"
	}
	res.Content = []agent.ContentBlock{agent.TextBlock(text)}
	return res
}

// background starts command as a background shell (see Bash).
func (t *Bash) background(command string, timeout time.Duration) agent.ToolResult {
	if t.Groups == nil {
		return agent.ErrorResult("bash: run_in_background is not available here")
	}
	id, err := t.Groups.Shells().startBackground(t, command, timeout)
	if err != nil {
		return agent.ErrorResult("bash: " + err.Error())
	}
	res := textResult(fmt.Sprintf("Command running in the background as shell %s. You will be told when it ends, "+
		"with the end of its output.", id))
	res.Details.BackgroundShellID = id
	return res
}

// run starts the command and waits for it, killing its process group when ctx
// is done. waitErr is the command's exit (as from exec.Cmd.Wait); err means it
// could not start.
func (t *Bash) run(ctx context.Context, command string) (out *tailBuffer, waitErr, err error) {
	out = newTailBuffer(MaxBytes)
	rc, err := t.start(command, out)
	if err != nil {
		return nil, nil, err
	}
	return out, rc.wait(ctx, t.KillGrace), nil
}

// commandExit is the wait error of a command run under a reaper that did
// not exit with code 0: Code is its exit code, or -1 when a signal ended it;
// Signal then says which as os.ProcessState does ("signal: killed").
type commandExit struct {
	Code   int
	Signal string
}

func (e *commandExit) Error() string {
	if e.Code >= 0 {
		return "exit status " + strconv.Itoa(e.Code)
	}
	return e.Signal
}

// isCommandExit reports whether err says how a command ended (an
// *exec.ExitError or a *commandExit).
func isCommandExit(err error) bool {
	_, _, ok := exitStatus(err)
	return ok
}

// exitStatus returns how the command whose wait error is waitErr ended:
// its exit code, or -1 and the signal's words ("signal: killed") when a
// signal ended it; exited is false when waitErr does not say (nil, or a
// failure to wait).
func exitStatus(waitErr error) (code int, killed string, exited bool) {
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		if exit.ExitCode() >= 0 {
			return exit.ExitCode(), "", true
		}
		return -1, exit.ProcessState.String(), true
	}
	var ce *commandExit
	if errors.As(waitErr, &ce) {
		return ce.Code, ce.Signal, true
	}
	return 0, "", false
}

// runningCmd is a started bash command whose output is being copied.
type runningCmd struct {
	pgid     int
	pr       *os.File
	groups   *ProcessGroups
	readDone chan struct{}
	waitDone chan error
}

// start starts `bash -c command` in t's cwd in a process group of its own
// (recording it as running in t.Groups), its combined output copied to out.
func (t *Bash) start(command string, out io.Writer) (*runningCmd, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bash, "-c", command)
	cmd.Dir = t.cwd
	cmd.Stdout, cmd.Stderr = pw, pw
	startGroup(cmd)
	var st started
	if t.Groups != nil {
		cmd.Env = t.Groups.env(os.Environ())
		st, err = t.Groups.start(cmd)
	} else if err = cmd.Start(); err == nil {
		st = started{pgid: cmd.Process.Pid, wait: cmd.Wait}
	}
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	rc := &runningCmd{
		pgid: st.pgid, // Setsid makes the command its group's leader
		pr:   pr, groups: t.Groups,
		readDone: make(chan struct{}), waitDone: make(chan error, 1),
	}
	go func() { // stopped by EOF or the read deadline set by wait
		defer close(rc.readDone)
		io.Copy(out, pr)
	}()
	go func() { rc.waitDone <- st.wait() }() // ends when the leader exits (killGroup makes sure it does)
	return rc, nil
}

// wait waits for the command, killing its process group (grace between
// SIGTERM and SIGKILL) when ctx is done, reads what is left of its output
// for drainDelay and hands the group to the ProcessGroups; it returns the
// command's exit (as from exec.Cmd.Wait).
func (rc *runningCmd) wait(ctx context.Context, grace time.Duration) (waitErr error) {
	defer rc.pr.Close()
	select {
	case waitErr = <-rc.waitDone:
	case <-ctx.Done():
		waitErr = killGroup(rc.pgid, rc.waitDone, grace)
	}
	if rc.pr.SetReadDeadline(time.Now().Add(drainDelay)) != nil {
		rc.pr.Close() // no deadlines on this platform: stop reading now
	}
	<-rc.readDone
	if rc.groups != nil {
		rc.groups.add(rc.pgid) // kept only while a member is alive
	}
	return waitErr
}

// killGroup ends process group pgid: SIGTERM, then SIGKILL for whatever is
// still alive after grace. It returns the leader's exit (from waitDone) once
// the leader is reaped and no member of the group is alive.
func killGroup(pgid int, waitDone <-chan error, grace time.Duration) error {
	signalGroup(pgid, sigTerm)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	var waitErr error
	exited := false
	for !exited || groupAlive(pgid) {
		select {
		case waitErr = <-waitDone:
			exited = true
		case <-tick.C:
		case <-deadline.C:
			signalGroup(pgid, sigKill)
			if !exited {
				waitErr = <-waitDone
			}
			// SIGKILL cannot be caught; wait (bounded) until the kernel has ended them all.
			for i := 0; i < 500 && groupAlive(pgid); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			return waitErr
		}
	}
	return waitErr
}

// tailBuffer keeps the last bytes written to it and counts all of them.
type tailBuffer struct {
	max   int
	buf   []byte // the last bytes written, at most 2*max+1 before trimming
	total int64  // bytes written
	lines int64  // newlines written
	last  byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write keeps p's tail; it never fails.
func (b *tailBuffer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b.total += int64(len(p))
	b.lines += int64(bytes.Count(p, []byte("\n")))
	b.last = p[len(p)-1]
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.max+1 {
		// Keep one byte more than max, to tell whether the kept tail starts a line.
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max-1:]...)
	}
	return len(p), nil
}

// render returns the output's last MaxLines lines within max bytes (a partial
// first line is dropped unless it is the only line), with a note when that is
// not the whole output, and whether it was cut; "" for no output.
func (b *tailBuffer) render() (string, bool) {
	if b.total == 0 {
		return "", false
	}
	totalLines := b.lines
	if b.last != '\n' {
		totalLines++
	}
	tail := b.buf
	lineCut := false
	if len(tail) > b.max {
		startsLine := tail[len(tail)-b.max-1] == '\n'
		tail = tail[len(tail)-b.max:]
		if !startsLine {
			if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
				tail = tail[i+1:]
			} else {
				lineCut = true
			}
		}
	}
	// Keep at most MaxLines lines.
	shown := int64(bytes.Count(tail, []byte("\n")))
	if tail[len(tail)-1] != '\n' {
		shown++
	}
	for shown > MaxLines {
		tail = tail[bytes.IndexByte(tail, '\n')+1:]
		shown--
	}
	text := string(tail)
	if int64(len(tail)) == b.total {
		return text, false
	}
	if lineCut {
		return withNote("…"+text, fmt.Sprintf("[Output cut: showing the last %s of its last line (%d lines, %s in all).]",
			formatKB(int64(len(tail))), totalLines, formatKB(b.total))), true
	}
	return withNote(text, fmt.Sprintf("[Output cut: showing lines %d-%d of %d (the last %d lines within %dKB).]",
		totalLines-shown+1, totalLines, totalLines, shown, b.max/1024)), true
}
