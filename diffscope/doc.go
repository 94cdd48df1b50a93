// Package diffscope is knightcode's diff core: it captures a checkout as
// trees without touching the user's index ([Differ.Capture]), reads the six
// diff scopes of thread/diff/read as one tree-to-tree diff with content-hash
// hunk ids ([Differ.Read]), serves both sides of a file for thread/diff/file
// ([Differ.FileSides]), totals the lines a turn changed ([Differ.TurnFiles]),
// and reverts, stages and unstages hunks and files by those ids. Every
// action runs under a journal of gitstate's operation log, configured with
// [Config] (its folder, the recovery points' retention); [Differ.Recover]
// finishes the actions a crash interrupted and reports them.
//
// It is a library over a checkout path: it takes plain Go values and
// returns plain Go values and typed errors ([*ParamError] for invalid
// parameters, [*ConflictError] for gitConflict, errors matching
// gitcli.ErrNotRepo for notGitRepo). It must not know about threads,
// sessions, turns as conversation objects or JSON-RPC; the threads layer
// decides when to capture and pins the trees it keeps under
// refs/knightcode/. Every git process runs through internal/gitcli with the
// pinned diff flags of gitcli.DiffFlags, so a user's diff configuration
// never changes hunks or ids.
//
// The design is ARCHITECTURE.md's "capture a checkout as trees" and "Hunk
// ids"; the behaviour is the spec's "Workspaces, diffs and git",
// thread/diff/read, thread/diff/file, thread/diff/revert and git/stage.
package diffscope
