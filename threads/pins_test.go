package threads

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// turnPins lists the refs pinning thread's turn trees in repo's repository.
func turnPins(t *testing.T, repo, thread string) []string {
	t.Helper()
	return strings.Fields(gittest.Git(t, repo, "for-each-ref", "--format=%(refname)", PinRefPrefix+thread+"/"))
}

// runTurn runs one turn of thread to its end.
func (e *env) runTurn(t *testing.T, sub *recorder, thread string) string {
	t.Helper()
	from := sub.mark()
	if _, _, err := e.m.StartTurn(context.Background(), sub, thread, Input{Text: "go"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread)), &done); err != nil {
		t.Fatal(err)
	}
	return done.Turn.ID
}

// TestDeleteUnpinsTheThreadsTurns checks that thread/delete deletes the refs
// pinning the deleted thread's turn trees (written five per turn, in one
// transaction), in the user's checkout and, for a worktree thread whose
// worktree is gone, in its project; other threads' pins stay.
func TestDeleteUnpinsTheThreadsTurns(t *testing.T) {
	repo := worktreeRepo(t)
	replies := make([]map[string]any, 6)
	for i := range replies {
		replies[i] = map[string]any{"text": "done"}
	}
	e := newWorktreeEnv(t, map[string]string{"quick": scriptJSON(replies...)})
	ctx := context.Background()
	sub := newRecorder()
	model := &ModelRef{Provider: "scripted", ID: "quick"}
	start := func(ws WorkspaceOptions) string {
		res, err := e.m.Start(ctx, sub, StartOptions{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess, Model: model, Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		return res.Thread.ID
	}
	local, other, wt := start(WorkspaceOptions{}), start(WorkspaceOptions{}), start(WorkspaceOptions{Mode: protocol.WorkspaceWorktree})
	want := map[string][]string{}
	for _, id := range []string{local, other, wt, local} {
		turn := e.runTurn(t, sub, id)
		for _, name := range []string{"after", "after-index", "before", "before-index", "head"} {
			want[id] = append(want[id], PinRefPrefix+id+"/"+turn+"/"+name)
		}
	}
	for _, id := range []string{local, other, wt} {
		got := turnPins(t, repo, id)
		if diff := cmp.Diff(sortedCopy(got), sortedCopy(want[id])); diff != "" {
			t.Fatalf("pins of %s before any delete (-got +want):\n%s", id, diff)
		}
	}

	for _, id := range []string{local, wt} {
		if err := e.m.Archive(ctx, nil, id); err != nil {
			t.Fatal(err)
		}
		if got := turnPins(t, repo, id); len(got) != len(want[id]) {
			t.Errorf("archiving %s changed its pins: %v", id, got)
		}
		if err := e.m.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got := turnPins(t, repo, id); len(got) != 0 {
			t.Errorf("pins of the deleted thread %s: %v", id, got)
		}
	}
	if diff := cmp.Diff(sortedCopy(turnPins(t, repo, other)), sortedCopy(want[other])); diff != "" {
		t.Errorf("pins of the thread left alone (-got +want):\n%s", diff)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
