package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// DiffService is what the diff, git stage and file handlers need of the
// thread manager (threads.Manager implements it): one method per wire method,
// taking its params and returning its result. Errors are the threads layer's
// typed errors, mapped by the server's ErrorMappers (threadNotFound,
// turnInProgress, notGitRepo, gitConflict, invalidParams), except
// ErrFileChanged, which file/write maps itself (see file.go).
type DiffService interface {
	DiffRead(ctx context.Context, p protocol.ThreadDiffReadParams) (protocol.ThreadDiffReadResult, error)
	DiffFile(ctx context.Context, p protocol.ThreadDiffFileParams) (protocol.ThreadDiffFileResult, error)
	DiffRevert(ctx context.Context, p protocol.ThreadDiffRevertParams) (protocol.ThreadDiffRevertResult, error)
	GitStage(ctx context.Context, p protocol.GitStageParams) (protocol.GitStageResult, error)
	GitUnstage(ctx context.Context, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error)
	FileRead(ctx context.Context, p protocol.FileReadParams) (protocol.FileReadResult, error)
	FileList(ctx context.Context, p protocol.FileListParams) (protocol.FileListResult, error)
	FileWrite(ctx context.Context, p protocol.FileWriteParams) (protocol.FileWriteResult, error)
}

// RegisterDiffMethods installs the handlers of thread/diff/read,
// thread/diff/file, thread/diff/revert, git/stage, git/unstage, file/read,
// file/list and file/write on srv, each calling svc (spec: Method reference;
// "Workspaces, diffs and git"). Params are decoded and validated by the
// frame (protocol's Validate methods: scope, context, commit, reapply,
// turnId, maxBytes, text); the threads layer does the rest.
func RegisterDiffMethods(srv *jsonrpc.Server, svc DiffService) {
	registerDiff(srv, svc)
	registerGit(srv, svc)
	registerFile(srv, svc)
}

// registerDiff installs the thread/diff/* handlers.
func registerDiff(srv *jsonrpc.Server, svc DiffService) {
	jsonrpc.Handle(srv, protocol.ThreadDiffRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffReadParams) (protocol.ThreadDiffReadResult, error) {
		return svc.DiffRead(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadDiffFile, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffFileParams) (protocol.ThreadDiffFileResult, error) {
		return svc.DiffFile(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ThreadDiffRevert, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffRevertParams) (protocol.ThreadDiffRevertResult, error) {
		return svc.DiffRevert(ctx, p)
	})
}
