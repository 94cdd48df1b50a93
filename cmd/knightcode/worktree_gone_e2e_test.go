package main

// End-to-end tests of worktree threads whose worktree is gone: deleted by
// an archive (then unarchived) or removed behind knightcode's back (spec:
// "Workspaces, diffs and git"; thread/worktree/restore; shared/cases C27).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2ETurnRefusedInGoneWorktree checks that turn/start answers gitConflict
// worktreeDeleted in a thread whose worktree is deleted (archived, then
// unarchived and resumed) or whose folder is missing, that a tool call
// after the folder vanished mid-turn is declined, and that nothing
// recreates the path as a plain folder; after thread/worktree/restore turns
// run there again.
func TestE2ETurnRefusedInGoneWorktree(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{
		"writer": script(
			map[string]any{"toolCalls": []any{call("w1", "write", map[string]any{"path": "turn.txt", "content": "from the turn\n"})}},
			map[string]any{"text": "done"},
		),
		"remover": script(
			map[string]any{"toolCalls": []any{call("rm", "bash", map[string]any{"command": `cd / && rm -rf "$OLDPWD"`})}},
			map[string]any{"toolCalls": []any{call("w2", "write", map[string]any{"path": "again.txt", "content": "x\n"})}},
			map[string]any{"text": "done"},
		),
	})
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "writer"}}, nil)
	turn := protocol.TurnStartParams{ThreadID: thread, Text: "write"}
	deleted := wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeDeleted", Paths: []string{wt}}

	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
	s.must(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, nil)
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if !resumed.Thread.Workspace.Deleted {
		t.Fatalf("resumed thread's workspace %s, want deleted", mustJSON(resumed.Thread.Workspace))
	}
	s.wantErr(t, protocol.TurnStart.Name, turn, deleted)
	if exists(filepath.Dir(wt), "") {
		t.Errorf("%s was recreated", filepath.Dir(wt))
	}

	var restored protocol.ThreadWorktreeRestoreResult
	s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, &restored)
	s.runTurn(t, thread, "write")
	if got := readFile(t, wt, "turn.txt"); got != "from the turn\n" {
		t.Errorf("turn.txt after restore = %q", got)
	}

	// The folder removed during a turn: the turn's next tool is declined,
	// so the write does not recreate it as a plain folder.
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "remover"}}, nil)
	_, from := s.startTurn(t, thread, "remove it")
	var calls []protocol.Item
	for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		if it.Type == "toolCall" {
			calls = append(calls, it)
		}
	}
	if len(calls) != 2 || calls[0].Status != "completed" || calls[1].Name != "write" || calls[1].Status != "declined" {
		t.Errorf("tool calls %s; want the bash call completed and the write declined", mustJSON(calls))
	}
	if exists(wt, "") {
		t.Errorf("%s was recreated as a plain folder", wt)
	}

	// And no turn starts there any more.
	s.wantErr(t, protocol.TurnStart.Name, turn, deleted)
	if exists(wt, "") {
		t.Errorf("%s was recreated as a plain folder", wt)
	}
}

// TestCaseC27_ResumeAfterWorktreeFolderRemoved checks that resuming a thread
// whose worktree folder was removed with rm -rf re-creates it, clean at its
// last commit, with a warning: its stale git registration alone is removed
// first (not the user's own stale one), and no uncommitted work is assumed.
func TestCaseC27_ResumeAfterWorktreeFolderRemoved(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	mine := filepath.Join(filepath.Dir(repo), "wt-old")
	fixtureGit(t, repo, "worktree", "add", "-q", "-b", "thread-7", mine, "main")
	if err := os.RemoveAll(mine); err != nil {
		t.Fatal(err)
	}
	s := startDiffServer(t, nil)
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	fixtureGit(t, wt, "commit", "-q", "--allow-empty", "-m", "the thread's commit")
	head := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}

	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if ws := resumed.Thread.Workspace; ws.Deleted || ws.Path != wt {
		t.Errorf("resumed thread's workspace %s, want %s live again", mustJSON(ws), wt)
	}
	warned := false
	for _, w := range resumed.Warnings {
		warned = warned || strings.Contains(w.Message, "re-created")
	}
	if !warned {
		t.Errorf("no warning about the re-created worktree: %+v", resumed.Warnings)
	}
	if got := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD")); got != head {
		t.Errorf("re-created at %s, want %s", got, head)
	}
	if st := fixtureGit(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("re-created worktree not clean: %q", st)
	}
	list := fixtureGit(t, repo, "worktree", "list", "--porcelain")
	if !strings.Contains(list, "worktree "+wt+"\n") || !strings.Contains(list, "worktree "+mine+"\n") {
		t.Errorf("git worktree list:\n%s\nwant %s registered again and %s kept", list, wt, mine)
	}
	if got := s.listWorktrees(t, repo)[wt]; got.Deleted {
		t.Errorf("worktree/list row %s, want live", mustJSON(got))
	}
}

// C27 when git forgot the worktree too: after `rm -rf` of its folder, `git
// worktree prune` and `git gc --prune=now`, the commit the thread made
// there is still in the repository (its last turn pinned HEAD under
// refs/knightcode/turns/) and thread/resume re-creates the worktree at it
// (QA: the commit was reachable from no ref, and the worktree was marked
// deleted with nothing to restore from).
func TestCaseC27_ResumeAfterWorktreePruned(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"committer": script(
		map[string]any{"toolCalls": []any{call("c1", "bash", map[string]any{"command": `git -c user.name=agent -c user.email=agent@example.com commit -q --allow-empty -m "the thread's commit"`})}},
		map[string]any{"text": "done"},
	)})
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "committer"}}, nil)
	base := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
	s.runTurn(t, thread, "commit")
	head := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
	if head == base {
		t.Fatal("the turn made no commit")
	}
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, repo, "worktree", "prune")
	fixtureGit(t, repo, "gc", "-q", "--prune=now")

	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	wantLiveAt(t, resumed.Thread.Workspace, wt, head)
}

