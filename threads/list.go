package threads

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Listing limits (spec: "History, listings, and large values").
const (
	// DefaultListLimit is thread/list's page size without a limit.
	DefaultListLimit = 50
	// MaxListLimit is the largest page size.
	MaxListLimit = 200
	// maxListSnapshots is how many continuation snapshots are kept.
	maxListSnapshots = 32
	// listSnapshotTTL is a snapshot's sliding expiry.
	listSnapshotTTL = 5 * time.Minute
)

// listSnapshot is an immutable summary list thread/list continues from
// (catalog.snaps): the filter it was made with, its rows and its sliding
// expiry.
type listSnapshot struct {
	cwd     string
	rows    []protocol.ThreadSummary
	expires time.Time
}

// ListOptions are the options of [Manager.List]: Cwd filters by project
// (an absolute path; "" for every thread), Cursor continues a listing (""
// starts one), Limit is the page size (0 for DefaultListLimit; more than
// MaxListLimit lists MaxListLimit), Archived lists the archived threads
// instead.
type ListOptions struct {
	Cwd      string
	Cursor   string
	Limit    int
	Archived bool
}

// List lists saved threads (thread/list), newest first (by file
// modification time), filtered by cwd when given (a thread whose cwd is cwd,
// or a worktree thread made from the project at cwd), with the status of
// loaded threads; with Archived, the archived threads instead (never
// listed otherwise). A page holds limit rows (default 50 when absent, 1 to
// 200), fewer when they would make the response exceed
// protocol.MaxHistoryResponseBytes; its nextCursor continues the same
// immutable snapshot after the last row sent, without rescanning.
// Errors: *coreerr.ParamError "cwd" (not absolute); session's
// ErrInvalidCursor for an expired, evicted, malformed or filter-mismatched
// cursor.
func (m *Manager) List(o ListOptions) (Listing, error) {
	return m.catalog.page(o, func(id string) protocol.ThreadStatus {
		// A loaded thread's own status, else the saved one.
		t := m.loaded(id)
		if t != nil {
			var st protocol.ThreadStatus
			if t.call(context.Background(), func() error { st = t.status; return nil }) == nil {
				return st
			}
		}
		return m.catalog.savedStatus(id)
	})
}

// page is one page of List, each row with its status (status: the
// manager's live status of a thread).
func (c *catalog) page(o ListOptions, status func(id string) protocol.ThreadStatus) (Listing, error) {
	limit := o.Limit
	switch {
	case limit <= 0:
		limit = DefaultListLimit
	case limit > MaxListLimit:
		limit = MaxListLimit
	}
	cwd := o.Cwd
	if cwd != "" {
		if !filepath.IsAbs(cwd) {
			return Listing{}, coreerr.Param("cwd", "must be an absolute path, got %q", cwd)
		}
		cwd = filepath.Clean(cwd)
	}
	// The continuation snapshots are keyed by the whole filter.
	filter := cwd
	if o.Archived {
		filter += "\x00archived"
	}
	var (
		snapID string
		rows   []protocol.ThreadSummary
		offset int
	)
	if o.Cursor != "" {
		id, off, ok := strings.Cut(o.Cursor, ":")
		n, err := strconv.Atoi(off)
		if !ok || err != nil || n < 0 {
			return Listing{}, fmt.Errorf("%w: malformed thread/list cursor", session.ErrInvalidCursor)
		}
		snap, ok := c.takeSnapshot(id, filter)
		if !ok || n > len(snap) {
			return Listing{}, fmt.Errorf("%w: the listing expired or was made with another filter; list again", session.ErrInvalidCursor)
		}
		snapID, rows, offset = id, snap, n
	} else {
		all, err := c.list(o.Archived)
		if err != nil {
			return Listing{}, err
		}
		for _, r := range all {
			if cwd == "" || filepath.Clean(r.Cwd) == cwd || (r.ProjectCwd != "" && filepath.Clean(r.ProjectCwd) == cwd) {
				rows = append(rows, r)
			}
		}
	}
	end := min(offset+limit, len(rows))
	page := make([]protocol.ThreadSummary, 0, end-offset)
	// The result's envelope: {"threads":[...],"nextCursor":"<snapshot>:<n>"}.
	used := responseEnvelopeReserve + 64
	for i, r := range rows[offset:end] {
		st := status(r.ID)
		r.Status = &st
		n := jsonSize(r) + 1
		if len(page) > 0 && used+n > protocol.MaxHistoryResponseBytes {
			end = offset + i
			break
		}
		used += n
		page = append(page, r)
	}
	res := Listing{Threads: page}
	if end < len(rows) {
		if snapID == "" {
			snapID = c.putSnapshot(filter, rows)
		}
		res.NextCursor = snapID + ":" + strconv.Itoa(end)
	}
	return res, nil
}

// putSnapshot keeps rows for continuations and returns their id, evicting
// the entry closest to expiry beyond maxListSnapshots.
func (c *catalog) putSnapshot(cwd string, rows []protocol.ThreadSummary) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.snaps {
		if now.After(s.expires) {
			delete(c.snaps, k)
		}
	}
	for len(c.snaps) >= maxListSnapshots {
		var oldest string
		for k, s := range c.snaps {
			if oldest == "" || s.expires.Before(c.snaps[oldest].expires) {
				oldest = k
			}
		}
		delete(c.snaps, oldest)
	}
	c.snaps[id] = &listSnapshot{cwd: cwd, rows: rows, expires: now.Add(listSnapshotTTL)}
	return id
}

// takeSnapshot returns the rows of snapshot id made with filter cwd and
// extends its expiry.
func (c *catalog) takeSnapshot(id, cwd string) ([]protocol.ThreadSummary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snaps[id]
	now := time.Now()
	if s == nil || now.After(s.expires) || s.cwd != cwd {
		return nil, false
	}
	s.expires = now.Add(listSnapshotTTL)
	return s.rows, true
}
