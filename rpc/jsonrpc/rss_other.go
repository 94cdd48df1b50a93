//go:build !linux

package jsonrpc

// rssBytes approximates the resident set size by goMem, the memory the Go
// runtime mapped; only Linux reads the real value.
func rssBytes(goMem int64) int64 { return goMem }
