package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/knightcode/knightcode/threads/ext"
)

// command is /mcp (EXTENSIBILITY.md §2 "Lifecycle": connections, sign-in
// and status belong to the MCP extension of each thread):
//   - "/mcp" shows each server's status (connecting, connected with its
//     tool count, failed and why, sign-in required, disabled) as a notice;
//   - "/mcp retry [name]" reconnects the failed (and signed-out) servers,
//     or the one named;
//   - "/mcp login <name>" signs in to the HTTP server named (signin.go).
func (rt *runtime) command() ext.Command {
	return ext.Command{
		Name:        "mcp",
		Description: "MCP servers: status; retry [name]; login <name>",
		Handler: func(_ context.Context, th *ext.Thread, args string) error {
			err := rt.runCommand(th, args)
			if err != nil && th.HasUI {
				// The person typed the command: a mistake (a usage, an
				// unknown server) is said to them, not reported as the
				// extension's failure.
				th.UI.Notify("error", "/mcp: "+err.Error())
				return nil
			}
			return err
		},
	}
}

// runCommand runs "/mcp args" (see command).
func (rt *runtime) runCommand(th *ext.Thread, args string) error {
	f := strings.Fields(args)
	switch {
	case len(f) == 0:
		th.UI.Notify("info", rt.statusText())
		return nil
	case f[0] == "retry" && len(f) <= 2:
		name := ""
		if len(f) == 2 {
			name = f[1]
		}
		started, err := rt.retry(name)
		if err != nil {
			return err
		}
		if len(started) == 0 {
			th.UI.Notify("info", "MCP: no server to retry")
		} else {
			th.UI.Notify("info", "MCP: reconnecting "+strings.Join(started, ", "))
		}
		return nil
	case f[0] == "login" && len(f) == 2:
		return rt.login(th, f[1])
	}
	return fmt.Errorf("usage: /mcp, /mcp retry [name], /mcp login <name>")
}

// statusText is one line per configured server: "<name>: <status>".
func (rt *runtime) statusText() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.servers) == 0 {
		return "MCP: no server is configured (mcp.json)"
	}
	lines := []string{"MCP servers:"}
	for _, s := range rt.servers {
		lines = append(lines, fmt.Sprintf("%s: %s", s.cfg.Name, s.statusLocked()))
	}
	return strings.Join(lines, "\n")
}
