package tools

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process a child subreaper
// (prctl(PR_SET_CHILD_SUBREAPER), Linux 3.4): a process whose parent exits
// is re-parented to the nearest subreaper among its ancestors instead of
// init, so the descendants of bash commands that escaped with setsid or a
// double fork stay the server's children, and ProcessGroups reaps those it
// finds by token. Call it once from main, before the first command starts.
// It is process-wide and cannot be undone.
//
// Caveat: every orphaned descendant of any child of the server then becomes
// its child, also those of git (gitcli pins gc.auto=0, so git does not
// daemonize itself) and of hooks run without a reaper (the server runs
// them under one: Supervise); the ones that carry no token are not reaped
// and stay zombies until the server exits. Errors: the prctl's errno.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// isSubreaper reports whether the server is a child subreaper
// (prctl(PR_GET_CHILD_SUBREAPER)); false when that cannot be asked.
func isSubreaper() bool {
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		return false
	}
	return v != 0
}

// groupAlive reports whether process group pgid has a member that has not
// exited. kill(-pgid, 0) alone is not enough: it also succeeds for zombies
// (exited, not yet reaped), and orphans re-parented to an init that does not
// reap (as in some containers) stay zombies forever. So when kill finds the
// group, /proc decides: a member counts unless its state is Z (zombie) or X
// (dead).
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			return true
		}
	}
	return false
}

// procStat is what groupAlive and scanTagged read of /proc/<pid>/stat; start
// is the start time in clock ticks after boot, which tells a process from a
// later one with the same pid.
type procStat struct {
	state      byte
	ppid, pgrp int
	start      uint64
}

// readStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm
// may hold spaces and parentheses.
func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgrp, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, true
}

// proc is a live process found by its token or as a reaper's descendant,
// with a pidfd opened before it was recognised, so that signals and waits
// reach that very process even if its pid is reused (fd is -1 where pidfds
// are unavailable: before Linux 5.3, or under a seccomp filter; then its pid
// is used).
type proc struct {
	pid, ppid, pgid int
	start           uint64 // procStat.start
	fd              int
}

// openProc opens a pidfd of pid, then reads its stat, so that the handle
// names the process the stat describes. ok is false when pid has exited or
// is a zombie, or when start is not 0 and differs from its start time (the
// pid names a later process than the one seen).
func openProc(pid int, start uint64) (p *proc, ok bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil, false
		}
		fd = -1
	}
	st, ok := readStat(pid)
	if !ok || st.state == 'Z' || st.state == 'X' || start != 0 && st.start != start {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, false
	}
	return &proc{pid: pid, ppid: st.ppid, pgid: st.pgrp, start: st.start, fd: fd}, true
}

// scanTagged returns the live (not zombie) processes of the server's
// effective uid, other than the server itself, whose initial environment
// (/proc/<pid>/environ) holds EnvProcTag=token.
func scanTagged(token string) []*proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self, uid := os.Getpid(), uint32(os.Geteuid())
	needle := []byte("\x00" + EnvProcTag + "=" + token + "\x00")
	var out []*proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := "/proc/" + e.Name()
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
			continue
		}
		p, ok := openProc(pid, 0)
		if !ok {
			continue
		}
		env, err := os.ReadFile(dir + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), needle) {
			p.close()
			continue
		}
		out = append(out, p)
	}
	return out
}

// descendants returns the live (not zombie) descendants of the processes
// roots (not roots themselves), from one pass over /proc's parent links,
// each opened by openProc with the start time that pass read.
func descendants(roots []int) []*proc {
	if len(roots) == 0 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	starts := map[int]uint64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			children[st.ppid] = append(children[st.ppid], pid)
			starts[pid] = st.start
		}
	}
	var out []*proc
	queue := slices.Clone(roots)
	seen := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if p, ok := openProc(c, starts[c]); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// signal sends sig to p and, when p leads a process group other than the
// server's own, to that group (errors ignored: they may have exited).
func (p *proc) signal(sig groupSignal) {
	s := map[groupSignal]syscall.Signal{sigTerm: syscall.SIGTERM, sigCont: syscall.SIGCONT, sigKill: syscall.SIGKILL}[sig]
	if p.fd >= 0 {
		_ = unix.PidfdSendSignal(p.fd, s, nil, 0)
	} else {
		_ = syscall.Kill(p.pid, s)
	}
	if p.pgid == p.pid && p.pgid != syscall.Getpgrp() && p.pgid > 1 {
		_ = syscall.Kill(-p.pgid, s)
	}
}

// reap waits for p without blocking (waitid on its pidfd, else wait4 on its
// pid; never wait(-1)) and reports whether p is done with: reaped now, or
// gone without being the server's child (its parent reaped it). A process
// that is not (yet) the server's child but exists, alive or a zombie, is not
// done: it becomes the server's child when its parent exits.
func (p *proc) reap() bool {
	var err error
	if p.fd >= 0 {
		var info unix.Siginfo
		err = unix.Waitid(unix.P_PIDFD, p.fd, &info, unix.WEXITED|unix.WNOHANG, nil)
		if err == nil {
			return info.Signo != 0 // Linux zeroes info while p runs
		}
	} else {
		var ws syscall.WaitStatus
		var wpid int
		wpid, err = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		if err == nil {
			return wpid == p.pid
		}
	}
	if !errors.Is(err, syscall.ECHILD) {
		return true
	}
	st, ok := readStat(p.pid)
	return !ok || st.start != p.start
}

// close releases p's pidfd.
func (p *proc) close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}
