package main

// End-to-end test of a worktree thread's branch scope (spec,
// thread/diff/read: "branch compares with against, else the worktree's
// base, the upstream or the default branch, and echoes it").

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EWorktreeBranchScopeUsesItsBase starts a worktree thread at a
// feature branch's commit: its branch scope shows only what changed since
// that commit (not the feature's own commit, which the default branch main
// lacks), compares with the commit the worktree was created at even after
// the branch moved on, echoes it in against, and a branch revert of a file
// outside that diff is refused.
func TestE2EWorktreeBranchScopeUsesItsBase(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	fixtureGit(t, repo, "checkout", "-q", "-b", "feature")
	writeFile(t, repo, "feature.txt", "the feature\n")
	fixtureGit(t, repo, "add", "feature.txt")
	fixtureGit(t, repo, "commit", "-q", "-m", "feature")
	base := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD"))
	fixtureGit(t, repo, "checkout", "-q", "main")
	s := startDiffServer(t, nil)

	res := s.startWT(t, repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.BaseRef = "feature" }))
	thread, wt := res.Thread.ID, res.Thread.Workspace.Path
	// The feature branch moves on after the worktree was made from it.
	writeFile(t, repo, "later.txt", "later\n")
	fixtureGit(t, repo, "checkout", "-q", "feature")
	fixtureGit(t, repo, "add", "later.txt")
	fixtureGit(t, repo, "commit", "-q", "-m", "later")
	fixtureGit(t, repo, "checkout", "-q", "main")
	// Work in the worktree: a commit and an uncommitted edit.
	writeFile(t, wt, "wt.txt", "worktree work\n")
	fixtureGit(t, wt, "add", "wt.txt")
	fixtureGit(t, wt, "commit", "-q", "-m", "worktree work")
	writeFile(t, wt, "b.txt", "b\nedited\n")

	got := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeBranch})
	want := []fileSummary{
		{Path: "b.txt", Status: "modified", Additions: 1, Hunks: 1},
		{Path: "wt.txt", Status: "added", Additions: 1, Hunks: 1},
	}
	if diff := cmp.Diff(summarize(got.Files), want); diff != "" || got.Against != base {
		t.Errorf("branch scope against %q, want %q; files (-got +want):\n%s", got.Against, base, diff)
	}

	// An explicit against still wins: main lacks the feature's commit.
	vsMain := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeBranch, Against: "main"})
	if vsMain.Against != "main" || len(vsMain.Files) != 3 || fileOf(t, vsMain, "feature.txt").Status != "added" {
		t.Errorf("branch scope against main: %q %+v", vsMain.Against, summarize(vsMain.Files))
	}

	// A revert reads the same scope: feature.txt is not in it.
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeBranch, Path: "feature.txt"},
		wireErr{Code: protocol.CodeInvalidParams, Field: "path"})
	if readFile(t, wt, "feature.txt") != "the feature\n" {
		t.Errorf("a branch revert removed the base's own file")
	}
	var reverted protocol.ThreadDiffRevertResult
	s.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeBranch, Path: "b.txt"}, &reverted)
	if readFile(t, wt, "b.txt") != "b\n" || !slices.Equal(reverted.Paths, []string{"b.txt"}) {
		t.Errorf("branch revert of b.txt: %+v, b.txt = %q", reverted, readFile(t, wt, "b.txt"))
	}
}
