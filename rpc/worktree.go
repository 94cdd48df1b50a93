package rpc

import (
	"context"
	"path/filepath"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// RegisterWorktreeMethods installs the handlers of thread/archive,
// thread/unarchive, thread/delete, thread/handoff, thread/worktree/restore,
// worktree/list and worktree/delete on srv (spec: "Workspaces, diffs and git";
// "Ownership, unloading, and shutdown"; Method reference). Restore and
// delete go through core.Threads, which knows the loaded threads that use a
// worktree; worktree/list reads core.Workspace directly.
func RegisterWorktreeMethods(srv *jsonrpc.Server, core Core) {
	registerArchive(srv, core)
	registerHandoff(srv, core)
	jsonrpc.Handle(srv, protocol.ThreadWorktreeRestore, core.worktreeRestore)
	jsonrpc.Handle(srv, protocol.WorktreeList, core.worktreeList)
	jsonrpc.Handle(srv, protocol.WorktreeDelete, core.worktreeDelete)
}

// worktreeRestore answers thread/worktree/restore with
// threads.Manager.RestoreWorktree.
func (c Core) worktreeRestore(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadWorktreeRestoreParams) (protocol.ThreadWorktreeRestoreResult, error) {
	t, err := c.Threads.RestoreWorktree(ctx, p.ThreadID)
	if err != nil {
		return protocol.ThreadWorktreeRestoreResult{}, err
	}
	return protocol.ThreadWorktreeRestoreResult{Thread: t}, nil
}

// worktreeList answers worktree/list: the managed worktrees
// (workspace.Manager.List), of cwd's project when cwd is given
// (workspace.Manager.Project: a managed worktree's cwd names its project),
// sorted by path. Errors: invalidParams "cwd" when it is not an absolute
// path of an existing directory.
func (c Core) worktreeList(ctx context.Context, _ *jsonrpc.Conn, p protocol.WorktreeListParams) (protocol.WorktreeListResult, error) {
	project := ""
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return protocol.WorktreeListResult{}, protocol.InvalidParams("cwd", "must be an absolute path, got %q", p.Cwd)
		}
		var err error
		if project, err = c.Workspace.Project(ctx, p.Cwd); err != nil {
			return protocol.WorktreeListResult{}, err
		}
	}
	list, err := c.Workspace.List(ctx, project)
	if err != nil {
		return protocol.WorktreeListResult{}, err
	}
	res := protocol.WorktreeListResult{Worktrees: make([]protocol.WorktreeInfo, 0, len(list))}
	for _, w := range list {
		ids := w.ThreadIDs
		if ids == nil {
			ids = []string{}
		}
		res.Worktrees = append(res.Worktrees, protocol.WorktreeInfo{
			Path: w.Path, ProjectCwd: w.ProjectCwd, Head: w.Head, Branch: w.Branch, ThreadIDs: ids,
			LastUsedAt: w.LastUsedAt.UTC().Format(protocol.TimeLayout), Deleted: w.Deleted,
		})
	}
	return res, nil
}

// worktreeDelete answers worktree/delete with
// threads.Manager.DeleteWorktree, streaming the environment's cleanup
// output to the calling connection. Errors: invalidParams "path" for a
// relative path; the manager's.
func (c Core) worktreeDelete(ctx context.Context, conn *jsonrpc.Conn, p protocol.WorktreeDeleteParams) (protocol.WorktreeDeleteResult, error) {
	if !filepath.IsAbs(p.Path) {
		return protocol.WorktreeDeleteResult{}, protocol.InvalidParams("path", "must be an absolute path, got %q", p.Path)
	}
	snap, err := c.Threads.DeleteWorktree(ctx, conn, p.Path)
	if err != nil {
		return protocol.WorktreeDeleteResult{}, err
	}
	return protocol.WorktreeDeleteResult{Snapshot: snap}, nil
}
