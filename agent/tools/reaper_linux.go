package tools

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaperSupported reports that commands can run under a reaper here.
const reaperSupported = true

// reaperExe is the executable a reaper runs: the server's own, whatever
// has become of its file since it started (ProcessGroups.reaperExe, when
// set, replaces it in tests).
const reaperExe = "/proc/self/exe"

// reaperStartWait bounds how long start waits for a reaper to report that
// its command started.
const reaperStartWait = 30 * time.Second

// RunReaper is the reaper process of one bash command (ProcessGroups.Reaper):
// main calls it, and exits with what it returns, when the executable's first
// argument is ReaperArg. args are the command's executable and then its argv
// ([bash, bash, -c, command]).
//
// It makes itself a child subreaper (prctl(PR_SET_CHILD_SUBREAPER)), starts
// the command in a new session with its own stdin, stdout, stderr, working
// directory and environment, then lets go of those three files (they become
// /dev/null, so the command's output ends when the command and what it left
// close it), and reports on file descriptor 3, a socket to the server:
// "pid <pid>\n" once the command started (or "error <message>\n"), then
// "exit <wait status>\n" once it exited. It reaps every child it has: the
// command and, being a subreaper, every orphaned descendant of it, however
// that left the command's session or cleared its environment. It returns 0
// once it has no child left, so while it runs, every live descendant of the
// command is a descendant of it.
//
// When the server's end of the socket closes (the server exited, in
// whatever way), it ends every descendant: SIGTERM (and SIGCONT), then
// SIGKILL for what is still alive after 2 s, repeated until none is left
// ([stopDescendants]). SIGINT, SIGTERM, SIGHUP and
// SIGQUIT are caught and do nothing (a terminal's signals are not for it;
// the command starts with them at their defaults). SIGKILL ends it, and its
// children then go to the server.
//
// It returns 2 when it was not started by a server (no socket as fd 3, no
// command), 1 when it could not become a subreaper or start the command.
func RunReaper(args []string) int {
	var st unix.Stat_t
	if len(args) < 2 || unix.Fstat(3, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		fmt.Fprintf(os.Stderr, "knightcode: %s is run by the app-server only\n", ReaperArg)
		return 2
	}
	unix.CloseOnExec(3)
	ctl := os.NewFile(3, "knightcode reaper control")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() { // drains the caught signals until the process exits
		for range sigs {
		}
	}()
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintf(ctl, "error cannot become a child subreaper: %v\n", err)
		return 1
	}
	pid, err := syscall.ForkExec(args[0], args[1:], &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		fmt.Fprintf(ctl, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	if err := releaseStdio(); err != nil {
		fmt.Fprintf(ctl, "error %s\n", err)
		syscall.Kill(-pid, syscall.SIGKILL)
	} else {
		fmt.Fprintf(ctl, "pid %d\n", pid)
	}
	go func() { // ends when the server's end closes; the process exits once every child is reaped
		io.Copy(io.Discard, ctl)
		stopDescendants(os.Getpid(), 2*time.Second)
	}()
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: no child, so no descendant, is left
			return 0
		}
		if wpid == pid {
			fmt.Fprintf(ctl, "exit %d\n", uint32(ws))
		}
	}
}

// releaseStdio makes the reaper's stdin, stdout and stderr /dev/null.
func releaseStdio() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	for fd := range 3 {
		if err := unix.Dup3(int(null.Fd()), fd, 0); err != nil {
			return err
		}
	}
	return nil
}

// stopDescendants ends every descendant of process root, in rounds until
// none is left: SIGTERM and SIGCONT to each as it is found, then, from
// grace on, SIGKILL to every one found at each look (every stopPoll; after
// killWait, every second: only a process stuck in the kernel outlasts
// SIGKILL), so that one started between two looks is ended at the next
// (issue 22 QA L2). It returns once none is alive.
func stopDescendants(root int, grace time.Duration) {
	termed := map[procID]bool{}
	start := time.Now()
	for {
		found := descendants([]int{root})
		if len(found) == 0 {
			return
		}
		since := time.Since(start)
		for _, p := range found {
			switch k := (procID{p.pid, p.start}); {
			case since >= grace:
				p.signal(sigKill)
			case !termed[k]:
				termed[k] = true
				p.signal(sigTerm)
				p.signal(sigCont)
			}
			p.close()
		}
		if since >= grace+killWait {
			time.Sleep(time.Second)
		} else {
			time.Sleep(stopPoll)
		}
	}
}

