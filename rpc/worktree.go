package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// WorktreeService is what the archive and worktree handlers need of the
// thread manager (threads.Manager implements it): one method per wire
// method. Errors are the threads, session and workspace layers' typed
// errors, mapped by CoreErrorMappers.
type WorktreeService interface {
	Archive(ctx context.Context, sub threads.Subscriber, p protocol.ThreadArchiveParams) (protocol.ThreadArchiveResult, error)
	Unarchive(ctx context.Context, p protocol.ThreadUnarchiveParams) (protocol.ThreadUnarchiveResult, error)
	Delete(ctx context.Context, p protocol.ThreadDeleteParams) (protocol.ThreadDeleteResult, error)
	RestoreWorktree(ctx context.Context, p protocol.ThreadWorktreeRestoreParams) (protocol.ThreadWorktreeRestoreResult, error)
	ListWorktrees(ctx context.Context, p protocol.WorktreeListParams) (protocol.WorktreeListResult, error)
	DeleteWorktree(ctx context.Context, sub threads.Subscriber, p protocol.WorktreeDeleteParams) (protocol.WorktreeDeleteResult, error)
}

// RegisterWorktreeMethods installs the handlers of thread/archive,
// thread/unarchive, thread/delete, thread/worktree/restore, worktree/list
// and worktree/delete on srv, each calling svc (spec: "Workspaces, diffs
// and git"; "Ownership, unloading, and shutdown"; Method reference).
func RegisterWorktreeMethods(srv *jsonrpc.Server, svc WorktreeService) {
	registerArchive(srv, svc)
	jsonrpc.Handle(srv, protocol.ThreadWorktreeRestore, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadWorktreeRestoreParams) (protocol.ThreadWorktreeRestoreResult, error) {
		return svc.RestoreWorktree(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.WorktreeList, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.WorktreeListParams) (protocol.WorktreeListResult, error) {
		return svc.ListWorktrees(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.WorktreeDelete, func(ctx context.Context, c *jsonrpc.Conn, p protocol.WorktreeDeleteParams) (protocol.WorktreeDeleteResult, error) {
		return svc.DeleteWorktree(ctx, c, p)
	})
}
