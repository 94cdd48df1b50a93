package threads

import (
	"context"
	"fmt"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The diff, git stage and file methods of a loaded thread (spec: Method
// reference, thread/diff/read, thread/diff/file, thread/diff/revert,
// git/stage, git/unstage, file/read, file/list, file/write; "Workspaces,
// diffs and git"). Each looks the thread's checkout up and hands plain values
// to diffscope or to the file functions of files.go; actions that change the
// checkout run inside WithCheckout, so they are refused while a turn runs
// there and no turn starts until they end.
//
// Errors, besides those named per method: ErrThreadNotFound when the thread
// is not loaded; errors matching gitcli.ErrNotRepo outside a work tree;
// *diffscope.ParamError and invalidParams *protocol.Error values naming a
// field; *diffscope.ConflictError (gitConflict).

// DiffRead answers thread/diff/read: one scope of the thread's checkout read
// by diffscope.Differ.Read. A branch read without against compares a
// worktree thread's checkout with its worktree's base (branchBase), other
// threads' with the upstream or default branch, and echoes it in Against.
//
// lastTurn compares the before and after trees of the thread's last turn
// (LastTurn) and echoes its id in TurnID. Stale is true when any file of that
// turn is no longer in the working tree exactly (blob and mode) as the turn
// left it, which is when an undo of the whole turn would be refused:
// diffscope.Differ.Moved of the turn's paths (path and old path of a
// rename) against its after tree. When the turn's read was cut by the
// response budget (filesOmitted), Stale is true whenever the worktree tree
// differs from the after tree at all: it never claims an undo would work
// when it cannot tell. A thread with no finished turn yet has an empty
// lastTurn diff: no files, no trees, no turnId.
func (m *Manager) DiffRead(ctx context.Context, p protocol.ThreadDiffReadParams) (protocol.ThreadDiffReadResult, error) {
	cwd, err := m.Checkout(p.ThreadID)
	if err != nil {
		return protocol.ThreadDiffReadResult{}, err
	}
	opts := diffscope.ReadOptions{
		Scope:            diffscope.Scope(p.Scope),
		Against:          p.Against,
		Commit:           p.Commit,
		Context:          p.Context,
		IgnoreWhitespace: p.IgnoreWhitespace,
	}
	if opts.Scope == diffscope.ScopeBranch && opts.Against == "" {
		opts.BaseRef = m.branchBase(p.ThreadID)
	}
	var last TurnTrees
	if opts.Scope == diffscope.ScopeLastTurn {
		var ok bool
		if last, ok = m.LastTurn(p.ThreadID); !ok {
			return m.emptyLastTurn(ctx, cwd)
		}
		opts.FromTree, opts.ToTree = last.Before, last.After
	}
	res, err := m.cfg.Differ.Read(ctx, cwd, opts)
	if err != nil {
		return protocol.ThreadDiffReadResult{}, err
	}
	out := wireDiff(res)
	if opts.Scope == diffscope.ScopeLastTurn {
		out.TurnID = last.TurnID
		if out.Stale, err = m.lastTurnStale(ctx, cwd, last.After, res); err != nil {
			return protocol.ThreadDiffReadResult{}, err
		}
	}
	return out, nil
}

// emptyLastTurn is the lastTurn diff of a thread without a finished turn:
// the repository's root and no files. Outside a work tree it fails like a
// read (gitcli.ErrNotRepo).
func (m *Manager) emptyLastTurn(ctx context.Context, cwd string) (protocol.ThreadDiffReadResult, error) {
	repo, err := m.cfg.Git.Discover(ctx, cwd)
	if err != nil {
		return protocol.ThreadDiffReadResult{}, err
	}
	if repo.Bare || repo.Root == "" {
		return protocol.ThreadDiffReadResult{}, fmt.Errorf("%s has no work tree: %w", cwd, gitcli.ErrNotRepo)
	}
	return protocol.ThreadDiffReadResult{Scope: protocol.ScopeLastTurn, Root: repo.Root, Files: []protocol.DiffFile{}}, nil
}

// lastTurnStale reports whether a file of the turn read in turn (before ->
// after) changed in the working tree since the turn left it (see DiffRead):
// diffscope.Differ.Moved of the turn's paths (path and old path of a
// rename) against after, the check an undo of the whole turn makes. When
// the turn's read was cut by the response budget (FilesOmitted), its other
// paths are unknown, so any change at all since after (a capture whose
// worktree tree is not after) counts as stale.
func (m *Manager) lastTurnStale(ctx context.Context, cwd, after string, turn *diffscope.Result) (bool, error) {
	if len(turn.Files) == 0 && turn.FilesOmitted == 0 {
		return false, nil
	}
	if turn.FilesOmitted > 0 {
		now, err := m.cfg.Differ.Capture(ctx, cwd)
		if err != nil {
			return false, err
		}
		return now.WorktreeTree != after, nil
	}
	paths := make([]string, 0, len(turn.Files))
	for _, f := range turn.Files {
		paths = append(paths, f.Path)
		if f.OldPath != "" {
			paths = append(paths, f.OldPath)
		}
	}
	moved, err := m.cfg.Differ.Moved(ctx, cwd, after, paths)
	if err != nil {
		return false, err
	}
	return len(moved) > 0, nil
}

// DiffFile answers thread/diff/file: both sides of one file by the trees a
// read named (diffscope.Differ.FileSides). Errors: *diffscope.ParamError
// ("fromTree", "toTree", "path", "oldPath") for trees that are not full tree
// ids of the repository or a file in neither tree.
func (m *Manager) DiffFile(ctx context.Context, p protocol.ThreadDiffFileParams) (protocol.ThreadDiffFileResult, error) {
	cwd, err := m.Checkout(p.ThreadID)
	if err != nil {
		return protocol.ThreadDiffFileResult{}, err
	}
	s, err := m.cfg.Differ.FileSides(ctx, cwd, p.FromTree, p.ToTree, p.Path, p.OldPath)
	if err != nil {
		return protocol.ThreadDiffFileResult{}, err
	}
	return protocol.ThreadDiffFileResult{Old: s.Old, New: s.New, Binary: s.Binary, TooLarge: s.TooLarge}, nil
}

// DiffRevert answers thread/diff/revert inside WithCheckout (refused with
// ErrTurnInProgress while a turn runs in the checkout; no turn starts until
// it ends): diffscope.Differ.Revert of one hunk, one file or the whole scope,
// read as DiffRead reads it (a branch scope against the worktree's base).
//
// lastTurn reverts (or, with Reapply, applies again) the thread's last turn,
// read between its before and after trees; without a path, the index
// entries the turn changed are put back too (the turn's index trees:
// diffscope.RevertOptions.FromIndexTree). With TurnID, a last turn other
// than that one (or none) is a *diffscope.ConflictError diffChanged, so an
// Undo shown on one turn never reverts a newer one; the check and the revert
// happen under the same fence, so no turn can end in between. Without a
// finished turn a lastTurn revert is invalidParams "scope".
func (m *Manager) DiffRevert(ctx context.Context, p protocol.ThreadDiffRevertParams) (protocol.ThreadDiffRevertResult, error) {
	var paths []string
	err := m.WithCheckout(ctx, p.ThreadID, func(cwd string) error {
		opts := diffscope.RevertOptions{
			ReadOptions: diffscope.ReadOptions{
				Scope:   diffscope.Scope(p.Scope),
				Against: p.Against,
				Commit:  p.Commit,
				Context: p.Context,
			},
			Path:    p.Path,
			HunkID:  p.HunkID,
			Reapply: p.Reapply,
		}
		if opts.Scope == diffscope.ScopeBranch && opts.Against == "" {
			opts.BaseRef = m.branchBase(p.ThreadID)
		}
		if opts.Scope == diffscope.ScopeLastTurn {
			last, ok := m.LastTurn(p.ThreadID)
			if p.TurnID != "" && (!ok || last.TurnID != p.TurnID) {
				name := last.TurnID
				if !ok {
					name = "none"
				}
				return fmt.Errorf("turn %s is not the last turn of the thread (last: %s): %w", p.TurnID, name,
					&diffscope.ConflictError{Reason: diffscope.ReasonDiffChanged})
			}
			if !ok {
				return protocol.InvalidParams("scope", "the thread has no finished turn to revert")
			}
			opts.FromTree, opts.ToTree = last.Before, last.After
			opts.FromIndexTree, opts.ToIndexTree = last.BeforeIndex, last.AfterIndex
		}
		var err error
		paths, err = m.cfg.Differ.Revert(ctx, cwd, opts)
		return err
	})
	if err != nil {
		return protocol.ThreadDiffRevertResult{}, err
	}
	return protocol.ThreadDiffRevertResult{Paths: nonNil(paths)}, nil
}

// GitStage answers git/stage inside WithCheckout: diffscope.Differ.Stage of
// one hunk, one file (its path taken literally) or, with neither, everything
// of the unstaged scope.
func (m *Manager) GitStage(ctx context.Context, p protocol.GitStageParams) (protocol.GitStageResult, error) {
	paths, err := m.stage(ctx, p, m.cfg.Differ.Stage)
	return protocol.GitStageResult{Paths: paths}, err
}

// GitUnstage answers git/unstage inside WithCheckout: diffscope.Differ.Unstage
// of one hunk, one file or, with neither, everything of the staged scope.
func (m *Manager) GitUnstage(ctx context.Context, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error) {
	paths, err := m.stage(ctx, protocol.GitStageParams(p), m.cfg.Differ.Unstage)
	return protocol.GitUnstageResult{Paths: paths}, err
}

// stage runs act (Stage or Unstage) on the thread's checkout under a fence.
func (m *Manager) stage(ctx context.Context, p protocol.GitStageParams,
	act func(context.Context, string, diffscope.StageOptions) ([]string, error)) ([]string, error) {
	var paths []string
	err := m.WithCheckout(ctx, p.ThreadID, func(cwd string) error {
		var err error
		paths, err = act(ctx, cwd, diffscope.StageOptions{Path: p.Path, HunkID: p.HunkID, Context: p.Context})
		return err
	})
	if err != nil {
		return nil, err
	}
	return nonNil(paths), nil
}

// FileRead answers file/read with ReadFile in the thread's cwd.
func (m *Manager) FileRead(_ context.Context, p protocol.FileReadParams) (protocol.FileReadResult, error) {
	cwd, err := m.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileReadResult{}, err
	}
	maxBytes := 0
	if p.MaxBytes != nil {
		maxBytes = *p.MaxBytes
	}
	return ReadFile(cwd, p.Path, maxBytes)
}

// FileList answers file/list with ListFiles in the thread's cwd.
func (m *Manager) FileList(_ context.Context, p protocol.FileListParams) (protocol.FileListResult, error) {
	cwd, err := m.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileListResult{}, err
	}
	return ListFiles(cwd, p.Path)
}

