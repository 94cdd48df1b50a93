package rpc

import (
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/workspace"
)

// Core is what the handlers call: the thread manager, for the narrow thread
// API (Checkout, WithCheckout, LastTurn, BranchBase), and the core packages
// the handlers call directly with plain Go values. The wiring in
// cmd/knightcode builds every field; none may be nil.
type Core struct {
	// Threads keeps the loaded threads and fences their checkouts.
	Threads *threads.Manager
	// Git runs git for the handlers' own discovery (an empty lastTurn read).
	Git *gitcli.Runner
	// Differ reads scopes and reverts, stages and unstages hunks.
	Differ *diffscope.Differ
	// Workspace resolves projects and reads and saves their environments.
	Workspace *workspace.Manager
	// Trust is the server-owned project trust store.
	Trust *config.TrustStore
}
