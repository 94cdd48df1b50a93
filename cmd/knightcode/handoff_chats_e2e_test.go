package main

// End-to-end tests of thread/handoff with several chats open on the same
// checkouts, as a desktop app keeps them (issue 22 item 5), and over a
// repository with submodules that are not initialized (item 6).

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// untouchedNote is what the warning naming the moved paths no turn of the
// thread changed says.
const untouchedNote = "that no turn of this thread changed"

// untouchedWarnings returns the messages of ws naming moved paths no turn
// of the thread changed.
func untouchedWarnings(ws []protocol.Warning) []string {
	var out []string
	for _, w := range ws {
		if strings.Contains(w.Message, untouchedNote) {
			out = append(out, w.Message)
		}
	}
	return out
}

// busyData is the data of a turnInProgress error, failing t when err is
// not one.
func busyData(t *testing.T, err error) protocol.TurnInProgressData {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != protocol.CodeTurnInProgress {
		t.Fatalf("want turnInProgress, got %v", err)
	}
	var d protocol.TurnInProgressData
	raw, _ := ce.Data.(json.RawMessage)
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("turnInProgress data %s: %v", raw, err)
	}
	return d
}

// A desktop app keeps several chats open on the main checkout: a worktree
// thread goes to it and back while they stay loaded, idle (QA: the way
// back was worktreeInUse until every other chat there was closed). An
// idle chat sees the new state: its next turn's files and its lastTurn
// diff are its own, not the changes the handoff brought. A chat joined to
// the worktree sees the changes come back. The way back names, in its
// warnings, the file another chat's turn made, which moved too.
func TestE2EHandoffWithIdleChatsInBothCheckouts(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{
		"say":   says(1),
		"editA": script(toolReply(bashCall("a1", "echo agent >> a.txt")), map[string]any{"text": "done"}),
		"editM": script(toolReply(bashCall("m1", "echo mine > m.txt")), map[string]any{"text": "done"}),
	})
	m1 := s.startThread(t, repo, "editM") // empty until later
	m2 := s.startThread(t, repo, "say")
	s.runTurn(t, m2, "hello")
	a, wt := s.worktreeThread(t, repo, "editA", "edit a")
	joined := s.startWT(t, wt, nil).Thread.ID
	want := checkoutState(t, wt)

	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local", DryRun: true})
	from := s.mark()
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local"})
	// The chats that stay loaded in either checkout hear of it (issue 30):
	// the main checkout's, with the branch it is now on.
	for _, id := range []string{m1, m2, joined} {
		at := from
		w := decode[protocol.WarningParams](t, s.waitNote(t, &at, protocol.WarningNotification.Name, func(r json.RawMessage) bool {
			return threadOf(r) == id
		}))
		wantText := "handed its uncommitted changes off out of this checkout"
		if id != joined {
			wantText = "handed its uncommitted changes off into this checkout (" + repo + "), which is now on branch " + res.Branch
		}
		if !strings.Contains(w.Message, a) || !strings.Contains(w.Message, wantText) || w.Source != protocol.WarningSourceServer {
			t.Errorf("warning to %s: %+v, want one naming %s and %q", id, w.Warning, a, wantText)
		}
	}
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout after the handoff (-want +got):\n%s", diff)
	}
	if w := untouchedWarnings(res.Warnings); len(w) != 0 {
		t.Errorf("the thread's own change named as untouched: %q", w)
	}
	for _, id := range []string{m1, m2, joined} {
		if st := s.readThread(t, id).Thread.Status.Type; st == protocol.ThreadStatusNotLoaded {
			t.Errorf("thread %s unloaded by the handoff", id)
		}
	}

	// The idle chat's turn in the main checkout, which now holds A's
	// change: its files are its own.
	turn, files := s.runTurn(t, m1, "write m")
	wantFiles := `[{"path":"m.txt","additions":1,"deletions":0}]`
	if got := mustJSON(files); got != wantFiles {
		t.Errorf("turn/diff/updated of the idle chat's turn: %s, want %s", got, wantFiles)
	}
	if got := mustJSON(turn.Files); got != wantFiles {
		t.Errorf("Turn.files of the idle chat's turn: %s, want %s", got, wantFiles)
	}
	var paths []string
	for _, f := range s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: m1, Scope: "lastTurn"}).Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"m.txt"}) {
		t.Errorf("lastTurn of the idle chat: %v, want [m.txt]", paths)
	}

	// The way back with the chats still open: m.txt, which A never
	// changed, moves too, and the warning says so.
	back := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "worktree"})
	if back.Thread.Workspace.Path != wt || readFile(t, wt, "m.txt") != "mine\n" {
		t.Fatalf("handoff back: %s", mustJSON(back.Thread))
	}
	wantClean(t, "main checkout", repo)
	if w := untouchedWarnings(back.Warnings); len(w) != 1 || !strings.HasPrefix(w[0], "1 path "+untouchedNote) || !strings.HasSuffix(w[0], ": m.txt") {
		t.Errorf("warnings of the way back: %q, want one naming m.txt", w)
	}
	paths = nil
	for _, f := range s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: joined}).Files {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{"a.txt", "m.txt"}) {
		t.Errorf("the joined chat's diff of the worktree: %v, want [a.txt m.txt]", paths)
	}
}

