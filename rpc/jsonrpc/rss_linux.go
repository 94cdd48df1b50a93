package jsonrpc

import (
	"bytes"
	"os"
	"strconv"
)

// rssBytes returns the resident set size from /proc/self/statm (its second
// field, in pages; proc(5)), or goMem, the memory the Go runtime mapped, if
// that file cannot be read.
func rssBytes(goMem int64) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err == nil {
		if f := bytes.Fields(b); len(f) > 1 {
			if pages, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	return goMem
}
