package main

// End-to-end tests of the subscriber-only warning notification {threadId,
// source: "server", path, message} (spec: "Later extension errors send a
// subscriber-only warning with threadId"; issue 9: what a snapshot did not
// keep, and a turn whose capture left files out, are said, never silent).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// warningsSince returns the warning notifications s received from *from
// on, for thread.
func (s *diffServer) warningsSince(t *testing.T, from int, thread string) []protocol.WarningParams {
	t.Helper()
	var out []protocol.WarningParams
	for _, n := range s.since(from) {
		if n.Method != protocol.WarningNotification.Name {
			continue
		}
		var w protocol.WarningParams
		if err := json.Unmarshal(n.Params, &w); err != nil {
			t.Fatal(err)
		}
		if w.ThreadID == thread {
			out = append(out, w)
		}
	}
	return out
}

// archivedWarnings waits for the thread/archived broadcast of thread (the
// client gets notifications on a goroutine of their own, in order: the
// archive's warnings come before it) and returns the warnings from from on.
func (s *diffServer) archivedWarnings(t *testing.T, from int, thread string) []protocol.WarningParams {
	t.Helper()
	at := from
	s.waitNote(t, &at, protocol.ThreadArchived.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	return s.warningsSince(t, from, thread)
}

// TestE2EArchiveWarnsWhatItDidNotKeep archives two worktree threads. The
// first worktree holds a small ignored file, which its snapshot keeps and
// thread/worktree/restore writes back, and one over the 1 MiB budget, which
// the archiving connection is warned about by name (it was answered {}
// before). The second worktree is locked, so the archive keeps it, and the
// warning says so (QA: the lock's reason was only in the server's log).
func TestE2EArchiveWarnsWhatItDidNotKeep(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	first := s.startWT(t, repo, worktreeMode())
	thread, wt := first.Thread.ID, first.Thread.Workspace.Path
	writeFile(t, wt, "secrets.log", "TOKEN=1\n")
	writeFile(t, wt, "big.log", strings.Repeat("x", 2<<20))

	from := s.mark()
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
	ws := s.archivedWarnings(t, from, thread)
	if len(ws) != 1 || ws[0].Source != protocol.WarningSourceServer || !strings.Contains(ws[0].Message, "big.log") ||
		strings.Contains(ws[0].Message, "secrets.log") || ws[0].Path != wt {
		t.Errorf("archive warnings %+v; want one naming big.log, not secrets.log", ws)
	}
	s.must(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, nil)
	s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, nil)
	if got := readFile(t, wt, "secrets.log"); got != "TOKEN=1\n" || exists(wt, "big.log") {
		t.Errorf("restored secrets.log %q, big.log there: %v; want the kept file only", got, exists(wt, "big.log"))
	}

	second := s.startWT(t, repo, worktreeMode())
	locked, lwt := second.Thread.ID, second.Thread.Workspace.Path
	fixtureGit(t, repo, "worktree", "lock", "--reason", "on a removable disk", lwt)
	from = s.mark()
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: locked}, nil)
	if ws := s.archivedWarnings(t, from, locked); len(ws) != 1 || !strings.Contains(ws[0].Message, "on a removable disk") || !exists(lwt, "a.txt") {
		t.Errorf("archive of a locked worktree: warnings %+v, worktree kept %v; want it kept and one warning naming the lock", ws, exists(lwt, "a.txt"))
	}
}

// TestE2ETurnWarnsFilesItsCaptureLeftOut runs a turn in a checkout holding
// an untracked file over 10 MiB, which the turn's captures leave out: its
// subscriber is warned, before turn/completed, that undoing the turn cannot
// restore or remove it. A turn with nothing left out gets no warning.
func TestE2ETurnWarnsFilesItsCaptureLeftOut(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"quiet": script(map[string]any{"text": "done"}, map[string]any{"text": "done"})})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "quiet"}}, &started)
	thread := started.Thread.ID

	from := s.mark()
	s.runTurn(t, thread, "first")
	if ws := s.warningsSince(t, from, thread); len(ws) != 0 {
		t.Errorf("warnings of a turn that left nothing out: %+v", ws)
	}

	writeFile(t, repo, "huge.bin", strings.Repeat("y", 10<<20+1))
	from = s.mark()
	s.runTurn(t, thread, "second")
	ws := s.warningsSince(t, from, thread)
	if len(ws) != 1 || !strings.Contains(ws[0].Message, "1 untracked file was not recorded for this turn (huge.bin)") || !strings.Contains(ws[0].Message, "cannot restore or remove") {
		t.Fatalf("warnings %+v; want one saying the turn cannot undo the file left out", ws)
	}
	for _, n := range s.since(from) {
		if n.Method == protocol.TurnCompletedNotification.Name {
			t.Errorf("turn/completed came before the warning")
		}
		if n.Method == protocol.WarningNotification.Name {
			break
		}
	}
}
