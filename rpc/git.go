package rpc

import (
	"context"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerGit installs the git family's handlers, git/stage and git/unstage
// (spec: Method reference, git/*).
func registerGit(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.GitStage, core.gitStage)
	jsonrpc.Handle(srv, protocol.GitUnstage, core.gitUnstage)
}

// gitStage answers git/stage inside WithCheckout: diffscope.Differ.Stage of
// one hunk, one file (its path taken literally) or, with neither (both
// absent: the frame refused "" and null), everything of the unstaged scope.
func (c Core) gitStage(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitStageParams) (protocol.GitStageResult, error) {
	paths, err := c.stage(ctx, p, c.Differ.Stage)
	return protocol.GitStageResult{Paths: paths}, err
}

// gitUnstage answers git/unstage inside WithCheckout:
// diffscope.Differ.Unstage of one hunk, one file or, with neither,
// everything of the staged scope.
func (c Core) gitUnstage(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error) {
	paths, err := c.stage(ctx, protocol.GitStageParams(p), c.Differ.Unstage)
	return protocol.GitUnstageResult{Paths: paths}, err
}

// stage runs act (Stage or Unstage) on the thread's checkout under its fence
// (threads.ErrTurnInProgress while a turn runs there).
func (c Core) stage(ctx context.Context, p protocol.GitStageParams,
	act func(context.Context, string, diffscope.StageOptions) ([]string, error)) ([]string, error) {
	var paths []string
	err := c.Threads.WithCheckout(ctx, p.ThreadID, func(cwd string) error {
		var err error
		paths, err = act(ctx, cwd, diffscope.StageOptions{Path: p.Path, HunkID: p.HunkID, Context: p.Context})
		return err
	})
	if err != nil {
		return nil, err
	}
	return nonNil(paths), nil
}
