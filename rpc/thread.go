package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// RegisterThreadMethods installs the handlers of thread/start,
// thread/resume, thread/fork, thread/read, thread/unsubscribe, thread/list,
// thread/settings/update, model/list, payload/read and the turn/* requests
// on srv, each
// calling core.Threads (spec: "Threads and turns", "Subscriptions and
// replacement", "History, listings, and large values"). It also registers
// the thread manager's hooks: a closed connection's subscriptions are
// dropped, shutdown unloads every thread, and server/diagnostics reads the
// manager's counters.
func RegisterThreadMethods(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadStart, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadStartParams) (protocol.ThreadStartResult, error) {
		return core.Threads.Start(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadResume, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadResumeParams) (protocol.ThreadResumeResult, error) {
		return core.Threads.Resume(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadFork, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadForkParams) (protocol.ThreadForkResult, error) {
		return core.Threads.Fork(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadReadParams) (protocol.ThreadReadResult, error) {
		return core.Threads.Read(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadUnsubscribe, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadUnsubscribeParams) (protocol.ThreadUnsubscribeResult, error) {
		return core.Threads.Unsubscribe(ctx, c.ID(), p.ThreadID)
	})
	jsonrpc.Handle(srv, protocol.ThreadList, func(_ context.Context, _ *jsonrpc.Conn, p protocol.ThreadListParams) (protocol.ThreadListResult, error) {
		return core.Threads.List(p)
	})
	jsonrpc.Handle(srv, protocol.ThreadSettingsUpdate, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadSettingsUpdateParams) (protocol.ThreadSettingsUpdateResult, error) {
		return core.Threads.UpdateSettings(ctx, p)
	})
	registerModel(srv, core)
	registerPayload(srv, core)
	registerAccount(srv, core)
	registerTurn(srv, core)
	registerBackgroundShells(srv, core)
	srv.OnConnClose(func(c *jsonrpc.Conn) { core.Threads.DropSubscriber(c.ID()) })
	srv.OnShutdown(func(ctx context.Context) {
		if err := core.Threads.Shutdown(ctx); err != nil {
			srv.Logger().Warn("threads did not all unload before the shutdown deadline", "err", err)
		}
	})
	srv.SetDiagnosticsSource(core.Threads)
}
