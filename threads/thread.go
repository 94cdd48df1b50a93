package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/builtin"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// thread is one loaded thread. The fields after inbox are owned by the
// thread's goroutine (loop): only closures run there read or write them.
type thread struct {
	m    *Manager
	id   string
	cwd  string
	gate *gate
	sess *session.Session
	// forkedFrom is the parent session's header id ("" when not a fork).
	forkedFrom string
	// ws is the managed worktree the thread runs in (its header's
	// workspace), nil in the user's own checkout. Set once by register.
	ws *session.Workspace
	// home is the managed worktree a handoff to "worktree" goes back to and
	// handoffBranch the branch of the last handoff to the user's checkout
	// (session.Transcript.Placement). Set by register; then owner goroutine.
	home          *session.Workspace
	handoffBranch string
	// procs tracks the process groups its bash calls left running in the
	// background; finishUnload stops them. Set once by register.
	procs *tools.ProcessGroups
	// extRunner is the load's extensions (extensions.go; runner() reads
	// it), replaced by /reload; bg is its built-in background_shell
	// extension, set once by register and kept across reloads. extLoaded
	// is closed once the first runner is loaded; extWarnings (its load
	// warnings, then the last reload's) is read after that, on the
	// thread's goroutine. sessionReason is the session_start reason of
	// the first load (set by register's init; "" is startup).
	extRunner     atomic.Pointer[ext.Runner]
	sessionReason string
	bg            *builtin.BackgroundShells
	extLoaded     chan struct{}
	extWarnings   []protocol.Warning
	// unheard are the warnings extensions gave after loading but before
	// the thread's first subscriber (an MCP server that failed at once):
	// the result that subscribes it carries them (takeUnheard); heard is
	// set by that first subscription. Owner goroutine.
	unheard []protocol.Warning
	heard   bool
	// uiHandlers are the view event handlers its extensions registered
	// (extui.go).
	uiHandlers uiHandlers

	inbox chan func()   // unbuffered: a sent closure always runs
	done  chan struct{} // closed when the goroutine has exited

	// approval is the approval mode, read by the running turn's approval
	// hook on its own goroutine.
	approval atomic.Value // string
	// asks holds the session grants and the open server requests
	// (serverreq.go).
	asks askState

	subs      map[uint64]Subscriber
	status    protocol.ThreadStatus
	settings  threadSettings
	pending   []session.Entry // settings entries not written yet (unsaved session)
	updatedAt string          // latest entry time (ISO), else the header's
	nextItem  int             // ordinal of the next live item
	usage     protocol.TokenUsage
	turn      *turnRun // the running turn, nil when idle
	steering  []string // steers the running turn has not taken yet
	// heldSteers are steers of the running turn in its extensions' input
	// handlers, oldest first (steerIntercepted).
	heldSteers []*heldSteer
	followUp   []*queuedInput
	nextQueue  int
	extMsgs    []extMessage  // what extensions sent that the model has not got
	starting   *pendingStart // a start in its extensions' hands (extensions.go)
	// idleTimer is the thread's one idle-unload timer (nil until first
	// armed): checkIdle resets it, disarmIdle stops it. idleArmed says it
	// is running; idleStale counts its fires that disarmIdle came too late
	// to stop, whose posted idleFired must be ignored.
	idleTimer *time.Timer
	idleArmed bool
	idleStale int
	unloading bool
	exited    bool
	// replacedBy is the id of the thread a session-replacing command
	// replaced this one by (replace.go); it unloads once the command ended.
	replacedBy string
	lostMsg    string // ownership lost: the systemError message
	// lastTurn is the summary of the last turn that ended (nil before
	// one did), for the sidebar row; sidebarSent is the last row sent
	// (JSON), nil before the first (sidebar.go).
	lastTurn    *protocol.Turn
	sidebarSent []byte
	// ui is the extension UI its extensions set (extui.go).
	ui uiState
}

// threadSettings are a thread's model, thinking level and approval mode.
type threadSettings struct {
	Provider string
	Model    string
	Thinking string
	Approval string
}

// loop runs the thread's closures until the thread unloads.
func (t *thread) loop() {
	defer t.m.wg.Done()
	// The extensions are disposed once the goroutine has stopped: what
	// they still ask of the thread no longer reaches it.
	defer func() {
		<-t.extLoaded
		t.runner().Dispose()
	}()
	defer close(t.done)
	for f := range t.inbox {
		f()
		if t.exited {
			return
		}
	}
}

