package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerFile installs the file/read, file/list and file/write handlers
// (spec: Method reference, file/read, file/list, file/write).
func registerFile(srv *jsonrpc.Server, svc DiffService) {
	jsonrpc.Handle(srv, protocol.FileRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.FileReadParams) (protocol.FileReadResult, error) {
		return svc.FileRead(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.FileList, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.FileListParams) (protocol.FileListResult, error) {
		return svc.FileList(ctx, p)
	})
	jsonrpc.Handle(srv, protocol.FileWrite, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.FileWriteParams) (protocol.FileWriteResult, error) {
		return svc.FileWrite(ctx, p)
	})
}
