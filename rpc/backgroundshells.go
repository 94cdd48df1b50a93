package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerBackgroundShells installs the thread/backgroundShells/list,
// /output and /stop handlers (spec: thread/backgroundShells/*), each a
// call of core.Threads. Errors: threadNotFound; invalidParams "id" for a
// shell the thread does not have.
func registerBackgroundShells(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsList, core.backgroundShellsList)
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsOutput, core.backgroundShellsOutput)
	jsonrpc.Handle(srv, protocol.ThreadBackgroundShellsStop, core.backgroundShellsStop)
}

// backgroundShellsList answers thread/backgroundShells/list with
// threads.Manager.BackgroundShellsList.
func (c Core) backgroundShellsList(_ context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsListParams) (protocol.BackgroundShellsListResult, error) {
	shells, err := c.Threads.BackgroundShellsList(p.ThreadID)
	return protocol.BackgroundShellsListResult{Shells: shells}, err
}

// backgroundShellsOutput answers thread/backgroundShells/output with
// threads.Manager.BackgroundShellsOutput.
func (c Core) backgroundShellsOutput(_ context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsOutputParams) (protocol.BackgroundShellsOutputResult, error) {
	out, err := c.Threads.BackgroundShellsOutput(p.ThreadID, p.ID)
	return protocol.BackgroundShellsOutputResult{Output: out}, err
}

// backgroundShellsStop answers thread/backgroundShells/stop with
// threads.Manager.BackgroundShellsStop.
func (c Core) backgroundShellsStop(_ context.Context, _ *jsonrpc.Conn, p protocol.BackgroundShellsStopParams) (protocol.BackgroundShellsStopResult, error) {
	stopped, err := c.Threads.BackgroundShellsStop(p.ThreadID, p.ID)
	return protocol.BackgroundShellsStopResult{Stopped: stopped}, err
}