// wantLiveAt checks that a thread's workspace ws is the live worktree wt,
// its HEAD at head.
func wantLiveAt(t *testing.T, ws protocol.Workspace, wt, head string) {
	t.Helper()
	if ws.Deleted || ws.Path != wt {
		t.Errorf("thread's workspace %s, want %s live", mustJSON(ws), wt)
	}
	if got := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD")); got != head {
		t.Errorf("worktree at %s, want %s", got, head)
	}
}

// A thread whose worktree folder was removed while it ran (no resume in
// between) is restored by thread/worktree/restore, as turn/start's
// worktreeDeleted error says (QA: restore answered "not deleted"). With a
// locked registration (`git worktree lock`, a worktree on a removable
// disk) the missing folder is left to the user, as git leaves it:
// thread/resume warns how to bring it back and thread/worktree/restore
// says the same instead of "not deleted" (QA: resume, turn/start and
// restore sent the user round in a circle); once unlocked, restore
// re-creates it.
func TestCaseC27_RestoreWithoutResume(t *testing.T) {
	t.Parallel()
	for _, locked := range []bool{false, true} {
		t.Run(map[bool]string{false: "unlocked", true: "locked"}[locked], func(t *testing.T) {
			t.Parallel()
			repo, _ := wtRepo(t)
			s := startDiffServer(t, nil)
			started := s.startWT(t, repo, worktreeMode())
			thread, wt := started.Thread.ID, started.Thread.Workspace.Path
			head := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
			if locked {
				fixtureGit(t, repo, "worktree", "lock", "--reason", "on a removable disk", wt)
			}
			if err := os.RemoveAll(wt); err != nil {
				t.Fatal(err)
			}
			if locked {
				wantLockedLeft(t, s, repo, thread, wt)
				fixtureGit(t, repo, "worktree", "unlock", wt)
			}
			var restored protocol.ThreadWorktreeRestoreResult
			s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, &restored)
			wantLiveAt(t, restored.Thread.Workspace, wt, head)
		})
	}
}

// wantLockedLeft checks that thread/resume and thread/worktree/restore of
// thread, whose worktree wt is locked and its folder gone, say how to
// bring it back and leave git's registration.
func wantLockedLeft(t *testing.T, s *diffServer, repo, thread, wt string) {
	t.Helper()
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	warned := false
	for _, w := range resumed.Warnings {
		warned = warned || strings.Contains(w.Message, "on a removable disk") && strings.Contains(w.Message, "git worktree unlock")
	}
	if !warned {
		t.Errorf("resume warnings %+v; want one naming the lock and `git worktree unlock`", resumed.Warnings)
	}
	err := s.call(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, nil)
	if got := toWireErr(t, err); got.Code != protocol.CodeInvalidParams || !strings.Contains(err.Error(), "git worktree unlock") {
		t.Errorf("restore of a locked worktree: %v; want invalidParams saying how to unlock it", err)
	}
	if !strings.Contains(fixtureGit(t, repo, "worktree", "list", "--porcelain"), "worktree "+wt+"\n") {
		t.Errorf("the locked registration of %s was removed", wt)
	}
}

// C27 with a file where the worktree's folder was: turn/start answers
// worktreeDeleted saying so (QA: the turn ran, and its tools failed with
// "not a directory"), the file is left as it is, and once it is moved
// away thread/worktree/restore rebuilds the worktree.
func TestCaseC27_FileWhereWorktreeWas(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": script(map[string]any{"text": "done"})})
	started := s.startWT(t, repo, worktreeMode())
	thread, wt := started.Thread.ID, started.Thread.Workspace.Path
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "say"}}, nil)
	head := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD"))
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(wt), filepath.Base(wt), "the user's file\n")

	err := s.call(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "go"}, nil)
	if got := toWireErr(t, err); got.Code != protocol.CodeGitConflict || got.Reason != "worktreeDeleted" || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("turn/start with a file at the worktree's path: %v", err)
	}
	if got := readFile(t, filepath.Dir(wt), filepath.Base(wt)); got != "the user's file\n" {
		t.Errorf("the file at the worktree's path = %q", got)
	}
	if err := os.Remove(wt); err != nil {
		t.Fatal(err)
	}
	var restored protocol.ThreadWorktreeRestoreResult
	s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, &restored)
	wantLiveAt(t, restored.Thread.Workspace, wt, head)
}

// C27 and thread/handoff: a worktree thread whose folder was removed is
// refused gitConflict worktreeDeleted naming it, for a dry run too (QA:
// invalidParams "cwd", a member the method does not take); after
// thread/resume re-created it, the handoff goes through.
func TestCaseC27_HandoffOfRemovedWorktree(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, map[string]string{"say": says(1)})
	thread, wt := s.worktreeThread(t, repo, "say", "hello")
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	deleted := wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeDeleted", Paths: []string{wt}}
	for _, dry := range []bool{true, false} {
		s.wantErr(t, protocol.ThreadHandoff.Name, protocol.ThreadHandoffParams{ThreadID: thread, To: "local", DryRun: dry}, deleted)
	}
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, nil)
	writeFile(t, wt, "a.txt", "after the re-creation\n")
	mustCall(t, s, protocol.ThreadHandoff, protocol.ThreadHandoffParams{ThreadID: thread, To: "local"})
	if got := readFile(t, repo, "a.txt"); got != "after the re-creation\n" {
		t.Errorf("main a.txt = %q", got)
	}
}
