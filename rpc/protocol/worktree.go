package protocol

import "encoding/json"

// Rows of the managed worktree methods (spec: "Workspaces, diffs and git";
// Method reference, thread/worktree/restore, worktree/list and
// worktree/delete).
var (
	// ThreadWorktreeRestore ("thread/worktree/restore") rebuilds a worktree
	// thread's deleted worktree from its snapshot, then loads the thread
	// there.
	ThreadWorktreeRestore = clientRequest[ThreadWorktreeRestoreParams, ThreadWorktreeRestoreResult]("thread/worktree/restore", PerThread)

	// WorktreeList ("worktree/list") lists the managed worktrees, of one
	// project when cwd is given.
	WorktreeList = clientRequest[WorktreeListParams, WorktreeListResult]("worktree/list", Concurrent)

	// WorktreeDelete ("worktree/delete") snapshots a managed worktree and
	// deletes it.
	WorktreeDelete = clientRequest[WorktreeDeleteParams, WorktreeDeleteResult]("worktree/delete", Concurrent)

	// ThreadWorkspaceProgress ("thread/workspace/progress") streams the
	// output of an environment's setup or cleanup script to the connection
	// that asked for the worktree.
	ThreadWorkspaceProgress = serverNotification[ThreadWorkspaceProgressParams]("thread/workspace/progress")
)

// ThreadWorktreeRestoreParams are the params of thread/worktree/restore.
type ThreadWorktreeRestoreParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadWorktreeRestoreResult is the result of thread/worktree/restore: the
// thread, loaded in its rebuilt worktree.
type ThreadWorktreeRestoreResult struct {
	Thread Thread `json:"thread"`
}

// WorktreeListParams are the params of worktree/list: Cwd, when given,
// limits the list to the worktrees of its project (a directory of the main
// checkout, of a linked worktree or of a managed worktree).
type WorktreeListParams struct {
	Cwd string `json:"cwd,omitempty"`

	// cwdGiven records that the decoded JSON had a cwd member, so an
	// empty string can be told from an absent cwd.
	cwdGiven bool
}

// UnmarshalJSON decodes the params, noting whether cwd was present.
func (p *WorktreeListParams) UnmarshalJSON(data []byte) error {
	type plain WorktreeListParams
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return err
	}
	if err := json.Unmarshal(data, (*plain)(p)); err != nil {
		return err
	}
	v, ok := members["cwd"]
	p.cwdGiven = ok && string(v) != "null"
	return nil
}

// Validate refuses an empty string cwd (invalidParams "cwd"), as every
// method taking a cwd does; an absent cwd lists every managed worktree.
func (p WorktreeListParams) Validate() error {
	if p.cwdGiven && p.Cwd == "" {
		return InvalidParams("cwd", "must be an absolute path, got an empty string (omit cwd to list every managed worktree)")
	}
	return nil
}

// WorktreeListResult is the result of worktree/list, sorted by path.
type WorktreeListResult struct {
	Worktrees []WorktreeInfo `json:"worktrees"`
}

// WorktreeInfo is one managed worktree: its path (absolute), the project it
// was made from, its HEAD commit and branch ("refs/heads/x", absent while
// detached) as git reports them now (as recorded at deletion for a deleted
// one), the threads attached to it, when it was last used (ISO-8601) and
// whether it is deleted (its state then lives in a snapshot under
// refs/knightcode/snapshots/).
type WorktreeInfo struct {
	Path       string   `json:"path"`
	ProjectCwd string   `json:"projectCwd"`
	Head       string   `json:"head,omitempty"`
	Branch     string   `json:"branch,omitempty"`
	ThreadIDs  []string `json:"threadIds"`
	LastUsedAt string   `json:"lastUsedAt"`
	Deleted    bool     `json:"deleted"`
}

// WorktreeDeleteParams are the params of worktree/delete: the managed
// worktree's path.
type WorktreeDeleteParams struct {
	Path string `json:"path"`
}

// WorktreeDeleteResult is the result of worktree/delete: the snapshot ref
// holding the worktree's state (absent only when neither git nor the disk
// had the worktree any more).
type WorktreeDeleteResult struct {
	Snapshot string `json:"snapshot,omitempty"`
}

// Workspace script phases (ThreadWorkspaceProgressParams.Phase).
const (
	WorkspacePhaseSetup   = "setup"
	WorkspacePhaseCleanup = "cleanup"
)

// ThreadWorkspaceProgressParams are the params of
// thread/workspace/progress: a chunk of a script's output (stdout and
// stderr interleaved as written, valid UTF-8) for the thread whose worktree
// it prepares.
type ThreadWorkspaceProgressParams struct {
	ThreadID string `json:"threadId"`
	Phase    string `json:"phase"`
	Output   string `json:"output"`
}
