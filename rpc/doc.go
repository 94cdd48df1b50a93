// Package rpc is the app-server's protocol frame: NDJSON framing with the
// spec's limits, connections with one writer goroutine and a bounded output
// queue, the handshake, dispatch of the method table to handlers, requests
// the server makes of the client, error mapping, and shutdown (spec:
// app-server.md, Handshake; Ownership, unloading, and shutdown; Limits).
//
// Handlers return, they do not reply: a handler is
//
//	func(ctx context.Context, c *rpc.Conn, p P) (R, error)
//
// installed with rpc.Handle(srv, protocol.SomeMethod, h) for a row of the
// method table in package protocol. The frame decodes and checks params
// (invalidParams naming the field), applies the row's serialization rule
// (inline, concurrent, perThread), writes the one response (also after ctx
// is cancelled) and maps errors with ToWireError and the server's
// ErrorMappers. Handlers of a method family live in one file of this package
// (thread.go, diff.go, ...) and call the threads layer with plain Go values;
// rpc translates and holds no business logic.
//
// Hooks for the threads layer: Conn.ID, Conn.Notify (honours the
// connection's opt-outs), Conn.Call (server requests, withdrawn with
// serverRequest/cancelled), Conn.Done, Server.Broadcast, Server.OnConnClose,
// Server.OnShutdown, Server.ShuttingDown and Server.SetDiagnosticsSource.
//
// This package must not know threads' internals, git, sessions or agents;
// it imports package protocol for wire types and, once they exist, the
// threads layer for handler calls.
package rpc
