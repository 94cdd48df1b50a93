package threads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// Archive, unarchive and delete (spec: "Ownership, unloading, and
// shutdown": "Archive/unarchive owns both paths, refuses destination
// collisions, and never overwrites another transcript"; Method reference,
// thread/delete; "Workspaces, diffs and git": "Archiving a thread deletes
// its worktree after a snapshot").
//
// An archived transcript lives in the archive directory of the directory it
// was saved in: <session dir>/archive/<same file name> (ArchiveDir).
// Listings of the session directories do not descend into it, so archived
// threads are not listed (thread/list {archived: true} lists them), not
// resumed and not loaded; thread/read still reads them.
//
// Each operation holds the thread's id fence (fenceID): no load of that id
// starts meanwhile (a thread/resume waits), and the checks (running work,
// archive state) are made inside it. The transcript itself is held with
// session.LockFile (the flock a loaded session holds, and a one-link check)
// from the first check to the last file operation, so another process
// cannot own it meanwhile.

// ArchiveDirName is the name of the archive directory inside a session
// directory.
const ArchiveDirName = "archive"

// ArchiveDir is where the transcripts of sessionDir are archived:
// <sessionDir>/archive.
func ArchiveDir(sessionDir string) string { return filepath.Join(sessionDir, ArchiveDirName) }

