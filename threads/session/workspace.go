package session

// WorkspaceWorktree is the Workspace.Mode of a thread in a managed worktree.
const WorkspaceWorktree = "worktree"

// Workspace is the header's record of the managed worktree a thread runs in
// ({"mode":"worktree","path":...,"projectCwd":...,"baseRef"?:...}). A thread
// in the user's own checkout has none (mode "local" on the wire). It is
// written once, when the session is created, and never changes: whether the
// worktree is deleted now is the worktree registry's business, not the
// transcript's. pi ignores the unknown header member.
type Workspace struct {
	// Mode is WorkspaceWorktree.
	Mode string `json:"mode"`
	// Path is the worktree's root (absolute, symlinks resolved), the key of
	// its registry entry.
	Path string `json:"path"`
	// ProjectCwd is the project the worktree was made from (the main
	// checkout's root).
	ProjectCwd string `json:"projectCwd"`
	// BaseRef is the baseRef the worktree was created from, as given ("" for
	// the checkout's HEAD).
	BaseRef string `json:"baseRef,omitempty"`
}
