//go:build windows

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Setup gives cmd, once started, a console process group of its own, and
// makes its context's cancellation (exec.CommandContext) kill it with its
// descendants. Call it before cmd.Start.
func Setup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return Kill(cmd.Process.Pid)
	}
}

// Kill terminates the process pid and every live descendant of it (exit
// code 1). Errors: the first failure to snapshot or terminate;
// windows.ERROR_NOT_FOUND when none of them is alive.
func Kill(pid int) error {
	pids, err := Tree(pid)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return windows.ERROR_NOT_FOUND
	}
	var first error
	for _, p := range pids {
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(p))
		if err != nil {
			continue // exited meanwhile
		}
		if err := windows.TerminateProcess(h, 1); err != nil && first == nil {
			first = err
		}
		windows.CloseHandle(h)
	}
	return first
}

// Interrupt sends CTRL_BREAK_EVENT to the console process group of pid (a
// command started with Setup): Windows' nearest equivalent of SIGTERM.
func Interrupt(pid int) error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
}

// Tree returns pid (when it is alive) and the pids of its live descendants,
// from one process snapshot.
func Tree(pid int) ([]int, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]uint32{}
	alive := map[uint32]bool{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		alive[e.ProcessID] = true
		if e.ProcessID != e.ParentProcessID {
			children[e.ParentProcessID] = append(children[e.ParentProcessID], e.ProcessID)
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, err
	}
	var out []int
	seen := map[uint32]bool{}
	queue := []uint32{uint32(pid)}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		if alive[p] {
			out = append(out, int(p))
		}
		queue = append(queue, children[p]...)
	}
	return out, nil
}
