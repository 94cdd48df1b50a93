package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerTurn installs the turn/* handlers (spec: "Threads and turns").
// turn/start subscribes the caller. turn/interrupt is a Concurrent method
// in the table so it never waits behind the thread's perThread queue; it
// answers as soon as the turn is cancelled, without waiting for it to end.
func registerTurn(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.TurnStart, func(ctx context.Context, c *jsonrpc.Conn, p protocol.TurnStartParams) (protocol.TurnStartResult, error) {
		return core.Threads.StartTurn(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.TurnSteer, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnSteerParams) (protocol.TurnSteerResult, error) {
		return core.Threads.Steer(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.TurnQueueAdd, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnQueueAddParams) (protocol.TurnQueueAddResult, error) {
		return core.Threads.QueueAdd(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.TurnQueueRemove, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnQueueRemoveParams) (protocol.TurnQueueRemoveResult, error) {
		return core.Threads.QueueRemove(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.TurnInterrupt, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnInterruptParams) (protocol.TurnInterruptResult, error) {
		return core.Threads.Interrupt(ctx, p)
	})
}
