package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// indexView is what a user sees of the staging: `git diff --cached`, `git
// diff` and `git status --porcelain`, byte for byte.
type indexView struct{ Cached, Unstaged, Status string }

func viewIndex(t *testing.T, repo string) indexView {
	t.Helper()
	return indexView{
		Cached:   fixtureGit(t, repo, "diff", "--cached"),
		Unstaged: fixtureGit(t, repo, "diff"),
		Status:   fixtureGit(t, repo, "status", "--porcelain"),
	}
}

// TestE2ELastTurnUndoRestoresTheIndex runs turns whose only effect is on
// the index (the agent runs `git add` on a file with staged and unstaged
// changes, or `git add -A` with an untracked file): the turn's index trees
// are pinned and recorded, the undo of the whole turn, after a restart,
// gives back exactly the staging of before the turn (nothing staged-only is
// lost), and reapply stages again. Such a turn changed no file: its files
// are [] alike in turn/completed, turn/diff/updated and the read-back.
func TestE2ELastTurnUndoRestoresTheIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
	}{
		{"git add of an MM file", "git add a.txt"},
		{"git add -A with an untracked file", "git add -A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := diffRepo(t)
			writeFile(t, repo, "a.txt", replaceLines(map[int]string{3: "three (staged)"}))
			fixtureGit(t, repo, "add", "a.txt")
			writeFile(t, repo, "a.txt", replaceLines(map[int]string{3: "three (staged)", 17: "seventeen (unstaged)"}))
			writeFile(t, repo, "u.txt", "untracked\n")
			before := viewIndex(t, repo)
			if before.Status != "MM a.txt\n?? u.txt\n" {
				t.Fatalf("status before the turn: %q", before.Status)
			}
			home := t.TempDir()
			writeScripts(t, home, map[string]string{"stage": script(
				map[string]any{"toolCalls": []any{call("s", "bash", map[string]any{"command": tt.command})}},
				map[string]any{"text": "staged"},
			)})
			a := startIn(t, home)
			thread := a.startThread(t, repo, "stage")
			turn, totals := a.runTurn(t, thread, "stage it")
			after := viewIndex(t, repo)
			if after.Cached == before.Cached {
				t.Fatalf("the turn did not change the index: %q", after.Status)
			}
			if totals == nil || len(totals) != 0 || turn.Files == nil || len(turn.Files) != 0 {
				t.Errorf("files of a turn that changed no file: turn/completed %#v, turn/diff/updated %#v; want [] in both", turn.Files, totals)
			}
			read := a.readThread(t, thread)
			if len(read.Turns) != 1 || read.Turns[0].Files == nil || len(read.Turns[0].Files) != 0 {
				t.Errorf("files read back: %s, want []", mustJSON(read.Turns))
			}
			for _, ref := range []string{"before-index", "after-index"} {
				name := fmt.Sprintf("refs/knightcode/turns/%s/%s/%s", thread, turn.ID, ref)
				if got := strings.TrimSpace(fixtureGit(t, repo, "cat-file", "-t", name)); got != "tree" {
					t.Errorf("%s is a %q, want a pinned tree", name, got)
				}
			}
			a.close(t)

			// After a restart, from what the session file recorded.
			b := startIn(t, home)
			b.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, nil)
			var rev protocol.ThreadDiffRevertResult
			b.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: turn.ID}, &rev)
			if diff := cmp.Diff(viewIndex(t, repo), before); diff != "" {
				t.Errorf("after the undo (-got +want as before the turn):\n%s", diff)
			}
			if len(rev.Paths) == 0 || rev.Paths[0] != "a.txt" {
				t.Errorf("undo paths %q, want a.txt first", rev.Paths)
			}
			if readFile(t, repo, "u.txt") != "untracked\n" {
				t.Errorf("the undo changed u.txt")
			}
			b.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn},
				wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged", Paths: rev.Paths})
			b.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, Reapply: true}, nil)
			if diff := cmp.Diff(viewIndex(t, repo), after); diff != "" {
				t.Errorf("after reapply (-got +want as after the turn):\n%s", diff)
			}
		})
	}
}
