package threads

import (
	"context"
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// Session-replacing commands (spec "Threads and turns", "Subscriptions
// and replacement"; EXTENSIBILITY.md §7): an extension command's
// ctx.newSession() replaces the thread by a new one in the same cwd with
// the same settings, and its ctx.fork(entryId) by the thread's fork at
// that entry (as thread/fork forks through a turn). The new thread loads
// (its extensions get session_start "new" or "fork"); the subscribers of the old one receive
// thread/replaced {threadId: the old id, thread: the new one, requestId:
// the start's} and move to the new thread; the turn/start that ran the
// command answers "handled" with the new thread's id; the old load's
// contexts are stale, and the old thread unloads once the command ended.

// errNotReplaceable refuses a replacement asked outside a command of the
// thread's current load (a handler's, or a stale context's).
var errNotReplaceable = errors.New("threads: only a command of the thread's current load can replace it")

// Replace replaces the thread by a new one (ext.Replacer; see above) and
// returns the new thread's runner, loaded. Errors: errNotReplaceable;
// ErrThreadNotFound when the thread unloads; the new session's and
// load's (nothing is moved then).
func (h *extHost) Replace(ctx context.Context, req ext.ReplaceRequest) (*ext.Runner, error) {
	t := h.t
	if req.Kind != ext.ReplaceNew && req.Kind != ext.ReplaceFork {
		return nil, fmt.Errorf("threads: unknown replacement %q", req.Kind)
	}
	var st threadSettings
	var ws *session.Workspace
	err := t.call(ctx, func() error {
		switch {
		case t.unloading:
			return t.gone()
		case t.starting == nil || t.runner() != h.r || h.r.Stale():
			return errNotReplaceable
		}
		st, ws = t.settings, t.ws
		return nil
	})
	if err != nil {
		return nil, err
	}
	var nt *thread
	if req.Kind == ext.ReplaceFork {
		nt, err = h.fork(ctx, req, st, ws)
	} else {
		nt, err = h.newSession(ctx, st, ws, ext.SessionNew, "")
	}
	if err != nil {
		return nil, err
	}
	var wire protocol.Thread
	if err := nt.call(ctx, func() error {
		nt.setStatus(statusIdle)
		wire = nt.wire()
		return nil
	}); err != nil {
		return nil, err
	}
	var subs []Subscriber
	err = t.call(ctx, func() error {
		if t.unloading || t.starting == nil || h.r.Stale() {
			return errNotReplaceable
		}
		t.notify(protocol.ThreadReplaced.With(protocol.ThreadReplacedParams{ThreadID: t.id, Thread: wire, RequestID: t.starting.requestID}))
		for id, s := range t.subs {
			subs = append(subs, s)
			delete(t.subs, id)
			t.unsubscribed(id)
		}
		h.r.MarkStale()
		t.replacedBy = nt.id
		return nil
	})
	if err != nil {
		nt.post(func() { nt.checkIdle() }) // nobody moved: it unloads when idle
		return nil, err
	}
	_ = nt.call(ctx, func() error {
		for _, s := range subs {
			nt.subscribe(s)
		}
		nt.checkIdle()
		return nil
	})
	return nt.runner(), nil
}

// newSession makes and loads the new, empty thread of a replacement in
// the thread's cwd and workspace, with its settings st and parent session
// file parent ("" for none); its extensions get session_start reason.
func (h *extHost) newSession(ctx context.Context, st threadSettings, ws *session.Workspace, reason, parent string) (*thread, error) {
	t, m := h.t, h.t.m
	opts := session.CreateOptions{Cwd: t.cwd, Workspace: ws, ParentSession: parent}
	sess, err := session.Create(m.cfg.Dirs.ForCwd(t.cwd), opts)
	if err != nil {
		return nil, err
	}
	pending := []session.Entry{session.NewApprovalMode(st.Approval)}
	if st.Provider != "" {
		pending = append(pending, session.NewModelChange(st.Provider, st.Model))
	}
	if st.Thinking != "" && st.Thinking != string(agent.ThinkingOff) {
		pending = append(pending, session.NewThinkingLevelChange(st.Thinking))
	}
	return m.register(ctx, sess, t.cwd, st, pending, func(nt *thread) {
		nt.updatedAt = sess.Header().Timestamp
		nt.asks.terminal.Store(t.asks.terminal.Load())
		nt.sessionReason = reason
	})
}

// fork makes and loads the fork of a replacement by ctx.fork(entryId,
// {position}) (pi's): the thread forked (Manager.Fork) through the turn
// session.Transcript.ForkPoint maps the entry to; before the first turn,
// a new empty thread whose parent is this one. Its extensions get
// session_start "fork". Errors: ForkPoint's (an entry that is not on the
// branch or not a turn boundary), Manager.Fork's.
func (h *extHost) fork(ctx context.Context, req ext.ReplaceRequest, st threadSettings, ws *session.Workspace) (*thread, error) {
	t := h.t
	src, err := t.forkSource(ctx)
	if err != nil {
		return nil, err
	}
	turnID, none, err := src.tr.ForkPoint(req.EntryID, req.Position == ext.ForkAt)
	if err != nil {
		return nil, fmt.Errorf("threads: cannot fork at entry %q: %w", req.EntryID, err)
	}
	if none {
		return h.newSession(ctx, st, ws, ext.SessionFork, src.path)
	}
	nt, _, err := t.m.fork(ctx, t.id, ForkOptions{TurnID: turnID, init: func(nt *thread) {
		nt.asks.terminal.Store(t.asks.terminal.Load())
		nt.sessionReason = ext.SessionFork
	}})
	return nt, err
}
