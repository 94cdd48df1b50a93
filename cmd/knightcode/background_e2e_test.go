package main

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2ECaseC24_BackgroundProcessesEndWithTheThread runs a bash call in a
// worktree thread that leaves a job writing into the worktree and a sleep in
// the background (shared/cases C24: such a job made a forced worktree
// removal fail half-way), then ends the thread over the wire: thread/archive
// (the worktree is deleted, entirely), or the end of the server's input
// (stdin EOF: the server shuts down and exits). Either way the command's
// process group is gone once the request answered or the server exited
// (spec, thread/backgroundShells: background commands "end with the
// session").
func TestE2ECaseC24_BackgroundProcessesEndWithTheThread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(t *testing.T, s *diffServer, thread string)
		// worktreeGone: the thread's worktree is deleted by end.
		worktreeGone bool
	}{
		{"thread/archive", func(t *testing.T, s *diffServer, thread string) {
			s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
		}, true},
		{"stdin EOF", func(t *testing.T, s *diffServer, _ string) {
			if err := s.c.Close(); err != nil {
				t.Fatalf("server exit: %v", err)
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo, _ := wtRepo(t)
			pgidFile := filepath.Join(t.TempDir(), "pgid")
			command := "echo $$ > " + pgidFile + "; mkdir -p logs; " +
				"(i=0; while :; do echo $i > logs/b.$((i%50)).log; i=$((i+1)); sleep 0.01; done) & sleep 100 & echo started"
			s := startDiffServer(t, map[string]string{"bg": script(
				map[string]any{"toolCalls": []any{call("bg", "bash", map[string]any{"command": command})}},
				map[string]any{"text": "started them"},
			)})
			var res protocol.ThreadStartResult
			s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{
				Cwd: repo, ApprovalMode: "fullAccess",
				Model:     &protocol.ModelRef{Provider: "scripted", ID: "bg"},
				Workspace: worktreeMode(),
			}, &res)
			thread, wt := res.Thread.ID, res.Thread.Workspace.Path
			s.runTurn(t, thread, "start a job")
			pgid := proctest.ReadPID(t, pgidFile)
			t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) }) // should the test fail
			if live := proctest.GroupMembers(pgid); len(live) == 0 {
				t.Fatalf("process group %d has no running member after the turn", pgid)
			}

			tc.end(t, s, thread)

			if live := proctest.GroupMembers(pgid); len(live) > 0 {
				t.Errorf("process group %d still has running members after the thread ended: %q", pgid, live)
			}
			if gone := !exists(wt, "."); gone != tc.worktreeGone {
				t.Errorf("worktree %s gone = %v, want %v", wt, gone, tc.worktreeGone)
			}
		})
	}
}
