package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerArchive installs the thread/archive, thread/unarchive and
// thread/delete handlers (spec: "Ownership, unloading, and shutdown";
// Method reference, thread/delete).
func registerArchive(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadArchive, func(ctx context.Context, c *jsonrpc.Conn, p protocol.ThreadArchiveParams) (protocol.ThreadArchiveResult, error) {
		return core.Threads.Archive(ctx, c, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadUnarchive, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadUnarchiveParams) (protocol.ThreadUnarchiveResult, error) {
		return core.Threads.Unarchive(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadDelete, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDeleteParams) (protocol.ThreadDeleteResult, error) {
		return core.Threads.Delete(ctx, p)
	})
}
