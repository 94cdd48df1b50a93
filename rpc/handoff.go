package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerHandoff installs the handler of thread/handoff on srv: it only
// translates, calling core.Threads.Handoff with the caller's connection
// (the environment's setup output streams to it). Spec: Method reference,
// thread/handoff.
func registerHandoff(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadHandoff, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadHandoffParams) (protocol.ThreadHandoffResult, error) {
		return core.Threads.Handoff(ctx, c, p)
	})
}
