package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// registerFile installs the file family's handlers, file/read, file/list and
// file/write (spec: Method reference, file/read, file/list, file/write):
// each looks the thread's cwd up (threads.ErrThreadNotFound when it is not
// loaded) and calls the file functions of package threads with it.
func registerFile(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.FileRead, core.fileRead)
	jsonrpc.Handle(srv, protocol.FileList, core.fileList)
	jsonrpc.Handle(srv, protocol.FileWrite, core.fileWrite)
}

// fileRead answers file/read with threads.ReadFile in the thread's cwd.
func (c Core) fileRead(_ context.Context, _ *jsonrpc.Conn, p protocol.FileReadParams) (protocol.FileReadResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileReadResult{}, err
	}
	maxBytes := 0
	if p.MaxBytes != nil {
		maxBytes = *p.MaxBytes
	}
	return threads.ReadFile(cwd, p.Path, maxBytes)
}

// fileList answers file/list with threads.ListFiles in the thread's cwd.
func (c Core) fileList(_ context.Context, _ *jsonrpc.Conn, p protocol.FileListParams) (protocol.FileListResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileListResult{}, err
	}
	return threads.ListFiles(cwd, p.Path)
}

// fileWrite answers file/write with threads.WriteFile in the thread's cwd.
// It takes no fence: like an editor, it may write while a turn runs (the
// turn's file totals then include the write). Errors:
// threads.ErrFileChanged.
func (c Core) fileWrite(_ context.Context, _ *jsonrpc.Conn, p protocol.FileWriteParams) (protocol.FileWriteResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileWriteResult{}, err
	}
	return threads.WriteFile(cwd, p.Path, p.Text, p.ExpectedMtimeMs)
}
