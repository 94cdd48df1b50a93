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
// Recovery points are as wide as the action (issue 24, Decision 1): a
// whole-scope action, a turn's undo or reapply, a handoff and a branch
// switch record the whole checkout; a path-scoped action (a hunk, file or
// path revert, stage, unstage) records a partial point, marked
// "recorded: partial" in its message with one "path:" line per path: the
// named paths' index entries and working-tree content on top of HEAD's
// tree, written through the repository's object store
// (gitcli.Repo.Objects: in-process where go-git handles the repository,
// git's helpers otherwise), so the point costs the trees along those paths
// and one update-ref. Recovery puts back only the paths the journal
// wrote; with plain git, `git restore --source=<point> --worktree --
// <paths>` and `git reset -q <point>^2 -- <paths>` put back only those.
//
// Files are hashed and checked out in-process only where git would store
// and write their bytes unchanged ([Plain]: no core.autocrlf, no
// core.fileMode=false or core.symlinks=false, no attributes file for the
// path in the work tree, the index, info/attributes, the global or the
// system one); everywhere else git does it (hash-object with the path,
// checkout-index), so filters, eol conversion and ident stay git's. The
// index entries a journal compares come from the Runner's stat-validated
// index cache (gitcli.Repo.IndexList); [Journal.WriteIndexEntries] writes
// a path-scoped index change with one `update-index --index-info` and
// tells the cache what it wrote. A journal is saved durably (fsync) before
// each write of the user's state; its saves before the first and after the
// last write are atomic but not synced.
//
// It is a library over a [gitcli.Repo]: every git process runs through
// internal/gitcli's verbs. It must not know about threads, JSON-RPC, diff
// scopes, hunk ids or managed worktrees; the packages above it decide what
// to capture, where refs go and what a conflict means (ARCHITECTURE.md,
// "The mechanism everything shares" and "Worktrees, snapshots, handoff").
package gitstate
