package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TrustService is what the project trust handlers need of the thread
// manager (threads.Manager implements it over the server-owned trust
// store).
type TrustService interface {
	ReadTrust(ctx context.Context, p protocol.ProjectTrustReadParams) (protocol.ProjectTrustReadResult, error)
	SetTrust(ctx context.Context, p protocol.ProjectTrustSetParams) (protocol.ProjectTrustSetResult, error)
}

// RegisterTrustMethods installs the project/trust/read and
// project/trust/set handlers on srv (spec: Method reference).
func RegisterTrustMethods(srv *jsonrpc.Server, svc TrustService) {
	jsonrpc.Handle(srv, protocol.ProjectTrustRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ProjectTrustReadParams) (protocol.ProjectTrustReadResult, error) {
		return svc.ReadTrust(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.ProjectTrustSet, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.ProjectTrustSetParams) (protocol.ProjectTrustSetResult, error) {
		return svc.SetTrust(ctx, p)
	})
}
