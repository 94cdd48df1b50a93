package jsonrpc

import (
	"context"
	"os"
	"runtime"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// initialize answers the handshake's first request (spec: Handshake): it
// records the connection's opt-out list and reports serverInfo and platform.
// A connection initializes once; a second initialize is invalidParams.
// Params were validated already (at most 256 opt-out names).
func (s *Server) initialize(_ context.Context, c *Conn, p protocol.InitializeParams) (protocol.InitializeResult, error) {
	if c.initState.Load() != stateNew {
		return protocol.InitializeResult{}, InvalidParams("", "the connection is already initialized; initialize is sent once")
	}
	if p.Capabilities != nil && len(p.Capabilities.OptOutNotifications) > 0 {
		optOut := make(map[string]bool, len(p.Capabilities.OptOutNotifications))
		for _, m := range p.Capabilities.OptOutNotifications {
			optOut[m] = true
		}
		c.optOut.Store(&optOut)
	}
	if p.Capabilities != nil && p.Capabilities.Mode == protocol.ClientModeTerminal {
		c.terminal.Store(true)
	}
	if p.Capabilities != nil && p.Capabilities.Mode == protocol.ClientModeDesktop {
		c.desktop.Store(true)
	}
	c.initState.Store(stateAwaitInitialized)
	client := protocol.ClientInfo{}
	if p.ClientInfo != nil {
		client = *p.ClientInfo
	}
	c.log.Info("client initialized", "client", client.Name, "clientVersion", client.Version)
	return protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: s.cfg.Name, Version: s.cfg.Version},
		Platform:   platform(),
	}, nil
}

// ClientMode is the connection's capabilities.mode: protocol.ClientModeDesktop
// (the default) or protocol.ClientModeTerminal. It is settled by initialize,
// before any other request of the connection is handled.
func (c *Conn) ClientMode() string {
	if c.terminal.Load() {
		return protocol.ClientModeTerminal
	}
	return protocol.ClientModeDesktop
}

// DrawsApps reports whether the connection sent capabilities.mode
// "desktop" explicitly in initialize: a client that draws MCP Apps (spec
// "mcp/app/readResource and mcp/app/callTool"). A connection without a
// mode keeps the desktop defaults but draws no apps (EXTENSIBILITY.md §3).
func (c *Conn) DrawsApps() bool { return c.desktop.Load() }

// platform describes this machine in Node.js's names (process.platform and
// process.arch), which the spec's os values (win32, darwin, linux) follow.
func platform() protocol.Platform {
	goos := runtime.GOOS
	if goos == "windows" {
		goos = "win32"
	}
	home, _ := os.UserHomeDir()
	return protocol.Platform{OS: goos, Arch: nodeArch(runtime.GOARCH), HomeDir: home}
}

// nodeArch maps GOARCH to Node.js's process.arch name.
func nodeArch(goarch string) string {
	switch goarch {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	case "ppc64le":
		return "ppc64"
	case "mipsle":
		return "mipsel"
	}
	return goarch
}
