package protocol

// Input limits (spec: "Threads and turns").
const (
	// MaxClientMessageIDChars bounds clientMessageId, in characters (1-128).
	MaxClientMessageIDChars = 128
	// MaxImageBytes bounds an image file given by path: 20 MiB.
	MaxImageBytes = 20 << 20
)

// ImageInput is an image attached to turn/start or turn/queue/add: inline
// {mimeType, data} (base64 data of an image/* type) or {path} (an absolute
// path to a regular PNG, JPEG, GIF or WebP file of at most 20 MiB on the
// server's filesystem).
type ImageInput struct {
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	Path     string `json:"path,omitempty"`
}

// TurnStartParams are the params of turn/start: the user's text, an
// optional client token requestId echoed in the result and turn/started, an
// optional clientMessageId (1-128 characters) echoed on the turn's first
// live userMessage item, and images.
type TurnStartParams struct {
	ThreadID        string          `json:"threadId"`
	Text            string          `json:"text"`
	RequestID       string          `json:"requestId,omitempty"`
	ClientMessageID string          `json:"clientMessageId,omitempty"`
	Images          []ImageInput    `json:"images,omitempty"`
	Comments        []ReviewComment `json:"comments,omitempty"`
}

// Values of ReviewComment.Side.
const (
	ReviewSideOld = "old"
	ReviewSideNew = "new"
)

// MaxReviewComments bounds the comments of one turn/start or
// turn/queue/add.
const MaxReviewComments = 200

// ReviewComment is a review comment the user drafted on a diff and sends
// with the next turn/start or turn/queue/add: the server quotes the
// commented lines from the diff the user reviewed to the model, and the
// user item shows the comments next to the typed text.
// FromTree and ToTree are the trees of the diff read the comment was made
// on (thread/diff/read's fromTree and toTree); Side says which of them the
// lines are in ("old": fromTree, "new": toTree); StartLine and EndLine are
// one-based and inclusive; Path is the file's repository-relative path;
// Body is the comment.
type ReviewComment struct {
	Path      string `json:"path"`
	Side      string `json:"side"`
	StartLine int    `json:"startLine" jsonschema:"minimum=1"`
	EndLine   int    `json:"endLine" jsonschema:"minimum=1"`
	Body      string `json:"body"`
	FromTree  string `json:"fromTree"`
	ToTree    string `json:"toTree"`
}

// Values of TurnStartResult.Status.
const (
	TurnStartStarted   = "started"
	TurnStartHandled   = "handled"
	TurnStartCancelled = "cancelled"
)

// TurnStartResult is the result of turn/start, sent without waiting for the
// turn: status started (handled and cancelled need extensions), the thread
// and the echoed requestId.
type TurnStartResult struct {
	Status    string `json:"status"`
	ThreadID  string `json:"threadId"`
	RequestID string `json:"requestId,omitempty"`
}

// TurnStartedParams are the params of turn/started: the new turn
// (inProgress, startedAt) and the requestId of the start that began it.
type TurnStartedParams struct {
	ThreadID  string `json:"threadId"`
	Turn      Turn   `json:"turn"`
	RequestID string `json:"requestId,omitempty"`
}

// TurnCompletedParams are the params of turn/completed: the turn's summary
// without items (error.message bounded to 2,000 characters).
type TurnCompletedParams struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ItemStartedParams are the params of item/started: a live item with
// provisional times and contents.
type ItemStartedParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Item     Item   `json:"item"`
}

// ItemCompletedParams are the params of item/completed: the item's final
// times, text, status, output, fileChanges and index.
type ItemCompletedParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Item     Item   `json:"item"`
}

// ItemDeltaParams are the params of item/agentMessage/delta and
// item/reasoning/delta: Delta extends the text of the item ItemID.
type ItemDeltaParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Delta    string `json:"delta"`
}

// TurnSteerParams are the params of turn/steer: text handed to the running
// turn ExpectedTurnID.
type TurnSteerParams struct {
	ThreadID       string `json:"threadId"`
	Text           string `json:"text"`
	ExpectedTurnID string `json:"expectedTurnId"`
}

// TurnSteerResult is the (empty) result of turn/steer.
type TurnSteerResult struct{}

// TurnQueueAddParams are the params of turn/queue/add.
type TurnQueueAddParams struct {
	ThreadID        string          `json:"threadId"`
	Text            string          `json:"text"`
	ClientMessageID string          `json:"clientMessageId,omitempty"`
	Images          []ImageInput    `json:"images,omitempty"`
	Comments        []ReviewComment `json:"comments,omitempty"`
}

// TurnQueueAddResult is the result of turn/queue/add: the input's queueId.
type TurnQueueAddResult struct {
	QueueID string `json:"queueId"`
}

// TurnQueueRemoveParams are the params of turn/queue/remove.
type TurnQueueRemoveParams struct {
	ThreadID string `json:"threadId"`
	QueueID  string `json:"queueId"`
}

// TurnQueueRemoveResult is the result of turn/queue/remove: true when the
// input will not start; false when it was unknown, already started or
// already removed.
type TurnQueueRemoveResult struct {
	Removed bool `json:"removed"`
}

// TurnQueueUpdatedParams are the params of turn/queue/updated: the whole
// queue after a change.
type TurnQueueUpdatedParams struct {
	ThreadID string        `json:"threadId"`
	Steering []string      `json:"steering"`
	FollowUp []QueuedInput `json:"followUp"`
}

// TurnInterruptParams are the params of turn/interrupt: the thread and,
// optionally, the turn meant (a stale one answers turnMismatch).
type TurnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId,omitempty"`
}

// TurnInterruptResult is the (empty) result of turn/interrupt.
type TurnInterruptResult struct{}

// TurnDiffUpdatedParams are the params of turn/diff/updated, sent after
// turn/completed: the files changed while the turn ran with their net line
// totals (paths relative to the repository root).
type TurnDiffUpdatedParams struct {
	ThreadID string      `json:"threadId"`
	TurnID   string      `json:"turnId"`
	Files    []FileTotal `json:"files"`
}
