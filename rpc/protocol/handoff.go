package protocol

// Rows of thread/handoff (spec: "Workspaces, diffs and git"; Method
// reference, thread/handoff).
var (
	// ThreadHandoff ("thread/handoff") moves a thread and its uncommitted
	// changes between its worktree and the main checkout, then reloads the
	// thread where it now runs.
	ThreadHandoff = clientRequest[ThreadHandoffParams, ThreadHandoffResult]("thread/handoff", PerThread)

	// ThreadReplaced ("thread/replaced") tells a thread's subscribers that
	// the thread was reloaded (a handoff: same id, new cwd and workspace);
	// their subscriptions move to Thread. Spec: Subscriptions and
	// replacement.
	ThreadReplaced = serverNotification[ThreadReplacedParams]("thread/replaced")
)

// Handoff directions (ThreadHandoffParams.To).
const (
	HandoffToLocal    = "local"
	HandoffToWorktree = "worktree"
)

// ThreadHandoffParams are the params of thread/handoff. To is "local"
// (from the thread's worktree to the main checkout) or "worktree" (back,
// or into a new managed worktree for a thread born in the main checkout).
// Branch names the main checkout's branch (to local only); Environment
// names the environment whose setup script runs in a newly made worktree
// (to worktree only). DryRun runs every check and writes nothing.
type ThreadHandoffParams struct {
	ThreadID    string  `json:"threadId"`
	To          string  `json:"to"`
	Branch      *string `json:"branch,omitempty"`
	Environment *string `json:"environment,omitempty"`
	DryRun      bool    `json:"dryRun,omitempty"`
}

// ThreadKey returns params.threadId.
func (p ThreadHandoffParams) ThreadKey() string { return p.ThreadID }

// Validate refuses an unknown direction, an empty branch or environment,
// branch with to "worktree" and environment with to "local" (invalidParams
// naming the field; spec, issue 9's decisions).
func (p ThreadHandoffParams) Validate() error {
	if p.ThreadID == "" {
		return InvalidParams("threadId", "must not be empty")
	}
	if p.To != HandoffToLocal && p.To != HandoffToWorktree {
		return InvalidParams("to", "must be %q or %q, got %q", HandoffToLocal, HandoffToWorktree, p.To)
	}
	if p.Branch != nil {
		if *p.Branch == "" {
			return InvalidParams("branch", "must not be empty (omit it for the default branch)")
		}
		if p.To == HandoffToWorktree {
			return InvalidParams("branch", "applies to a handoff to the main checkout (to: %q) only", HandoffToLocal)
		}
	}
	if p.Environment != nil {
		if *p.Environment == "" {
			return InvalidParams("environment", "must not be empty (omit it for none)")
		}
		if p.To == HandoffToLocal {
			return InvalidParams("environment", "applies to a handoff into a new worktree (to: %q) only", HandoffToWorktree)
		}
	}
	return nil
}

// ThreadHandoffResult is the result of thread/handoff: the thread where it
// now runs (unchanged with dryRun), the main checkout's branch after a
// handoff to local ("refs/heads/..." shortened to its name; with dryRun the
// branch it would get), and warnings (earlier interrupted handoffs that
// were finished or undone first, files a capture left out, ...).
type ThreadHandoffResult struct {
	Thread   Thread    `json:"thread"`
	Branch   string    `json:"branch,omitempty"`
	Warnings []Warning `json:"warnings"`
}

// ThreadReplacedParams are the params of thread/replaced: ThreadID is the
// thread replaced, Thread the thread its subscribers move to: the same id
// reloaded after a handoff, a new thread after a session-replacing
// extension command (ctx.newSession), whose RequestID is the requestId of
// the turn/start that ran the command (absent when it had none).
type ThreadReplacedParams struct {
	ThreadID  string `json:"threadId"`
	Thread    Thread `json:"thread"`
	RequestID string `json:"requestId,omitempty"`
}
