package diffscope

import (
	"context"
)

// RevertOptions selects what [Differ.Revert] reverts: the scope as for a
// read (ReadOptions: Scope, Against, BaseRef, FromTree/ToTree for lastTurn,
// Context; Budget is not used, and a hunk id with IgnoreWhitespace matches
// nothing), then one hunk, one file or everything in it.
type RevertOptions struct {
	ReadOptions
	// Path is a repository-relative, /-separated path from the read (its
	// path, or the old path of a rename), taken literally. Empty means the
	// whole scope, or the file the HunkID names.
	Path string
	// HunkID is a hunk id, or a file id (File.ID: the whole file), from a
	// read of the same scope at the same context.
	HunkID string
	// Reapply (lastTurn only, no hunk) applies the turn's changes again
	// instead of undoing them.
	Reapply bool
	// FromIndexTree and ToIndexTree are the index trees captured before
	// and after the turn of a lastTurn revert (Capture.IndexTree; both or
	// neither). When they differ, the turn changed the index (the agent ran
	// `git add`, `git rm --cached`, ...), and a revert of the whole turn
	// (no path, no hunk) puts the index entries it changed back too, the
	// way it puts the files back: an undo restores them from FromIndexTree,
	// only while each is in the index exactly as in ToIndexTree; a reapply
	// restores them from ToIndexTree, only while each is as in
	// FromIndexTree. Reads and per-file reverts ignore them: the lastTurn
	// diff is the working tree's (spec, "Workspaces, diffs and git").
	FromIndexTree, ToIndexTree string
}

// actionBudget is the response budget of an action's re-read: none (see
// read), so no file loses its hunks and an id a client got from any read is
// found (shared/cases C40).
const actionBudget = -1

// Revert reverse-applies one hunk, one file or the whole scope to the
// working tree (spec, thread/diff/revert) and returns the repository-relative
// paths it changed, sorted. The scope is read again at opts.Context (default
// 3) and the hunk or file id looked up there.
//
// What each scope changes:
//
//   - unstaged: the working tree only; hunks and files go back to the
//     index. The index is not written, except that an intent-to-add entry
//     of an added file that is deleted is removed with it.
//   - uncommitted: the working tree back to HEAD and, so nothing is left
//     staged, the index too: a file's index entry is set to HEAD's; a
//     hunk is reverse-applied to the working tree, and the index's own
//     staged hunks (HEAD -> index) that change lines within the hunk's
//     range of HEAD are reverse-applied to the index with --cached, a
//     separate step (never --index: shared/cases C37); the first step is
//     undone if the second fails.
//   - branch: as uncommitted, against the merge-base instead of HEAD.
//   - lastTurn: the working tree (the user's staging is never touched:
//     shared/cases C32), and the index only where the turn itself changed
//     it. Without a path the whole turn is undone, only while every file
//     the turn changed is exactly (blob id and mode) as the turn left it;
//     with Reapply it is applied again, only while every such file is as
//     the turn found it; otherwise nothing changes and the answer is a
//     diffChanged conflict naming the files that moved. When the turn
//     changed index entries (opts.FromIndexTree != opts.ToIndexTree), the
//     whole-turn undo (reapply) also writes those entries back as they were
//     before (after) the turn, in one `update-index --index-info`, under
//     the same rule: only while each is in the index as the turn left
//     (found) it, else diffChanged naming the paths whose index entries
//     moved; other entries and their flags are left alone, so the user's
//     own staging since survives. A file of the turn reverts (or
//     reapplies) whole, in the working tree only, under the file rule; a
//     hunk is reverse-applied to the working tree as it is now.
//
// Whole files are restored byte for byte from the target tree through git
// (filters, modes and symlinks included) and files absent there are
// deleted, untracked files included (spec: "Reverting an added file deletes
// it"). Hunks of added, deleted, renamed, binary, symlink, type- or
// mode-changed files and submodules revert whole only. A submodule (gitlink)
// is never reverted: its checkout is a repository of its own that a revert
// from here would overwrite (shared/cases C20); naming one is refused and a
// whole-scope revert leaves it out. Nothing is half-applied: the revert runs
// under a journal of the operation log (gitstate.Oplog) with a recovery
// point under refs/knightcode/oplog/ (the full state for a whole scope or
// turn, the named files otherwise), begun after every refusal; every file
// and the index are written through it, a failure rolls back what was
// written, and a crash is rolled back (or forward, once marked done) by
// the next [Differ.RecoverStart], [Differ.Recover] or action in the
// checkout.
//
// Errors: [*ParamError] for the staged and committed scopes ("scope"), a
// hunk id with context 0 ("context"), reapply outside lastTurn or with a
// hunk ("reapply", "hunkId"), a path not in the diff ("path"), a hunk of a
// file that reverts whole only or a submodule ("hunkId" or "path"), and
// whatever the read refuses; [*ConflictError] diffChanged when the id is
// not in the diff read again or a lastTurn file moved, patchFailed when a
// hunk's lines are not there (it is applied exactly at its own lines:
// exact.go) or a file/folder clash would delete or replace paths the
// action did not name (Paths names them; nothing is written), concurrentChange when
// another git process holds the index or a ref (its lock file exists;
// nothing was changed, Output holds git's stderr); errors matching
// [gitcli.ErrNotRepo] outside a repository.
func (d *Differ) Revert(ctx context.Context, checkout string, opts RevertOptions) ([]string, error) {
	scope := opts.Scope
	if scope == "" {
		scope = ScopeUncommitted
	}
	switch scope {
	case ScopeStaged, ScopeCommitted:
		return nil, paramErr("scope", "the %s scope cannot be reverted: only lastTurn, uncommitted, unstaged and branch changes revert to the working tree", scope)
	}
	if opts.Reapply && scope != ScopeLastTurn {
		return nil, paramErr("reapply", "reapply is for the lastTurn scope only")
	}
	name := "revert"
	if opts.Reapply {
		name = "reapply"
	}
	return d.act(ctx, checkout, name, opts.ReadOptions, opts.Path, opts.HunkID, func(st *readState, sel selection) (*writes, error) {
		if opts.Reapply && sel.hunk >= 0 {
			return nil, paramErr("hunkId", "reapply takes the whole turn or a file, not a hunk")
		}
		return d.revertSelected(ctx, st, sel, opts)
	})
}

// revertSelected works out the writes that revert sel of st, under the
// repository lock (see Revert); it writes nothing but objects.
func (d *Differ) revertSelected(ctx context.Context, st *readState, sel selection, opts RevertOptions) (*writes, error) {
	if sel.hunk >= 0 {
		f := sel.files[0]
		if why := wholeOnly(f.wire, false); why != "" {
			return nil, paramErr("hunkId", "%s is %s: its hunks revert as a whole file only (pass its path or file id)", f.wire.Path, why)
		}
		return d.revertHunk(ctx, st, f, sel.hunk)
	}
	if st.scope == ScopeLastTurn {
		return d.revertTurn(ctx, st, sel, opts)
	}
	return d.revertFiles(ctx, st, sel)
}
