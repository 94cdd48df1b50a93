package rpc

import (
	"context"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerUI installs the ui/event handler (spec "ui/event"), a call of
// threads.Manager.UIEvent. Errors: threadNotFound; invalidParams "value"
// when the value does not fit the control.
func registerUI(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.UIEvent, core.uiEvent)
}

// uiEvent answers ui/event with threads.Manager.UIEvent: {} once the
// thread's view event handlers returned (at most 10 s), after the widgets
// they set.
func (c Core) uiEvent(ctx context.Context, _ *jsonrpc.Conn, p protocol.UIEventParams) (protocol.UIEventResult, error) {
	return protocol.UIEventResult{}, c.Threads.UIEvent(ctx, p.ThreadID, p.WidgetKey, p.ID, p.Value)
}
