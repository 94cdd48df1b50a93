package protocol

// MaxOptOutNotifications is the most method names
// capabilities.optOutNotifications may hold (spec: Handshake).
const MaxOptOutNotifications = 256

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// ClientInfo names the client, for the server's log.
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
	// Capabilities are what the client asks of this connection.
	Capabilities *ClientCapabilities `json:"capabilities,omitempty"`
}

// ClientInfo names a client program, for the server's log. Version is
// optional: a client that sends only its name is accepted.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// ClientCapabilities are the per-connection options a client chooses at
// initialize.
type ClientCapabilities struct {
	// OptOutNotifications lists notification methods this connection does not
	// want, at most 256 names. Unknown names are tolerated. Responses and
	// server requests are never filtered.
	OptOutNotifications []string `json:"optOutNotifications,omitempty"`
	// Mode is desktop (the default) or terminal: the threads a terminal
	// connection loads default to fullAccess and have no dialogs.
	Mode string `json:"mode,omitempty"`
}

// Validate refuses more than MaxOptOutNotifications opt-out names with
// invalidParams naming capabilities.optOutNotifications, and a mode other
// than desktop or terminal naming capabilities.mode.
func (p InitializeParams) Validate() error {
	if p.Capabilities == nil {
		return nil
	}
	if len(p.Capabilities.OptOutNotifications) > MaxOptOutNotifications {
		return InvalidParams("capabilities.optOutNotifications",
			"at most %d method names, got %d", MaxOptOutNotifications, len(p.Capabilities.OptOutNotifications))
	}
	switch p.Capabilities.Mode {
	case "", ClientModeDesktop, ClientModeTerminal:
		return nil
	}
	return InvalidParams("capabilities.mode", "must be %q or %q, got %q", ClientModeDesktop, ClientModeTerminal, p.Capabilities.Mode)
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ServerInfo ServerInfo `json:"serverInfo"`
	Platform   Platform   `json:"platform"`
}

// ServerInfo names the server; a client that needs a newer server checks
// Version (the protocol has no version number of its own).
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Platform describes the machine the server runs on, in Node.js's words so
// desktop clients can compare it with their own process.platform/arch.
type Platform struct {
	// OS is win32, darwin or linux (another system reports its own
	// lowercase name, e.g. freebsd).
	OS string `json:"os"`
	// Arch is x64, arm64, ia32, arm, ... (Node.js process.arch names).
	Arch string `json:"arch"`
	// HomeDir is the server user's home directory.
	HomeDir string `json:"homeDir"`
}

// InitializedParams are the (empty) params of the initialized notification.
type InitializedParams struct{}
