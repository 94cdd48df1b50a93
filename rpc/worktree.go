package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// RegisterWorktreeMethods installs the handlers of thread/archive,
// thread/unarchive, thread/delete, thread/worktree/restore, worktree/list
// and worktree/delete on srv, each calling core.Threads (spec: "Workspaces,
// diffs and git"; "Ownership, unloading, and shutdown"; Method reference).
func RegisterWorktreeMethods(srv *jsonrpc.Server, core Core) {
	registerArchive(srv, core)
	jsonrpc.Handle(srv, protocol.ThreadWorktreeRestore, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadWorktreeRestoreParams) (protocol.ThreadWorktreeRestoreResult, error) {
		return core.Threads.RestoreWorktree(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.WorktreeList, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.WorktreeListParams) (protocol.WorktreeListResult, error) {
		return core.Threads.ListWorktrees(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.WorktreeDelete, func(ctx context.Context, c *jsonrpc.Conn, p protocol.WorktreeDeleteParams) (protocol.WorktreeDeleteResult, error) {
		return core.Threads.DeleteWorktree(ctx, c, p)
	})
}
