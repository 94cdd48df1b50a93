package diffscope

import (
	"context"
)

// StageOptions selects what [Differ.Stage] stages or [Differ.Unstage]
// unstages (spec, git/stage and git/unstage: {path?, hunkId?, context?}).
type StageOptions struct {
	// Path is a repository-relative, /-separated path from the read (its
	// path, or the old path of a rename), taken literally. Empty means
	// everything, or the file the HunkID names.
	Path string
	// HunkID is a hunk id, or a file id (File.ID: the whole file), from a
	// read of the unstaged scope (Stage) or the staged scope (Unstage) at
	// the same context.
	HunkID string
	// Context is the context of the read the id comes from; nil means 3.
	// A hunk id with context 0 is refused.
	Context *int
}

// Stage stages one hunk, one file or every change of the unstaged scope
// (index -> working tree as a capture sees it) and returns the
// repository-relative paths whose index entry it changed, sorted. The
// unstaged scope is read again at opts.Context and the id looked up there.
//
//   - A hunk is applied to the index blob the read saw exactly at its own
//     lines, without fuzz or offset search (exact.go), from the bytes git
//     printed (CR bytes, "\ No newline" markers kept: shared/cases C02,
//     C10); the index keeps its mode (C16).
//   - A whole file (a path, a file id, or the one hunk of an added or
//     deleted file) takes the entry the capture recorded for the working
//     tree: content, mode, symlink, a submodule's commit (its inner changes
//     cannot be staged from here: C20) or, for a deleted file, no entry. A
//     rename stages the deletion of the old path and the new file. An
//     untracked or intent-to-add file so becomes a staged new file.
//   - Everything is every file of the unstaged diff in one index update:
//     the tracked changes and the untracked files the capture included
//     (never more: files past the untracked limits or ignored stay out).
//
// Hunks of renamed, binary, symlink and type-changed files and of
// submodules are staged whole only. The index is written through a
// journal of the operation log with a recovery point (see [Differ.Revert]),
// after every refusal.
//
// Errors: [*ParamError] for a path not in the unstaged diff ("path"), a
// hunk of a file that moves whole only ("hunkId"), a hunk id at context 0
// ("context"); [*ConflictError] diffChanged when the id is not in the diff
// read again or the index entry moved since, patchFailed when the hunk's
// lines are not there or a file/folder clash would change index entries
// the caller did not name (Paths names them), concurrentChange
// when another git process holds the index (index.lock exists; nothing was
// changed, Output holds git's stderr); errors matching [gitcli.ErrNotRepo]
// outside a repository.
func (d *Differ) Stage(ctx context.Context, checkout string, opts StageOptions) ([]string, error) {
	return d.stage(ctx, checkout, opts, ScopeUnstaged)
}

// Unstage unstages one hunk, one file or everything of the staged scope
// (HEAD -> index) and returns the repository-relative paths whose index
// entry it changed, sorted. The working tree is never touched. The staged
// scope is read again at opts.Context and the id looked up there.
//
//   - A hunk is reverse-applied to the index blob exactly at its own
//     lines (exact.go), keeping the index's mode (shared/cases C16).
//   - A whole file (a path, a file id, or the one hunk of an added or
//     deleted file) gets HEAD's entry back, or loses its entry when HEAD
//     has none: a staged new file becomes untracked again, never an empty
//     staged file (C05). A submodule gets HEAD's commit back, as
//     `git reset -- sub` does (C20).
//   - Everything resets each staged path to HEAD (on an unborn branch:
//     removes it). Intent-to-add entries, which are not in the staged diff,
//     stay.
//
// Errors as for [Differ.Stage], for the staged scope.
func (d *Differ) Unstage(ctx context.Context, checkout string, opts StageOptions) ([]string, error) {
	return d.stage(ctx, checkout, opts, ScopeStaged)
}

func (d *Differ) stage(ctx context.Context, checkout string, opts StageOptions, scope Scope) ([]string, error) {
	name := "stage"
	if scope == ScopeStaged {
		name = "unstage"
	}
	ro := ReadOptions{Scope: scope, Context: opts.Context}
	return d.act(ctx, checkout, name, ro, opts.Path, opts.HunkID, func(st *readState, sel selection) (*writes, error) {
		return d.stageSelected(ctx, st, sel, scope)
	})
}

// stageSelected works out the index writes that stage (scope unstaged) or
// unstage (scope staged) sel of st, under the repository lock (see Stage
// and Unstage); it writes nothing but objects.
func (d *Differ) stageSelected(ctx context.Context, st *readState, sel selection, scope Scope) (*writes, error) {
	if sel.hunk >= 0 {
		f := sel.files[0]
		switch why := wholeOnly(f.wire, true); {
		case f.wire.Status == "added" || f.wire.Status == "deleted":
			// The one hunk of an added or deleted text file is all of it
			// (a patch against the empty file: shared/cases C05).
			sel.hunk = -1
		case why != "":
			return nil, paramErr("hunkId", "%s is %s: it is staged as a whole file only (pass its path or file id)", f.wire.Path, why)
		default:
			return d.stageHunk(ctx, st, f, sel.hunk)
		}
	}
	changes, err := d.fileChanges(ctx, st, sel.files)
	if err != nil {
		return nil, err
	}
	index := map[string]entry{}
	for _, c := range changes {
		if scope == ScopeUnstaged {
			index[c.path] = c.new // the working tree's entry
		} else {
			index[c.path] = c.old // HEAD's entry
		}
	}
	if len(index) == 0 {
		return &writes{}, nil
	}
	if !sel.all {
		// A file/folder clash would make update-index drop entries the
		// caller did not name (clash.go).
		clash, err := d.indexClashes(ctx, st.repo, index)
		if err != nil {
			return nil, err
		}
		if err := clashError(clash); err != nil {
			return nil, err
		}
	}
	return &writes{index: index}, nil
}

// stageHunk applies hunk idx of f to the index, exactly at its own lines
// (see exact.go): forward from the unstaged scope onto the index blob the
// read saw (its old side), reversed from the staged scope (its new side).
// The index entry must still hold that blob (else diffChanged) and keeps its
// mode (shared/cases C16); a hunk whose lines are not there is patchFailed.
// It returns the index write; only the blob is written.
func (d *Differ) stageHunk(ctx context.Context, st *readState, f *fileDiff, idx int) (*writes, error) {
	_, frags, err := hunkFragments(f, idx)
	if err != nil {
		return nil, err
	}
	path := f.wire.Path
	paths := []string{path}
	reverse := st.scope == ScopeStaged
	base := f.oldOID
	if reverse {
		base = f.newOID
	}
	cur, err := d.indexEntries(ctx, st.repo, paths)
	if err != nil {
		return nil, err
	}
	e, ok := cur[path]
	if !ok || e.oid != base {
		return nil, &ConflictError{Reason: ReasonDiffChanged, Paths: paths}
	}
	oid, err := exactHunkBlob(ctx, st.repo, path, base, frags, reverse)
	if err != nil {
		return nil, err
	}
	return &writes{index: map[string]entry{path: {mode: e.mode, oid: oid}}, hunk: true}, nil
}
