package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// EnvProcTag is the environment variable every bash command of a thread
// carries (when its tool has a ProcessGroups): "<token>", random and unique
// to the ProcessGroups, so its descendants can be found however they left
// the command's process group.
const EnvProcTag = "KNIGHTCODE_PROCTAG"

// ProcessGroups tracks the processes that bash commands leave running, so
// that their owner can stop them: a thread stops them when it unloads or
// shuts down, before its worktree can be removed (spec,
// thread/backgroundShells: background commands "end with the session, so a
// thread that is not loaded has none"). Use one per thread, made by
// NewProcessGroups, and give it to the tools with WithProcessGroups. Its
// methods are safe for concurrent use.
//
// Three mechanisms find the processes (issues 15 and 22):
//
//   - Reapers (Linux, when Reaper is set). Each command runs under a reaper
//     process of its own (RunReaper): a child subreaper that starts the
//     command and lives until no descendant of the command is left, since
//     every orphaned descendant becomes its child, however it left the
//     command's session or cleared its environment. StopAll stops every
//     descendant of g's reapers, found through /proc's parent links. This is
//     the sound one: the others are hints.
//   - Process groups. A group is its command's session and process group
//     (bash runs each command with setsid, so the group id is the command's
//     pid); groups with a live member when their command exits are tracked.
//     Groups that ended by themselves are dropped whenever a group is added
//     and by Tracked and StopAll; the kernel does not reuse a group id while
//     any member of the group exists, so until a group has ended its id names
//     only that group.
//   - The token. Every command's environment holds EnvProcTag=<token>, which
//     children inherit; on Linux StopAll also stops every live process of the
//     server's user whose /proc/<pid>/environ holds it, and the process
//     groups they lead. When the server is a child subreaper
//     (BecomeSubreaper), orphans of commands run without a reaper become its
//     children; ProcessGroups keeps a pidfd of each process it found by token
//     and reaps it once it has exited as the server's child (waitid on the
//     pidfd, or wait4 on that pid; never wait(-1), and never a process
//     os/exec is waiting for: a command or a reaper), when a command ends, in
//     Tracked and in StopAll.
//
// When the server exits in any way, SIGKILL included, each reaper ends what
// it holds (RunReaper).
//
// Limits: a process a command hands to something outside its tree
// (systemd-run, at, a D-Bus activated service) is not its descendant and is
// not stopped. A command that kills its reaper with SIGKILL (its parent:
// `kill -9 $PPID`) hands the processes the reaper held to the server, where
// only the token finds them. Without a reaper (on other systems, or Reaper unset) a descendant
// that clears or replaces its environment (env -i, a setuid program) and
// leaves its command's process group is not found; an orphan that becomes
// the server's child and exits before a scan has seen it alive stays a
// zombie until the server exits. On systems other than Linux only process
// groups are stopped (on Windows: a command and its descendants while their
// parent chain is intact): escaped processes keep running.
type ProcessGroups struct {
	// Grace is how long StopAll gives the processes to exit after SIGTERM
	// before it sends SIGKILL (NewProcessGroups sets 2 s).
	Grace time.Duration
	// Reaper makes every command run under a reaper process: the server's
	// own executable (/proc/self/exe) run with ReaperArg, whose main must
	// then call RunReaper (Linux; ignored elsewhere). Set it before the first
	// command; false runs the commands directly, as does a reaper whose
	// executable cannot be started.
	Reaper bool

	token     string // EnvProcTag's value, 32 hex digits
	reaperExe string // the reapers' executable when not the server's own (tests)

	shells *BackgroundShells

	mu      sync.Mutex
	groups  map[int]struct{} // tracked process group ids
	running map[int]struct{} // pids of commands and reapers os/exec started and has not reaped
	watched map[int]*proc    // processes found by token, until reaped or gone
	reapers map[int]*reaper  // reapers by pid, until they have exited
}

// ReaperArg is the first argument with which the server runs its own
// executable as a command's reaper (ProcessGroups.Reaper, RunReaper).
const ReaperArg = "__knightcode-reaper"

// reaper is a reaper process ProcessGroups started: pid is its pid; done is
// closed once it has exited and been waited for.
type reaper struct {
	pid  int
	done chan struct{}
}

// started is a command ProcessGroups.start started: pgid is its process
// group id (its pid); wait waits until it has exited and returns how, as
// exec.Cmd.Wait does (nil for code 0, an *exec.ExitError or a *commandExit
// otherwise).
type started struct {
	pgid int
	wait func() error
}

// NewProcessGroups returns an empty tracker with a 2 s Grace and a new
// random token.
func NewProcessGroups() *ProcessGroups {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	g := &ProcessGroups{
		Grace:   2 * time.Second,
		token:   hex.EncodeToString(b[:]),
		groups:  map[int]struct{}{},
		running: map[int]struct{}{},
		watched: map[int]*proc{},
		reapers: map[int]*reaper{},
	}
	g.shells = &BackgroundShells{groups: g}
	return g
}

