package diffscope

import (
	"context"
	"sync"

	"github.com/knightcode/knightcode/gitstate"
)

// This file lets a one-hunk action reuse the hunks a read found (issue 24,
// Decision 2): a hunk id covers its file's header (paths, blob ids, modes)
// and its own lines, so when both sides of the file are still the blobs
// the read diffed, the read's bytes for that file are exactly what reading
// it again would print, and the action needs no diff. The sides are
// checked, not assumed: the index entry from the stat-validated index
// cache, HEAD's entry from HEAD's tree, and the working file hashed (only
// where git converts nothing for it: gitstate.Plain; elsewhere the action
// reads the path again through git).

// hunkCache keeps the hunks of the last read of each (checkout, scope,
// context) for the uncommitted, unstaged and staged scopes: the files a
// hunk action can take one hunk of (modified in place, same regular mode,
// text). It is safe for concurrent use.
type hunkCache struct {
	mu    sync.Mutex
	reads map[hunkKey]map[string]*fileDiff
}

type hunkKey struct {
	root    string
	scope   Scope
	context int
}

// maxHunkReads bounds the reads kept (the oldest are dropped together).
const maxHunkReads = 24

// keep records the files of read st (a read without ignoreWhitespace).
func (c *hunkCache) keep(st *readState) {
	switch st.scope {
	case ScopeUncommitted, ScopeUnstaged, ScopeStaged:
	default:
		return
	}
	files := map[string]*fileDiff{}
	for i := range st.files {
		f := &st.files[i]
		if f.wire.Status == "modified" && !f.wire.TooLarge && len(f.wire.Hunks) > 0 && wholeOnly(f.wire, false) == "" {
			files[f.wire.Path] = f
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads == nil || len(c.reads) >= maxHunkReads {
		c.reads = map[hunkKey]map[string]*fileDiff{}
	}
	c.reads[hunkKey{st.ri.Root, st.scope, st.context}] = files
}

// file returns the kept file of path whose hunks include hunkID.
func (c *hunkCache) file(root string, scope Scope, context int, path, hunkID string) *fileDiff {
	c.mu.Lock()
	f := c.reads[hunkKey{root, scope, context}][path]
	c.mu.Unlock()
	if f == nil {
		return nil
	}
	for _, h := range f.wire.Hunks {
		if h.ID == hunkID {
			return f
		}
	}
	return nil
}

// cachedRead returns the read state of path alone from the hunk cache
// when a read of the same scope and context listed hunkID for it and both
// its sides are still the blobs that read diffed (ok false otherwise: the
// caller reads the path again).
func (d *Differ) cachedRead(ctx context.Context, ri repoInfo, scope Scope, nctx int, path, hunkID string) (*readState, bool, error) {
	f := d.hunks.file(ri.Root, scope, nctx, path, hunkID)
	if f == nil {
		return nil, false, nil
	}
	old := entry{mode: f.wire.OldMode, oid: f.oldOID}
	cur := entry{mode: f.wire.NewMode, oid: f.newOID}
	headEntry := func() (entry, error) {
		m, err := gitstate.TreePaths(ctx, ri.Repo, ri.headTree, []string{path})
		if err != nil {
			return entry{}, err
		}
		e := m[path]
		return entry{mode: e.Mode, oid: e.OID}, nil
	}
	indexEntry := func() (entry, error) {
		list, err := ri.IndexList(ctx)
		if err != nil {
			return entry{}, err
		}
		es := list.Entries(path)
		if len(es) != 1 || es[0].Stage != 0 || es[0].OID == gitstate.EmptyBlobID(ri.Repo) {
			return entry{}, nil // unmerged, absent, or maybe intent-to-add: read again
		}
		return entry{mode: es[0].Mode, oid: es[0].OID}, nil
	}
	var work *entry
	worktreeEntry := func() (entry, error) {
		plain, err := gitstate.PlainFor(ctx, ri.Repo)
		if err != nil || !plain.Path(path) {
			return entry{}, err
		}
		oid, mode, ok, err := worktreeBlob(ctx, ri.Repo, path)
		if err != nil || !ok {
			return entry{}, err
		}
		work = &entry{mode: mode, oid: oid}
		return *work, nil
	}
	var from, to func() (entry, error)
	st := &readState{repo: ri.Repo, ri: ri, scope: scope, context: nctx}
	switch scope {
	case ScopeUncommitted:
		from, to = headEntry, worktreeEntry
		st.from = ri.headTree
	case ScopeUnstaged:
		from, to = indexEntry, worktreeEntry
	case ScopeStaged:
		from, to = headEntry, indexEntry
		st.from = ri.headTree
	default:
		return nil, false, nil
	}
	if e, err := from(); err != nil || e != old {
		return nil, false, err
	}
	if e, err := to(); err != nil || e != cur {
		return nil, false, err
	}
	st.files = []fileDiff{*f}
	st.worktree = work
	return st, true, nil
}
