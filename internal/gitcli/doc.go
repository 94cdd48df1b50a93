// Package gitcli is the one place in knightcode that starts a git process.
//
// Every repository operation (rev-parse, status, diff, add into a temporary
// index, write-tree, apply, worktree, commit, push, ...) but the object
// store's runs the git CLI through a [Runner], and the operations on a repository through a [Repo]
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
// The object store is the exception (ARCHITECTURE.md, "The object store
// is the exception"; issue 24): [Repo.Objects] reads and writes a
// repository's objects in-process with go-git v5 when go-git handles its
// format (SHA-1; repositoryformatversion 0 or 1 with no extension but
// noop, preciousObjects, worktreeConfig, objectFormat=sha1 and
// refStorage; no alternates, or absolute ones without alternates of their
// own; no core.sharedRepository), loose objects written as git writes them
// (core.looseCompression) and synced only when the repository's core.fsync
// (or core.fsyncObjectFiles) asks git to sync loose objects. Any other
// repository (SHA-256, a promisor remote through extensions.partialClone,
// another extension, relative or nested alternates, a shared repository,
// one go-git fails to open) falls back to long-lived git
// helpers, one `cat-file --batch-command` and one `hash-object -w
// --no-filters --stdin-paths -t <type>` per type, kept by the Runner until
// [Runner.Close]. Refs, the index, the working tree, hooks, filters and
// attributes stay with git.
//
// The Runner keeps, per repository and only while the files that decide
// them are stat-unchanged (device, inode, size, mtime and ctime to the
// nanosecond, with git's racy rule for files changed within a timestamp
// granule of the moment they were read): the configuration git lists
// ([Repo.Config]), the entries of the index ([Repo.IndexList]: the
// stat-validated index cache, which a journal's own index write updates
// through [Repo.NoteIndexWrite]), and a directory's discovery
// ([Runner.DiscoverHead], HEAD then resolved by git in a long-lived
// `cat-file --batch-command` of the worktree). [Repo.CreateRefKept]
// creates a ref through a long-lived `update-ref --stdin` of the
// repository, one transaction per ref. [Runner.WithStartHook] counts the
// processes an action starts (tests).
//
// The package knows nothing about threads, JSON-RPC or diffs as a product
// feature: it runs git and reports what git said. Pinned flags for diffs are
// exposed by [DiffFlags] so every diff knightcode parses is produced the same
// way (see ARCHITECTURE.md, "Git: the CLI for repositories").
package gitcli