// Shells returns the registry of the commands bash ran in the background
// (run_in_background) with these process groups; StopAll stops them.
func (g *ProcessGroups) Shells() *BackgroundShells { return g.shells }

// track tracks process group pgid, a running background shell's, so that
// StopAll stops it.
func (g *ProcessGroups) track(pgid int) {
	g.mu.Lock()
	g.groups[pgid] = struct{}{}
	g.mu.Unlock()
}

// Token returns the value of EnvProcTag in the commands' environments.
func (g *ProcessGroups) Token() string { return g.token }

// env returns base without any EnvProcTag entry, plus EnvProcTag=token.
func (g *ProcessGroups) env(base []string) []string {
	out := make([]string, 0, len(base)+1)
	for _, kv := range base {
		if !strings.HasPrefix(kv, EnvProcTag+"=") {
			out = append(out, kv)
		}
	}
	return append(out, EnvProcTag+"="+g.token)
}

// start starts cmd (bash, with its Dir, Env, Stdout, Stderr and process
// group set) under a reaper when Reaper is set and reapers are supported
// (startReaped), else, or when the reaper's executable cannot be started,
// directly, recording what os/exec waits for as running (under g.mu, with
// the start), so that no scan takes it for an orphan to reap.
func (g *ProcessGroups) start(cmd *exec.Cmd) (started, error) {
	if g.Reaper && reaperSupported {
		st, err := g.startReaped(cmd)
		if !errors.Is(err, errNoReaper) {
			return st, err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return started{}, err
	}
	g.running[cmd.Process.Pid] = struct{}{}
	return started{pgid: cmd.Process.Pid, wait: cmd.Wait}, nil
}

// Supervise starts cmd (its Path, Args, Dir, Env and files as stdin,
// stdout and stderr; its SysProcAttr and Cancel are not used) under a
// reaper of its own (Reaper), as the leader of a new session and process
// group, for a caller that runs other programs than bash commands: the
// git calls that run the user's hooks (gitcli.Supervisor, issue 22 QA
// M4). Whatever cmd leaves running stays the reaper's descendant: StopAll
// ends it, and the reaper does when the server exits in whatever way. It
// returns cmd's pid and wait, which returns once cmd has exited: its exit
// code (-1 when a signal ended it), or an error when the reaper ended
// without saying. Errors: errors.ErrUnsupported when there are no reapers
// (Reaper unset, or not Linux) or the reaper's executable cannot be
// started; the reaper's report when it could not start cmd.
func (g *ProcessGroups) Supervise(cmd *exec.Cmd) (pid int, wait func() (code int, err error), err error) {
	if !g.Reaper || !reaperSupported {
		return 0, nil, fmt.Errorf("tools: no reaper here: %w", errors.ErrUnsupported)
	}
	st, err := g.startReaped(cmd)
	if errors.Is(err, errNoReaper) {
		return 0, nil, fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	if err != nil {
		return 0, nil, err
	}
	return st.pgid, func() (int, error) {
		err := st.wait()
		if err == nil {
			return 0, nil
		}
		if code, _, ok := exitStatus(err); ok {
			return code, nil
		}
		return -1, err
	}, nil
}

// stopPoll is how often StopAll checks whether what it signalled has ended;
// killWait bounds how long it waits for the kernel to end them after
// SIGKILL (which cannot be caught: only a process stuck in the kernel, as on
// a hung network file system, outlasts it).
const (
	stopPoll = 10 * time.Millisecond
	killWait = 5 * time.Second
)

// add is called once the command whose pid is pgid has exited: it tracks
// process group pgid when one of its members is still alive, drops the
// tracked groups that have ended, and, for commands run without a reaper
// (whose orphans become the server's children), watches the processes the
// token finds and reaps those that have exited as the server's children.
func (g *ProcessGroups) add(pgid int) {
	alive := groupAlive(pgid)
	var found []*proc
	if !g.Reaper || !reaperSupported {
		found = scanTagged(g.token)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, pgid)
	g.pruneLocked()
	if alive {
		g.groups[pgid] = struct{}{}
	}
	g.watchLocked(found)
	g.reapLocked()
}

// watchLocked keeps the processes of found that it does not hold yet, to
// reap them once they have exited as the server's children (they become its
// children when their parent exits, the server being a subreaper), and closes
// the other handles (g.mu held).
func (g *ProcessGroups) watchLocked(found []*proc) {
	found = slices.DeleteFunc(found, func(p *proc) bool {
		_, waited := g.running[p.pid] // os/exec's to reap
		if waited {
			p.close()
		}
		return waited
	})
	if !isSubreaper() {
		// Orphans go to init (or another subreaper): the server's only
		// children are the commands, which os/exec reaps.
		for _, p := range found {
			p.close()
		}
		return
	}
	for _, p := range found {
		if old, ok := g.watched[p.pid]; ok {
			if old.start == p.start {
				p.close()
				continue
			}
			old.close() // that pid's earlier process is gone
		}
		g.watched[p.pid] = p
	}
}

// reapLocked reaps the watched processes that have exited as the server's
// children, and forgets those that are gone otherwise; commands os/exec
// waits for are left to it (g.mu held).
func (g *ProcessGroups) reapLocked() {
	for pid, p := range g.watched {
		if _, isCmd := g.running[pid]; isCmd {
			continue
		}
		if p.reap() {
			p.close()
			delete(g.watched, pid)
		}
	}
}

// reapWait bounds how long StopAll waits, once every process it found has
// ended, for those to become the server's children and be reaped.
const reapWait = time.Second

// awaitReaped reaps the watched processes (never a running command) until
// none is left or limit has passed, every stopPoll. A process killed with
// its parent may have ended while that parent was still exiting: a parent
// whose memory is gone no longer shows the token, yet it hands its
// children to the server (a subreaper) only as its exit completes, so a
// single reap then misses them and they would stay the server's zombies
// (seen under load: a trap's sleep).
func (g *ProcessGroups) awaitReaped(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		g.mu.Lock()
		g.reapLocked()
		left := 0
		for pid := range g.watched {
			if _, isCmd := g.running[pid]; !isCmd {
				left++
			}
		}
		g.mu.Unlock()
		if left == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(stopPoll)
	}
}

// releaseLocked reaps what it can of the watched processes and forgets the
// rest but the running commands (g.mu held). StopAll calls it once every
// process it found has ended: their parents are gone, so whatever is not the
// server's child by now never will be.
func (g *ProcessGroups) releaseLocked() {
	g.reapLocked()
	for pid, p := range g.watched {
		if _, isCmd := g.running[pid]; !isCmd {
			p.close()
			delete(g.watched, pid)
		}
	}
}

// pruneLocked drops the tracked groups without a live member (g.mu held).
func (g *ProcessGroups) pruneLocked() {
	for pgid := range g.groups {
		if !groupAlive(pgid) {
			delete(g.groups, pgid)
		}
	}
}

// Tracked returns the ids of the tracked process groups that still have a
// live member, in increasing order (nil for none); those that ended are
// dropped. Processes found only by the token are not listed.
func (g *ProcessGroups) Tracked() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pruneLocked()
	g.reapLocked()
	if len(g.groups) == 0 {
		return nil
	}
	ids := make([]int, 0, len(g.groups))
	for pgid := range g.groups {
		ids = append(ids, pgid)
	}
	slices.Sort(ids)
	return ids
}

