package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerGit installs the git/stage and git/unstage handlers (spec: Method
// reference, git/*).
func registerGit(srv *Server, svc DiffService) {
	Handle(srv, protocol.GitStage, func(ctx context.Context, _ *Conn, p protocol.GitStageParams) (protocol.GitStageResult, error) {
		return svc.GitStage(ctx, p)
	})
	Handle(srv, protocol.GitUnstage, func(ctx context.Context, _ *Conn, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error) {
		return svc.GitUnstage(ctx, p)
	})
}