// A handoff is refused only over work another thread of either checkout
// is doing: a turn running there answers turnInProgress naming that
// thread and turn (its dry run too), and once it ended its thread stays
// loaded and the handoff goes. A destination that is not clean answers
// localChanges first, even while such a turn runs: that is what the
// person can act on.
func TestE2EHandoffRefusedOverAnotherThreadsTurn(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": says(1), "slow1": slowScript, "slow2": slowScript})
	a, wt := s.worktreeThread(t, repo, "say", "hello")
	writeFile(t, wt, "a.txt", "agent work\n")
	want := checkoutState(t, wt)
	toLocal := func(dry bool) error {
		return s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: a, To: "local", DryRun: dry}, nil)
	}
	for _, c := range []struct{ where, model, checkout string }{
		{repo, "slow1", repo},                   // the destination
		{filepath.Join(wt, "sub"), "slow2", wt}, // the source
	} {
		other := s.startThread(t, c.where, c.model)
		turnID, from := s.startTurn(t, other, "take your time")
		for _, dry := range []bool{true, false} {
			got := busyData(t, toLocal(dry))
			if diff := cmp.Diff(protocol.TurnInProgressData{ThreadID: other, TurnID: turnID, Checkout: c.checkout}, got); diff != "" {
				t.Errorf("turn in %s, dry run %v: data (-want +got):\n%s", c.checkout, dry, diff)
			}
		}
		writeFile(t, repo, "mine.txt", "the user's\n")
		for _, dry := range []bool{true, false} {
			err := toLocal(dry)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Message != handoff.MsgLocalChanges {
				t.Errorf("dirty main checkout, turn in %s, dry run %v: %v, want localChanges", c.checkout, dry, err)
			} else if got := toWireErr(t, err); got.Reason != "localChanges" || !slices.Equal(got.Paths, []string{"mine.txt"}) {
				t.Errorf("dirty main checkout: %+v", got)
			}
		}
		if err := os.Remove(filepath.Join(repo, "mine.txt")); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
			t.Errorf("the worktree changed while refused (-want +got):\n%s", diff)
		}
		mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: other, TurnID: turnID})
		s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == other })
	}
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local"})
	if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
		t.Errorf("main checkout after the handoff (-want +got):\n%s", diff)
	}
}

// Inputs another thread of the destination has queued, waiting while a
// fence holds its checkout (here thread X's handoff into a new worktree,
// held while X's environment setup waits for the test), refuse a handoff
// there as a running turn does: turnInProgress naming the thread and how
// many inputs wait.
func TestE2EHandoffRefusedOverAnotherThreadsQueuedInputs(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	release := filepath.Join(t.TempDir(), "go")
	s := startDiffServer(t, map[string]string{"say": says(3), "z": says(1), "y": says(1)})
	s.must(t, protocol.EnvironmentSave.Name, protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{{
		Name: "hold", Setup: protocol.EnvironmentScript{Default: `echo waiting; while [ ! -e '` + release + `' ]; do sleep 0.05; done`},
	}}}, nil)
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true}, nil)
	z, zwt := s.worktreeThread(t, repo, "z", "hello")
	writeFile(t, zwt, "a.txt", "z's work\n")
	x := s.startThread(t, repo, "say")
	s.runTurn(t, x, "first")
	y := s.startThread(t, repo, "y")

	from := s.mark()
	hold := "hold"
	xDone := make(chan error, 1)
	go func() {
		xDone <- s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: x, To: "worktree", Environment: &hold}, nil)
	}()
	released := false
	let := func() {
		if !released {
			released = true
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Error(err)
			}
			if err := <-xDone; err != nil {
				t.Errorf("X's handoff: %v", err)
			}
		}
	}
	defer let()
	s.waitNote(t, &from, protocol.ThreadWorkspaceProgress.Name, func(r json.RawMessage) bool {
		p := decode[protocol.ThreadWorkspaceProgressParams](t, r)
		return p.ThreadID == x && p.Phase == protocol.WorkspacePhaseSetup
	})
	from = s.mark()
	mustCall(t, s, protocol.TurnQueueAdd, protocol.TurnQueueAddParams{ThreadID: y, Text: "waiting"})
	s.waitNote(t, &from, protocol.TurnQueueUpdated.Name, func(r json.RawMessage) bool {
		p := decode[protocol.TurnQueueUpdatedParams](t, r)
		return p.ThreadID == y && len(p.FollowUp) == 1
	})
	for _, dry := range []bool{true, false} {
		err := s.call(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: z, To: "local", DryRun: dry}, nil)
		if diff := cmp.Diff(protocol.TurnInProgressData{ThreadID: y, Queued: 1, Checkout: repo}, busyData(t, err)); diff != "" {
			t.Errorf("dry run %v: data (-want +got):\n%s", dry, diff)
		}
	}
	if exists(repo, "a.txt") && readFile(t, repo, "a.txt") == "z's work\n" {
		t.Errorf("z's work moved while refused")
	}
	from = s.mark()
	let() // Y's input starts, and ends
	s.waitTurnCompleted(t, &from, y)
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: z, To: "local"})
	if got := readFile(t, repo, "a.txt"); got != "z's work\n" {
		t.Errorf("main a.txt = %q after the handoff", got)
	}
}

