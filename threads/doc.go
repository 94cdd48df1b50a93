// Package threads is knightcode's thread engine: it loads threads from
// their session files (package session), owns each loaded thread with one
// goroutine, runs turns through the agent loop with the thread's model and
// tools, persists what happens as session entries, captures the checkout
// before and after every turn (package diffscope) and reports everything as
// the notifications of the app-server protocol (spec: "Threads and turns",
// "Subscriptions and replacement", "Ownership, unloading, and shutdown";
// ARCHITECTURE.md "Threads, concurrency, persistence").
//
// Its API is plain Go: the exported methods of [Manager] take ids and
// option structs ([StartOptions], [Input] and [TurnOptions],
// [HandoffOptions], [ListOptions], ...) and return Go values or the wire
// views that are also notification payloads (protocol.Thread, Turn, Item,
// Warning, ...; views.go gathers the answers that carry several:
// [Opened], [Resumed], [Page], [Listing], [HandedOff]). They never take a
// method's params nor return its result: package rpc decodes and checks
// those and translates, once, on each side (internal/depcheck holds the
// engine to it). Its errors are typed: [ErrThreadNotFound],
// [ErrTurnInProgress] (and [BusyError]), [ErrTurnMismatch],
// [ErrThreadNotArchived], [ErrShuttingDown], [NoKeyError], a refused
// parameter a *coreerr.ParamError naming the field, and the errors of
// session, diffscope, workspace, handoff and config; rpc/errmap.go maps
// them to wire codes. It never builds a wire error.
//
// Concurrency: every loaded thread has one owner goroutine; a request for it
// is a message (a closure) run on that goroutine, so turn starts, settings
// changes and checkout fences ([Manager.WithCheckout]) are admitted one at a
// time without shared locks. A running turn runs the agent loop on a
// goroutine of its own and posts its results back to the owner. The only
// state shared between threads is the checkout gate (turns running, fences
// held and the long operation per checkout) and the manager's table of
// loaded threads.
//
// The Manager keeps the table of loaded threads (manager.go, load.go:
// load, unload, lookup, the id fence of archive and delete), the admission
// of turns (turn_requests.go, turn.go) and the narrow checkout API the
// diff, git and file families use (Checkout, WithCheckout, RunOperation,
// LastTurn, BranchBase). The rest are types of their own, each in files
// named after what they hold:
//   - gates (gates.go, operation.go): the checkouts' gates: fences, turns
//     and the long operations of git/commit, push, PR and branch switch;
//   - catalog (catalog.go, list.go, sidebar.go): the saved and archived
//     transcripts, thread/list's snapshots, the status of unloaded threads,
//     the sidebar rows and the broadcasts of archive, unarchive and delete;
//   - spool (spool.go, bound.go): payload references and the bounds of
//     items (64 KiB) and history pages (1 MiB) that send values as them;
//     payload/read reads them in chunks (spec "History, listings, and large
//     values": nothing sent is cut);
//   - placement (placement.go, worktree.go, claims.go, cleanup.go,
//     archive.go, handoff_run.go, recovery.go): where threads run: managed
//     worktrees made by package workspace for thread/start and thread/fork
//     (worktrees.root and worktrees.keep from the settings), environments'
//     setup and cleanup scripts when the project is trusted (config's trust
//     store), pruning past worktrees.keep (never a worktree a loaded thread
//     runs in: claims), rollback of a failed start, thread/worktree/restore
//     and worktree/delete, an archived thread's worktree, and the steps of
//     thread/handoff and the recovery of interrupted ones (package
//     handoff), whose admission and fences are the manager's (handoff.go);
//   - settings (settings_files.go, prompt.go): what the settings files say
//     at each use: retry, compaction, git deadlines, branch prefix,
//     worktrees.*, a turn's skills, prompt templates and context files.
//
// Extensions (extensions.go; package threads/ext, the seam): every thread
// load has one ext.Runner of its extensions, the built-ins of package
// threads/builtin (ask_user, background-shell notices) first, then
// Config.Extensions (the JavaScript runtime and the MCP client will come
// in through it; threads never imports them). The thread is their
// ext.Host: it dispatches input handlers and commands while a start holds
// admission (an interrupt cancels the start), before_agent_start and
// pi's agent, turn, message, context, tool_call and tool_result events in
// the turn (agent_end before the turn finishes), gives the model their
// tools, routes their dialogs as approvals are, sends their failures to
// its subscribers as warnings, and disposes the runner when it unloads.
//
// Imports: threads uses agent (the loop, providers, tools, the approval
// policy of agent/approval), threads/ext
// and threads/builtin (the extension seam and its built-ins), session,
// workspace, diffscope, handoff, config, internal/coreerr and internal/gitcli,
// and rpc/protocol for the wire views and the notification descriptors
// (protocol.TurnStarted.With(params)) it sends through the small
// [Notifier] and [Subscriber] interfaces. It must not know JSON-RPC,
// connections or the rpc package: rpc and cmd/knightcode import it, never
// the other way.
package threads
