package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerBackgroundShells installs the thread/backgroundShells/list,
// /output and /stop handlers (spec: thread/backgroundShells/*); the threads
// package does the work.
func registerBackgroundShells(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsList, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsListParams) (protocol.BackgroundShellsListResult, error) {
		return core.Threads.BackgroundShellsList(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsOutput, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsOutputParams) (protocol.BackgroundShellsOutputResult, error) {
		return core.Threads.BackgroundShellsOutput(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsStop, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsStopParams) (protocol.BackgroundShellsStopResult, error) {
		return core.Threads.BackgroundShellsStop(ctx, p)
	})
}
