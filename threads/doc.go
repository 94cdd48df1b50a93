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
// The package builds wire values of rpc/protocol and sends them through the
// small [Notifier] and [Subscriber] interfaces; it must not know JSON-RPC,
// connections or the rpc package. Its errors are typed ([ErrThreadNotFound],
// [ErrTurnInProgress], [ErrTurnMismatch], session's and diffscope's errors);
// the wiring maps them to wire codes. Parameter errors are returned as
// *protocol.Error values of code invalidParams naming the field.
package threads