// StopAll stops every tracked process group (the running background
// shells' among them, which end stopped: Shells), every descendant of the
// reapers (Reaper) and every live process that carries the token (with the
// process groups those lead, except the server's own), and forgets the
// groups, in rounds until nothing is left: they get SIGTERM (and SIGCONT,
// so a stopped process sees it), each process once, those that appear
// meanwhile as they are found; whatever is still alive after Grace, or as
// soon as ctx ends, gets SIGKILL, again at every look (every 10 ms), so
// that a process started between two looks, by one that was signalled
// after it forked, is stopped at the next (issue 22 QA L2: it survived).
// It returns once all have ended and the reapers, left without a child,
// have exited, or at most 5 s after the first SIGKILL (whether or not ctx
// has ended: that wait is short), having reaped the orphans that are the
// server's children. Groups that had already ended are dropped without a
// signal. A group added while StopAll runs is tracked, not stopped.
//
// Errors: *StopError naming the groups and processes that were still alive
// at the end (with ctx's error when ctx had ended); nil otherwise.
func (g *ProcessGroups) StopAll(ctx context.Context) error {
	g.shells.sessionEnding()
	defer func() {
		g.awaitReaped(reapWait)
		g.mu.Lock()
		g.releaseLocked()
		g.mu.Unlock()
	}()
	g.mu.Lock()
	var live []int
	for pgid := range g.groups {
		if groupAlive(pgid) {
			live = append(live, pgid)
		}
	}
	clear(g.groups)
	g.mu.Unlock()
	slices.Sort(live)
	termed := map[procID]bool{}
	if busy, _ := g.signal(live, sigTerm, termed); !busy {
		return nil
	}
	live, pids := g.waitGone(ctx, live, g.Grace, sigTerm, termed)
	if len(live) == 0 && len(pids) == 0 {
		return nil
	}
	g.signal(live, sigKill, nil)
	// SIGKILL cannot be caught: wait (bounded) for the kernel to end them,
	// even when ctx has ended.
	live, pids = g.waitGone(context.WithoutCancel(ctx), live, killWait, sigKill, nil)
	if len(live) == 0 && len(pids) == 0 {
		return nil
	}
	return &StopError{PGIDs: live, PIDs: pids, Err: ctx.Err()}
}

