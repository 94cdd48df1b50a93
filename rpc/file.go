package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerFile installs the file/read, file/list and file/write handlers
// (spec: Method reference, file/read, file/list, file/write).
func registerFile(srv *Server, svc DiffService) {
	Handle(srv, protocol.FileRead, func(ctx context.Context, _ *Conn, p protocol.FileReadParams) (protocol.FileReadResult, error) {
		return svc.FileRead(ctx, p)
	})
	Handle(srv, protocol.FileList, func(ctx context.Context, _ *Conn, p protocol.FileListParams) (protocol.FileListResult, error) {
		return svc.FileList(ctx, p)
	})
	Handle(srv, protocol.FileWrite, func(ctx context.Context, _ *Conn, p protocol.FileWriteParams) (protocol.FileWriteResult, error) {
		return svc.FileWrite(ctx, p)
	})
}
