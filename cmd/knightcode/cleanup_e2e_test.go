package main

// End-to-end test of environment cleanup scripts: archiving a thread whose
// managed worktree was created with an environment runs the environment's
// cleanup script in the worktree before removing it, in a trusted project
// only, streaming thread/workspace/progress {phase: "cleanup"} to the
// caller.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EEnvironmentCleanupOnArchive archives a worktree thread created
// with an environment whose cleanup script writes a marker file outside the
// worktree: in a trusted project the marker holds the worktree's path (the
// script ran there, with KNIGHTCODE_WORKTREE_PATH set, before the removal)
// and the caller received the script's output as cleanup progress; in an
// untrusted project nothing runs and no cleanup progress is sent.
func TestE2EEnvironmentCleanupOnArchive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		trusted bool
	}{
		{"trusted", true},
		{"untrusted", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo, _ := wtRepo(t)
			outside := t.TempDir()
			marker := filepath.Join(outside, "cleanup-ran.txt")
			s := startDiffServer(t, nil)
			env := protocol.Environment{
				Name:  "svc",
				Setup: protocol.EnvironmentScript{Default: "true"},
				Cleanup: &protocol.EnvironmentScript{Default: `echo "cleaning up"; ` +
					`{ pwd; echo "$KNIGHTCODE_WORKTREE_PATH"; test -f a.txt && echo "files present"; } > '` + marker + `'`},
			}
			s.must(t, protocol.EnvironmentSave.Name, protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{env}}, nil)
			if c.trusted {
				s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
			}
			res := s.startWT(t, repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "svc" }))
			wt := res.Thread.Workspace.Path
			if !exists(wt, "a.txt") {
				t.Fatalf("the worktree %s lacks a.txt", wt)
			}

			mark := s.mark()
			s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: res.Thread.ID}, nil)
			if exists(wt, "") {
				t.Errorf("the worktree %s is still there after the archive", wt)
			}

			if !c.trusted {
				if exists(marker, "") {
					t.Errorf("an untrusted project's cleanup script ran: %q", readFile(t, outside, "cleanup-ran.txt"))
				}
				for _, n := range s.since(mark) {
					if n.Method == protocol.ThreadWorkspaceProgress.Name {
						t.Errorf("progress from an untrusted project: %s", n.Params)
					}
				}
				return
			}
			const wantOutput = "cleaning up\n"
			var output strings.Builder
			for output.Len() < len(wantOutput) {
				p := decode[protocol.ThreadWorkspaceProgressParams](t, s.waitNote(t, &mark, protocol.ThreadWorkspaceProgress.Name, nil))
				if p.ThreadID != res.Thread.ID || p.Phase != protocol.WorkspacePhaseCleanup {
					t.Errorf("progress %s, want thread %s's cleanup", mustJSON(p), res.Thread.ID)
				}
				output.WriteString(p.Output)
			}
			if got := output.String(); got != wantOutput {
				t.Errorf("cleanup output %q, want %q", got, wantOutput)
			}
			if got, want := readFile(t, outside, "cleanup-ran.txt"), wt+"\n"+wt+"\nfiles present\n"; got != want {
				t.Errorf("marker = %q, want %q (run in the worktree, before its removal)", got, want)
			}
		})
	}
}
