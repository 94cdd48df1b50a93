// Package depcheck holds the dependency test of the module (STYLE 13, after
// Go's go/build/deps_test.go): it lists every package with `go list` and
// fails on an import against the layering of ARCHITECTURE.md
//
//	cmd/knightcode -> rpc -> threads -> {agent, workspace, diffscope, handoff, config} -> internal/gitcli
//
// (rpc/protocol is a leaf every layer may import; client and the test
// helpers rpc/rpctest and internal/gittest are for tests only), and on any
// package other than internal/gitcli and the test helpers that starts git.
//
// It has no code of its own; it must not be imported.
package depcheck
