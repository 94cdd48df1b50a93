package threads

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// catalog is the saved threads as the session directories hold them, and
// what every connection is told of them (spec: "History, listings, and
// large values"; "Every initialized connection gets thread/sidebar ...
// updates"): the listing of saved and archived transcripts through the
// index cache of session.Lister, the continuation snapshots of thread/list
// (list.go), the status of a thread that is not loaded (systemError after
// an ownership loss, until it loads again), and the broadcasts of sidebar
// rows (sidebar.go) and of archive, unarchive and delete. It knows nothing
// of loaded threads: the manager passes their statuses in. Its methods are
// safe for concurrent use.
type catalog struct {
	dirs     session.Dirs
	lister   session.Lister
	notifier Notifier // nil: broadcasts are dropped
	log      *slog.Logger

	mu    sync.Mutex
	snaps map[string]*listSnapshot // thread/list continuations by id
	lost  map[string]string        // thread id -> systemError message after ownership loss
}

// newCatalog returns the catalog of the session directories dirs.
func newCatalog(dirs session.Dirs, notifier Notifier, log *slog.Logger) *catalog {
	return &catalog{dirs: dirs, notifier: notifier, log: log, snaps: map[string]*listSnapshot{}, lost: map[string]string{}}
}

// broadcast sends n to every initialized connection.
func (c *catalog) broadcast(n protocol.Notification) {
	if c.notifier == nil {
		return
	}
	if err := c.notifier.Broadcast(n); err != nil {
		c.log.Debug("broadcast failed", "method", n.Method(), "err", err)
	}
}

// list lists every saved thread, newest first: the archived ones
// (ArchiveDir of every session directory) when archived is true, else the
// others.
func (c *catalog) list(archived bool) ([]protocol.ThreadSummary, error) {
	return c.listWith(archived, c.lister.List)
}

// listWith is list through list (Lister.List, or ListReadOnly for a
// caller that must write nothing, not even the index cache).
func (c *catalog) listWith(archived bool, list func(dirs ...string) ([]protocol.ThreadSummary, error)) ([]protocol.ThreadSummary, error) {
	roots, err := c.dirs.Roots()
	if err != nil {
		return nil, err
	}
	if archived {
		for i, r := range roots {
			roots[i] = ArchiveDir(r)
		}
	}
	rows, err := list(roots...)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rows, func(a, b protocol.ThreadSummary) int {
		switch {
		case a.UpdatedAt > b.UpdatedAt:
			return -1
		case a.UpdatedAt < b.UpdatedAt:
			return 1
		}
		return 0
	})
	return rows, nil
}

// find returns the newest summary with header id id among the archived
// threads when archived is true, else among the others.
func (c *catalog) find(id string, archived bool) (protocol.ThreadSummary, bool, error) {
	rows, err := c.list(archived)
	if err != nil {
		return protocol.ThreadSummary{}, false, err
	}
	return row(rows, id)
}

// row returns the first of rows with id id.
func row(rows []protocol.ThreadSummary, id string) (protocol.ThreadSummary, bool, error) {
	i := slices.IndexFunc(rows, func(r protocol.ThreadSummary) bool { return r.ID == id })
	if i < 0 {
		return protocol.ThreadSummary{}, false, nil
	}
	return rows[i], true, nil
}

// sessionFile returns the session file of the saved thread id (the newest
// listed transcript with that header id, not archived). Errors:
// *coreerr.ParamError "threadId" when id is empty; ErrThreadNotFound.
func (c *catalog) sessionFile(id string) (string, error) {
	if id == "" {
		return "", coreerr.Param("threadId", "must not be empty")
	}
	s, ok, err := c.find(id, false)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", threadNotFound(id)
	}
	return s.SessionFile, nil
}

// readSaved reads the saved transcript of thread id, archived or not,
// without loading or locking it, and returns it with its listing row.
// Errors: ErrThreadNotFound (no such thread, or its file vanished); the
// file's.
func (c *catalog) readSaved(id string) (*session.Transcript, protocol.ThreadSummary, error) {
	s, ok, err := c.find(id, false)
	if err == nil && !ok {
		s, ok, err = c.find(id, true)
	}
	return c.read(id, s, ok, err)
}

// readSavedReadOnly is readSaved of a thread that is not archived, listed
// without writing the index cache (a dry run writes nothing).
func (c *catalog) readSavedReadOnly(id string) (*session.Transcript, protocol.ThreadSummary, error) {
	rows, err := c.listWith(false, c.lister.ListReadOnly)
	if err != nil {
		return nil, protocol.ThreadSummary{}, err
	}
	s, ok, err := row(rows, id)
	return c.read(id, s, ok, err)
}

