package rpc

import (
	"context"
	"fmt"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The diff family: thread/diff/read, thread/diff/file and thread/diff/revert
// (spec: Method reference; "Workspaces, diffs and git"). Each handler looks
// the thread's checkout up through the thread API and calls
// diffscope.Differ with plain values; revert runs inside WithCheckout, so it
// is refused while a turn runs in the checkout and no turn starts until it
// ends. Params were decoded and validated by the frame (scope, context,
// commit, reapply, turnId; an empty or null path, hunkId or turnId is
// invalidParams there).
//
// Errors, besides those named per method: threads.ErrThreadNotFound when the
// thread is not loaded (threads.ErrShuttingDown once it unloaded for
// shutdown); errors matching gitcli.ErrNotRepo outside a work tree;
// *diffscope.ParamError naming a field; *diffscope.ConflictError
// (gitConflict). errmap.go maps them.

// RegisterDiffMethods installs the handlers of the diff, git and file
// families (thread/diff/*, git/stage, git/unstage, file/*) on srv, each
// calling core.
func RegisterDiffMethods(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.ThreadDiffRead, core.diffRead)
	jsonrpc.Handle(srv, protocol.ThreadDiffFile, core.diffFile)
	jsonrpc.Handle(srv, protocol.ThreadDiffRevert, core.diffRevert)
	registerGit(srv, core)
	registerFile(srv, core)
}

// diffRead answers thread/diff/read: one scope of the thread's checkout read
// by diffscope.Differ.Read. A branch read without against compares a
// worktree thread's checkout with its worktree's base (BranchBase), other
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
func (c Core) diffRead(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffReadParams) (protocol.ThreadDiffReadResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
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
		opts.BaseRef = c.Threads.BranchBase(p.ThreadID)
	}
	var turnID, after string
	if opts.Scope == diffscope.ScopeLastTurn {
		last, ok := c.Threads.LastTurn(p.ThreadID)
		if !ok {
			return c.emptyLastTurn(ctx, cwd)
		}
		opts.FromTree, opts.ToTree = last.Before, last.After
		turnID, after = last.TurnID, last.After
	}
	res, err := c.Differ.Read(ctx, cwd, opts)
	if err != nil {
		return protocol.ThreadDiffReadResult{}, err
	}
	out := wireDiff(res)
	if opts.Scope == diffscope.ScopeLastTurn {
		out.TurnID = turnID
		if out.Stale, err = c.lastTurnStale(ctx, cwd, after, res); err != nil {
			return protocol.ThreadDiffReadResult{}, err
		}
	}
	return out, nil
}

// emptyLastTurn is the lastTurn diff of a thread without a finished turn:
// the repository's root and no files. Outside a work tree it fails like a
// read (gitcli.ErrNotRepo).
func (c Core) emptyLastTurn(ctx context.Context, cwd string) (protocol.ThreadDiffReadResult, error) {
	repo, err := c.Git.Discover(ctx, cwd)
	if err != nil {
		return protocol.ThreadDiffReadResult{}, err
	}
	if repo.Bare || repo.Root == "" {
		return protocol.ThreadDiffReadResult{}, fmt.Errorf("%s has no work tree: %w", cwd, gitcli.ErrNotRepo)
	}
	return protocol.ThreadDiffReadResult{Scope: protocol.ScopeLastTurn, Root: repo.Root, Files: []protocol.DiffFile{}}, nil
}

// lastTurnStale reports whether a file of the turn read in turn (before ->
// after) changed in the working tree since the turn left it (see diffRead):
// diffscope.Differ.Moved of the turn's paths (path and old path of a
// rename) against after, the check an undo of the whole turn makes. When
// the turn's read was cut by the response budget (FilesOmitted), its other
// paths are unknown, so any change at all since after (a capture whose
// worktree tree is not after) counts as stale.
func (c Core) lastTurnStale(ctx context.Context, cwd, after string, turn *diffscope.Result) (bool, error) {
	if len(turn.Files) == 0 && turn.FilesOmitted == 0 {
		return false, nil
	}
	if turn.FilesOmitted > 0 {
		now, err := c.Differ.Capture(ctx, cwd)
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
	moved, err := c.Differ.Moved(ctx, cwd, after, paths)
	if err != nil {
		return false, err
	}
	return len(moved) > 0, nil
}

// diffFile answers thread/diff/file: both sides of one file by the trees a
// read named (diffscope.Differ.FileSides). Errors: *diffscope.ParamError
// ("fromTree", "toTree", "path", "oldPath") for trees that are not full tree
// ids of the repository or a file in neither tree.
func (c Core) diffFile(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffFileParams) (protocol.ThreadDiffFileResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.ThreadDiffFileResult{}, err
	}
	s, err := c.Differ.FileSides(ctx, cwd, p.FromTree, p.ToTree, p.Path, p.OldPath)
	if err != nil {
		return protocol.ThreadDiffFileResult{}, err
	}
	return protocol.ThreadDiffFileResult{Old: s.Old, New: s.New, Binary: s.Binary, TooLarge: s.TooLarge}, nil
}

// diffRevert answers thread/diff/revert inside WithCheckout (refused with
// threads.ErrTurnInProgress while a turn runs in the checkout; no turn
// starts until it ends): diffscope.Differ.Revert of one hunk, one file or
// the whole scope, read as diffRead reads it (a branch scope against the
// worktree's base). Only an absent path and hunkId mean the whole scope: the
// frame refused "" and null.
//
// lastTurn reverts (or, with Reapply, applies again) the thread's last turn,
// read between its before and after trees; without a path, the index
// entries the turn changed are put back too (the turn's index trees:
// diffscope.RevertOptions.FromIndexTree). With TurnID, a last turn other
// than that one (or none) is a *diffscope.ConflictError diffChanged, so an
// Undo shown on one turn never reverts a newer one; the check and the revert
// happen under the same fence, so no turn can end in between. Without a
// finished turn a lastTurn revert is invalidParams "scope".
func (c Core) diffRevert(ctx context.Context, _ *jsonrpc.Conn, p protocol.ThreadDiffRevertParams) (protocol.ThreadDiffRevertResult, error) {
	var paths []string
	err := c.Threads.WithCheckout(ctx, p.ThreadID, protocol.ThreadDiffRevert.Name, func(cwd string) error {
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
			opts.BaseRef = c.Threads.BranchBase(p.ThreadID)
		}
		if opts.Scope == diffscope.ScopeLastTurn {
			last, ok := c.Threads.LastTurn(p.ThreadID)
			if p.TurnID != "" && (!ok || last.TurnID != p.TurnID) {
				name := last.TurnID
				if !ok {
					name = "none"
				}
				return fmt.Errorf("turn %s is not the last turn of the thread (last: %s): %w", p.TurnID, name,
					&diffscope.ConflictError{Reason: diffscope.ReasonDiffChanged})
			}
			if !ok {
				return coreerr.Refusal(coreerr.ReasonNoTurn, "the thread has no finished turn to revert")
			}
			opts.FromTree, opts.ToTree = last.Before, last.After
			opts.FromIndexTree, opts.ToIndexTree = last.BeforeIndex, last.AfterIndex
		}
		var err error
		paths, err = c.Differ.Revert(ctx, cwd, opts)
		return err
	})
	if err != nil {
		return protocol.ThreadDiffRevertResult{}, err
	}
	return protocol.ThreadDiffRevertResult{Paths: nonNil(paths)}, nil
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
