package protocol

// Rows of the method table for approvals and dialogs: the requests the
// server sends to ask the person (see methods.go and ask.go).
var (
	// ItemToolCallRequestApproval ("item/toolCall/requestApproval") asks
	// whether a tool call may run. Spec: Approvals.
	ItemToolCallRequestApproval = serverRequest[ItemToolCallRequestApprovalParams, ItemToolCallRequestApprovalResult]("item/toolCall/requestApproval")

	// ItemToolCallRequestUserInput ("item/toolCall/requestUserInput") carries
	// ask_user's questions. Spec: Dialogs and extension UI.
	ItemToolCallRequestUserInput = serverRequest[ItemToolCallRequestUserInputParams, ItemToolCallRequestUserInputResult]("item/toolCall/requestUserInput")

	// UIDialog ("ui/dialog") asks a select, confirm, input or editor dialog.
	// Spec: Dialogs and extension UI.
	UIDialog = serverRequest[UIDialogParams, UIDialogResult]("ui/dialog")

	// UINotify ("ui/notify") shows a notice to the thread's subscribers.
	// Spec: Dialogs and extension UI.
	UINotify = serverNotification[UINotifyParams]("ui/notify")

	// UIState ("ui/state") sends every field of a thread's extension UI
	// but the widgets, whole, after one changed. Spec: Dialogs and
	// extension UI.
	UIState = serverNotification[UIStateParams]("ui/state")

	// UIWidgetNotification ("ui/widget") sends one widget of a thread's
	// extension UI set, replaced or removed. Spec: Dialogs and extension
	// UI.
	UIWidgetNotification = serverNotification[UIWidgetParams]("ui/widget")

	// UIEvent ("ui/event") carries a press of a button, or a change of a
	// field, in a widget's view to the thread's extensions. Spec: ui/event.
	UIEvent = clientRequest[UIEventParams, UIEventResult]("ui/event", Concurrent)
)
