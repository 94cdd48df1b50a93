// Package rpc translates the app-server's methods to the core packages: one
// handler file per method family (thread.go, turn.go, diff.go, git.go,
// file.go, worktree.go, archive.go, environment.go, trust.go, model.go,
// config.go, tool.go, command.go, resource.go, account.go, payload.go,
// handoff.go, backgroundshells.go), and errmap.go, the one table that maps
// the core packages' errors to wire codes. The rule for finding a method's
// handler: a method's family name is its handler file's name. The family
// is the method's first segment (file/read -> file.go, git/stage ->
// git.go, turn/start -> turn.go), or for thread/<family>/... its second
// (thread/diff/revert -> diff.go, thread/worktree/restore -> worktree.go);
// thread/archive, thread/unarchive and thread/delete are archive.go;
// initialize and server/diagnostics are the transport's own (package
// rpc/jsonrpc).
//
// The transport (framing, connections, strict params decoding, dispatch,
// handshake, shutdown) is package rpc/jsonrpc; the wire shapes and the
// method table are package rpc/protocol.
//
// Handlers return, they do not reply: every handler is a named method (of
// Core, Settings or accounts)
//
//	func(ctx context.Context, c *jsonrpc.Conn, p P) (R, error)
//
// installed with jsonrpc.Handle(srv, protocol.SomeMethod, h), and each is a
// translator: it checks what the frame's strict decoding and P's Validate
// did not (turn.go checks a turn's input: text, clientMessageId, images,
// read here when given by path, and the fields of review comments),
// converts the params to the plain Go values of the core package it calls
// (threads' ids and option structs: threads.StartOptions, threads.Input,
// threads.HandoffOptions, ...; diffscope's, workspace's, config's), calls
// it once, and converts the result (the thread engine's views convert
// field for field: protocol.ThreadStartResult(opened)). rpc holds no
// business logic.
//
// Imports: rpc uses rpc/jsonrpc, rpc/protocol and the core packages
// (threads, workspace, diffscope, handoff, config, filesearch; agent for a
// turn's content blocks, the provider registry and the tool list;
// threads/session, internal/coreerr and internal/gitcli for their errors);
// only cmd/knightcode imports it. It must not know threads' internals,
// git, sessions or agents beyond the values it passes and the errors
// errmap.go maps; the core packages must not know rpc, and return no wire
// errors.
package rpc
