package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/knightcode/knightcode/agent/approval"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Server requests: what the thread asks the person (approvals, ask_user,
// dialogs) goes to one subscriber at a time (spec: Approvals, "Dialogs and
// extension UI", "Subscriptions and replacement"; issue 11):
//   - the most recent initiating subscriber is asked first: the subscribed
//     connection that last sent turn/start, turn/queue/add or turn/steer
//     for the thread, else the newest subscriber;
//   - when the asked connection unsubscribes, the attempt is withdrawn there
//     (serverRequest/cancelled) and the request migrates to another
//     subscriber; a connection that went away is skipped the same way;
//   - with no subscriber left the request is cancelled;
//   - while one is open the thread's status is {type: "active", waitingOn:
//     [...]}, with thread/status/changed at the first opening and the last
//     closing;
//   - interrupt, unload, archive and shutdown cancel the turn's context,
//     which withdraws the open requests (serverRequest/cancelled); a late
//     answer to a withdrawn request is dropped by the frame.

// Asker is a subscriber that can be asked server requests: Call sends the
// server request method with params to the client and waits for its answer,
// the raw result; a client's error response is a *protocol.Error; when ctx
// ends first the request is withdrawn (serverRequest/cancelled) and ctx's
// error returned; any other error means the connection is gone. It is
// *jsonrpc.Conn's Call.
type Asker interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// moder is a subscriber that reports its connection's capabilities.mode
// (*jsonrpc.Conn's ClientMode).
type moder interface {
	ClientMode() string
}

// isTerminal reports whether sub is a terminal-mode connection.
func isTerminal(sub Subscriber) bool {
	m, ok := sub.(moder)
	return ok && m.ClientMode() == protocol.ClientModeTerminal
}

// appDrawer is a subscriber that reports whether its connection draws MCP
// Apps (*jsonrpc.Conn's DrawsApps).
type appDrawer interface {
	DrawsApps() bool
}

// drawsApps reports whether sub is a connection that draws MCP Apps.
func drawsApps(sub Subscriber) bool {
	d, ok := sub.(appDrawer)
	return ok && d.DrawsApps()
}

// defaultApproval is the approval mode of a thread sub starts without one:
// fullAccess for a terminal-mode connection (spec: "terminal-mode
// in-process threads default to fullAccess"), else def
// (Config.DefaultApprovalMode).
func defaultApproval(sub Subscriber, def string) string {
	if isTerminal(sub) {
		return protocol.ApprovalFullAccess
	}
	return def
}

// askState is a loaded thread's state for asking the person. grants is safe
// for concurrent use; the other fields belong to the thread's goroutine.
type askState struct {
	// grants are this load's session grants (acceptForSession,
	// acceptPrefixForSession): gone with the load.
	grants approval.Grants
	// terminal: the thread was loaded by a terminal-mode connection; it
	// has no dialogs. Set at load, read by the turn's tools.
	terminal atomic.Bool
	// apps: the connection that loaded the thread draws MCP Apps (it sent
	// capabilities.mode "desktop" explicitly). Set at load.
	apps atomic.Bool
	// initiator is the connection that last sent turn/start,
	// turn/queue/add or turn/steer for the thread (0: none).
	initiator uint64
	// subOrder orders the subscribers by when they (last) subscribed.
	subOrder map[uint64]uint64
	subSeq   uint64
	// open are the server requests waiting for an answer.
	open []*openRequest
}

// openRequest is one server request waiting for an answer.
type openRequest struct {
	waitingOn string              // protocol.WaitingOnApproval or WaitingOnDialog
	dialog    bool                // only desktop-mode connections are asked
	target    uint64              // the connection asked now (0: none)
	stop      context.CancelFunc  // withdraws the current attempt
	gone      map[uint64]struct{} // connections that went away while asked
}

// subscribed records that id subscribed now (owner goroutine).
func (t *thread) subscribed(id uint64) {
	if t.asks.subOrder == nil {
		t.asks.subOrder = map[uint64]uint64{}
	}
	t.asks.subSeq++
	t.asks.subOrder[id] = t.asks.subSeq
}

// unsubscribed withdraws the attempts asked of id, which left the thread,
// so they migrate (owner goroutine).
func (t *thread) unsubscribed(id uint64) {
	delete(t.asks.subOrder, id)
	for _, r := range t.asks.open {
		if r.target == id && r.stop != nil {
			r.target = 0
			r.stop()
		}
	}
}

// noteInitiator records conn as the thread's most recent initiating
// connection (owner goroutine): the connection that last sent turn/start,
// turn/queue/add or turn/steer for the thread (StartTurn, QueueAdd,
// Steer); while it is subscribed, it is asked first (issue 11's
// decisions).
func (t *thread) noteInitiator(conn uint64) { t.asks.initiator = conn }

// pickAsker returns the subscriber to ask r now (owner goroutine): the
// initiator when it can be asked, else the newest subscriber that can.
func (t *thread) pickAsker(r *openRequest) (uint64, Asker) {
	ok := func(id uint64) (Asker, bool) {
		s := t.subs[id]
		if s == nil {
			return nil, false
		}
		if _, gone := r.gone[id]; gone {
			return nil, false
		}
		if r.dialog && isTerminal(s) {
			return nil, false
		}
		a, can := s.(Asker)
		return a, can
	}
	if a, can := ok(t.asks.initiator); can {
		return t.asks.initiator, a
	}
	var (
		best    uint64
		bestA   Asker
		bestSeq uint64
	)
	for id := range t.subs {
		a, can := ok(id)
		if !can {
			continue
		}
		if seq := t.asks.subOrder[id]; bestA == nil || seq > bestSeq || (seq == bestSeq && id > best) {
			best, bestA, bestSeq = id, a, seq
		}
	}
	return best, bestA
}

