package threads

import (
	"bytes"
	"encoding/json"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Sidebar rows (protocol.ThreadSidebarParams): every initialized connection
// gets a thread's whole row whenever it changes (spec: "Every initialized
// connection gets thread/sidebar ... updates"). A loaded thread sends its
// row from its goroutine (sidebarChanged), after every change of a field
// the row shows, and only when the row differs from the last one it sent;
// archive, unarchive and delete send the row of a saved thread
// (catalog.savedRow).

// turnSummary is turn as thread/turn/completed carries it: no items,
// error.message bounded to session.MaxSummaryErrorChars.
func turnSummary(turn protocol.Turn) protocol.Turn {
	s := protocol.Turn{ID: turn.ID, Status: turn.Status, StartedAt: turn.StartedAt, CompletedAt: turn.CompletedAt,
		Usage: turn.Usage, Files: turn.Files}
	if turn.Error != nil {
		e := *turn.Error
		e.Message = session.TruncateRunes(e.Message, session.MaxSummaryErrorChars)
		s.Error = &e
	}
	return s
}

// lastTurnOf is the summary of tr's last turn that is not runningTurnID,
// nil when it has none.
func lastTurnOf(tr *session.Transcript, runningTurnID string) *protocol.Turn {
	turn, ok := tr.LastTurn(runningTurnID)
	if !ok {
		return nil
	}
	s := turnSummary(turn)
	return &s
}

// sidebarRow is the thread's row as it stands (owner goroutine).
func (t *thread) sidebarRow() protocol.SidebarRow {
	return protocol.SidebarRow{
		Cwd:       t.cwd,
		Title:     t.sess.Transcript().ListTitle(),
		UpdatedAt: t.updatedAt,
		Status:    t.status,
		LastTurn:  t.lastTurn,
	}
}

// sidebarChanged (owner goroutine) sends thread/sidebar to every
// initialized connection when the thread's row differs from the last one
// it sent. A thread that is not loaded any more and was never shown
// (a start that failed) sends none.
func (t *thread) sidebarChanged() {
	row := t.sidebarRow()
	b, err := json.Marshal(row)
	if err != nil || bytes.Equal(b, t.sidebarSent) {
		return
	}
	if t.sidebarSent == nil && row.Status.Type == protocol.ThreadStatusNotLoaded {
		return
	}
	t.sidebarSent = b
	t.m.catalog.broadcast(protocol.ThreadSidebar.With(protocol.ThreadSidebarParams{ThreadID: t.id, Row: &row}))
}

// savedRow sends the row of the saved thread whose transcript is path
// (archived says it is in the archive), read from the file; a transcript
// that cannot be read sends none (logged).
func (c *catalog) savedRow(id, path string, archived bool) {
	tr, err := session.Read(path)
	if err != nil {
		c.log.Warn("reading a transcript for its sidebar row failed", "thread", id, "path", path, "err", err)
		return
	}
	row := protocol.SidebarRow{
		Cwd:       tr.Placement().Cwd,
		Title:     tr.ListTitle(),
		UpdatedAt: tr.UpdatedAt(),
		Status:    c.savedStatus(id),
		LastTurn:  lastTurnOf(tr, ""),
		Archived:  archived,
	}
	c.broadcast(protocol.ThreadSidebar.With(protocol.ThreadSidebarParams{ThreadID: id, Row: &row}))
}

// deletedRow sends thread/sidebar {threadId, deleted: true}.
func (c *catalog) deletedRow(id string) {
	c.broadcast(protocol.ThreadSidebar.With(protocol.ThreadSidebarParams{ThreadID: id, Deleted: true}))
}
