package rpc

import (
	"context"
	"errors"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
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
		res, err := svc.FileWrite(ctx, p)
		if errors.Is(err, threads.ErrFileChanged) {
			return res, Errorf(protocol.CodeFileChanged, "%v", err)
		}
		return res, err
	})
}
