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
)
