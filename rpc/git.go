package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerGit installs the git/stage and git/unstage handlers (spec: Method
// reference, git/*).
func registerGit(srv *jsonrpc.Server, svc DiffService) {
	jsonrpc.Handle(srv, protocol.GitStage, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitStageParams) (protocol.GitStageResult, error) {
		return svc.GitStage(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.GitUnstage, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error) {
		return svc.GitUnstage(ctx, p)
	})
}
