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
// A one-hunk action (revert, stage, unstage) costs about as much as git
// applying the hunk (issue 24): it takes the file from the last read of
// the same scope and context when both its sides are still the blobs that
// read diffed (the index entry from the Runner's stat-validated index
// cache, HEAD's from its tree, the working file hashed in-process where
// git converts nothing for it), else reads that path alone with one
// diff-tree of one-entry trees; blobs are read and written through the
// object store (gitcli.Repo.Objects: in-process with go-git, or git's
// long-lived helpers for repositories go-git does not handle); its
// recovery point is partial (the paths on top of HEAD); the working file
// is written from the blob where git would write it unchanged and by git's
// checkout-index elsewhere (filters, eol, ident); the index entry by one
// `update-index --index-info`; the recovery point's ref by the Runner's
// long-lived `update-ref --stdin`. Once the checkout is known, a revert
// starts no git process, a stage or unstage one; tests count them
// (proccount_test.go).
//
// The design is ARCHITECTURE.md's "capture a checkout as trees", "Hunk
// ids", "The object store is the exception", "A stat-validated index
// cache" and "Recovery points are as wide as the action"; the behaviour is
// the spec's "Workspaces, diffs and git", thread/diff/read,
// thread/diff/file, thread/diff/revert and git/stage.
package diffscope