// procID names one process: its pid and start time (a later process with
// the same pid is another).
type procID struct {
	pid   int
	start uint64
}

// find returns the live processes StopAll ends, each once: those that
// carry the token and the descendants of g's reapers, never a reaper
// (which exits by itself once it has no child left). It also returns the
// pids of the reapers that have not exited yet, in increasing order, having
// sent them SIGCONT, so that a stopped one goes on reaping.
func (g *ProcessGroups) find() (found []*proc, reapers []int) {
	g.mu.Lock()
	roots := g.reaperRootsLocked()
	g.mu.Unlock()
	found = append(scanTagged(g.token), descendants(roots)...)
	seen := map[int]bool{}
	g.mu.Lock()
	defer g.mu.Unlock()
	found = slices.DeleteFunc(found, func(p *proc) bool {
		_, isReaper := g.reapers[p.pid]
		drop := isReaper || seen[p.pid]
		seen[p.pid] = true
		if drop {
			p.close()
		}
		return drop
	})
	g.resumeReapersLocked()
	return found, g.reaperRootsLocked()
}

// reaperRootsLocked returns the pids of g's reapers that have not exited,
// in increasing order (g.mu held).
func (g *ProcessGroups) reaperRootsLocked() []int {
	var pids []int
	for pid := range g.reapers {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// signal is one round of StopAll: it sends sig to the process groups
// pgids and to every process find returns, with the groups those lead
// (never the server's own group), adding SIGCONT after SIGTERM. With
// sigTerm a process is asked once: termed records those asked, and one
// found there again is left alone. It watches the processes it finds and
// reaps those that have exited. It reports whether it found anything to
// signal or a reaper to wait for, and the pids of the processes it found
// (in increasing order), then the reapers'.
func (g *ProcessGroups) signal(pgids []int, sig groupSignal, termed map[procID]bool) (busy bool, pids []int) {
	found, reapers := g.find()
	sigs := []groupSignal{sig}
	if sig == sigTerm {
		sigs = append(sigs, sigCont)
	}
	asked := func(p *proc) bool { return sig == sigTerm && termed[procID{p.pid, p.start}] }
	for _, s := range sigs {
		for _, pgid := range pgids {
			signalGroup(pgid, s)
		}
		for _, p := range found {
			if !asked(p) {
				p.signal(s)
			}
		}
	}
	for _, p := range found {
		if sig == sigTerm {
			termed[procID{p.pid, p.start}] = true
		}
		pids = append(pids, p.pid)
	}
	slices.Sort(pids)
	pids = append(pids, reapers...)
	g.mu.Lock()
	g.watchLocked(found)
	g.reapLocked()
	g.mu.Unlock()
	return len(pgids) > 0 || len(pids) > 0, pids
}

// waitGone repeats sig's round (signal; the groups pgids get it again
// only when it is sigKill) every stopPoll until no group of pgids has a
// live member and no process or reaper is found, limit passes or ctx
// ends, and returns the groups and the pids (processes found, then
// reapers) still alive then.
func (g *ProcessGroups) waitGone(ctx context.Context, pgids []int, limit time.Duration, sig groupSignal, termed map[procID]bool) ([]int, []int) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for {
		pgids = slices.DeleteFunc(pgids, func(pgid int) bool { return !groupAlive(pgid) })
		var again []int
		if sig == sigKill {
			again = pgids
		}
		_, pids := g.signal(again, sig, termed)
		if len(pgids) == 0 && len(pids) == 0 {
			return nil, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return pgids, pids
		case <-ctx.Done():
			return pgids, pids
		}
	}
}

// StopError reports what StopAll could not end 5 s after SIGKILL: PGIDs (in
// increasing order) are groups that still had live members, PIDs processes
// that still carried the token or descended from a reaper (in increasing
// order), then reapers that had not exited (in increasing order). Err is ctx's
// error when ctx had ended (it cut the grace short), else nil.
type StopError struct {
	PGIDs []int
	PIDs  []int
	Err   error
}

func (e *StopError) Error() string {
	msg := fmt.Sprintf("tools: background process groups %v still running after SIGKILL", e.PGIDs)
	if len(e.PIDs) > 0 {
		msg += fmt.Sprintf(" (and processes %v of the thread)", e.PIDs)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err, so errors.Is(err, context.DeadlineExceeded) works.
func (e *StopError) Unwrap() error { return e.Err }
