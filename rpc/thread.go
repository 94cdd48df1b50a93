package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// The thread family (spec: "Threads and turns", "Subscriptions and
// replacement", "History, listings, and large values"): thread/start,
// thread/resume, thread/fork, thread/read, thread/unsubscribe, thread/list
// and thread/settings/update, each a call of core.Threads with ids and
// option structs; the connection is the subscriber.

// RegisterThreadMethods installs the handlers of the thread family and of
// model/list, payload/read, account/*, the turn/* requests,
// thread/backgroundShells/* and ui/event on srv. It also registers the thread manager's
// hooks: a closed connection's subscriptions are dropped, shutdown unloads
// every thread, and server/diagnostics reads the manager's counters.
func RegisterThreadMethods(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadStart, core.threadStart)
	jsonrpc.Handle(srv, protocol.ThreadResume, core.threadResume)
	jsonrpc.Handle(srv, protocol.ThreadFork, core.threadFork)
	jsonrpc.Handle(srv, protocol.ThreadRead, core.threadRead)
	jsonrpc.Handle(srv, protocol.ThreadUnsubscribe, core.threadUnsubscribe)
	jsonrpc.Handle(srv, protocol.ThreadList, core.threadList)
	jsonrpc.Handle(srv, protocol.ThreadSettingsUpdate, core.threadSettingsUpdate)
	registerModel(srv, core)
	registerPayload(srv, core)
	registerAccount(srv, core)
	registerTurn(srv, core)
	registerBackgroundShells(srv, core)
	registerUI(srv, core)
	srv.OnConnClose(func(c *jsonrpc.Conn) { core.Threads.DropSubscriber(c.ID()) })
	srv.OnShutdown(func(ctx context.Context) {
		if err := core.Threads.Shutdown(ctx); err != nil {
			srv.Logger().Warn("threads did not all unload before the shutdown deadline", "err", err)
		}
	})
	srv.SetDiagnosticsSource(core.Threads)
}

// threadStart answers thread/start with threads.Manager.Start; the caller
// subscribes.
func (c Core) threadStart(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadStartParams) (protocol.ThreadStartResult, error) {
	o := threads.StartOptions{Cwd: p.Cwd, ApprovalMode: p.ApprovalMode, Model: modelRef(p.Model)}
	if w := p.Workspace; w != nil {
		o.Workspace = threads.WorkspaceOptions{Mode: w.Mode, BaseRef: w.BaseRef, CarryLocalChanges: w.CarryLocalChanges, Environment: w.Environment}
	}
	res, err := c.Threads.Start(ctx, conn, o)
	if err != nil {
		return protocol.ThreadStartResult{}, err
	}
	return protocol.ThreadStartResult(res), nil
}

// threadResume answers thread/resume with threads.Manager.Resume; the
// caller subscribes.
func (c Core) threadResume(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadResumeParams) (protocol.ThreadResumeResult, error) {
	res, err := c.Threads.Resume(ctx, conn, p.ThreadID, p.Cursor)
	if err != nil {
		return protocol.ThreadResumeResult{}, err
	}
	return protocol.ThreadResumeResult(res), nil
}

// threadFork answers thread/fork with threads.Manager.Fork; the caller
// subscribes to the fork.
func (c Core) threadFork(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadForkParams) (protocol.ThreadForkResult, error) {
	res, err := c.Threads.Fork(ctx, conn, p.ThreadID, threads.ForkOptions{TurnID: p.TurnID})
	if err != nil {
		return protocol.ThreadForkResult{}, err
	}
	return protocol.ThreadForkResult(res), nil
}

// threadRead answers thread/read with threads.Manager.Read.
func (c Core) threadRead(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadReadParams) (protocol.ThreadReadResult, error) {
	res, err := c.Threads.Read(ctx, p.ThreadID, p.Cursor)
	if err != nil {
		return protocol.ThreadReadResult{}, err
	}
	return protocol.ThreadReadResult(res), nil
}

// threadUnsubscribe answers thread/unsubscribe with
// threads.Manager.Unsubscribe of the caller: unsubscribed or
// notSubscribed.
func (c Core) threadUnsubscribe(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadUnsubscribeParams) (protocol.ThreadUnsubscribeResult, error) {
	res := protocol.ThreadUnsubscribeResult{Status: protocol.UnsubscribeNotSubscribed}
	done, err := c.Threads.Unsubscribe(ctx, conn.ID(), p.ThreadID)
	if done {
		res.Status = protocol.UnsubscribeUnsubscribed
	}
	return res, err
}

// threadList answers thread/list with threads.Manager.List. Errors:
// invalidParams "limit" when given and not 1 to threads.MaxListLimit (0
// included: an empty page is never what a caller means); the manager's.
func (c Core) threadList(_ context.Context, _ *jsonrpc.Conn, p protocol.ThreadListParams) (protocol.ThreadListResult, error) {
	o := threads.ListOptions{Cwd: p.Cwd, Cursor: p.Cursor, Archived: p.Archived}
	if p.Limit != nil {
		if *p.Limit < 1 || *p.Limit > threads.MaxListLimit {
			return protocol.ThreadListResult{}, protocol.InvalidParams("limit", "must be 1 to %d, got %d", threads.MaxListLimit, *p.Limit)
		}
		o.Limit = *p.Limit
	}
	res, err := c.Threads.List(o)
	if err != nil {
		return protocol.ThreadListResult{}, err
	}
	return protocol.ThreadListResult(res), nil
}

// threadSettingsUpdate answers thread/settings/update with
// threads.Manager.UpdateSettings.
func (c Core) threadSettingsUpdate(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadSettingsUpdateParams) (protocol.ThreadSettingsUpdateResult, error) {
	err := c.Threads.UpdateSettings(ctx, p.ThreadID, threads.SettingsUpdate{
		Model: modelRef(p.Model), ThinkingLevel: p.ThinkingLevel, ApprovalMode: p.ApprovalMode,
	})
	return protocol.ThreadSettingsUpdateResult{}, err
}

// modelRef converts a wire model reference (nil stays nil).
func modelRef(r *protocol.ModelRef) *threads.ModelRef {
	if r == nil {
		return nil
	}
	return &threads.ModelRef{Provider: r.Provider, ID: r.ID}
}
