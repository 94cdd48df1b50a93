package protocol

// Rows of the method table for threads, turns and models (see methods.go).
var (
	// ThreadStart ("thread/start") starts a thread in a project directory
	// and subscribes the caller. Spec: Threads and turns.
	ThreadStart = clientRequest[ThreadStartParams, ThreadStartResult]("thread/start", Concurrent)

	// ThreadResume ("thread/resume") loads a saved thread, owning its
	// session file, subscribes the caller and returns history with live
	// snapshots. Spec: Subscriptions and replacement.
	ThreadResume = clientRequest[ThreadResumeParams, ThreadResumeResult]("thread/resume", PerThread)

	// ThreadFork ("thread/fork") copies a thread's history, up to and
	// including a turn, into a new thread (a new worktree for a worktree
	// thread) and subscribes the caller. Spec: Threads and turns.
	ThreadFork = clientRequest[ThreadForkParams, ThreadForkResult]("thread/fork", Concurrent)

	// ThreadRead ("thread/read") reads saved history without loading or
	// locking the thread. Spec: History, listings, and large values.
	ThreadRead = clientRequest[ThreadReadParams, ThreadReadResult]("thread/read", Concurrent)

	// ThreadUnsubscribe ("thread/unsubscribe") withdraws the caller's
	// subscription. Spec: Subscriptions and replacement.
	ThreadUnsubscribe = clientRequest[ThreadUnsubscribeParams, ThreadUnsubscribeResult]("thread/unsubscribe", PerThread)

	// ThreadList ("thread/list") lists saved threads, newest first. Spec:
	// History, listings, and large values.
	ThreadList = clientRequest[ThreadListParams, ThreadListResult]("thread/list", Concurrent)

	// ThreadSettingsUpdate ("thread/settings/update") changes a loaded
	// thread's model, thinking level or approval mode. Spec: Threads and
	// turns.
	ThreadSettingsUpdate = clientRequest[ThreadSettingsUpdateParams, ThreadSettingsUpdateResult]("thread/settings/update", PerThread)

	// ThreadStatusChanged ("thread/status/changed") reports a thread's new
	// status to every initialized connection.
	ThreadStatusChanged = serverNotification[ThreadStatusChangedParams]("thread/status/changed")

	// ThreadTurnCompleted ("thread/turn/completed") reports a turn's outcome
	// (summary) to every initialized connection.
	ThreadTurnCompleted = serverNotification[ThreadTurnCompletedParams]("thread/turn/completed")

	// ThreadSidebar ("thread/sidebar") sends a thread's whole sidebar row
	// (ThreadSidebarParams) to every initialized connection whenever the
	// row changes: its status (waitingOn and systemError included), its
	// title, its last turn's outcome, archive, unarchive and deletion.
	// Spec: Subscriptions and replacement ("Every initialized connection
	// gets thread/sidebar ... updates"), which leaves its shape open.
	ThreadSidebar = serverNotification[ThreadSidebarParams]("thread/sidebar")

	// ThreadTokenUsageUpdated ("thread/tokenUsage/updated") reports a
	// thread's cumulative usage after every finalized reply (subscribers).
	ThreadTokenUsageUpdated = serverNotification[ThreadTokenUsageUpdatedParams]("thread/tokenUsage/updated")

	// ModelList ("model/list") lists the models of every configured
	// provider. Spec: Threads and turns.
	ModelList = clientRequest[ModelListParams, ModelListResult]("model/list", Concurrent)

	// TurnStart ("turn/start") starts a turn and answers without waiting for
	// it; the caller is subscribed. Spec: Threads and turns.
	TurnStart = clientRequest[TurnStartParams, TurnStartResult]("turn/start", PerThread)

	// TurnSteer ("turn/steer") hands input to the running turn.
	TurnSteer = clientRequest[TurnSteerParams, TurnSteerResult]("turn/steer", PerThread)

	// TurnQueueAdd ("turn/queue/add") queues input that starts a turn of
	// its own once the thread is idle.
	TurnQueueAdd = clientRequest[TurnQueueAddParams, TurnQueueAddResult]("turn/queue/add", PerThread)

	// TurnQueueRemove ("turn/queue/remove") removes a queued input that has
	// not started.
	TurnQueueRemove = clientRequest[TurnQueueRemoveParams, TurnQueueRemoveResult]("turn/queue/remove", PerThread)

	// TurnInterrupt ("turn/interrupt") interrupts the running turn and drops
	// queued inputs; it answers at once, never waiting behind the thread's
	// other requests.
	TurnInterrupt = clientRequest[TurnInterruptParams, TurnInterruptResult]("turn/interrupt", Concurrent)

	// TurnStarted ("turn/started") opens a turn (subscribers).
	TurnStarted = serverNotification[TurnStartedParams]("turn/started")

	// TurnCompletedNotification ("turn/completed") closes a turn with its
	// summary (subscribers). Named with a suffix because TurnCompleted is
	// the turn status constant.
	TurnCompletedNotification = serverNotification[TurnCompletedParams]("turn/completed")

	// TurnQueueUpdated ("turn/queue/updated") sends the whole queue after
	// every change (subscribers).
	TurnQueueUpdated = serverNotification[TurnQueueUpdatedParams]("turn/queue/updated")

	// TurnDiffUpdated ("turn/diff/updated") sends a turn's file totals after
	// turn/completed (subscribers). Spec: Workspaces, diffs and git.
	TurnDiffUpdated = serverNotification[TurnDiffUpdatedParams]("turn/diff/updated")

	// ItemStarted ("item/started") opens a live item (subscribers).
	ItemStarted = serverNotification[ItemStartedParams]("item/started")

	// ItemCompleted ("item/completed") finalizes an item (subscribers).
	ItemCompleted = serverNotification[ItemCompletedParams]("item/completed")

	// ItemAgentMessageDelta ("item/agentMessage/delta") streams an agent
	// message's text (subscribers).
	ItemAgentMessageDelta = serverNotification[ItemDeltaParams]("item/agentMessage/delta")

	// ItemReasoningDelta ("item/reasoning/delta") streams reasoning text
	// (subscribers).
	ItemReasoningDelta = serverNotification[ItemDeltaParams]("item/reasoning/delta")
)
