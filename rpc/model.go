package rpc

import (
	"context"

	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerModel installs model/list: the models of the process's provider
// registry (core.Models), the one the thread manager's turns use (spec:
// "Threads and turns").
func registerModel(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ModelList, core.modelList)
}

// modelList answers model/list: every model of every configured provider
// and of every provider a thread's extension registered (available: false
// once no loaded thread registers it), with its thinking levels (["off"]
// for a non-reasoning model), and for a real provider's model (a
// configuration-only extension provider's too) its catalogue limits and
// prices.
func (c Core) modelList(context.Context, *jsonrpc.Conn, protocol.ModelListParams) (protocol.ModelListResult, error) {
	res := protocol.ModelListResult{Models: []protocol.ModelInfo{}}
	for _, mdl := range c.Models.List() {
		levels := make([]string, len(mdl.ThinkingLevels))
		for i, l := range mdl.ThinkingLevels {
			levels[i] = string(l)
		}
		info := protocol.ModelInfo{
			Provider: mdl.Provider, ID: mdl.ID, Name: mdl.Name,
			ThinkingLevels: levels, ContextWindow: mdl.ContextWindow,
		}
		if ci, ok := c.Models.ModelInfo(mdl.Provider, mdl.ID); ok {
			info.Reasoning, info.Input, info.MaxTokens = ci.Reasoning, ci.Input, ci.MaxTokens
			if ci.Cost != (catalog.Price{}) {
				info.Cost = &protocol.ModelPrice{Input: ci.Cost.Input, Output: ci.Cost.Output, CacheRead: ci.Cost.CacheRead, CacheWrite: ci.Cost.CacheWrite}
			}
		}
		if !c.Models.Available(mdl.Provider) {
			info.Available = new(bool)
		}
		res.Models = append(res.Models, info)
	}
	return res, nil
}