// read reads the transcript of the row s found for id (ok) or the error of
// finding it.
func (c *catalog) read(id string, s protocol.ThreadSummary, ok bool, err error) (*session.Transcript, protocol.ThreadSummary, error) {
	if err != nil {
		return nil, protocol.ThreadSummary{}, err
	}
	if !ok {
		return nil, protocol.ThreadSummary{}, threadNotFound(id)
	}
	tr, err := session.Read(s.SessionFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, protocol.ThreadSummary{}, threadNotFound(id)
		}
		return nil, protocol.ThreadSummary{}, err
	}
	return tr, s, nil
}

// savedThread is the wire thread of a thread that is not loaded, read from
// its transcript: where it runs is its placement (a handoff's workspace
// entry wins over the header, as when it loads), ws the wire view of its
// workspace.
func (c *catalog) savedThread(tr *session.Transcript, forkedFromID string, ws protocol.Workspace) protocol.Thread {
	return protocol.Thread{
		ID: tr.Header.ID, Cwd: tr.Placement().Cwd, CreatedAt: tr.Header.Timestamp,
		UpdatedAt: tr.UpdatedAt(), Title: tr.Title(), Status: c.savedStatus(tr.Header.ID),
		SessionFile: tr.Path, ForkedFromID: forkedFromID, Workspace: ws,
	}
}

// savedStatus is the status of a thread that is not loaded: notLoaded, or
// systemError after an ownership loss until it is loaded again.
func (c *catalog) savedStatus(id string) protocol.ThreadStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg, ok := c.lost[id]; ok {
		return protocol.ThreadStatus{Type: protocol.ThreadStatusSystemError, Message: msg}
	}
	return protocol.ThreadStatus{Type: protocol.ThreadStatusNotLoaded}
}

// lose records that thread id unloaded after losing ownership of its
// session file (msg, its systemError message); found forgets it when the
// thread loads again.
func (c *catalog) lose(id, msg string) {
	c.mu.Lock()
	c.lost[id] = msg
	c.mu.Unlock()
}

// found forgets an ownership loss of thread id (it loaded again).
func (c *catalog) found(id string) {
	c.mu.Lock()
	delete(c.lost, id)
	c.mu.Unlock()
}

// notArchived is the error for a thread that is not in the archive:
// ErrThreadNotArchived when it exists otherwise (loaded, or saved), else
// ErrThreadNotFound.
func (c *catalog) notArchived(id string, loaded bool) error {
	if !loaded {
		if _, ok, err := c.find(id, false); err != nil {
			return err
		} else if !ok {
			return threadNotFound(id)
		}
	}
	return fmt.Errorf("%w: thread %s is not archived; archive it first", ErrThreadNotArchived, id)
}

// header returns the session header of the saved thread id (its newest
// transcript, not archived). Errors: ErrThreadNotFound, which says so for
// an archived thread (unarchive it first).
func (c *catalog) header(id string) (session.Header, error) {
	s, ok, err := c.find(id, false)
	if err != nil {
		return session.Header{}, err
	}
	if !ok {
		if _, archived, _ := c.find(id, true); archived {
			return session.Header{}, fmt.Errorf("%w: %s is archived; unarchive it first", ErrThreadNotFound, id)
		}
		return session.Header{}, threadNotFound(id)
	}
	return session.ReadHeader(s.SessionFile)
}

// placement is where the saved thread id runs, read from its session file
// (the last workspace entry, else the header). Errors: sessionFile's; the
// file's.
func (c *catalog) placement(id string) (session.WorkspaceEntry, error) {
	path, err := c.sessionFile(id)
	if err != nil {
		return session.WorkspaceEntry{}, err
	}
	tr, err := session.Read(path)
	if err != nil {
		return session.WorkspaceEntry{}, err
	}
	return tr.Placement(), nil
}

// appendEntry appends e (fsynced) to the session file of the saved thread
// id, which is not loaded here: the file is owned (session.Open) while it
// is written. Errors: sessionFile's; session.ErrLockedElsewhere; the
// file's.
func (c *catalog) appendEntry(id string, e session.Entry) error {
	path, err := c.sessionFile(id)
	if err != nil {
		return err
	}
	sess, err := session.Open(path)
	if err != nil {
		return err
	}
	_, err = sess.Append(e)
	return errors.Join(err, sess.Close())
}