// fenceID keeps thread id from loading until release is called, after any
// load of it in progress has finished (loads wait on the fence as on a
// concurrent load). A thread already loaded stays loaded: the caller
// checks and unloads it inside the fence. Errors: shuttingDown; ctx's
// error.
func (m *Manager) fenceID(ctx context.Context, id string) (release func(), err error) {
	if id == "" {
		return nil, coreerr.Param("threadId", "must not be empty")
	}
	for {
		m.mu.Lock()
		if m.closing {
			m.mu.Unlock()
			return nil, errClosing
		}
		if wait := m.loadingIDs[id]; wait != nil {
			m.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		m.loadingIDs[id] = ch
		m.mu.Unlock()
		return func() {
			m.mu.Lock()
			delete(m.loadingIDs, id)
			m.mu.Unlock()
			close(ch)
		}, nil
	}
}

// unloadForArchive unloads the thread for an archive: refused (the thread
// stays loaded, its subscribers too) while it runs or has queued work; a
// session never saved is saved first (its settings entries), so it has a
// transcript to archive. It returns once the thread's goroutine has
// exited. Call it inside the id fence.
func (t *thread) unloadForArchive(ctx context.Context) error {
	id := t.id
	err := t.call(ctx, func() error {
		if t.unloading {
			return nil // it goes away on its own; waited for below
		}
		if op := t.gate.operationOf(id); op != nil {
			return op.refusal(t.gate.key)
		}
		if t.busy() {
			return fmt.Errorf("%w: thread %s has running or queued work; interrupt it first", ErrTurnInProgress, id)
		}
		if err := t.flushPending(); err != nil {
			return err
		}
		t.beginUnload("")
		return nil
	})
	if err != nil && !errors.Is(err, ErrThreadNotFound) {
		return err
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Archive archives the thread id (thread/archive): it unloads the thread
// (refused while it has running or queued work), snapshots and deletes its worktree
// (workspace.Manager.Delete, in use while another loaded thread runs in it)
// and moves its transcript to the archive directory. A worktree another
// loaded thread runs in, or that holds a nested repository or is locked, is
// skipped (kept, as pruning does) and the archive goes on; so does one whose
// removal failed after its snapshot was written (the snapshot keeps its
// state). The worktree keeps the thread attached in the registry, for
// thread/worktree/restore after thread/unarchive. Archiving an archived
// thread does nothing. Success broadcasts thread/archived {threadId} and
// the thread's sidebar row (archived, read from the transcript).
// Unloading stops the processes the thread's bash calls left running in the
// background (finishUnload), so none of them runs when the worktree is
// removed (shared/cases C24).
//
// Errors: ErrThreadNotFound; ErrTurnInProgress; session.ErrLockedElsewhere
// (threadLockedElsewhere) when another process owns the transcript;
// session.ErrHardLinked and *session.ExistsError (archiveConflict: a file
// with the same name is in the archive already; both are left as they
// are); git failures of the snapshot (nothing moved).
//
// Before the worktree is removed, the cleanup script of the environment it
// was created with runs (cleanupBeforeRemove), its output streamed to sub
// (may be nil) as thread/workspace/progress for this thread.
func (m *Manager) Archive(ctx context.Context, sub Subscriber, id string) error {
	release, err := m.fenceID(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	if t := m.loaded(id); t != nil {
		if err := t.unloadForArchive(ctx); err != nil {
			return err
		}
	}
	s, ok, err := m.catalog.find(id, false)
	if err != nil {
		return err
	}
	if !ok {
		if _, archived, err := m.catalog.find(id, true); err != nil {
			return err
		} else if archived {
			return nil
		}
		return threadNotFound(id)
	}
	lk, err := session.LockFile(s.SessionFile)
	if err != nil {
		return notFoundIfGone(err, id)
	}
	defer lk.Unlock()
	src := lk.Path()
	dst := filepath.Join(ArchiveDir(filepath.Dir(src)), filepath.Base(src))
	if _, err := os.Lstat(dst); err == nil {
		return &session.ExistsError{Source: src, Destination: dst}
	}
	hdr, err := session.ReadHeader(src)
	if err != nil {
		return err
	}
	if h := hdr.Workspace; h != nil && m.place.workspace != nil {
		if err := m.place.deleteForArchive(ctx, sub, id, h.Path); err != nil {
			return err
		}
	}
	if err := lk.Rename(dst); err != nil {
		return err
	}
	m.catalog.broadcast(protocol.ThreadArchived.With(protocol.ThreadArchivedParams{ThreadID: id}))
	m.catalog.savedRow(id, dst, true)
	return nil
}

// deleteForArchive snapshots and deletes an archived thread's worktree,
// unless another saved (not archived) thread is attached to it: one that
// joined it, or whose home it is while a handoff has it in the main
// checkout (kept, with a warning). The
// refusals that mean "keep it" (in use, nested repository, locked) and a
// removal that failed after its snapshot are logged, warned to sub (the
// warning notification) and skipped; so are ignored files the snapshot did
// not keep (workspace.Deleted.NotKept). A worktree already deleted or
// missing is skipped. Other failures stop the archive.
func (p *placement) deleteForArchive(ctx context.Context, sub Subscriber, threadID, path string) error {
	w, ok, err := p.workspace.Registry().Get(path)
	if err != nil {
		return err
	}
	if !ok || (w.Deleted && w.State != workspace.StateRemoving) {
		return nil // a deletion that did not finish is finished below
	}
	if others := slices.DeleteFunc(slices.Clone(w.ThreadIDs), func(id string) bool { return id == threadID }); !w.Deleted && len(others) > 0 {
		// Another saved thread works there, or goes back there (its home,
		// while a handoff has it in the main checkout): it stays theirs.
		rows, err := p.catalog.list(false)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if slices.Contains(others, r.ID) {
				p.log.Info("archived thread's worktree kept: another thread uses it", "path", path, "thread", r.ID)
				sendWarning(sub, threadID, path, fmt.Sprintf("the thread was archived, and its worktree %s kept: thread %s works there too, or goes back there", path, r.ID))
				return nil
			}
		}
	}
	claim := p.claim()
	defer claim.release()
	d, err := p.workspace.Delete(ctx, path, workspace.DeleteOptions{InUse: claim.inUse, BeforeRemove: p.cleanupBeforeRemove(sub, []string{threadID})})
	var ce *workspace.ConflictError
	var re *workspace.RemoveError
	warn := func(format string, args ...any) {
		sendWarning(sub, threadID, path, fmt.Sprintf(format, args...))
	}
	switch {
	case err == nil:
		p.log.Info("archived thread's worktree deleted", "path", path, "snapshot", d.Snapshot)
		if msg := d.NotKept(); msg != "" {
			warn("%s", msg)
		}
		return nil
	case errors.As(err, &ce):
		p.log.Info("archived thread's worktree kept", "path", path, "reason", ce.Reason, "output", ce.Output)
		warn("the thread was archived, and its worktree %s kept (%s: %s)", path, ce.Reason, ce.Output)
		return nil
	case errors.As(err, &re):
		p.log.Warn("archived thread's worktree not fully removed; its snapshot holds its state", "path", path, "snapshot", re.Snapshot, "err", err)
		warn("%v", err)
		return nil
	}
	return err
}

// sendWarning sends sub (when not nil) the warning notification
// {threadId, source: "server", path, message}.
func sendWarning(sub Subscriber, threadID, path, msg string) {
	if sub == nil {
		return
	}
	_ = sub.Send(protocol.WarningNotification.With(protocol.WarningParams{ThreadID: threadID,
		Warning: protocol.Warning{Source: protocol.WarningSourceServer, Path: path, Message: msg}}))
}

// notFoundIfGone turns a transcript that vanished into ErrThreadNotFound.
func notFoundIfGone(err error, id string) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s (its transcript is gone)", ErrThreadNotFound, id)
	}
	return err
}

// Unarchive unarchives the thread id (thread/unarchive): it moves the
// archived transcript back to its session directory and returns the thread as saved (not
// loaded; a worktree it had stays deleted until thread/worktree/restore).
// Success broadcasts thread/unarchived {threadId} and the thread's
// sidebar row.
//
// Errors: ErrThreadNotFound; ErrThreadNotArchived for a thread that is not
// archived; session.ErrLockedElsewhere; session.ErrHardLinked and
// *session.ExistsError (archiveConflict: a transcript with that name is
// back in the session directory; both are left as they are).
func (m *Manager) Unarchive(ctx context.Context, id string) (protocol.Thread, error) {
	release, err := m.fenceID(ctx, id)
	if err != nil {
		return protocol.Thread{}, err
	}
	defer release()
	s, ok, err := m.catalog.find(id, true)
	if err != nil {
		return protocol.Thread{}, err
	}
	if !ok {
		return protocol.Thread{}, m.catalog.notArchived(id, m.loaded(id) != nil)
	}
	lk, err := session.LockFile(s.SessionFile)
	if err != nil {
		return protocol.Thread{}, notFoundIfGone(err, id)
	}
	defer lk.Unlock()
	src := lk.Path()
	dst := filepath.Join(filepath.Dir(filepath.Dir(src)), filepath.Base(src))
	if err := lk.Rename(dst); err != nil {
		return protocol.Thread{}, err
	}
	lk.Unlock()
	m.catalog.broadcast(protocol.ThreadUnarchived.With(protocol.ThreadUnarchivedParams{ThreadID: id}))
	m.catalog.savedRow(id, dst, false)
	res, err := m.Read(ctx, id, "")
	if err != nil {
		return protocol.Thread{}, err
	}
	return res.Thread, nil
}

// Delete deletes the archived thread id (thread/delete): it permanently
// removes its transcript. Inside the id fence it checks that the thread has no running
// or admitted work and is archived (a refusal leaves a loaded thread and its
// subscribers as they were), locks and verifies the transcript
// (session.LockFile: owned by no one, one link) and unlinks it. The refs
// pinning its turns' trees, refs/knightcode/turns/<threadId>/..., are
// deleted (unpinTurns; other threads' stay). The thread
// is detached from its worktree in the registry; a deleted worktree no
// thread is attached to any more is forgotten with its snapshot ref
// (workspace.Manager.Forget). Success broadcasts thread/deleted {threadId}
// and thread/sidebar {threadId, deleted: true} to every initialized
// connection.
//
// Errors: ErrThreadNotFound; ErrThreadNotArchived; ErrTurnInProgress;
// session.ErrLockedElsewhere (threadLockedElsewhere); session.ErrHardLinked
// (archiveConflict).
func (m *Manager) Delete(ctx context.Context, id string) error {
	release, err := m.fenceID(ctx, id)
	if err != nil {
		return err
	}
	defer release()
	if t := m.loaded(id); t != nil {
		// A loaded thread is never archived; say why it stays.
		err := t.call(ctx, func() error {
			if t.busy() {
				return fmt.Errorf("%w: thread %s has running or queued work", ErrTurnInProgress, t.id)
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrThreadNotFound) {
			return err
		}
	}
	s, ok, err := m.catalog.find(id, true)
	if err != nil {
		return err
	}
	if !ok {
		return m.catalog.notArchived(id, m.loaded(id) != nil)
	}
	lk, err := session.LockFile(s.SessionFile)
	if err != nil {
		return notFoundIfGone(err, id)
	}
	defer lk.Unlock()
	hdr, err := session.ReadHeader(lk.Path())
	if err != nil {
		return err
	}
	if err := lk.Remove(); err != nil {
		return err
	}
	m.place.unpinTurns(ctx, hdr, id)
	if h := hdr.Workspace; h != nil && m.place.workspace != nil {
		m.place.forget(ctx, h.Path, id)
	}
	m.catalog.broadcast(protocol.ThreadDeleted.With(protocol.ThreadDeletedParams{ThreadID: id}))
	m.catalog.deletedRow(id)
	return nil
}

// unpinTurns deletes the refs that keep a deleted thread's turn trees
// reachable, refs/knightcode/turns/<threadId>/... (ARCHITECTURE.md:
// "deleting the thread or snapshot deletes the ref"), with
// diffscope.Differ.Unpin in the repository the thread ran in. Refs are
// shared by every worktree of a repository, so a worktree thread's are
// deleted from its project checkout, else (the checkout moved) from its
// worktree's common git dir as the registry records it, else from its
// worktree; a local thread's from its cwd. A directory that is no longer a
// repository is skipped for the next; outside git there were no pins.
// Failures are logged: the transcript is already gone.
func (p *placement) unpinTurns(ctx context.Context, h session.Header, threadID string) {
	if p.differ == nil {
		return
	}
	var dirs []string
	if ws := h.Workspace; ws != nil {
		dirs = append(dirs, ws.ProjectCwd)
		if p.workspace != nil {
			if w, ok, err := p.workspace.Registry().Get(ws.Path); err == nil && ok {
				dirs = append(dirs, w.CommonDir)
			}
		}
		dirs = append(dirs, ws.Path)
	}
	dirs = append(dirs, h.Cwd)
	prefix := PinRefPrefix + threadID + "/"
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		err := p.differ.Unpin(ctx, dir, prefix)
		if err == nil {
			return
		}
		if !errors.Is(err, gitcli.ErrNotRepo) {
			p.log.Warn("deleting a deleted thread's turn refs", "thread", threadID, "dir", dir, "err", err)
			return
		}
	}
	p.log.Debug("a deleted thread's repository is gone; no turn refs to delete", "thread", threadID)
}

// forget detaches a deleted thread from its worktree and, when the
// worktree is deleted and no thread is attached any more, forgets it and
// deletes its snapshot ref (spec: "deleting the thread or snapshot deletes
// the ref"). Failures are logged: the transcript is already gone.
func (p *placement) forget(ctx context.Context, path, threadID string) {
	ws := p.workspace
	reg := ws.Registry()
	if err := reg.DetachThread(path, threadID); err != nil {
		if !errors.Is(err, workspace.ErrNotRegistered) {
			p.log.Warn("detaching a deleted thread from its worktree", "path", path, "err", err)
		}
		return
	}
	w, ok, err := reg.Get(path)
	if err != nil || !ok || !w.Deleted || len(w.ThreadIDs) > 0 {
		return
	}
	f, err := ws.Forget(ctx, path)
	if err != nil {
		p.log.Warn("forgetting a deleted thread's worktree", "path", path, "err", err)
		return
	}
	if f.RecoveryRef != "" || f.Leftovers != "" {
		// Commits the thread made on its detached HEAD stay reachable
		// (shared/cases C22).
		p.log.Info("a deleted thread's worktree commits were kept", "path", path, "recoveryRef", f.RecoveryRef, "leftovers", f.Leftovers)
	}
}
