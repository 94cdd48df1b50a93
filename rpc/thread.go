package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// ThreadService is what the thread, turn and model handlers need of the
// thread manager (threads.Manager implements it). Methods that subscribe
// the caller take its connection as a threads.Subscriber; errors are the
// threads layer's typed errors, mapped by ErrorMappers (see errmap.go).
type ThreadService interface {
	Start(ctx context.Context, sub threads.Subscriber, p protocol.ThreadStartParams) (protocol.ThreadStartResult, error)
	Resume(ctx context.Context, sub threads.Subscriber, p protocol.ThreadResumeParams) (protocol.ThreadResumeResult, error)
	Read(ctx context.Context, p protocol.ThreadReadParams) (protocol.ThreadReadResult, error)
	Unsubscribe(ctx context.Context, subID uint64, threadID string) (protocol.ThreadUnsubscribeResult, error)
	List(p protocol.ThreadListParams) (protocol.ThreadListResult, error)
	UpdateSettings(ctx context.Context, p protocol.ThreadSettingsUpdateParams) (protocol.ThreadSettingsUpdateResult, error)
	Models() protocol.ModelListResult

	StartTurn(ctx context.Context, sub threads.Subscriber, p protocol.TurnStartParams) (protocol.TurnStartResult, error)
	Steer(ctx context.Context, p protocol.TurnSteerParams) (protocol.TurnSteerResult, error)
	QueueAdd(ctx context.Context, p protocol.TurnQueueAddParams) (protocol.TurnQueueAddResult, error)
	QueueRemove(ctx context.Context, p protocol.TurnQueueRemoveParams) (protocol.TurnQueueRemoveResult, error)
	Interrupt(ctx context.Context, p protocol.TurnInterruptParams) (protocol.TurnInterruptResult, error)

	// DropSubscriber forgets a closed connection's subscriptions.
	DropSubscriber(subID uint64)
	// Shutdown unloads every thread (running turns end interrupted).
	Shutdown(ctx context.Context) error
	// ThreadCounters feeds server/diagnostics.
	ThreadCounters() protocol.ThreadCounters
}

// RegisterThreadMethods installs the handlers of thread/start,
// thread/resume, thread/read, thread/unsubscribe, thread/list,
// thread/settings/update, model/list and the turn/* requests on srv, each
// calling svc (spec: "Threads and turns", "Subscriptions and replacement",
// "History, listings, and large values"). It also registers svc's hooks: a
// closed connection's subscriptions are dropped, shutdown unloads every
// thread, and server/diagnostics reads svc's counters.
func RegisterThreadMethods(srv *jsonrpc.Server, svc ThreadService) {
	jsonrpc.Handle(srv, protocol.ThreadStart, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadStartParams) (protocol.ThreadStartResult, error) {
		return svc.Start(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadResume, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadResumeParams) (protocol.ThreadResumeResult, error) {
		return svc.Resume(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadReadParams) (protocol.ThreadReadResult, error) {
		return svc.Read(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadUnsubscribe, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadUnsubscribeParams) (protocol.ThreadUnsubscribeResult, error) {
		return svc.Unsubscribe(ctx, c.ID(), p.ThreadID)
	})
	jsonrpc.Handle(srv, protocol.ThreadList, func(_ context.Context, _ *jsonrpc.Conn, p protocol.ThreadListParams) (protocol.ThreadListResult, error) {
		return svc.List(p)
	})
	jsonrpc.Handle(srv, protocol.ThreadSettingsUpdate, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadSettingsUpdateParams) (protocol.ThreadSettingsUpdateResult, error) {
		return svc.UpdateSettings(ctx, p)
	})
	registerModel(srv, svc)
	registerTurn(srv, svc)
	srv.OnConnClose(func(c *jsonrpc.Conn) { svc.DropSubscriber(c.ID()) })
	srv.OnShutdown(func(ctx context.Context) {
		if err := svc.Shutdown(ctx); err != nil {
			srv.Logger().Warn("threads did not all unload before the shutdown deadline", "err", err)
		}
	})
	srv.SetDiagnosticsSource(svc)
}
