// Package rpc translates the app-server's methods to the core packages: one
// handler file per method family (thread.go, turn.go, diff.go, git.go,
// file.go, worktree.go, archive.go, environment.go, trust.go, model.go,
// config.go, tool.go, command.go, resource.go, account.go, payload.go,
// handoff.go, backgroundshells.go), and errmap.go, the one table that
// maps the core packages' errors to wire codes. The rule for finding a method's handler: a method's family name is
// its handler file's name. The family is the method's first segment
// (file/read -> file.go, git/stage -> git.go, turn/start -> turn.go), or for
// thread/<family>/... its second (thread/diff/revert -> diff.go,
// thread/worktree/restore -> worktree.go); thread/archive, thread/unarchive
// and thread/delete are archive.go; initialize and server/diagnostics are
// the transport's own (package rpc/jsonrpc).
//
// The transport (framing, connections, strict params decoding, dispatch,
// handshake, shutdown) is package rpc/jsonrpc; the wire shapes and the
// method table are package rpc/protocol.
//
// Handlers return, they do not reply: a handler is
//
//	func(ctx context.Context, c *jsonrpc.Conn, p P) (R, error)
//
// installed with jsonrpc.Handle(srv, protocol.SomeMethod, h). rpc holds no
// business logic.
//
// This package must not know threads' internals, git, sessions or agents
// beyond the errors errmap.go maps.
package rpc
