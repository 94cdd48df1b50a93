package threads

import (
	"context"
	"fmt"
	"path/filepath"
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

// gate counts the turns running in one checkout and the fences held on it,
// and holds the long operation running there; a turn and a fence exclude
// each other, and an operation excludes fences and other operations (a
// turn may run beside an operation that takes no fence). It is the only
// state shared by the threads of a checkout.
type gate struct {
	key  string // the checkout: the work tree's root, else the cwd
	refs int    // loaded threads, held fences and operations using it (guarded by gates.mu)

	mu     sync.Mutex
	turns  int
	fences int
	op     *operation // the long operation running (nil: none)
}

// admitTurn counts a starting turn unless a fence is held.
func (g *gate) admitTurn() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fences > 0 {
		return false
	}
	g.turns++
	return true
}

// endTurn uncounts a turn.
func (g *gate) endTurn() {
	g.mu.Lock()
	g.turns--
	g.mu.Unlock()
}

// fence takes a fence unless a turn or an operation runs; the error says
// which (ErrTurnInProgress).
func (g *gate) fence() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.busyLocked(); err != nil {
		return err
	}
	g.fences++
	return nil
}

// check reports what fence would refuse, taking nothing (a dry run).
func (g *gate) check() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.busyLocked()
}

// busyLocked is ErrTurnInProgress naming what runs in the checkout: a
// turn, or an operation (g.mu held).
func (g *gate) busyLocked() error {
	if g.turns > 0 {
		return fmt.Errorf("%w: a turn is running in the checkout %s", ErrTurnInProgress, g.key)
	}
	if g.op != nil {
		return g.op.refusal(g.key)
	}
	return nil
}

// unfence releases a fence; it reports whether none is left.
func (g *gate) unfence() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fences--
	return g.fences == 0
}
