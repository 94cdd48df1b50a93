// Package gitcli is the one place in knightcode that starts a git process.
//
// Every repository operation (rev-parse, status, diff, add into a temporary
// index, write-tree, apply, worktree, commit, push, ...) runs the git CLI
// through a [Runner], and the operations on a repository through a [Repo]
// found by one discovery ([Runner.Discover]): one method per git verb, its
// argv built once in verbs.go with the pinned flags, so no caller assembles
// a command line. Every call knightcode makes for itself runs with
// core.fsmonitor=false and no hooks. Argv only (never a shell string), a
// context with a timeout on every call, Dir always set, pinned configuration so a user's
// diff.noprefix, diff.context, diff.algorithm, color.ui or core.quotePath
// cannot change what knightcode parses, a scrubbed environment so an
// inherited GIT_DIR, GIT_WORK_TREE or GIT_INDEX_FILE cannot redirect a call,
// GIT_OPTIONAL_LOCKS=0 on reads, stderr captured into typed errors, and a cap
// on the output kept in memory.
//
// The package knows nothing about threads, JSON-RPC or diffs as a product
// feature: it runs git and reports what git said. Pinned flags for diffs are
// exposed by [DiffFlags] so every diff knightcode parses is produced the same
// way (see ARCHITECTURE.md, "Git: the CLI for repositories").
package gitcli
