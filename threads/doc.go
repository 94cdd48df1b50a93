// Package threads is knightcode's thread manager: it loads threads from
// their session files (package session), owns each loaded thread with one
// goroutine, runs turns through the agent loop with the thread's model and
// tools, persists what happens as session entries, captures the checkout
// before and after every turn (package diffscope) and reports everything as
// the notifications of the app-server protocol (spec: "Threads and turns",
// "Subscriptions and replacement", "Ownership, unloading, and shutdown";
// ARCHITECTURE.md "Threads, concurrency, persistence").
//
// Concurrency: every loaded thread has one owner goroutine; a request for it
// is a message (a closure) run on that goroutine, so turn starts, settings
// changes and checkout fences ([Manager.WithCheckout]) are admitted one at a
// time without shared locks. A running turn runs the agent loop on a
// goroutine of its own and posts its results back to the owner. The only
// state shared between threads is the checkout gate (turns running and
// fences held per checkout) and the manager's table of loaded threads.
//
// Worktree threads (worktree.go, archive.go, environment.go; spec
// "Workspaces, diffs and git", "Ownership, unloading, and shutdown"): a
// thread/start in {mode: "worktree"} runs the thread in a managed worktree
// made by package workspace (worktrees.root and worktrees.keep come from
// <agentDir>/settings.json, read through config.Store and Values), recorded in
// its session header (session.Workspace); an environment's setup script
// runs there when the project is trusted (package config's trust store);
// past worktrees.keep the least recently used worktrees are pruned, never
// one a loaded thread runs in. Archive moves a transcript to
// <session dir>/archive/ after snapshotting and deleting its worktree,
// unarchive moves it back, delete removes an archived transcript, and
// thread/worktree/restore rebuilds a deleted worktree and loads its thread.
// thread/fork (fork.go) copies a branch into a new session, in a new
// worktree for a worktree thread.
//
// Large values (payload.go, bound.go; spec "History, listings, and large
// values"): nothing sent is cut. Items over 64 KiB as JSON and history
// pages over 1 MiB send values as payload references to a per-process
// spool that payload/read reads in chunks.
//
// The package builds wire values of rpc/protocol and sends them through the
// small [Notifier] and [Subscriber] interfaces; it must not know JSON-RPC,
// connections or the rpc package. Its errors are typed ([ErrThreadNotFound],
// [ErrTurnInProgress], [ErrTurnMismatch], [ErrThreadNotArchived],
// session's, diffscope's, workspace's and config's errors);
// the wiring maps them to wire codes. Parameter errors are
// *coreerr.ParamError values naming the field; the package never builds a
// wire error.
package threads
