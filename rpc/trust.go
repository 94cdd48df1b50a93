package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The trust family: project/trust/read and project/trust/set (spec: Method
// reference), over the server-owned trust store (config.TrustStore). At a
// managed worktree's cwd the decision is its project's.

// RegisterTrustMethods installs the project/trust/read and
// project/trust/set handlers on srv, each calling core's trust store.
func RegisterTrustMethods(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ProjectTrustRead, core.trustRead)
	jsonrpc.Handle(srv, protocol.ProjectTrustSet, core.trustSet)
}

// trustRead answers project/trust/read from the server-owned trust store
// (config.TrustStore): the decision of cwd's project (true, false or null
// when undecided), whether an undecided project has project-local
// resources needing one, and the project path. Errors: invalidParams
// "cwd" (config.ParamError) when it is not an existing directory.
func (c Core) trustRead(ctx context.Context, _ *jsonrpc.Conn, p protocol.ProjectTrustReadParams) (protocol.ProjectTrustReadResult, error) {
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.ProjectTrustReadResult{}, err
	}
	t, err := c.Trust.Read(ctx, p.Cwd)
	if err != nil {
		return protocol.ProjectTrustReadResult{}, err
	}
	return protocol.ProjectTrustReadResult{Trusted: t.Trusted, NeedsTrust: t.NeedsTrust, Project: t.Project}, nil
}

// trustSet answers project/trust/set: it records the decision for cwd's
// project (at a managed worktree's cwd, its project). Loaded threads are
// not rebuilt; the next worktree setup reads it. Errors: invalidParams
// "cwd" when it is not an existing directory; filesystem failures.
func (c Core) trustSet(ctx context.Context, _ *jsonrpc.Conn, p protocol.ProjectTrustSetParams) (protocol.ProjectTrustSetResult, error) {
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.ProjectTrustSetResult{}, err
	}
	if _, err := c.Trust.Set(ctx, p.Cwd, p.Trusted); err != nil {
		return protocol.ProjectTrustSetResult{}, err
	}
	return protocol.ProjectTrustSetResult{}, nil
}
