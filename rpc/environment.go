package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// EnvironmentService is what the environment handlers need of the thread
// manager (threads.Manager implements it).
type EnvironmentService interface {
	ListEnvironments(ctx context.Context, p protocol.EnvironmentListParams) (protocol.EnvironmentListResult, error)
	SaveEnvironments(ctx context.Context, p protocol.EnvironmentSaveParams) (protocol.EnvironmentSaveResult, error)
}

// RegisterEnvironmentMethods installs the environment/list and
// environment/save handlers on srv (spec: Method reference,
// environment/list and environment/save).
func RegisterEnvironmentMethods(srv *jsonrpc.Server, svc EnvironmentService) {
	jsonrpc.Handle(srv, protocol.EnvironmentList, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.EnvironmentListParams) (protocol.EnvironmentListResult, error) {
		return svc.ListEnvironments(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.EnvironmentSave, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.EnvironmentSaveParams) (protocol.EnvironmentSaveResult, error) {
		return svc.SaveEnvironments(ctx, p)
	})
}
