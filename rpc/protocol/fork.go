package protocol

// ThreadForkParams are the params of thread/fork: the thread to fork and,
// optionally, the turn whose end the fork's history stops at (the whole
// history when absent).
type ThreadForkParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId,omitempty" jsonschema:"minLength=1"`
}

// ThreadForkResult is the result of thread/fork, shaped as thread/start's:
// the new thread (saved, with sessionFile and forkedFromId, titled after
// its source with " (fork)"), the warnings of its load and its extension
// UI.
type ThreadForkResult struct {
	Thread   Thread    `json:"thread"`
	Warnings []Warning `json:"warnings"`
	UI       ThreadUI  `json:"ui"`
}
