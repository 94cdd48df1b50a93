package threads

import (
	"errors"
	"fmt"
)

// Sentinel errors of the thread manager. Errors returned by the Manager wrap
// them (match with errors.Is); the wiring maps them to the wire codes named
// below.
var (
	// ErrThreadNotFound: no thread with that id, or the method needs a
	// loaded thread and it is not loaded (wire code threadNotFound).
	ErrThreadNotFound = errors.New("thread not found")
	// ErrTurnInProgress: the thread (or, for checkout work, any thread in
	// the same checkout) is running a turn, or a checkout fence keeps a
	// turn from starting (wire code turnInProgress).
	ErrTurnInProgress = errors.New("a turn is in progress")
	// ErrTurnMismatch: expectedTurnId / turnId is not the running turn, or
	// no turn runs (wire code turnMismatch).
	ErrTurnMismatch = errors.New("turn mismatch")
	// ErrThreadNotArchived: thread/delete or thread/unarchive of a thread
	// that is not archived (wire code threadNotArchived).
	ErrThreadNotArchived = errors.New("thread not archived")
	// ErrShuttingDown: the manager's Shutdown began, so the thread a
	// request needs has unloaded (or is unloading) and nothing loads any
	// more (wire code shuttingDown; spec, "Ownership, unloading, and
	// shutdown": work that cannot finish returns shuttingDown). A request
	// that meets an unloaded thread after Shutdown gets it, never
	// ErrThreadNotFound.
	ErrShuttingDown = errors.New("the server is shutting down")
)

func threadNotFound(id string) error {
	return fmt.Errorf("%w: %s", ErrThreadNotFound, id)
}

// BusyError is ErrTurnInProgress naming the work that holds a checkout: a
// thread of it (other than the one asking) with a turn running (TurnID),
// running an action that holds the checkout (Action: a method, as
// "thread/diff/revert", "thread/handoff" or "git/commit"; Interruptible
// when turn/interrupt of that thread stops it, as it does the long git
// operations), or with inputs waiting to start (Queued, with no turn
// running). Checkout is the checkout's root. The wire error is
// turnInProgress with data {threadId, turnId?, action?, queued?,
// checkout} (protocol.TurnInProgressData).
type BusyError struct {
	ThreadID      string
	TurnID        string
	Action        string
	Interruptible bool
	Queued        int
	Checkout      string
}

func (e *BusyError) Error() string {
	switch {
	case e.TurnID != "":
		return fmt.Sprintf("%v: thread %s is running turn %s in %s; wait for it to end or interrupt it", ErrTurnInProgress, e.ThreadID, e.TurnID, e.Checkout)
	case e.Action != "":
		stop := ""
		if e.Interruptible {
			stop = ", or stop it with turn/interrupt of that thread"
		}
		return fmt.Sprintf("%v: %s is running in the checkout %s (thread %s); wait for it to end%s", ErrTurnInProgress, e.Action, e.Checkout, e.ThreadID, stop)
	}
	return fmt.Sprintf("%v: thread %s has %d queued %s waiting to start in %s; remove them or let them run first",
		ErrTurnInProgress, e.ThreadID, e.Queued, map[bool]string{true: "input", false: "inputs"}[e.Queued == 1], e.Checkout)
}

// Unwrap returns ErrTurnInProgress.
func (e *BusyError) Unwrap() error { return ErrTurnInProgress }

// ModelError is a model request of [Manager.Ask] that failed: Provider
// and Model name the thread's model, Kind is the failure's kind as a
// failed turn reports it (agent.ErrorKind: auth, rateLimit,
// contextOverflow, network, provider, other), Err the provider's error,
// whose words the message carries. The wire error is externalFailure with
// data {reason: "modelFailed", provider, kind} (issue 22 QA, L4: it was a
// bare internal).
type ModelError struct {
	Provider, Model, Kind string
	Err                   error
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("the model %s/%s failed (%s): %v", e.Provider, e.Model, e.Kind, e.Err)
}

// Unwrap returns Err.
func (e *ModelError) Unwrap() error { return e.Err }

// NoKeyError refuses a turn (or an Ask) of a thread whose model's provider
// has no API key: neither its environment variable nor a stored credential
// (account/login/start) gives one. The wire error is authRequired with
// data {provider}.
type NoKeyError struct {
	Provider string
}

func (e *NoKeyError) Error() string {
	return fmt.Sprintf("provider %s has no API key: set its environment variable or call account/login/start {provider: %q, apiKey}", e.Provider, e.Provider)
}
