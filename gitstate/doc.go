// Package gitstate holds the git-state pieces that workspace, diffscope
// and handoff share: the capture of a checkout as trees without touching
// the user's index ([Take], and [Complete] with every untracked file, the
// intent-to-add entries and the dirty submodules), the working-tree
// transaction a multi-step action puts the working tree back with
// ([WorktreeTxn]), and the snapshot-commit writer in git's stash shape
// ([WriteSnapshot]).
//
// It is a library over a [gitcli.Repo]: every git process runs through
// internal/gitcli's verbs. It must not know about threads, JSON-RPC, diff
// scopes, hunk ids or managed worktrees; the packages above it decide what
// to capture, where refs go and what a conflict means (ARCHITECTURE.md,
// "The mechanism everything shares" and "Worktrees, snapshots, handoff").
package gitstate
