package gitcli

import (
	"context"
	"os"
	"sync"
	"time"
)

// This file is the stat-validated index cache (issue 24, ARCHITECTURE.md
// "A stat-validated index cache"): the entries `ls-files -s -z` lists for a
// repository's own index, kept by the Runner and reused while the index
// file's device, inode, size, mtime and ctime (nanoseconds) are unchanged
// and were not racily close to the moment it was listed; listed again
// otherwise. A write knightcode makes itself through a journal records the
// entries it wrote with the new file's stat ([Repo.NoteIndexWrite]), so
// the next action needs no git process to know the index.

// IndexList is the entries of an index file as git lists them. It is
// immutable.
type IndexList struct {
	byPath map[string][]IndexEntry // every stage of a path, in stage order
	stat   statKey
	taken  time.Time // zero for a list knightcode wrote itself
	path   string
}

// Stage0 returns path's stage-0 entry.
func (l *IndexList) Stage0(path string) (IndexEntry, bool) {
	for _, e := range l.byPath[path] {
		if e.Stage == 0 {
			return e, true
		}
	}
	return IndexEntry{}, false
}

// Entries returns every stage of path (none when the index has no entry).
func (l *IndexList) Entries(path string) []IndexEntry { return l.byPath[path] }

// Describes reports whether fi (an os.Stat of the index file) is the
// file the list was made from.
func (l *IndexList) Describes(fi os.FileInfo) bool { return statKeyOf(fi) == l.stat }

// Len is the number of paths in the index.
func (l *IndexList) Len() int { return len(l.byPath) }

// indexCache holds a Runner's index lists, by index file.
type indexCache struct {
	mu    sync.Mutex
	lists map[string]*IndexList
}

// IndexList returns the entries of r's index: the cached list while the
// index file is stat-unchanged (see the file comment), else one
// `ls-files -s -z`, cached. A view with a temporary index ([Repo.WithIndex])
// is listed every time, never cached. A missing index is an empty list.
func (r *Repo) IndexList(ctx context.Context) (*IndexList, error) {
	path := r.IndexFile()
	cacheable := r.indexFile == ""
	c := &r.git.caches().index
	if cacheable {
		c.mu.Lock()
		l := c.lists[path]
		c.mu.Unlock()
		if l != nil && l.fresh() {
			return l, nil
		}
	}
	taken := time.Now()
	st := stampOf(path)
	l := &IndexList{byPath: map[string][]IndexEntry{}, stat: st, taken: taken, path: path}
	err := r.LsFilesStage(ctx, nil, func(e IndexEntry) error {
		l.byPath[e.Path] = append(l.byPath[e.Path], e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cacheable && stampOf(path) == st {
		c.put(path, l)
	}
	return l, nil
}

func (c *indexCache) put(path string, l *IndexList) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lists == nil {
		c.lists = map[string]*IndexList{}
	}
	if len(c.lists) >= maxCached/4 {
		clear(c.lists)
	}
	c.lists[path] = l
}

// fresh reports whether the index file is still the one listed.
func (l *IndexList) fresh() bool {
	now := stampOf(l.path)
	return now == l.stat && (l.taken.IsZero() || !racy(now, l.taken))
}

// NoteIndexWrite records that r's index was replaced by a file knightcode
// wrote (a journal's index commit) from the index before listed: before's
// entries with changes applied (path -> new stage-0 entry; nil removes the
// path). after is the os.Stat of the new index file taken through the file
// that was renamed into place, so it describes the file knightcode wrote
// even if another process replaced the index since (the next IndexList
// then lists it again). Only plain changes are recorded (a stage-0 entry
// replacing a path's stage-0 entry or absence, or removing it); any other
// change (a new path, which may clash with a folder; a path with
// unmerged stages) forgets the repository's list.
func (r *Repo) NoteIndexWrite(before *IndexList, changes map[string]*IndexEntry, after os.FileInfo) {
	c := &r.git.caches().index
	path := r.IndexFile()
	if r.indexFile != "" || before == nil || after == nil {
		c.forget(path)
		return
	}
	l := &IndexList{byPath: make(map[string][]IndexEntry, len(before.byPath)+len(changes)), stat: statKeyOf(after), path: path}
	for p, es := range before.byPath {
		l.byPath[p] = es
	}
	for p, e := range changes {
		for _, old := range before.byPath[p] {
			if old.Stage != 0 {
				c.forget(path)
				return
			}
		}
		if e == nil {
			delete(l.byPath, p)
			continue
		}
		if e.Stage != 0 || e.Path != p || len(before.byPath[p]) == 0 {
			c.forget(path)
			return
		}
		l.byPath[p] = []IndexEntry{*e}
	}
	c.put(path, l)
}

func (c *indexCache) forget(path string) {
	c.mu.Lock()
	delete(c.lists, path)
	c.mu.Unlock()
}
