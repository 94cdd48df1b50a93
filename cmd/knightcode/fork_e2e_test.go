package main

// End-to-end tests of thread/fork over the built binary (spec: "Threads
// and turns": a fork is named after its source with (fork) appended and
// returns {thread, warnings, ui}; forkedFromId is the parent's header id).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// allTurns reads every history page of thread, oldest turn first.
func (s *diffServer) allTurns(t *testing.T, thread string) []protocol.Turn {
	t.Helper()
	var pages [][]protocol.Turn
	cursor := ""
	for {
		var res protocol.ThreadReadResult
		s.must(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: thread, Cursor: cursor}, &res)
		pages = append(pages, res.Turns)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	var out []protocol.Turn
	for i := len(pages) - 1; i >= 0; i-- {
		out = append(out, pages[i]...)
	}
	return out
}

// TestE2EForkSixtyTurns forks a saved thread of 60 turns whole and through
// its 40th turn: the forks hold exactly those turns (ids, items and times
// as the source's), name the source as their origin in thread/fork,
// thread/read and thread/list, are titled after it with " (fork)", run in
// its cwd, and are loaded, idle and subscribed. Bad params are refused.
func TestE2EForkSixtyTurns(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home := testEnv(t)
	var turns []savedTurn
	for i := range 60 {
		turns = append(turns, savedTurn{id: fmt.Sprintf("turn-%02d", i), user: fmt.Sprintf("question %d", i), reply: fmt.Sprintf("answer %d", i)})
	}
	source := writeTranscript(t, home, repo, "Sixty turns", turns)
	missing := filepath.Join(t.TempDir(), "missing-extension.js")
	cmd := exec.Command(binary, "app-server", "-e", missing)
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)

	sourceTurns := s.allTurns(t, source)
	if len(sourceTurns) != 60 {
		t.Fatalf("source has %d turns", len(sourceTurns))
	}
	sourceFile := s.readThread(t, source).Thread.SessionFile

	for _, c := range []struct {
		name   string
		turnID string
		want   []protocol.Turn
	}{
		{"whole", "", sourceTurns},
		{"through turn 40", "turn-39", sourceTurns[:40]},
		{"through the first turn", "turn-00", sourceTurns[:1]},
	} {
		t.Run(c.name, func(t *testing.T) {
			from := s.mark()
			fork := mustCall(t, s, protocol.ThreadFork, protocol.ThreadForkParams{ThreadID: source, TurnID: c.turnID})
			th := fork.Thread
			if th.ID == source || th.ForkedFromID != source || th.Title != "Sixty turns (fork)" || th.Cwd != repo ||
				th.Status.Type != protocol.ThreadStatusIdle || th.SessionFile == "" || th.SessionFile == sourceFile || th.Workspace.Mode != protocol.WorkspaceLocal {
				t.Errorf("fork = %s", mustJSON(th))
			}
			wantWarnings := []protocol.Warning{{Message: "extension not found: " + missing, Source: protocol.WarningSourceExtension, Path: missing}}
			if diff := cmp.Diff(fork.Warnings, wantWarnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(fork.UI, protocol.EmptyUI()); diff != "" {
				t.Errorf("ui (-got +want):\n%s", diff)
			}
			h, err := session.ReadHeader(th.SessionFile)
			if err != nil || h.ParentSession != sourceFile || h.ID != th.ID || h.Cwd != repo {
				t.Errorf("fork header %+v, %v; want parentSession %s", h, err, sourceFile)
			}
			if diff := cmp.Diff(s.allTurns(t, th.ID), c.want); diff != "" {
				t.Errorf("fork history (-got +want):\n%s", diff)
			}
			read := s.readThread(t, th.ID)
			if read.Thread.ForkedFromID != source || read.Thread.Title != "Sixty turns (fork)" {
				t.Errorf("thread/read of the fork: %s", mustJSON(read.Thread))
			}
			row, ok := s.listThreads(t, false)[th.ID]
			if !ok || row.ForkedFromID != source || row.Title != "Sixty turns (fork)" {
				t.Errorf("thread/list row of the fork: %s", mustJSON(row))
			}
			// The caller is subscribed: its status change reaches it.
			s.waitNote(t, &from, protocol.ThreadStatusChanged.Name, statusIs(th.ID, protocol.ThreadStatusIdle))
			var unsub protocol.ThreadUnsubscribeResult
			s.must(t, protocol.ThreadUnsubscribe.Name, protocol.ThreadUnsubscribeParams{ThreadID: th.ID}, &unsub)
			if unsub.Status != protocol.UnsubscribeUnsubscribed {
				t.Errorf("thread/unsubscribe of the fork: %s, want unsubscribed", unsub.Status)
			}
		})
	}
	// The source is untouched.
	if diff := cmp.Diff(s.allTurns(t, source), sourceTurns); diff != "" {
		t.Errorf("source history changed (-got +want):\n%s", diff)
	}

	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	s.wantErr(t, protocol.ThreadFork.Name, protocol.ThreadForkParams{}, invalid("threadId"))
	s.wantErr(t, protocol.ThreadFork.Name, protocol.ThreadForkParams{ThreadID: "no-such-thread"}, wireErr{Code: protocol.CodeThreadNotFound})
	s.wantErr(t, protocol.ThreadFork.Name, protocol.ThreadForkParams{ThreadID: source, TurnID: "no-such-turn"}, invalid("turnId"))
	s.wantErr(t, protocol.ThreadFork.Name, map[string]any{"threadId": source, "turn": "turn-01"}, invalid("turn"))
	// A thread with no saved history has nothing to fork: a refusal of
	// the thread's state, not of its (valid) id.
	fresh := s.startThread(t, repo, "")
	s.wantErr(t, protocol.ThreadFork.Name, protocol.ThreadForkParams{ThreadID: fresh}, wireErr{Code: protocol.CodeInvalidParams, Reason: "noHistory"})
}

