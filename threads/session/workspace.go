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

// WorkspaceEntry is where the thread runs now, read from its transcript:
// the last workspace entry (a handoff appends one, fsynced, before the
// source checkout is cleaned), which wins over the immutable header; else
// the header's cwd and workspace. Home is the managed worktree the thread
// goes back to (a worktree thread handed off to the user's checkout keeps
// its worktree); Branch is the branch of the last handoff to the user's
// checkout ("refs/heads/..."; "" none).
type WorkspaceEntry struct {
	Cwd       string
	Workspace *Workspace
	Home      *Workspace
	Branch    string
}

// Placement returns t's [WorkspaceEntry].
func (t *Transcript) Placement() WorkspaceEntry {
	for i := len(t.Entries) - 1; i >= 0; i-- {
		if e := t.Entries[i]; e.Type == TypeWorkspace && e.Cwd != "" {
			return WorkspaceEntry{Cwd: e.Cwd, Workspace: e.Workspace, Home: e.Home, Branch: e.Branch}
		}
	}
	return WorkspaceEntry{Cwd: t.Header.Cwd, Workspace: t.Header.Workspace, Home: t.Header.Workspace}
}
