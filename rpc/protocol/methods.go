package protocol

// The method table: one row per method of the protocol, kept in name order.
//
// A row is a typed descriptor made by one of clientRequest, clientNotification,
// serverRequest or serverNotification; the variable is named after the method
// in CamelCase (thread/diff/read -> ThreadDiffRead) and its types are
// <Var>Params and <Var>Result, declared in the family's file. Package jsonrpc
// dispatches by this table (jsonrpc.Handle installs a handler for a
// ClientRequest), its tests fail for a client request without a handler, and
// app-server.schema.json is generated from it:
//
//	go run ./rpc/protocol/internal/genschema
var (
	// ErrorNotification ("error") reports a problem that has no request to
	// answer: a line over the 64 MiB limit, a line that is not JSON and has no
	// recoverable id, a queued input that failed to start, a thread that lost
	// ownership of its session file. Spec: Limits and client reference.
	ErrorNotification = serverNotification[ErrorParams]("error")

	// WarningNotification ("warning") is a subscriber-only warning about a
	// thread that no response carries (spec: "Later extension errors send a
	// subscriber-only warning with threadId"): files a turn's capture left
	// out, which undoing the turn cannot restore or remove; ignored files
	// an archive's, a prune's or worktree/delete's snapshot did not keep;
	// a worktree an archive kept.
	WarningNotification = serverNotification[WarningParams]("warning")

	// Initialize ("initialize") opens the handshake. Spec: Handshake.
	Initialize = clientRequest[InitializeParams, InitializeResult]("initialize", Inline)

	// Initialized ("initialized") closes the handshake; only after it does the
	// server accept other requests. Spec: Handshake.
	Initialized = clientNotification[InitializedParams]("initialized", Inline)

	// ServerDiagnostics ("server/diagnostics") reports the shared server's
	// memory and resource counters. Spec: Method reference, server/diagnostics.
	ServerDiagnostics = clientRequest[ServerDiagnosticsParams, ServerDiagnosticsResult]("server/diagnostics", Concurrent)

	// ServerRequestCancelled ("serverRequest/cancelled") withdraws a server
	// request (an approval, a dialog) the client has not answered yet.
	// Spec: Approvals.
	ServerRequestCancelled = serverNotification[ServerRequestCancelledParams]("serverRequest/cancelled")
)
