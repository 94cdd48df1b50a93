// Package jsonrpc is the app-server's transport: NDJSON framing with the
// spec's limits (frame.go), the wire structs (wire.go), two-way connections
// with one writer goroutine and a bounded output queue (conn.go, writer.go),
// the strict params decoder every handler goes through (params.go), dispatch
// of the method table to handlers (server.go), the handshake (handshake.go),
// server/diagnostics' process counters (diagnostics.go) and shutdown (spec:
// app-server.md, Handshake; Ownership, unloading, and shutdown; Limits).
//
// Handlers return, they do not reply: a handler is
//
//	func(ctx context.Context, c *jsonrpc.Conn, p P) (R, error)
//
// installed with jsonrpc.Handle(srv, protocol.SomeMethod, h) for a row of
// the method table in package protocol. The frame decodes and checks params
// (invalidParams naming the field, unknown members refused), applies the
// row's serialization rule (inline, concurrent, perThread), writes the one
// response (also after ctx is cancelled) and maps errors with ToWireError
// and the server's ErrorMappers.
//
// The same Conn over a pipe is the in-process client (package client).
//
// This package imports only package protocol, the standard library and
// jsontext (go-json-experiment's json/v2 engine, which reads each input line
// once when it is I-JSON: decodeIJSON): it must not know threads, git,
// sessions or agents. The handlers and the
// error table live in package rpc.
package jsonrpc
