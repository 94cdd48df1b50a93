package threads

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestCaseC24_BackgroundProcessesEndWithTheThread runs a bash call that
// leaves a job writing into the worktree and a sleep in the background
// (shared/cases C24: a job still writing made `git worktree remove --force`
// fail half-way), then ends the thread: archiving it (the worktree is then
// deleted, entirely), unloading it when idle, or shutting the manager down.
// Each time the command's process group is gone when the call returns or
// the thread is notLoaded (spec, thread/backgroundShells: background
// commands "end with the session").
func TestCaseC24_BackgroundProcessesEndWithTheThread(t *testing.T) {
	tests := []struct {
		name string
		// end ends the thread and returns once it is unloaded.
		end func(t *testing.T, e *env, sub *recorder, thread string)
		// worktreeGone: the thread's worktree is deleted by end.
		worktreeGone bool
	}{
		{"archive", func(t *testing.T, e *env, _ *recorder, thread string) {
			if err := e.m.Archive(context.Background(), nil, thread); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"idle unload", func(t *testing.T, e *env, sub *recorder, thread string) {
			from := e.bcast.mark()
			if _, err := e.m.Unsubscribe(context.Background(), sub.ID(), thread); err != nil {
				t.Fatal(err)
			}
			e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))
		}, false},
		{"shutdown", func(t *testing.T, e *env, _ *recorder, _ string) {
			if err := e.m.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := worktreeRepo(t)
			pgidFile := filepath.Join(t.TempDir(), "pgid")
			command := "echo $$ > " + pgidFile + "; mkdir -p logs; " +
				"(i=0; while :; do echo $i > logs/b.$((i%50)).log; i=$((i+1)); sleep 0.01; done) & sleep 100 & echo started"
			e := newWorktreeEnv(t, map[string]string{"bg": scriptJSON(
				map[string]any{"toolCalls": []any{map[string]any{"id": "bg", "name": "bash", "arguments": map[string]any{"command": command}}}},
				map[string]any{"text": "started them"},
			)})
			e.m.cfg.IdleUnload = time.Millisecond // before any thread exists
			ctx := context.Background()
			sub := newRecorder()
			res, err := e.m.Start(ctx, sub, StartOptions{
				Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
				Model:     &ModelRef{Provider: "scripted", ID: "bg"},
				Workspace: WorkspaceOptions{Mode: protocol.WorkspaceWorktree},
			})
			if err != nil {
				t.Fatal(err)
			}
			thread, wt := res.Thread.ID, res.Thread.Workspace.Path
			from := sub.mark()
			if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "start a job"}, TurnOptions{}); err != nil {
				t.Fatal(err)
			}
			var done protocol.TurnCompletedParams
			if err := json.Unmarshal(sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &done); err != nil {
				t.Fatal(err)
			}
			if done.Turn.Status != protocol.TurnCompleted {
				t.Fatalf("turn ended %+v", done.Turn)
			}
			pgid := proctest.ReadPID(t, pgidFile)
			t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) }) // should the test fail
			if live := proctest.GroupMembers(pgid); len(live) == 0 {
				t.Fatalf("process group %d has no live member after the turn", pgid)
			}

			tc.end(t, e, sub, thread)

			if live := proctest.GroupMembers(pgid); live != nil {
				t.Errorf("process group %d still has live members after the thread ended: %v", pgid, live)
			}
			_, statErr := os.Stat(wt)
			if gone := errors.Is(statErr, os.ErrNotExist); gone != tc.worktreeGone {
				t.Errorf("worktree %s gone = %v (stat: %v), want %v", wt, gone, statErr, tc.worktreeGone)
			}
		})
	}
}
