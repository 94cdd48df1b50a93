// Package handoff moves a thread's uncommitted changes between a managed
// worktree and the repository's main checkout (issue 9; spec,
// thread/handoff; ARCHITECTURE.md "Worktrees, snapshots, handoff"). It is a
// library over paths: it takes plain Go values and returns plain Go values
// and typed errors, and knows nothing about threads, sessions or JSON-RPC.
//
// Directions:
//   - [ToLocal]: the worktree's HEAD becomes a branch checked out in the main
//     checkout (the worktree's own branch, else Options.Branch, else the
//     previous handoff's branch fast-forwarded, else
//     <BranchPrefix><slug of the title>), the uncommitted changes move, and
//     the worktree stays, detached at the same commit and clean.
//   - [ToWorktree]: the worktree (the thread's own, or a new managed one
//     made with workspace's creation rules) is detached at the main
//     checkout's HEAD and the changes move into it; the main checkout keeps
//     its branch and ends clean of the moved changes.
//
// Moving is a tree transplant, never a merge: the source is captured
// completely (gitstate.Complete: HEAD, index tree, worktree tree with every
// untracked file, intent-to-add entries, modes, symlinks, deletions), the
// destination, clean and now at the source's HEAD, gets its working tree
// and then its index from those trees, a capture of the destination must
// give the same trees, and only then is the source cleaned. Both
// checkouts are written only through the journal
// (gitstate.Journal.WriteCheckout: each file checked out by git into a
// stage folder and renamed into place, each index built on a copy and
// committed as git commits one), so a kill -9 at any instant leaves every
// file whole, old or new, and no index lock behind. `git stash` is never run and
// no 3-way merge happens; the main checkout's branch never moves and no
// checkout, switch, reset or rebase runs there. A gitlink moves as git
// checks one out without recursing: the empty folder of a submodule that
// is not initialized comes and goes with its gitlink, and a folder that
// holds no file is never an untracked file in the way (issue 22).
//
// Every refusal is decided by [Handoff.Plan] before anything is written:
// it reads only (status, ls-files, rev-parse, worktree list, lstat).
//
// The journal: before anything moves the changes are saved as the
// recovery point of an operation-log journal (gitstate.Oplog, action
// [JournalAction]: a stash-shaped commit under refs/knightcode/oplog/)
// plus a binary patch file in <agentDir>/handoff/; the journal, flock-held
// while the handoff runs, is rewritten atomically at each step and
// records every ref the handoff moves. [Handoff.Recover] finishes a
// handoff whose lock is free: forward once the destination verified,
// otherwise back to the untouched source; [RecoveryError] (gitConflict
// recoveryRequired) only when neither side matches a journaled state.
package handoff
