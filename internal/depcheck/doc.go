// Package depcheck holds the dependency test of the module (STYLE 13, after
// Go's go/build/deps_test.go): it lists every package with `go list` and
// fails on an import against the layering of ARCHITECTURE.md
//
//	cmd/knightcode -> rpc -> threads -> {agent, workspace, diffscope, handoff, config, filesearch} -> gitstate -> internal/gitcli -> internal/procgroup
//
// with the extension seam threads/ext below threads and beside agent,
// which the extension runtime (extensions) and the MCP client (mcp)
// implement from beside threads, neither importing threads nor imported by
// it, and which never imports the wire (rpc/...)
// (rpc also calls workspace, diffscope and config directly; rpc/protocol is
// a leaf every layer may import; rpc/jsonrpc, the transport, imports only
// rpc/protocol and jsontext and only rpc, cmd/knightcode and client import it; client is
// for tests and client programs (cmd/knightcode-demo) only, the test helpers
// rpc/rpctest, internal/gittest and internal/proctest for tests only;
// gitstate is imported by workspace, diffscope and handoff only), on
// an import between packages of one layer that sameLayer does not declare,
// and on any package other than internal/gitcli and the test helpers that
// starts git.
//
// It also holds the thread engine to a plain Go API (engineapi_test.go):
// no exported function or method of threads (or a package inside it) takes
// a protocol.*Params or returns a protocol.*Result, and threads never
// calls protocol.InvalidParams or protocol.Errorf nor builds a
// protocol.Error; rpc translates between the wire and the engine.
//
// It has no code of its own; it must not be imported.
package depcheck
