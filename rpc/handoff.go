package rpc

import (
	"context"

	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// registerHandoff installs the handler of thread/handoff on srv (spec:
// Method reference, thread/handoff). Its params were checked by the frame
// (ThreadHandoffParams.Validate: to, and branch and environment each for
// its direction only).
func registerHandoff(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadHandoff, core.threadHandoff)
}

// threadHandoff answers thread/handoff with threads.Manager.Handoff; the
// setup output of the environment of a worktree the handoff makes streams
// to the caller.
func (c Core) threadHandoff(ctx context.Context, conn *jsonrpc.Conn, p protocol.ThreadHandoffParams) (protocol.ThreadHandoffResult, error) {
	o := threads.HandoffOptions{To: handoff.Direction(p.To), DryRun: p.DryRun}
	if p.Branch != nil {
		o.Branch = *p.Branch
	}
	if p.Environment != nil {
		o.Environment = *p.Environment
	}
	res, err := c.Threads.Handoff(ctx, conn, p.ThreadID, o)
	if err != nil {
		return protocol.ThreadHandoffResult{}, err
	}
	return protocol.ThreadHandoffResult(res), nil
}