// statusIs matches a thread/status/changed of thread to status typ.
func statusIs(thread, typ string) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p protocol.ThreadStatusChangedParams
		return json.Unmarshal(raw, &p) == nil && p.ThreadID == thread && p.Status.Type == typ
	}
}

// TestE2EForkWorktreeThread forks a worktree thread with staged, unstaged
// and untracked changes into a new worktree at the same HEAD carrying them
// (git status, diff and diff --cached alike, the source untouched), then,
// once the source's worktree is deleted (archived, with its snapshot),
// forks it again from that snapshot.
func TestE2EForkWorktreeThread(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	src := s.startWT(t, repo, worktreeMode())
	wt := src.Thread.Workspace.Path
	makeLocalChanges(t, wt)
	want := stateOf(t, wt)
	head := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))

	fork := mustCall(t, s, protocol.ThreadFork, protocol.ThreadForkParams{ThreadID: src.Thread.ID})
	fw := fork.Thread.Workspace
	if fw.Mode != protocol.WorkspaceWorktree || fw.Path == "" || fw.Path == wt || fw.ProjectCwd != repo || fork.Thread.Cwd != fw.Path || fork.Thread.ForkedFromID != src.Thread.ID {
		t.Fatalf("fork of a worktree thread: %s", mustJSON(fork.Thread))
	}
	if got := strings.TrimSpace(fixtureGit(t, fw.Path, "rev-parse", "HEAD")); got != head {
		t.Errorf("fork worktree HEAD %s, want the source's %s", got, head)
	}
	if diff := cmp.Diff(stateOf(t, fw.Path), want); diff != "" {
		t.Errorf("fork worktree state (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(stateOf(t, wt), want); diff != "" {
		t.Errorf("source worktree changed (-got +want):\n%s", diff)
	}
	if got := readFile(t, fw.Path, "sub/new.txt"); got != "untracked\n" {
		t.Errorf("untracked file in the fork: %q", got)
	}
	if w := s.listWorktrees(t, repo)[fw.Path]; len(w.ThreadIDs) != 1 || w.ThreadIDs[0] != fork.Thread.ID {
		t.Errorf("worktree/list entry of the fork's worktree: %s", mustJSON(w))
	}

	// The source archived: its worktree is deleted with a snapshot. A fork
	// now starts from that snapshot.
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: src.Thread.ID}, nil)
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the archived source's worktree is still there: %v", err)
	}
	again := mustCall(t, s, protocol.ThreadFork, protocol.ThreadForkParams{ThreadID: src.Thread.ID})
	aw := again.Thread.Workspace.Path
	if aw == "" || aw == wt || aw == fw.Path || again.Thread.ForkedFromID != src.Thread.ID {
		t.Fatalf("fork of the archived thread: %s", mustJSON(again.Thread))
	}
	if got := strings.TrimSpace(fixtureGit(t, aw, "rev-parse", "HEAD")); got != head {
		t.Errorf("fork-from-snapshot HEAD %s, want %s", got, head)
	}
	if diff := cmp.Diff(stateOf(t, aw), want); diff != "" {
		t.Errorf("fork-from-snapshot state (-got +want):\n%s", diff)
	}
}
