package tools

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ProcessGroups tracks the process groups of bash commands that exited while
// processes they started in the background (`npm run dev &`, `sleep 100 &`)
// were still running in their group, so that their owner can stop them: a
// thread stops its groups when it unloads or shuts down, before its worktree
// can be removed (spec, thread/backgroundShells: background commands "end
// with the session, so a thread that is not loaded has none"). Use one per
// thread, made by NewProcessGroups, and give it to the tools with
// WithProcessGroups. Its methods are safe for concurrent use.
//
// A group is its command's session and process group (bash runs each
// command with setsid, so the group id is the command's pid). A process that
// leaves the group (setsid or setpgid of its own: a daemon, a nested job
// control shell) is not tracked. Groups that ended by themselves are dropped
// whenever a group is added and by Tracked and StopAll; the kernel does not
// reuse a group id while any member of the group exists, so until a group
// has ended its id names only that group.
type ProcessGroups struct {
	// Grace is how long StopAll gives the groups to exit after SIGTERM
	// before it sends SIGKILL (NewProcessGroups sets 2 s).
	Grace time.Duration

	mu     sync.Mutex
	groups map[int]struct{} // tracked process group ids
}

// NewProcessGroups returns an empty tracker with a 2 s Grace.
func NewProcessGroups() *ProcessGroups {
	return &ProcessGroups{Grace: 2 * time.Second, groups: map[int]struct{}{}}
}

// stopPoll is how often StopAll checks whether the groups it signalled have
// ended; killWait bounds how long it waits for the kernel to end them after
// SIGKILL (which cannot be caught: only a process stuck in the kernel, as on
// a hung network file system, outlasts it).
const (
	stopPoll = 10 * time.Millisecond
	killWait = 5 * time.Second
)

// add tracks process group pgid when one of its members is still alive, and
// drops the tracked groups that have ended.
func (g *ProcessGroups) add(pgid int) {
	alive := groupAlive(pgid)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pruneLocked()
	if alive {
		g.groups[pgid] = struct{}{}
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
// dropped.
func (g *ProcessGroups) Tracked() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pruneLocked()
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

// StopAll stops every tracked process group and forgets them all: the live
// ones get SIGTERM (and SIGCONT, so a stopped process sees it), and whatever
// is still alive after Grace, or as soon as ctx ends, gets SIGKILL. It
// returns once every group has ended, or at most 5 s after the SIGKILL
// (whether or not ctx has ended: that wait is short). Groups that
// had already ended are dropped without a signal. A group added while
// StopAll runs is tracked, not stopped.
//
// Errors: *StopError naming the groups that still had live members at the
// end (with ctx's error when ctx had ended); nil otherwise.
func (g *ProcessGroups) StopAll(ctx context.Context) error {
	g.mu.Lock()
	var live []int
	for pgid := range g.groups {
		if groupAlive(pgid) {
			live = append(live, pgid)
		}
	}
	clear(g.groups)
	g.mu.Unlock()
	if len(live) == 0 {
		return nil
	}
	slices.Sort(live)
	for _, pgid := range live {
		signalGroup(pgid, sigTerm)
		signalGroup(pgid, sigCont)
	}
	if live = waitGroupsGone(ctx, live, g.Grace); len(live) == 0 {
		return nil
	}
	for _, pgid := range live {
		signalGroup(pgid, sigKill)
	}
	// SIGKILL cannot be caught: wait (bounded) for the kernel to end them,
	// even when ctx has ended.
	if live = waitGroupsGone(context.WithoutCancel(ctx), live, killWait); len(live) == 0 {
		return nil
	}
	return &StopError{PGIDs: live, Err: ctx.Err()}
}

// waitGroupsGone waits until no group of pgids has a live member, limit
// passes or ctx ends, and returns the groups still alive then.
func waitGroupsGone(ctx context.Context, pgids []int, limit time.Duration) []int {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for {
		pgids = slices.DeleteFunc(pgids, func(pgid int) bool { return !groupAlive(pgid) })
		if len(pgids) == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return pgids
		case <-ctx.Done():
			return pgids
		}
	}
}

// StopError reports process groups that StopAll could not end: PGIDs (in
// increasing order) still had live members 5 s after SIGKILL. Err is ctx's
// error when ctx had ended (it cut the grace short), else nil.
type StopError struct {
	PGIDs []int
	Err   error
}

func (e *StopError) Error() string {
	msg := fmt.Sprintf("tools: background process groups %v still running after SIGKILL", e.PGIDs)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err, so errors.Is(err, context.DeadlineExceeded) works.
func (e *StopError) Unwrap() error { return e.Err }