// call runs fn on the thread's goroutine and returns its error. Errors:
// ErrThreadNotFound when the thread unloaded first (ErrShuttingDown when it
// unloaded for Shutdown); ctx's error when ctx ends before fn was accepted.
func (t *thread) call(ctx context.Context, fn func() error) error {
	errc := make(chan error, 1)
	select {
	case t.inbox <- func() { errc <- fn() }:
	case <-t.done:
		return t.gone()
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-errc
}

// post runs fn on the thread's goroutine without waiting for it; it is
// dropped when the thread has unloaded.
func (t *thread) post(fn func()) {
	select {
	case t.inbox <- fn:
	case <-t.done:
	}
}

// wire returns the thread as the protocol shows it (owner goroutine).
func (t *thread) wire() protocol.Thread {
	h := t.sess.Header()
	return protocol.Thread{
		ID:           t.id,
		Cwd:          t.cwd,
		CreatedAt:    h.Timestamp,
		UpdatedAt:    t.updatedAt,
		Title:        t.sess.Transcript().Title(),
		Status:       t.status,
		SessionFile:  t.sess.File(),
		ForkedFromID: t.forkedFrom,
		Workspace:    t.m.place.view(t.ws),
	}
}

// setStatus changes the status and broadcasts thread/status/changed, then
// the sidebar row.
func (t *thread) setStatus(s protocol.ThreadStatus) {
	if statusEqual(t.status, s) {
		return
	}
	t.status = s
	t.m.catalog.broadcast(protocol.ThreadStatusChanged.With(protocol.ThreadStatusChangedParams{ThreadID: t.id, Status: s}))
	t.sidebarChanged()
}

func statusEqual(a, b protocol.ThreadStatus) bool {
	if a.Type != b.Type || a.Message != b.Message || len(a.WaitingOn) != len(b.WaitingOn) {
		return false
	}
	for i := range a.WaitingOn {
		if a.WaitingOn[i] != b.WaitingOn[i] {
			return false
		}
	}
	return true
}

var (
	statusIdle   = protocol.ThreadStatus{Type: protocol.ThreadStatusIdle}
	statusActive = protocol.ThreadStatus{Type: protocol.ThreadStatusActive, WaitingOn: []string{}}
)

// notify sends a notification to every subscriber, in order.
// A subscriber whose connection is gone is dropped.
func (t *thread) notify(n protocol.Notification) {
	dropped := false
	for id, s := range t.subs {
		if err := s.Send(n); err != nil {
			t.m.log.Debug("notify failed; dropping subscriber", "thread", t.id, "conn", id, "method", n.Method(), "err", err)
			delete(t.subs, id)
			dropped = true
		}
	}
	if dropped {
		t.checkIdle()
	}
}

// subscribe adds s (owner goroutine).
func (t *thread) subscribe(s Subscriber) {
	if s == nil {
		return
	}
	t.subs[s.ID()] = s
	t.heard = true
	t.subscribed(s.ID())
	t.disarmIdle()
}

// unsubscribe removes the subscriber id and reports whether it was there.
func (t *thread) unsubscribe(id uint64) bool {
	_, ok := t.subs[id]
	delete(t.subs, id)
	t.unsubscribed(id)
	t.checkIdle()
	return ok
}

// busy reports running work: a turn, a start in its extensions' hands,
// inputs waiting to start, or a long operation the thread started
// ([Manager.RunOperation]).
func (t *thread) busy() bool {
	return t.turn != nil || t.starting != nil || len(t.followUp) > 0 || (t.gate != nil && t.gate.operationOf(t.id) != nil)
}

// checkIdle (owner goroutine) arms the idle unload, Config.IdleUnload from
// now, when the thread has no subscriber and no running work (a turn,
// queued inputs, a running background shell); an armed
// unload starts over. The thread keeps one timer, reset on each call.
func (t *thread) checkIdle() {
	if t.exited || t.unloading || len(t.subs) > 0 || t.busy() || t.backgroundRunning() {
		return
	}
	t.disarmIdle()
	if t.idleTimer == nil {
		// The timer's goroutine only posts idleFired to the owner.
		t.idleTimer = time.AfterFunc(t.m.cfg.IdleUnload, func() { t.post(t.idleFired) })
	} else {
		t.idleTimer.Reset(t.m.cfg.IdleUnload)
	}
	t.idleArmed = true
}

// disarmIdle (owner goroutine) stops an armed idle unload. A timer that
// already fired has its idleFired on the way: it is counted stale, so it
// unloads nothing.
func (t *thread) disarmIdle() {
	if t.idleArmed && !t.idleTimer.Stop() {
		t.idleStale++
	}
	t.idleArmed = false
}

// idleFired (owner goroutine) runs when the idle timer fires: unless the
// fire is stale or the thread gained a subscriber or work meanwhile, the
// thread unloads.
func (t *thread) idleFired() {
	if t.idleStale > 0 {
		t.idleStale--
		return
	}
	t.idleArmed = false
	if len(t.subs) == 0 && !t.busy() && !t.backgroundRunning() && !t.unloading && !t.exited {
		t.m.log.Info("unloading idle thread", "thread", t.id)
		t.beginUnload("")
	}
}

// beginUnload starts unloading: a start in its extensions' hands is
// cancelled, a running turn is interrupted (it ends interrupted and the
// thread unloads after it), queued inputs are dropped. lost is the
// systemError message when ownership was lost ("" otherwise).
func (t *thread) beginUnload(lost string) {
	if t.unloading {
		return
	}
	t.unloading = true
	if lost != "" {
		t.lostMsg = lost
	}
	t.cancelStart()
	t.dropQueues()
	if t.turn != nil {
		t.turn.interrupt()
		return
	}
	t.finishUnload()
}

// finishUnload stops the processes the thread's bash calls left running in
// the background, releases the session (its lock) and the checkout gate,
// removes the thread from the manager and stops the goroutine.
//
// The processes end with the session (spec, thread/backgroundShells: "a
// thread that is not loaded has none"), before the thread leaves
// m.threads: until then worktreeClaim.inUse keeps its worktree from being
// deleted (archive, worktree/delete) or pruned, so no worktree is removed
// while they may still write into it (shared/cases C24).
func (t *thread) finishUnload() {
	m := t.m
	if err := t.procs.StopAll(context.Background()); err != nil {
		m.log.Warn("stopping the thread's background processes", "thread", t.id, "err", err)
	}
	m.mu.Lock()
	if err := t.sess.Close(); err != nil {
		m.log.Warn("closing session", "thread", t.id, "err", err)
	}
	if m.threads[t.id] == t {
		delete(m.threads, t.id)
	}
	m.gates.release(t.gate)
	if t.lostMsg != "" {
		m.catalog.lose(t.id, t.lostMsg)
	}
	m.mu.Unlock()
	t.exited = true
	t.disarmIdle()
	if t.lostMsg != "" {
		t.setStatus(protocol.ThreadStatus{Type: protocol.ThreadStatusSystemError, Message: t.lostMsg})
	} else {
		t.setStatus(protocol.ThreadStatus{Type: protocol.ThreadStatusNotLoaded})
	}
}

// append writes e to the session (first the settings entries of a session
// not saved yet) and tracks the update time. Losing ownership of the file
// closes the thread with an error notification.
func (t *thread) append(e session.Entry) (session.Entry, error) {
	if err := t.flushPending(); err != nil {
		return session.Entry{}, err
	}
	out, err := t.sess.Append(e)
	if err != nil {
		return session.Entry{}, t.appendFailed(err)
	}
	t.updatedAt = out.Timestamp
	return out, nil
}

// flushPending writes the settings entries of a session not saved yet,
// which saves it (owner goroutine).
func (t *thread) flushPending() error {
	for len(t.pending) > 0 {
		p, err := t.sess.Append(t.pending[0])
		if err != nil {
			return t.appendFailed(err)
		}
		t.updatedAt = p.Timestamp
		t.pending = t.pending[1:]
	}
	return nil
}

// appendFailed handles a failed append: ownership loss closes the thread.
func (t *thread) appendFailed(err error) error {
	if errors.Is(err, session.ErrOwnershipLost) && !t.unloading {
		msg := fmt.Sprintf("the session file is no longer owned by this server: %v", err)
		t.m.log.Error("thread lost ownership", "thread", t.id, "err", err)
		t.notify(protocol.ErrorNotification.With(protocol.ErrorParams{Code: protocol.CodeInternal, Message: msg, ThreadID: t.id}))
		t.beginUnload(msg)
	}
	return err
}

// appendMessage persists an LLM message.
func (t *thread) appendMessage(msg agent.Message) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	e, err := session.NewMessage(b)
	if err != nil {
		return err
	}
	_, err = t.append(e)
	return err
}

