package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerPayload installs payload/read: one chunk of a payload reference
// from the thread manager's spool (spec: "History, listings, and large
// values").
func registerPayload(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.PayloadRead, core.payloadRead)
}

// payloadRead answers payload/read: threads.Manager.ReadPayload's chunk
// (base64-encoded into the response line by PayloadReadResult.AppendJSON),
// with the next offset unless it ends the payload.
// Errors: invalidParams with data {field: "id", reason: "unknown" |
// "expired"}; invalidParams "offset"; shuttingDown.
func (c Core) payloadRead(_ context.Context, _ *jsonrpc.Conn, p protocol.PayloadReadParams) (protocol.PayloadReadResult, error) {
	b, size, err := c.Threads.ReadPayload(p.ID, p.Offset)
	if err != nil {
		return protocol.PayloadReadResult{}, err
	}
	res := protocol.PayloadReadResult{Data: b}
	next := p.Offset + int64(len(b))
	if next >= size {
		res.EOF = true
	} else {
		res.NextOffset = &next
	}
	return res, nil
}
