package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The command family: command/list over config.Store's resources (spec:
// Method reference, command/list). Installed by RegisterSettingsMethods.

// commandList answers command/list: the prompt templates and skills
// ("skill:<name>") of the resources a thread in cwd finds (for threadId,
// the loaded thread's cwd, as of now, then the commands its extensions
// registered), found without starting anything or writing. Errors: invalidParams; threadNotFound.
func (s Settings) commandList(ctx context.Context, _ *jsonrpc.Conn, p protocol.CommandListParams) (protocol.CommandListResult, error) {
	cwd := p.Cwd
	if p.ThreadID != "" {
		var err error
		if cwd, err = s.Threads.Checkout(p.ThreadID); err != nil {
			return protocol.CommandListResult{}, err
		}
	} else if err := absDir("cwd", cwd); err != nil {
		return protocol.CommandListResult{}, err
	}
	set, err := s.Store.Resources(ctx, cwd)
	if err != nil {
		return protocol.CommandListResult{}, err
	}
	res := protocol.CommandListResult{Commands: []protocol.CommandInfo{}}
	for _, c := range set.Commands() {
		res.Commands = append(res.Commands, protocol.CommandInfo{Name: c.Name, Description: c.Description})
	}
	if p.ThreadID != "" {
		// The commands the thread's extensions registered (EXTENSIBILITY.md
		// §7: command/list {threadId} lists them; {cwd} starts nothing).
		cmds, err := s.Threads.Commands(p.ThreadID)
		if err != nil {
			return protocol.CommandListResult{}, err
		}
		for _, c := range cmds {
			res.Commands = append(res.Commands, protocol.CommandInfo{Name: c.Name, Description: c.Description})
		}
	}
	return res, nil
}
