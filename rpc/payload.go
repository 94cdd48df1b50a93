package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerPayload installs payload/read: one chunk of a payload reference
// from the thread manager's spool (spec: "History, listings, and large
// values"). Errors come from the manager as wire errors: invalidParams
// with data {field: "id", reason: "unknown" | "expired"}, invalidParams
// "offset", shuttingDown.
func registerPayload(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.PayloadRead, func(ctx context.Context, _ *jsonrpc.Conn, p protocol.PayloadReadParams) (protocol.PayloadReadResult, error) {
		return core.Threads.ReadPayload(ctx, p)
	})
}
