package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerArchive installs the thread/archive, thread/unarchive and
// thread/delete handlers (spec: "Ownership, unloading, and shutdown";
// Method reference, thread/delete), each a call of core.Threads.
func registerArchive(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadArchive, core.threadArchive)
	jsonrpc.Handle(srv, protocol.ThreadUnarchive, core.threadUnarchive)
	jsonrpc.Handle(srv, protocol.ThreadDelete, core.threadDelete)
}

// threadArchive answers thread/archive with threads.Manager.Archive; the
// environment's cleanup output streams to the caller.
func (c Core) threadArchive(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadArchiveParams) (protocol.ThreadArchiveResult, error) {
	return protocol.ThreadArchiveResult{}, c.Threads.Archive(ctx, conn, p.ThreadID)
}

// threadUnarchive answers thread/unarchive with threads.Manager.Unarchive.
func (c Core) threadUnarchive(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadUnarchiveParams) (protocol.ThreadUnarchiveResult, error) {
	t, err := c.Threads.Unarchive(ctx, p.ThreadID)
	if err != nil {
		return protocol.ThreadUnarchiveResult{}, err
	}
	return protocol.ThreadUnarchiveResult{Thread: t}, nil
}

// threadDelete answers thread/delete with threads.Manager.Delete.
func (c Core) threadDelete(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDeleteParams) (protocol.ThreadDeleteResult, error) {
	return protocol.ThreadDeleteResult{}, c.Threads.Delete(ctx, p.ThreadID)
}
