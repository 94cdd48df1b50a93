package threads

import "github.com/knightcode/knightcode/rpc/protocol"

// The answers of the thread manager's requests: plain Go structs of the
// wire views (protocol.Thread, Turn, Warning, ...), which are also the
// payloads of notifications. Each has the fields of the wire result that
// carries it, in its order (package rpc converts one to the other), so a
// history page is bounded against the response it travels in (bound.go).

// Opened is a thread that [Manager.Start] or [Manager.Fork] loaded: the
// thread (idle, its caller subscribed), the warnings of the load (the
// server's startup warnings first) and its UI state (statuses, title,
// working message, widgets: empty until extensions set them).
type Opened struct {
	Thread   protocol.Thread
	Warnings []protocol.Warning
	UI       protocol.ThreadUI
}

// Resumed is a thread [Manager.Resume] loaded (or found loaded) and
// subscribed the caller to, with one history page and send-time snapshots
// taken on the thread's goroutine together with the subscription: Turns
// are the page's turns, oldest first (bounded: see bound.go), NextCursor
// continues with older ones ("" at the start of the branch), RunningTurn
// the running turn with its items so far (nil when idle), Queue the
// steering and queued inputs, Usage the branch's token usage, UI the UI
// state.
type Resumed struct {
	Thread      protocol.Thread
	Warnings    []protocol.Warning
	Turns       []protocol.Turn
	NextCursor  string
	RunningTurn *protocol.Turn
	Queue       protocol.QueueSnapshot
	Usage       protocol.TokenUsage
	UI          protocol.ThreadUI
}

// Page is one history page of a thread as [Manager.Read] reads it: the
// thread, its turns oldest first (bounded: see bound.go) and the cursor
// of the older ones ("" at the start of the branch).
type Page struct {
	Thread     protocol.Thread
	Turns      []protocol.Turn
	NextCursor string
}

// Listing is one page of [Manager.List]: saved threads newest first, each
// with its current status, and the cursor of the next page ("" on the
// last).
type Listing struct {
	Threads    []protocol.ThreadSummary
	NextCursor string
}

// HandedOff is the outcome of [Manager.Handoff]: the thread where it now
// runs (a dry run's: where it runs now), the branch the main checkout is
// on after a handoff to it (or would be, for a dry run; "" otherwise) and
// the warnings (recovered handoffs, settings, moved paths no turn of the
// thread changed, the setup of a new worktree, pruning).
type HandedOff struct {
	Thread   protocol.Thread
	Branch   string
	Warnings []protocol.Warning
}
