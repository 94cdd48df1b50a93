package jsonrpc

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// BenchmarkReadPayloadReadReply measures the reading side of one
// payload/read reply line on a client connection (issue 24): a 48 KiB chunk,
// base64 in a line of about 64 KiB, through handleLine (envelope decode,
// UTF-8 and duplicate-member checks) to the waiting call.
func BenchmarkReadPayloadReadReply(b *testing.B) {
	chunk := make([]byte, 48<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range chunk {
		chunk[i] = byte(rng.Uint32())
	}
	next := int64(len(chunk))
	line := appendedResponseLine([]byte("7"), protocol.PayloadReadResult{Data: chunk, NextOffset: &next})
	line = line[:len(line)-1] // the reader hands over a line without its newline
	c := newConn(1, strings.NewReader(""), io.Discard, DefaultMaxLineBytes, DefaultMaxPendingOutput, slog.New(slog.DiscardHandler))
	ch := make(chan callReply, 1)
	ctx := context.Background()
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		c.mu.Lock()
		c.calls["7"] = ch
		c.mu.Unlock()
		c.handleLine(ctx, line)
		if r := <-ch; r.err != nil || len(r.result) < len(chunk) {
			b.Fatalf("reply: %d bytes, %v", len(r.result), r.err)
		}
	}
}
