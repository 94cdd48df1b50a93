package tools

import (
	"os"
	"os/exec"
)

// Process is a program ProcessGroups.Start started: Pid is its pid (and,
// being its session's and process group's leader, its process group id).
type Process struct {
	Pid    int
	wait   func() error
	groups *ProcessGroups
}

// Start starts cmd (its Path, Args, Dir, Env and files; Env nil means the
// server's environment; its SysProcAttr is replaced) as a thread's bash
// command starts, for the other programs a thread runs on its own behalf
// (extensions' child_process, issue 25): the leader of a new session and
// process group, with EnvProcTag=<token> in its environment, under a
// reaper of its own when Reaper is set (Linux). Its process group is
// tracked from the start, so StopAll ends it while it runs, and whatever
// it leaves running is ended as a bash command's escapees are: StopAll
// finds them by reaper, group and token. Give cmd *os.File stdio (or
// none): a reaper lets go of its own, and os/exec's copying goroutines
// would wait for the reaper. Errors: os/exec's, or the reaper's report.
func (g *ProcessGroups) Start(cmd *exec.Cmd) (*Process, error) {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = g.env(cmd.Env)
	startGroup(cmd)
	st, err := g.start(cmd)
	if err != nil {
		return nil, err
	}
	g.track(st.pgid)
	return &Process{Pid: st.pgid, wait: st.wait, groups: g}, nil
}

// Wait waits until the process has exited and returns how: nil for exit
// code 0, else an error ExitStatus reads (or a failure to wait). Call it
// once.
func (p *Process) Wait() error {
	err := p.wait()
	p.groups.add(p.Pid) // tracked only while a member of its group lives
	return err
}

// ExitStatus reads how a process ended from its wait error (Process.Wait,
// exec.Cmd.Wait): its exit code, or -1 and the signal's words ("signal:
// killed") when a signal ended it; exited is false when waitErr does not
// say (nil, or a failure to wait).
func ExitStatus(waitErr error) (code int, signal string, exited bool) {
	return exitStatus(waitErr)
}
