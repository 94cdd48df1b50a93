package gitstate

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file records a partial recovery point (issue 24, Decision 1): a
// path-scoped action (a hunk, file or path revert, stage or unstage) saves
// exactly what it will touch, each named path's index entry and its
// working-tree content and mode (or their absence), on top of HEAD's tree,
// so the point costs the trees along those paths and no whole-index git
// process. The trees and commits are written through the repository's
// object store (in-process where go-git handles the repository); only the
// ref that keeps them is written by git.

// partialPoint writes the recovery point of a (not Full): its index tree
// (HEAD's tree with each path's index entry), its working-tree tree
// (HEAD's tree with each path as the working tree holds it) and the two
// commits in git's stash shape, and keeps the working-tree entries for
// expect. Nothing refers to the objects yet.
func (j *Journal) partialPoint(ctx context.Context, head, headTree string, a Action) (Snapshot, string, string, error) {
	repo := j.repo
	store, err := repo.Objects(ctx)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	plain, err := PlainFor(ctx, repo)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	idx := plain.Index()
	ix := make(map[string]Entry, len(a.Paths))
	present := map[string]Entry{}
	for _, p := range a.Paths {
		e := pointIndexEntry(idx.Entries(p))
		ix[p] = e
		if !e.Absent() {
			present[p] = e
		}
	}
	// An intent-to-add entry is not in an index tree (write-tree leaves
	// it out); the journal records the flag itself.
	ita, err := intentToAdd(ctx, repo, present)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	for p := range ita {
		ix[p] = Entry{}
	}
	wt := make(map[string]Entry, len(a.Paths))
	// A path held by a folder, or under a symlink or a file, is recorded
	// as the index has it (the folder's files are paths of their own, as
	// an action names them).
	files, folders, beyond := fileTargets(repo.Root, a.Paths)
	fromIndex := map[string]bool{}
	for p := range folders {
		wt[p], fromIndex[p] = ix[p], true
	}
	for p := range beyond {
		wt[p], fromIndex[p] = ix[p], true
	}
	if plain.Paths(files) {
		for _, p := range files {
			e, folder, err := HashWorktree(ctx, store, repo.Root, p)
			if err != nil {
				return Snapshot{}, "", "", err
			}
			if folder {
				e = ix[p]
			}
			wt[p] = e
		}
	} else if len(files) > 0 {
		// Filters, eol conversion or modes from the index: git hashes
		// the files.
		got, err := worktreeEntries(ctx, repo, filepath.Join(j.work, "point-index"), files)
		if err != nil {
			return Snapshot{}, "", "", err
		}
		for _, p := range files {
			e := got[p]
			if e.Mode == "040000" {
				e = ix[p]
			}
			wt[p] = e
		}
	}
	dropShadowed(wt, fromIndex)
	base := headTree
	if base == repo.EmptyTree() {
		base = ""
	}
	it, err := writeTreeWith(ctx, repo, store, base, ix)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	wtTree, err := writeTreeWith(ctx, repo, store, base, wt)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	now := j.o.now()
	parent := head
	if parent == "" {
		if parent, err = writeCommit(ctx, store, headTree, nil, unbornMessage, Ident, now); err != nil {
			return Snapshot{}, "", "", err
		}
	}
	ic, err := writeCommit(ctx, store, it, []string{parent}, "knightcode oplog: index before "+a.Name+"\n", Ident, now)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	wc, err := writeCommit(ctx, store, wtTree, []string{parent, ic}, pointMessage(a, repo.Root), Ident, now)
	if err != nil {
		return Snapshot{}, "", "", err
	}
	j.pointWT = wt
	return Snapshot{Commit: wc, IndexCommit: ic}, it, wtTree, nil
}

// dropShadowed makes the working-tree entries taken from the index (a path
// held by a folder, or under a file or symlink) absent where a path read
// from the working tree is above or below them: the working tree holds
// that one, as `update-index --add --replace` would record it.
func dropShadowed(wt map[string]Entry, fromIndex map[string]bool) {
	for p := range fromIndex {
		if wt[p].Absent() {
			continue
		}
		for q, e := range wt {
			if fromIndex[q] || e.Absent() {
				continue
			}
			if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
				wt[p] = Entry{}
				break
			}
		}
	}
}

// pointIndexEntry is the entry a recovery point's index tree records for
// a path with these index entries: stage 0, else (unmerged) stage 2, git's
// "ours", else absent (as a capture's index tree: resolveUnmerged).
func pointIndexEntry(es []gitcli.IndexEntry) Entry {
	var ours Entry
	for _, e := range es {
		switch e.Stage {
		case 0:
			return Entry{Mode: e.Mode, OID: e.OID}
		case 2:
			ours = Entry{Mode: e.Mode, OID: e.OID}
		}
	}
	return ours
}
