package rpc

import (
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/workspace"
)

// Core is what the handlers call: the thread manager (the thread engine,
// and the narrow checkout API the diff, git and file families use:
// Checkout, WithCheckout, LastTurn, BranchBase), and the core packages the
// handlers call directly with plain Go values. The wiring in
// cmd/knightcode builds every field; none may be nil.
type Core struct {
	// Threads keeps the loaded threads and fences their checkouts.
	Threads *threads.Manager
	// Models is the process's one provider registry, the one Threads'
	// turns use (model/list, account/*).
	Models *provider.Registry
	// Git runs git for the handlers' own discovery (an empty lastTurn read).
	Git *gitcli.Runner
	// Differ reads scopes and reverts, stages and unstages hunks.
	Differ *diffscope.Differ
	// Workspace resolves projects and reads and saves their environments.
	Workspace *workspace.Manager
	// Trust is the server-owned project trust store.
	Trust *config.TrustStore
}
