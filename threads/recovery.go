package threads

import (
	"context"
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// recoveryWarnings recovers the actions that died in cwd's checkout
// (diffscope.Differ.Recover: rolled back to their recovery points, or kept
// when every write had landed; issue 15) and returns one warning of source
// "server" for each recovery since the last load there, the server's start
// included (spec: thread/start and thread/resume warnings). A thread load
// runs it before any turn or write. A cwd outside a repository has none; a
// recovery that cannot finish is a warning too (its journal stays for the
// next action or load there).
func (p *placement) recoveryWarnings(ctx context.Context, cwd string) []protocol.Warning {
	if p.differ == nil {
		return nil
	}
	reports, err := p.differ.Recover(ctx, cwd)
	var out []protocol.Warning
	for _, r := range reports {
		out = append(out, protocol.Warning{Source: protocol.WarningSourceServer, Path: r.Checkout, Message: r.Message()})
	}
	if err != nil && !errors.Is(err, gitcli.ErrNotRepo) {
		p.log.Warn("recovering unfinished actions", "cwd", cwd, "err", err)
		out = append(out, protocol.Warning{Source: protocol.WarningSourceServer, Path: cwd,
			Message: fmt.Sprintf("an interrupted knightcode action in %s could not be recovered yet: %v; it is tried again before the next action there", cwd, err)})
	}
	return out
}
