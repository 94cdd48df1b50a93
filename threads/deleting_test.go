package threads

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/workspace"
)

// TestNoThreadLoadsInAWorktreeBeingDeleted holds a worktree/delete right
// after it found the worktree not in use (a test hook on the claim) and
// tries to load threads there meanwhile: thread/resume of its thread and a
// thread/start joining it are refused with worktreeDeleted, so the
// deletion goes through with no thread running inside; the claim ends
// with the deletion.
func TestNoThreadLoadsInAWorktreeBeingDeleted(t *testing.T) {
	repo := worktreeRepo(t)
	e := newWorktreeEnv(t, nil)
	e.m.cfg.IdleUnload = time.Millisecond
	ctx := context.Background()
	sub := newRecorder()
	res := e.startIn(t, sub, filepath.Join(repo, "sub"), WorkspaceOptions{Mode: protocol.WorkspaceWorktree})
	wt, thread := res.Thread.Workspace.Path, res.Thread.ID
	from := e.bcast.mark()
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), thread); err != nil {
		t.Fatal(err)
	}
	e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))

	claimed := make(chan string, 1)
	proceed := make(chan struct{})
	first := true
	e.m.mu.Lock()
	e.m.onWorktreeClaim = func(path string) {
		if first { // the deletion's own goroutine: no other claim runs
			first = false
			claimed <- path
			<-proceed
		}
	}
	e.m.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := e.m.DeleteWorktree(ctx, nil, wt)
		done <- err
	}()
	select {
	case p := <-claimed:
		if p != wt {
			t.Errorf("claimed %s, want %s", p, wt)
		}
	case err := <-done:
		t.Fatalf("worktree/delete ended before claiming the worktree: %v", err)
	}

	isDeleting := func(err error) bool {
		var ce *workspace.ConflictError
		return errors.As(err, &ce) && ce.Reason == workspace.ReasonWorktreeDeleted && len(ce.Paths) == 1 && ce.Paths[0] == wt
	}
	if _, err := e.m.Resume(ctx, sub, thread, ""); !isDeleting(err) {
		t.Errorf("Resume of the worktree's thread during its deletion: %v, want worktreeDeleted", err)
	}
	if _, err := e.m.Start(ctx, sub, StartOptions{Cwd: filepath.Join(wt, "sub")}); !isDeleting(err) {
		t.Errorf("Start inside the worktree during its deletion: %v, want worktreeDeleted", err)
	}
	if got := e.m.ThreadCounters().LoadedThreads; got != 0 {
		t.Errorf("%d threads loaded during the deletion", got)
	}
	// A thread outside the worktree loads as usual.
	e.start(t, sub, repo, "")
	close(proceed)
	if err := <-done; err != nil {
		t.Fatalf("worktree/delete: %v", err)
	}
	if w, _, _ := e.m.cfg.Workspace.Registry().Get(wt); !w.Deleted {
		t.Errorf("registry after the deletion: %+v", w)
	}
	e.m.mu.Lock()
	left := len(e.m.deleting)
	e.m.mu.Unlock()
	if left != 0 {
		t.Errorf("%d worktree claims left after the deletion", left)
	}
}