// queueSnapshot is the queue as turn/queue/updated and thread/resume show it.
func (t *thread) queueSnapshot() protocol.QueueSnapshot {
	q := protocol.QueueSnapshot{Steering: append([]string{}, t.steering...), FollowUp: []protocol.QueuedInput{}}
	for _, in := range t.followUp {
		q.FollowUp = append(q.FollowUp, protocol.QueuedInput{ID: in.id, Text: in.text, Attachments: in.attachments()})
	}
	return q
}

// queueUpdated sends turn/queue/updated to the subscribers.
func (t *thread) queueUpdated() {
	q := t.queueSnapshot()
	t.notify(protocol.TurnQueueUpdated.With(protocol.TurnQueueUpdatedParams{ThreadID: t.id, Steering: q.Steering, FollowUp: q.FollowUp}))
}

// dropQueues drops the steering not taken yet (held steers too:
// cancelSteers) and the queued inputs.
func (t *thread) dropQueues() {
	t.cancelSteers()
	if len(t.steering) == 0 && len(t.followUp) == 0 {
		return
	}
	t.steering, t.followUp = nil, nil
	t.queueUpdated()
}

// usageSnapshot is the cumulative usage with the current model's window.
func (t *thread) usageSnapshot() protocol.TokenUsage {
	u := t.usage
	u.ContextWindow = 0
	if _, m, ok := t.m.cfg.Models.Lookup(t.settings.Provider, t.settings.Model); ok {
		u.ContextWindow = int64(m.ContextWindow)
	}
	return u
}