// FileWrite answers file/write with WriteFile in the thread's cwd. It takes
// no fence: like an editor, it may write while a turn runs (the turn's file
// totals then include the write). Errors: ErrFileChanged.
func (m *Manager) FileWrite(_ context.Context, p protocol.FileWriteParams) (protocol.FileWriteResult, error) {
	cwd, err := m.Checkout(p.ThreadID)
	if err != nil {
		return protocol.FileWriteResult{}, err
	}
	return WriteFile(cwd, p.Path, p.Text, p.ExpectedMtimeMs)
}

// nonNil returns s, or an empty slice for nil (a JSON [] rather than null).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// wireDiff converts a diffscope read to its wire shape.
func wireDiff(r *diffscope.Result) protocol.ThreadDiffReadResult {
	out := protocol.ThreadDiffReadResult{
		Scope:            string(r.Scope),
		Root:             r.Root,
		Files:            make([]protocol.DiffFile, 0, len(r.Files)),
		FilesOmitted:     r.FilesOmitted,
		UntrackedSkipped: r.UntrackedSkipped,
		Against:          r.Against,
		FromTree:         r.FromTree,
		ToTree:           r.ToTree,
	}
	if out.Scope == "" {
		out.Scope = protocol.ScopeUncommitted
	}
	for _, f := range r.Files {
		wf := protocol.DiffFile{
			Path: f.Path, OldPath: f.OldPath, Status: f.Status, Binary: f.Binary,
			Additions: f.Additions, Deletions: f.Deletions, TooLarge: f.TooLarge,
			OldMode: f.OldMode, NewMode: f.NewMode, Submodule: f.Submodule, ID: f.ID,
			Hunks: make([]protocol.DiffHunk, 0, len(f.Hunks)),
		}
		for _, h := range f.Hunks {
			wf.Hunks = append(wf.Hunks, protocol.DiffHunk{
				ID: h.ID, Header: h.Header, OldStart: h.OldStart, OldLines: h.OldLines,
				NewStart: h.NewStart, NewLines: h.NewLines, Lines: h.Lines,
			})
		}
		out.Files = append(out.Files, wf)
	}
	return out
}