// refreshWaiting sets the status from the open requests (owner goroutine):
// active waiting on their kinds while any is open, else active while a
// turn runs, else idle. A thread that is not idle or active (notLoaded,
// systemError) keeps its status.
func (t *thread) refreshWaiting() {
	if t.status.Type != protocol.ThreadStatusIdle && t.status.Type != protocol.ThreadStatusActive {
		return
	}
	waiting := []string{}
	for _, kind := range []string{protocol.WaitingOnApproval, protocol.WaitingOnDialog} {
		if slices.ContainsFunc(t.asks.open, func(r *openRequest) bool { return r.waitingOn == kind }) {
			waiting = append(waiting, kind)
		}
	}
	switch {
	case len(waiting) > 0:
		t.setStatus(protocol.ThreadStatus{Type: protocol.ThreadStatusActive, WaitingOn: waiting})
	case t.turn != nil:
		t.setStatus(statusActive)
	default:
		t.setStatus(statusIdle)
	}
}

// errNoAsker ends a server request no subscriber can answer.
var errNoAsker = errors.New("threads: no subscriber can answer the request")

// ask sends the server request method with params to one subscriber at a
// time (see the routing above) and returns the client's answer. answered
// is false when the request was cancelled: ctx ended (interrupt, unload,
// shutdown), the thread unloaded (its goroutine exited), or no subscriber
// was left to ask. A
// client's error response is an answer of the wrong shape: raw is nil and
// answered true. waitingOn is protocol.WaitingOnApproval or
// WaitingOnDialog; a dialog asks desktop-mode connections only. It runs
// off the thread's goroutine (the agent's hooks and tools).
func (t *thread) ask(ctx context.Context, waitingOn, method string, params any) (raw json.RawMessage, answered bool) {
	r := &openRequest{waitingOn: waitingOn, dialog: waitingOn == protocol.WaitingOnDialog, gone: map[uint64]struct{}{}}
	// The thread unloading withdraws the request too (a dialog asked
	// outside a turn has no turn context to end it).
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	go func() {
		select {
		case <-t.done:
			cancelAll()
		case <-ctx.Done():
		}
	}()
	opened := false
	defer func() {
		if !opened {
			return
		}
		// Closing must happen even when ctx ended: the thread is still
		// there unless it unloaded (then its status is notLoaded anyway).
		_ = t.call(context.Background(), func() error {
			t.asks.open = slices.DeleteFunc(t.asks.open, func(o *openRequest) bool { return o == r })
			t.refreshWaiting()
			return nil
		})
	}()
	var lost uint64 // the connection that went away while asked last
	for {
		var (
			a      Asker
			asked  uint64
			actx   context.Context
			cancel context.CancelFunc
		)
		err := t.call(context.Background(), func() error {
			if lost != 0 {
				r.gone[lost] = struct{}{}
			}
			if !opened {
				if t.unloading || t.exited {
					return errNoAsker
				}
				t.asks.open = append(t.asks.open, r)
				opened = true
				t.refreshWaiting()
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			id, asker := t.pickAsker(r)
			if asker == nil {
				return errNoAsker
			}
			actx, cancel = context.WithCancel(ctx)
			r.target, r.stop, a, asked = id, cancel, asker, id
			return nil
		})
		if err != nil {
			if errors.Is(err, errNoAsker) {
				t.m.log.Info("server request cancelled: no subscriber can answer it", "thread", t.id, "method", method)
			}
			return nil, false
		}
		raw, err := a.Call(actx, method, params)
		withdrawn := actx.Err() != nil
		cancel()
		var pe *protocol.Error
		switch {
		case err == nil:
			return raw, true
		case ctx.Err() != nil:
			return nil, false
		case withdrawn:
			lost = 0 // withdrawn there (the subscriber left): migrate
		case errors.As(err, &pe):
			t.m.log.Info("server request answered with an error: taken as an answer of the wrong shape", "thread", t.id, "method", method, "err", err)
			return nil, true
		default:
			lost = asked // the connection went away: skip it
		}
	}
}

// decodeStrict decodes raw into v refusing unknown members and members
// whose name differs from the field's in case; a nil raw (an error
// response) fails.
func decodeStrict(raw json.RawMessage, v any) error {
	if raw == nil {
		return errors.New("no result")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// encoding/json matches member names ignoring case, so {"DECISION":
	// "accept"} would decode as an accept: every member name must be
	// exactly the field's (a misspelled answer is the wrong shape).
	return exactMembers(reflect.TypeOf(v), raw, "")
}

// exactMembers reports the first member of raw (decoded into a value of
// type t already) whose name is not exactly a JSON field name of its
// struct, at any depth (structs, pointers, slices and maps of them).
func exactMembers(t reflect.Type, raw json.RawMessage, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		names := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if name != "-" && f.IsExported() {
				names[name] = f.Type
			}
		}
		for k, v := range obj {
			ft, ok := names[k]
			if !ok {
				return fmt.Errorf("%s%q is not a member of the answer", path, k)
			}
			if err := exactMembers(ft, v, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for k, v := range obj {
			if err := exactMembers(t.Elem(), v, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, it := range items {
			if err := exactMembers(t.Elem(), it, fmt.Sprintf("%s%d.", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
