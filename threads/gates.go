package threads

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Checkout gates: every loaded thread, and every fence or long operation
// of a checkout, holds the gate of the checkout it works in, keyed by the
// checkout's root (ARCHITECTURE.md "Threads, concurrency, persistence":
// the only state shared between the threads of a checkout). A gate lives
// while something holds it. The fences are [Manager.WithCheckout]'s and a
// handoff's (handoff.go); the long operations are operation.go's.

// gates is the table of the checkouts' gates. Its methods are safe for
// concurrent use; the manager may call them with its own mutex held (the
// order is Manager.mu, then gates.mu, then a gate's own).
type gates struct {
	git *gitcli.Runner // finds a cwd's work tree (nil: every cwd is its own checkout)

	mu    sync.Mutex
	byKey map[string]*gate
}

// newGates returns an empty table; git finds the work tree of a cwd.
func newGates(git *gitcli.Runner) *gates {
	return &gates{git: git, byKey: map[string]*gate{}}
}

// key is the key of the checkout holding cwd: the git work tree's root, or
// cwd itself when it is not in one.
func (gs *gates) key(ctx context.Context, cwd string) string {
	if gs.git != nil {
		if repo, err := gs.git.Discover(ctx, cwd); err == nil && !repo.Bare && repo.Root != "" {
			return filepath.Clean(repo.Root)
		}
	}
	return filepath.Clean(cwd)
}

// acquire returns the gate of key, made when none is held, counting one
// more holder; release drops it.
func (gs *gates) acquire(key string) *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.byKey[key]
	if g == nil {
		g = &gate{key: key}
		gs.byKey[key] = g
	}
	g.refs++
	return g
}

// hold counts one more holder of g, a gate held already (a fence or an
// operation taken by a loaded thread on its gate, which it outlasts when
// the thread unloads); release drops it.
func (gs *gates) hold(g *gate) {
	gs.mu.Lock()
	g.refs++
	gs.mu.Unlock()
}

// release drops a holder of g; the last one forgets the gate.
func (gs *gates) release(g *gate) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g.refs--
	if g.refs <= 0 && gs.byKey[g.key] == g {
		delete(gs.byKey, g.key)
	}
}

// lookup returns the gate of key, nil when nothing holds it.
func (gs *gates) lookup(key string) *gate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.byKey[key]
}

// gate records the turns running in one checkout and the fences held on
// it, and holds the long operation running there; a turn and a fence
// exclude each other, and an operation excludes fences and other
// operations (a turn may run beside an operation that takes no fence). It
// is the only state shared by the threads of a checkout. Each refusal
// names what holds the checkout: the thread and its turn, or the thread
// and the action ([BusyError]; issue 22 QA L8).
type gate struct {
	key  string // the checkout: the work tree's root, else the cwd
	refs int    // loaded threads, held fences and operations using it (guarded by gates.mu)

	mu     sync.Mutex
	turns  map[string]string // running turns: thread id -> turn id
	fences []holder          // the fences held, in the order taken
	op     *operation        // the long operation running (nil: none)
}

// holder is the thread holding a fence and the action it runs
// ("thread/diff/revert", "thread/handoff", a long operation's method).
type holder struct {
	thread, action string
}

// admitTurn records turn turnID of thread as running unless a fence is
// held; the error names the fence's holder.
func (g *gate) admitTurn(thread, turnID string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.fences) > 0 {
		return g.fencedLocked()
	}
	if g.turns == nil {
		g.turns = map[string]string{}
	}
	g.turns[thread] = turnID
	return nil
}

// endTurn forgets the running turn of thread.
func (g *gate) endTurn(thread string) {
	g.mu.Lock()
	delete(g.turns, thread)
	g.mu.Unlock()
}

// fence takes a fence for h unless a turn or an operation runs; the error
// names which ([BusyError]).
func (g *gate) fence(h holder) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.busyLocked(); err != nil {
		return err
	}
	g.fences = append(g.fences, h)
	return nil
}

// check reports what fence would refuse, taking nothing (a dry run).
func (g *gate) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.busyLocked()
}

// busyLocked is a *BusyError naming what runs in the checkout: a turn (the
// first thread's, by id, when several run), or an operation (g.mu held).
func (g *gate) busyLocked() error {
	if len(g.turns) > 0 {
		thread := slices.Min(slices.Collect(maps.Keys(g.turns)))
		return &BusyError{ThreadID: thread, TurnID: g.turns[thread], Checkout: g.key}
	}
	if g.op != nil {
		return g.op.refusal(g.key)
	}
	return nil
}

// fencedLocked is the *BusyError naming the first fence's holder, which
// matches errFenced (g.mu held, a fence held).
func (g *gate) fencedLocked() error {
	h := g.fences[0]
	return fencedError{&BusyError{ThreadID: h.thread, Action: h.action, Checkout: g.key}}
}

// errFenced matches a turn start refused because a checkout fence is held
// (its inputs wait in the queue for the fence's release).
var errFenced = errors.New("threads: a checkout fence is held")

// fencedError is the *BusyError of a start refused by a fence; it matches
// errFenced.
type fencedError struct{ *BusyError }

func (e fencedError) Unwrap() error        { return e.BusyError }
func (e fencedError) Is(target error) bool { return target == errFenced }

// unfence releases a fence h holds; it reports whether none is left.
func (g *gate) unfence(h holder) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.Index(g.fences, h); i >= 0 {
		g.fences = slices.Delete(g.fences, i, i+1)
	}
	return len(g.fences) == 0
}
