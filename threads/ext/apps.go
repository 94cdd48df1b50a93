package ext

// AppsHost is implemented by a Host that knows what MCP Apps need of the
// thread (EXTENSIBILITY.md §3): whether the connection that loaded it
// draws apps, and the thread's approval mode now. A Host without it
// draws no apps and is not in fullAccess.
type AppsHost interface {
	// DrawsApps reports whether the connection that loaded the thread sent
	// capabilities.mode "desktop" explicitly (spec: "a client that draws
	// apps sends desktop as its mode"). It is fixed for the load.
	DrawsApps() bool
	// ApprovalMode is the thread's approval mode now: "ask" or
	// "fullAccess" (the spec's approvalMode values).
	ApprovalMode() string
}

// ApprovalFullAccess is the approval mode in which nothing asks (the
// spec's approvalMode "fullAccess").
const ApprovalFullAccess = "fullAccess"

// DrawsApps reports whether the connection that loaded the thread draws
// MCP Apps (AppsHost.DrawsApps); false when the Host cannot say.
func (th *Thread) DrawsApps() bool {
	h, ok := th.host.(AppsHost)
	return ok && h.DrawsApps()
}

// ApprovalMode is the thread's approval mode now (AppsHost.ApprovalMode);
// "" when the Host cannot say.
func (th *Thread) ApprovalMode() string {
	if h, ok := th.host.(AppsHost); ok {
		return h.ApprovalMode()
	}
	return ""
}
