package rpc

import (
	"context"

	"github.com/knightcode/knightcode/filesearch"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/workspace"
)

// registerFile installs the file family's handlers, file/read, file/list and
// file/write (spec: Method reference, file/read, file/list, file/write):
// each looks the thread's cwd up (threads.ErrThreadNotFound when it is not
// loaded) and calls the file functions of package workspace with it.
func registerFile(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.FileRead, core.fileRead)
	jsonrpc.Handle(srv, protocol.FileList, core.fileList)
	jsonrpc.Handle(srv, protocol.FileWrite, core.fileWrite)
}

// fileRead answers file/read with workspace.ReadFile in the thread's cwd.
func (c Core) fileRead(_ context.Context, _ *jsonrpc.Conn, p protocol.FileReadParams) (protocol.FileReadResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileReadResult{}, err
	}
	maxBytes := protocol.DefaultFileReadBytes
	if p.MaxBytes != nil {
		maxBytes = *p.MaxBytes
	}
	fc, err := workspace.ReadFile(cwd, p.Path, maxBytes)
	if err != nil {
		return protocol.FileReadResult{}, err
	}
	return protocol.FileReadResult{Path: fc.Path, Size: fc.Size, MtimeMs: fc.MtimeMs, Binary: fc.Binary, TooLarge: fc.TooLarge, Text: fc.Text}, nil
}

// fileList answers file/list with workspace.ListFiles in the thread's cwd.
func (c Core) fileList(_ context.Context, _ *jsonrpc.Conn, p protocol.FileListParams) (protocol.FileListResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileListResult{}, err
	}
	l, err := workspace.ListFiles(cwd, p.Path)
	if err != nil {
		return protocol.FileListResult{}, err
	}
	res := protocol.FileListResult{Root: l.Root, Entries: make([]protocol.FileEntry, len(l.Entries)), Truncated: l.Truncated}
	for i, e := range l.Entries {
		res.Entries[i] = protocol.FileEntry{Path: e.Path, Type: protocol.FileEntryFile}
		if e.Dir {
			res.Entries[i].Type = protocol.FileEntryDirectory
		}
	}
	return res, nil
}

// fileWrite answers file/write with workspace.WriteFile in the thread's cwd.
// It takes no fence: like an editor, it may write while a turn runs (the
// turn's file totals then include the write). Errors:
// workspace.ErrFileChanged.
func (c Core) fileWrite(_ context.Context, _ *jsonrpc.Conn, p protocol.FileWriteParams) (protocol.FileWriteResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileWriteResult{}, err
	}
	w, err := workspace.WriteFile(cwd, p.Path, p.Text, p.ExpectedMtimeMs)
	if err != nil {
		return protocol.FileWriteResult{}, err
	}
	return protocol.FileWriteResult{MtimeMs: w.MtimeMs}, nil
}

// fileSearch answers file/search with the server's one Searcher. Errors:
// invalidParams; toolMissing without fd; shuttingDown once the server
// stops; internal for a listing that timed out or failed empty.
func (s Settings) fileSearch(ctx context.Context, _ *jsonrpc.Conn, p protocol.FileSearchParams) (protocol.FileSearchResult, error) {
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.FileSearchResult{}, err
	}
	limit := 0
	if p.Limit != nil {
		limit = *p.Limit
	}
	r, err := s.Search.Search(ctx, filesearch.Request{Cwd: p.Cwd, Query: p.Query, Limit: limit, SearchID: p.SearchID})
	if err != nil {
		return protocol.FileSearchResult{}, err
	}
	res := protocol.FileSearchResult{Files: make([]protocol.FileMatch, 0, len(r.Files)), Truncated: r.Truncated}
	for _, m := range r.Files {
		idx := m.Indices
		if idx == nil {
			idx = []int{}
		}
		res.Files = append(res.Files, protocol.FileMatch{Path: m.Path, Score: m.Score, Indices: idx})
	}
	return res, nil
}
