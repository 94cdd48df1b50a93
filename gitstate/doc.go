// Package gitstate holds the git-state pieces that workspace, diffscope
// and handoff share: the capture of a checkout as trees without touching
// the user's index ([Take], and [Complete] with every untracked file, the
// intent-to-add entries and the dirty submodules), the snapshot-commit
// writer in git's stash shape ([WriteSnapshot]), and the operation log
// ([Oplog]): the one transaction mechanism of every action that writes a
// user's working tree or index. An action runs under a [Journal] ([Oplog.Begin]):
// a recovery point (a stash-shaped commit under refs/knightcode/oplog/)
// and a flock-held journal file are written before anything else; every
// write goes through the journal (files staged by git and renamed into
// place, indexes committed by link and rename), so a crash leaves each
// path at its before or after entry; [Oplog.Recover] rolls an unfinished
// action back (or forward) and reports it; [Oplog.Prune] keeps the
// recovery points within their retention.
//
// It is a library over a [gitcli.Repo]: every git process runs through
// internal/gitcli's verbs. It must not know about threads, JSON-RPC, diff
// scopes, hunk ids or managed worktrees; the packages above it decide what
// to capture, where refs go and what a conflict means (ARCHITECTURE.md,
// "The mechanism everything shares" and "Worktrees, snapshots, handoff").
package gitstate