// errNoReaper wraps startReaped's error when the reaper's executable could
// not be started (no /proc, or a policy forbidding it): start then runs the
// command directly.
var errNoReaper = errors.New("cannot start a reaper")

// startReaped starts cmd (bash, with its Dir, Env, Stdout and Stderr set)
// under a reaper (RunReaper), recording the reaper as running and as one of
// g's reapers until it has exited. It returns the command once the reaper
// reported that it started: its process group is its pid, and wait returns
// how it exited (nil for code 0, else a *commandExit), or an error when the
// reaper ended without saying (its process group is then killed). Errors:
// errNoReaper (wrapping os/exec's error) when the reaper could not start;
// the reaper's report when it could not start the command. A
// goroutine started here waits for the reaper and ends once it has exited.
func (g *ProcessGroups) startReaped(cmd *exec.Cmd) (started, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return started{}, fmt.Errorf("reaper control socket: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return started{}, fmt.Errorf("reaper control socket: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "reaper control")
	theirs := os.NewFile(uintptr(fds[1]), "reaper control")
	exe := reaperExe
	if g.reaperExe != "" {
		exe = g.reaperExe
	}
	rcmd := exec.Command(exe, append([]string{ReaperArg, cmd.Path}, cmd.Args...)...)
	rcmd.Dir, rcmd.Env = cmd.Dir, cmd.Env
	rcmd.Stdin, rcmd.Stdout, rcmd.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	rcmd.ExtraFiles = []*os.File{theirs}
	startGroup(rcmd)
	r := &reaper{done: make(chan struct{})}
	g.mu.Lock()
	err = rcmd.Start()
	if err == nil {
		r.pid = rcmd.Process.Pid
		g.running[r.pid] = struct{}{}
		g.reapers[r.pid] = r
	}
	g.mu.Unlock()
	theirs.Close()
	if err != nil {
		ours.Close()
		return started{}, fmt.Errorf("%w: %w", errNoReaper, err)
	}
	statusRead := make(chan struct{})
	go func() { // ends once the reaper has exited
		rcmd.Wait() // a reaper's own exit says nothing about its command
		<-statusRead
		ours.Close()
		g.mu.Lock()
		delete(g.running, r.pid)
		delete(g.reapers, r.pid)
		g.mu.Unlock()
		close(r.done)
	}()
	lines := bufio.NewReader(ours)
	ours.SetReadDeadline(time.Now().Add(reaperStartWait))
	pid, err := readReaperStart(lines)
	ours.SetReadDeadline(time.Time{})
	if err != nil {
		close(statusRead)
		syscall.Kill(r.pid, syscall.SIGKILL)
		<-r.done
		return started{}, err
	}
	status := make(chan error, 1)
	go func() { // ends when the reaper reports the command's exit or ends
		defer close(statusRead)
		err := readReaperExit(lines)
		if err != nil && !isCommandExit(err) {
			signalGroup(pid, sigKill)
		}
		status <- err
	}()
	return started{pgid: pid, wait: func() error { return <-status }}, nil
}

// readReaperStart reads the reaper's first report: the command's pid.
func readReaperStart(r *bufio.Reader) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("the command's reaper process ended before starting it: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, errors.New(msg)
	}
	if s, ok := strings.CutPrefix(line, "pid "); ok {
		if pid, err := strconv.Atoi(s); err == nil && pid > 0 {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("the command's reaper process reported %q", line)
}

// readReaperExit reads the reaper's report of how the command exited: nil
// for code 0, a *commandExit otherwise, another error when the reaper ended
// without reporting (it was killed).
func readReaperExit(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("the command's reaper process ended before the command: %w", err)
	}
	s, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "exit ")
	n, err := strconv.ParseUint(s, 10, 32)
	if !ok || err != nil {
		return fmt.Errorf("the command's reaper process reported %q", line)
	}
	ws := syscall.WaitStatus(n)
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
		return nil
	case ws.Exited():
		return &commandExit{Code: ws.ExitStatus()}
	}
	words := "signal: " + ws.Signal().String()
	if ws.CoreDump() {
		words += " (core dumped)"
	}
	return &commandExit{Code: -1, Signal: words}
}

// resumeReapersLocked sends SIGCONT to g's reapers, so that a stopped one
// reaps and exits (g.mu held).
func (g *ProcessGroups) resumeReapersLocked() {
	for pid := range g.reapers {
		syscall.Kill(pid, syscall.SIGCONT)
	}
}
