// Package workspace manages knightcode's worktrees: managed git worktrees
// created for threads (detached, no branch, under
// <worktrees.root>/<4 hex>/<repository name>), the registry that lists them
// (<agentDir>/worktrees.json), stash-shaped snapshots kept under
// refs/knightcode/snapshots/, deletion after a snapshot, restore from a
// snapshot, pruning past worktrees.keep, and a project's environments
// (.knightcode/environments.json) with their setup and cleanup scripts,
// and the operations behind the git/* methods over a checkout path
// (gitops*.go: [Status], [Origin], [PrepareCommit], [Commit],
// [CommitMessage], [Push], [PRCreate], [Branches], [BranchCreate],
// [BranchSwitch], [Log]); these are the only places the user's hooks run
// (commit, push, switch: the user's own operations).
//
// It is a library over paths: it takes plain Go values and returns plain Go
// values and typed errors ([*ConflictError] for gitConflict with a reason,
// one of the Reason* constants or diffscope.ReasonPatchFailed, which is
// all it takes from diffscope; [*ParamError] for invalidParams naming a
// field, with a reason for the git/* refusals; [ErrUnbornHead],
// [ErrBareRepository], [ErrNotDeleted], [ErrUntrusted], [*RemoveError],
// [*ScriptError], [ErrAuthRequired], [ErrToolMissing], errors matching
// gitcli.ErrNotRepo). It must not know about
// threads as conversation objects, sessions, JSON-RPC or settings files: the
// caller passes the worktrees root, the keep count, the trust decision and
// whether a worktree is in use ([DeleteOptions.InUse]). Every git process runs
// through internal/gitcli; the checkout is captured as trees by
// gitstate.Complete and snapshots are written by gitstate.WriteSnapshot
// (never `git stash`, shared/cases C15).
//
// Crash safety: the registry learns of a worktree before git does (state
// creating, before `git worktree add`) and of a deletion's snapshot before
// anything is removed (state removing), so a process killed at any point
// leaves an entry that [Manager.Reconcile] (unfinished creations),
// [Manager.Restore] and [Manager.Delete] (unfinished deletions and
// restores) finish without losing a byte (recover.go).
//
// The design is ARCHITECTURE.md "Worktrees, snapshots, handoff"; the
// behaviour is the spec's "Workspaces, diffs and git", thread/worktree/restore,
// worktree/list, worktree/delete, environment/list and environment/save.
package workspace
