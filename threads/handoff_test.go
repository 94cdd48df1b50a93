package threads

import (
	"context"
	"testing"
	"time"

	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// A recovered handoff's landing (recordLanding, for a handoff that
// verified but stopped before it recorded) writes what the handoff itself
// would have: back in its worktree, the thread keeps the branch of its
// previous to-local handoff, so the next one fast-forwards it (audit: the
// entry had no branch, and the next handoff derived "-2"). It does so for
// a loaded thread and for one read from its session file.
func TestRecordLandingKeepsPreviousBranch(t *testing.T) {
	repo := worktreeRepo(t)
	e := newWorktreeEnv(t, nil)
	e.m.cfg.IdleUnload = time.Millisecond
	ctx := context.Background()
	for _, loaded := range []bool{true, false} {
		sub := newRecorder()
		res := e.startIn(t, sub, repo, WorkspaceOptions{Mode: protocol.WorkspaceWorktree})
		id, wt := res.Thread.ID, res.Thread.Workspace.Path
		home := &session.Workspace{Mode: session.WorkspaceWorktree, Path: wt, ProjectCwd: repo}
		if !loaded {
			from := e.bcast.mark()
			if _, err := e.m.Unsubscribe(ctx, sub.ID(), id); err != nil {
				t.Fatal(err)
			}
			e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(id, protocol.ThreadStatusNotLoaded))
		}
		if err := e.m.recordPlacement(ctx, id, session.WorkspaceEntry{Cwd: repo, Branch: "knightcode/fix", Home: home}); err != nil {
			t.Fatal(err)
		}
		l := &handoff.Landed{To: handoff.ToWorktree, ThreadID: id, Source: repo, Destination: wt, Cwd: wt, Workspace: protocol.WorkspaceWorktree}
		if err := e.m.recordLanding(ctx, l); err != nil {
			t.Fatal(err)
		}
		var got session.WorkspaceEntry
		var err error
		if t := e.m.loaded(id); t != nil {
			got, err = t.placement(ctx)
		} else {
			got, err = e.m.catalog.placement(id)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.Branch != "knightcode/fix" || got.Cwd != wt || got.Workspace == nil || got.Workspace.Path != wt || got.Home == nil || got.Home.Path != wt {
			t.Errorf("loaded %v: placement after the recovered landing = %+v (workspace %+v, home %+v); want the worktree and branch knightcode/fix",
				loaded, got, got.Workspace, got.Home)
		}
	}
}
