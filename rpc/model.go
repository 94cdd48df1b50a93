package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerModel installs model/list: the models of the thread manager's
// provider registry, the one its turns use (spec: "Threads and turns").
func registerModel(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ModelList, func(context.Context, *jsonrpc.Conn, protocol.ModelListParams) (protocol.ModelListResult, error) {
		return core.Threads.Models(), nil
	})
}