// A handoff moves every uncommitted change of the source; those no turn
// of the thread changed are named in the warnings of the handoff and of
// its dry run, at most 20 with their count. A path a turn renamed away is
// the thread's own change, though Turn.files lists only the new name.
func TestE2EHandoffWarnsOfPathsNoTurnChanged(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"edit": script(
		toolReply(bashCall("e1", "echo agent >> a.txt && git mv sub/c.txt sub/c2.txt")), map[string]any{"text": "done"})})
	a, wt := s.worktreeThread(t, repo, "edit", "edit and rename")
	writeFile(t, wt, "b.txt", "someone else's\n")
	for i := range 24 {
		writeFile(t, wt, fmt.Sprintf("other/f%02d.txt", i), "another tool's\n")
	}
	wantNames := []string{"b.txt"}
	for i := range 19 {
		wantNames = append(wantNames, fmt.Sprintf("other/f%02d.txt", i))
	}
	want := "25 paths " + untouchedNote + " %s with it (a handoff moves every uncommitted change of the checkout, another tool's or person's too): " +
		strings.Join(wantNames, ", ") + " and 5 more"
	dry := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local", DryRun: true})
	if diff := cmp.Diff([]string{fmt.Sprintf(want, "would move")}, untouchedWarnings(dry.Warnings)); diff != "" {
		t.Errorf("dry run's warnings (-want +got):\n%s", diff)
	}
	res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: a, To: "local"})
	if diff := cmp.Diff([]string{fmt.Sprintf(want, "moved")}, untouchedWarnings(res.Warnings)); diff != "" {
		t.Errorf("handoff's warnings (-want +got):\n%s", diff)
	}
	if got := readFile(t, repo, "other/f23.txt"); got != "another tool's\n" {
		t.Errorf("other/f23.txt = %q", got)
	}
}

// In a repository whose submodule is not initialized (a plain clone), a
// thread goes between the main checkout and its worktree at a commit with
// the submodule's gitlink and at one without it, round trip after round
// trip (issue 22 item 6: once the worktree had been at the commit with the
// gitlink, every handoff of the main checkout at the commit without it was
// refused, gitConflict localChanges naming the empty folder).
func TestE2EHandoffAcrossAnUninitializedSubmodule(t *testing.T) {
	t.Parallel()
	up, _ := wtRepo(t)
	a := strings.TrimSpace(fixtureGit(t, up, "rev-parse", "HEAD"))
	lib := filepath.Join(filepath.Dir(up), "lib")
	fixtureGit(t, filepath.Dir(up), "init", "-q", "-b", "main", lib)
	writeFile(t, lib, "l.txt", "lib\n")
	fixtureGit(t, lib, "add", "-A")
	fixtureGit(t, lib, "commit", "-q", "-m", "lib")
	fixtureGit(t, up, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "mod")
	fixtureGit(t, up, "commit", "-q", "-m", "add mod")
	repo := filepath.Join(filepath.Dir(up), "clone")
	fixtureGit(t, filepath.Dir(up), "clone", "-q", up, repo)

	s := startDiffServer(t, map[string]string{"say": says(1)})
	thread := s.startThread(t, repo, "say")
	s.runTurn(t, thread, "hello")
	b := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD"))
	for i, at := range []string{b, a, b, a} {
		fixtureGit(t, repo, "checkout", "-q", "-f", "--detach", at)
		writeFile(t, repo, "b.txt", fmt.Sprintf("edit %d\n", i))
		want := checkoutState(t, repo)
		mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree", DryRun: true})
		res := mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "worktree"})
		wt := res.Thread.Workspace.Path
		if diff := cmp.Diff(want, checkoutState(t, wt)); diff != "" {
			t.Errorf("round trip %d: the worktree (-want +got):\n%s", i, diff)
		}
		if _, err := os.Lstat(filepath.Join(wt, "mod")); (err == nil) != (at == b) {
			t.Errorf("round trip %d: the worktree's mod folder: %v, want it only at the commit with the gitlink", i, err)
		}
		// A branch of its own each time: the previous one cannot be
		// fast-forwarded from B to A.
		branch := fmt.Sprintf("round-%d", i)
		mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local", Branch: &branch})
		if diff := cmp.Diff(want, checkoutState(t, repo)); diff != "" {
			t.Errorf("round trip %d: the main checkout (-want +got):\n%s", i, diff)
		}
		wantClean(t, "worktree", wt)
	}
}
