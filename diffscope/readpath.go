package diffscope

import (
	"context"
	"io"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file re-reads one path for a one-hunk action (issue 15,
// "Benchmarks"): a hunk id covers its file's header (paths, blob ids,
// modes) and its own bytes, so reading that one file again at the same
// scope and context proves the id is current without capturing the whole
// checkout. The file's two sides are put in trees of their own (one entry
// each, in a temporary index) or taken from the scope's real tree, and one
// `diff-tree` limited to the path prints the file exactly as the scope's
// full diff does: for a file present on both sides with regular modes git
// prints the same header and hunks whatever else the trees hold (renames
// pair only deleted and added paths). The one-entry trees are written
// through the object store, so the read is one diff-tree.

// readPath reads path alone for a one-hunk action at context nctx: ok is
// false (and the caller reads the whole scope) unless path is a text file
// modified in place with the same regular mode on both sides, in the index
// without conflict or intent-to-add, a regular file in the working tree
// (worktree scopes), and hunkID names one of its hunks. The state's files
// hold that one file; its from tree is the scope's real one for
// uncommitted, branch, staged and lastTurn (so the index side of a revert
// compares with it), a tree of the path's index entry alone for unstaged;
// its to tree holds the path alone except for lastTurn.
func (d *Differ) readPath(ctx context.Context, ri repoInfo, ro ReadOptions, nctx int, path, hunkID string) (st *readState, ok bool, err error) {
	scope := ro.Scope
	if scope == "" {
		scope = ScopeUncommitted
	}
	st = &readState{repo: ri.Repo, ri: ri, scope: scope, context: nctx}
	var from, to *entry // a side from a one-entry tree
	worktree := func() (*entry, error) {
		oid, mode, ok, err := worktreeBlob(ctx, ri.Repo, path)
		if err != nil || !ok {
			return nil, err
		}
		st.worktree = &entry{mode: mode, oid: oid}
		return st.worktree, nil
	}
	index := func() (*entry, error) {
		m, err := d.indexEntries(ctx, ri.Repo, []string{path})
		if err != nil {
			return nil, err
		}
		e, ok := m[path]
		if !ok || e.oid == gitstate.EmptyBlobID(ri.Repo) {
			return nil, nil // absent, unmerged, or maybe intent-to-add (the empty blob's id)
		}
		return &e, nil
	}
	switch scope {
	case ScopeUncommitted:
		st.from = ri.headTree
		to, err = worktree()
	case ScopeBranch:
		if st.from, _, err = d.branchBase(ctx, ri, ro); err != nil {
			return nil, false, err
		}
		to, err = worktree()
	case ScopeUnstaged:
		if from, err = index(); err == nil && from != nil {
			to, err = worktree()
		}
	case ScopeStaged:
		st.from = ri.headTree
		to, err = index()
	case ScopeLastTurn:
		if err := d.checkTrees(ctx, ri, [][2]string{{"fromTree", ro.FromTree}, {"toTree", ro.ToTree}}); err != nil {
			return nil, false, err
		}
		st.from, st.to = ro.FromTree, ro.ToTree
	default:
		return nil, false, nil
	}
	if err != nil || (scope != ScopeLastTurn && to == nil) || (scope == ScopeUnstaged && from == nil) {
		return nil, false, err
	}
	if from != nil {
		if st.from, err = d.oneEntryTree(ctx, ri.Repo, path, *from); err != nil {
			return nil, false, err
		}
	}
	if to != nil {
		if st.to, err = d.oneEntryTree(ctx, ri.Repo, path, *to); err != nil {
			return nil, false, err
		}
	}
	err = ri.DiffTreePatch(ctx, st.from, st.to, gitcli.PatchOptions{Context: nctx, Paths: []string{path}}, func(r io.Reader) error {
		return parseTreeDiff(r, 0, func(e *parsedEntry) error {
			fd, err := buildFile(e, nctx, false)
			if err == nil {
				st.files = append(st.files, fd)
			}
			return err
		})
	})
	if err != nil {
		return nil, false, err
	}
	if len(st.files) != 1 {
		return nil, false, nil
	}
	w := st.files[0].wire
	if w.Path != path || w.Status != "modified" || wholeOnly(w, false) != "" {
		return nil, false, nil
	}
	for _, h := range w.Hunks {
		if h.ID == hunkID {
			return st, true, nil
		}
	}
	return nil, false, nil
}

// oneEntryTree writes a tree holding only path at e, through the
// repository's object store (gitstate.TreeWith), and returns its id.
func (d *Differ) oneEntryTree(ctx context.Context, repo *gitcli.Repo, path string, e entry) (string, error) {
	return gitstate.TreeWith(ctx, repo, "", map[string]gitstate.Entry{path: {Mode: e.mode, OID: e.oid}})
}
