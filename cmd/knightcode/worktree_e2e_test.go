package main

// End-to-end tests of worktree threads, archive, delete, environments and
// project trust over the built binary (spec: "Workspaces, diffs and git";
// "Ownership, unloading, and shutdown"; Method reference,
// thread/worktree/restore, worktree/list, worktree/delete, thread/delete,
// environment/list, environment/save, project/trust/read,
// project/trust/set). Each test runs its own server with a temporary home
// and agent directory and real git repositories; the harness
// (harness_e2e_test.go) drives them.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// gitState is what `git status --porcelain=v2`, `git diff` and `git diff
// --cached` print at a checkout's root.
type gitState struct {
	Status, Diff, Cached string
}

func stateOf(t *testing.T, dir string) gitState {
	t.Helper()
	return gitState{
		Status: fixtureGit(t, dir, "status", "--porcelain=v2", "--untracked-files=all"),
		Diff:   fixtureGit(t, dir, "diff"),
		Cached: fixtureGit(t, dir, "diff", "--cached"),
	}
}

// wtRepo makes a repository with a.txt (baseLines), b.txt, run.sh, link (a
// symlink to a.txt), gone.txt, sub/c.txt, sub/d.txt and a .gitignore of
// *.log committed, plus a worktree the user made at <tmp>/userwt. It
// returns the root and the user's worktree (symlinks resolved).
func wtRepo(t *testing.T) (repo, userWT string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo = filepath.Join(base, "proj")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, repo, "init", "-q", "-b", "main")
	fixtureGit(t, repo, "config", "core.autocrlf", "false")
	writeFile(t, repo, "a.txt", baseLines)
	writeFile(t, repo, "b.txt", "b\n")
	writeFile(t, repo, "run.sh", "echo run\n")
	writeFile(t, repo, "gone.txt", "gone\n")
	writeFile(t, repo, "sub/c.txt", "c\n")
	writeFile(t, repo, "sub/d.txt", "d\n")
	writeFile(t, repo, ".gitignore", "*.log\n")
	if err := os.Symlink("a.txt", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, repo, "add", "-A")
	fixtureGit(t, repo, "commit", "-q", "-m", "base")
	userWT = filepath.Join(base, "userwt")
	fixtureGit(t, repo, "worktree", "add", "-q", "--detach", userWT)
	return repo, userWT
}

// makeLocalChanges gives repo staged, unstaged and untracked changes, an
// exec bit, symlinks (a new staged one, a retargeted one), deletions (staged
// and unstaged) and an ignored file.
func makeLocalChanges(t *testing.T, repo string) {
	t.Helper()
	writeFile(t, repo, "b.txt", "b\nstaged\n")
	fixtureGit(t, repo, "add", "b.txt")
	writeFile(t, repo, "b.txt", "b\nstaged\nunstaged\n")
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{3: "LINE 3"}))
	writeFile(t, repo, "sub/new.txt", "untracked\n")
	if err := os.Chmod(filepath.Join(repo, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.txt", filepath.Join(repo, "newlink")); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, repo, "add", "newlink")
	if err := os.Remove(filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.txt", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, repo, "rm", "-q", "sub/d.txt")
	writeFile(t, repo, "debug.log", "ignored\n")
}

// startWT starts a fullAccess thread in cwd with the workspace ws.
func (s *diffServer) startWT(t *testing.T, cwd string, ws *protocol.ThreadStartWorkspace) protocol.ThreadStartResult {
	t.Helper()
	var res protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: cwd, ApprovalMode: "fullAccess", Workspace: ws}, &res)
	return res
}

func worktreeMode(opts ...func(*protocol.ThreadStartWorkspace)) *protocol.ThreadStartWorkspace {
	ws := &protocol.ThreadStartWorkspace{Mode: "worktree"}
	for _, o := range opts {
		o(ws)
	}
	return ws
}

// listWorktrees answers worktree/list, by path.
func (s *diffServer) listWorktrees(t *testing.T, cwd string) map[string]protocol.WorktreeInfo {
	t.Helper()
	var res protocol.WorktreeListResult
	s.must(t, protocol.WorktreeList.Name, protocol.WorktreeListParams{Cwd: cwd}, &res)
	out := map[string]protocol.WorktreeInfo{}
	for _, w := range res.Worktrees {
		out[w.Path] = w
	}
	return out
}

// listThreads answers thread/list, by id.
func (s *diffServer) listThreads(t *testing.T, archived bool) map[string]protocol.ThreadSummary {
	t.Helper()
	var res protocol.ThreadListResult
	s.must(t, protocol.ThreadList.Name, protocol.ThreadListParams{Archived: archived}, &res)
	out := map[string]protocol.ThreadSummary{}
	for _, r := range res.Threads {
		out[r.ID] = r
	}
	return out
}

// errData returns the data of an error response.
func errData(t *testing.T, err error) json.RawMessage {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an error response: %v", err)
	}
	raw, _ := e.Data.(json.RawMessage)
	return raw
}

// userWorktreeIntact checks that the user's own worktree is still there,
// registered, with its file.
func userWorktreeIntact(t *testing.T, repo, userWT string) {
	t.Helper()
	if !strings.Contains(fixtureGit(t, repo, "worktree", "list", "--porcelain"), "worktree "+userWT+"\n") || readFile(t, userWT, "a.txt") != baseLines {
		t.Errorf("the user's worktree %s was touched", userWT)
	}
}

// TestE2EWorktreeCarryArchiveRestore starts worktree threads from a
// subdirectory with and without the checkout's changes, runs a turn in one,
// joins it from its cwd, archives both threads, collects garbage, and
// restores the worktree byte for byte after unarchiving.
func TestE2EWorktreeCarryArchiveRestore(t *testing.T) {
	t.Parallel()
	repo, userWT := wtRepo(t)
	head := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD"))
	makeLocalChanges(t, repo)
	before := stateOf(t, repo)
	s := startDiffServer(t, map[string]string{
		"writer": script(
			map[string]any{"toolCalls": []any{
				call("w1", "write", map[string]any{"path": "turn.txt", "content": "from the turn\n"}),
				call("w2", "edit", map[string]any{"path": "c.txt", "edits": []any{map[string]any{"oldText": "c\n", "newText": "C\n"}}}),
			}},
			map[string]any{"text": "done"},
		),
	})
	agentDir := filepath.Join(s.home, "agent")

	// Without carried changes: a clean detached worktree at HEAD, the thread
	// in the same subdirectory.
	plain := s.startWT(t, filepath.Join(repo, "sub"), worktreeMode())
	pw := plain.Thread.Workspace
	if pw.Mode != "worktree" || pw.ProjectCwd != repo || pw.Deleted || filepath.Dir(filepath.Dir(pw.Path)) != filepath.Join(agentDir, "worktrees") || filepath.Base(pw.Path) != "proj" {
		t.Fatalf("plain worktree thread: %s", mustJSON(plain.Thread))
	}
	if plain.Thread.Cwd != filepath.Join(pw.Path, "sub") {
		t.Errorf("thread cwd %s, want %s", plain.Thread.Cwd, filepath.Join(pw.Path, "sub"))
	}
	if got := stateOf(t, pw.Path); got != (gitState{}) {
		t.Errorf("plain worktree is not clean: %+v", got)
	}
	if got := strings.TrimSpace(fixtureGit(t, pw.Path, "rev-parse", "HEAD")); got != head {
		t.Errorf("worktree HEAD %s, want %s", got, head)
	}
	if out := fixtureGit(t, pw.Path, "branch", "--show-current"); out != "" {
		t.Errorf("worktree on branch %q, want detached", out)
	}

	// With carried changes: status and both diffs equal the source's,
	// ignored files stay behind.
	carried := s.startWT(t, filepath.Join(repo, "sub"), worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.CarryLocalChanges = true }))
	wt := carried.Thread.Workspace.Path
	thread := carried.Thread.ID
	if carried.Thread.Cwd != filepath.Join(wt, "sub") || wt == pw.Path {
		t.Fatalf("carried worktree thread: %s", mustJSON(carried.Thread))
	}
	if diff := cmp.Diff(stateOf(t, wt), before); diff != "" {
		t.Errorf("worktree state differs from the source (-worktree +source):\n%s", diff)
	}
	if exists(wt, "debug.log") {
		t.Errorf("the ignored debug.log was carried")
	}

	// A turn edits the worktree only; diffs read there.
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "writer"}}, nil)
	_, files := s.runTurn(t, thread, "write")
	if got := readFile(t, wt, "sub/turn.txt"); got != "from the turn\n" || readFile(t, wt, "sub/c.txt") != "C\n" {
		t.Errorf("the turn did not write the worktree: turn.txt %q", got)
	}
	if exists(repo, "sub/turn.txt") || readFile(t, repo, "sub/c.txt") != "c\n" {
		t.Errorf("the turn wrote the main checkout")
	}
	if diff := cmp.Diff(files, []protocol.FileTotal{{Path: "sub/c.txt", Additions: 1, Deletions: 1}, {Path: "sub/turn.txt", Additions: 1}}); diff != "" {
		t.Errorf("turn files (-got +want):\n%s", diff)
	}
	d := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread})
	if d.Root != wt || !slices.ContainsFunc(d.Files, func(f protocol.DiffFile) bool { return f.Path == "sub/turn.txt" }) {
		t.Errorf("thread/diff/read root %s files %+v", d.Root, summarize(d.Files))
	}

	// Listings mark worktree threads; a start inside the worktree joins it.
	if got := s.listThreads(t, false)[thread]; got.WorkspaceMode != "worktree" || got.ProjectCwd != repo {
		t.Errorf("thread/list row %s", mustJSON(got))
	}
	// Listing the project shows its worktree threads too.
	var byProject protocol.ThreadListResult
	s.must(t, protocol.ThreadList.Name, protocol.ThreadListParams{Cwd: repo}, &byProject)
	if !slices.ContainsFunc(byProject.Threads, func(r protocol.ThreadSummary) bool { return r.ID == thread }) {
		t.Errorf("thread/list {cwd: project} leaves out its worktree thread: %s", mustJSON(byProject.Threads))
	}
	joined := s.startWT(t, filepath.Join(wt, "sub"), nil)
	if jw := joined.Thread.Workspace; jw.Mode != "worktree" || jw.Path != wt || joined.Thread.Cwd != filepath.Join(wt, "sub") {
		t.Errorf("joined thread: %s", mustJSON(joined.Thread))
	}
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: joined.Thread.ID, ApprovalMode: "ask"}, nil)
	if got := s.listWorktrees(t, repo)[wt]; !slices.Equal(got.ThreadIDs, []string{thread, joined.Thread.ID}) || got.Deleted {
		t.Errorf("worktree/list row %s", mustJSON(got))
	}
	s.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: wt}, wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeInUse"})

	// Archive: the first thread's worktree stays while the other is loaded
	// there; archiving the second deletes it after a snapshot.
	saved := stateOf(t, wt)
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: joined.Thread.ID}, nil)
	if !exists(wt, "sub/turn.txt") {
		t.Fatalf("the worktree was deleted while a thread was loaded in it")
	}
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
	if exists(wt, "") {
		t.Errorf("the archived thread's worktree %s is still there", wt)
	}
	if got := s.listWorktrees(t, repo)[wt]; !got.Deleted {
		t.Errorf("worktree/list row after archive %s", mustJSON(got))
	}
	if refs := fixtureGit(t, repo, "for-each-ref", "--format=%(refname)", "refs/knightcode/snapshots/"); strings.Count(refs, "\n") != 1 {
		t.Errorf("snapshot refs after archive: %q", refs)
	}
	if _, ok := s.listThreads(t, false)[thread]; ok {
		t.Errorf("thread/list lists an archived thread")
	}
	if got := s.listThreads(t, true); got[thread].WorkspaceMode != "worktree" || len(got) != 2 {
		t.Errorf("thread/list archived: %s", mustJSON(got))
	}
	if got := s.readThread(t, thread).Thread.Workspace; !got.Deleted || got.Path != wt {
		t.Errorf("archived thread's workspace %s", mustJSON(got))
	}
	s.wantErr(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadNotFound})
	s.wantErr(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadNotFound})
	fixtureGit(t, repo, "gc", "-q", "--prune=now")

	// Unarchive, then restore: byte for byte what was archived.
	var un protocol.ThreadUnarchiveResult
	s.must(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, &un)
	if un.Thread.ID != thread || !un.Thread.Workspace.Deleted || un.Thread.Status.Type != "notLoaded" {
		t.Errorf("unarchived thread %s", mustJSON(un.Thread))
	}
	var restored protocol.ThreadWorktreeRestoreResult
	s.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, &restored)
	if r := restored.Thread; r.Workspace.Deleted || r.Status.Type != "idle" || r.Cwd != filepath.Join(wt, "sub") {
		t.Errorf("restored thread %s", mustJSON(r))
	}
	if diff := cmp.Diff(stateOf(t, wt), saved); diff != "" {
		t.Errorf("restored worktree differs (-restored +archived):\n%s", diff)
	}
	if got := strings.TrimSpace(fixtureGit(t, wt, "rev-parse", "HEAD")); got != head {
		t.Errorf("restored HEAD %s, want %s", got, head)
	}
	s.wantErr(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: thread}, wireErr{Code: protocol.CodeInvalidParams, Reason: "notDeleted"})
	s.wantErr(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: "no-such-thread"}, wireErr{Code: protocol.CodeThreadNotFound})

	// The main checkout and the user's worktree were never touched.
	if diff := cmp.Diff(stateOf(t, repo), before); diff != "" {
		t.Errorf("main checkout changed (-now +before):\n%s", diff)
	}
	userWorktreeIntact(t, repo, userWT)
}

// TestE2EWorktreeDeleteAndPrune checks worktree/list and worktree/delete
// refusals, and that pruning keeps the newest worktrees.keep worktrees of a
// project and never one a thread is loaded in.
func TestE2EWorktreeDeleteAndPrune(t *testing.T) {
	t.Parallel()
	repo, userWT := wtRepo(t)
	home := t.TempDir()
	writeFile(t, home, "agent/settings.json", `{"worktrees": {"keep": 2}}`)
	before := stateOf(t, repo)

	// Three worktree threads, all loaded: none is pruned.
	a := startIn(t, home)
	var first []protocol.ThreadStartResult
	for range 3 {
		first = append(first, a.startWT(t, repo, worktreeMode()))
	}
	paths := func(rs []protocol.ThreadStartResult) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Thread.Workspace.Path)
		}
		return out
	}
	w := paths(first)
	list := a.listWorktrees(t, repo)
	if len(list) != 3 || list[w[0]].Deleted || list[w[2]].Deleted {
		t.Fatalf("worktree/list with three loaded threads: %s", mustJSON(list))
	}
	if got := a.listWorktrees(t, filepath.Join(w[1])); len(got) != 3 {
		t.Errorf("worktree/list at a managed worktree lists %d worktrees, want its project's 3", len(got))
	}
	if got := a.listWorktrees(t, ""); len(got) != 3 || got[w[0]].ProjectCwd != repo || got[w[0]].LastUsedAt == "" || got[w[0]].Head == "" {
		t.Errorf("worktree/list without cwd: %s", mustJSON(got))
	}
	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	a.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[0]}, wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeInUse", Paths: []string{w[0]}})
	for _, p := range []string{repo, userWT, filepath.Join(home, "nowhere"), "relative/path", filepath.Join(w[0], "sub")} {
		a.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: p}, invalid("path"))
	}
	a.wantErr(t, protocol.WorktreeList.Name, protocol.WorktreeListParams{Cwd: "relative"}, invalid("cwd"))
	a.close(t)
	writeFile(t, w[0], "big.log", strings.Repeat("x", 2<<20)) // ignored, over the snapshot's 1 MiB budget

	// A new server: the fourth creation prunes the two least recently used
	// worktrees (no thread is loaded in them any more).
	b := startIn(t, home)
	fourth := b.startWT(t, repo, worktreeMode())
	w = append(w, fourth.Thread.Workspace.Path)
	list = b.listWorktrees(t, repo)
	for i, want := range []bool{true, true, false, false} {
		if got := list[w[i]]; got.Deleted != want || exists(w[i], "a.txt") == want {
			t.Errorf("worktree %d after the prune: %s (directory exists %v), want deleted %v", i+1, mustJSON(got), exists(w[i], "a.txt"), want)
		}
	}
	if got := b.readThread(t, first[0].Thread.ID).Thread.Workspace; !got.Deleted {
		t.Errorf("pruned thread's workspace %s", mustJSON(got))
	}
	if ws := fourth.Warnings; len(ws) != 1 || ws[0].Path != w[0] || !strings.Contains(ws[0].Message, "big.log") {
		t.Errorf("thread/start warnings %s; want one naming the ignored file the prune did not keep", mustJSON(ws))
	}

	// A worktree git has locked is never deleted.
	fixtureGit(t, repo, "worktree", "lock", "--reason", "on a USB disk", w[2])
	b.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[2]}, wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeInUse"})
	fixtureGit(t, repo, "worktree", "unlock", w[2])

	// A nested repository keeps a worktree from being deleted.
	fixtureGit(t, w[2], "init", "-q", "nested")
	b.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[2]}, wireErr{Code: protocol.CodeGitConflict, Reason: "submodules", Paths: []string{"nested"}})
	if err := os.RemoveAll(filepath.Join(w[2], "nested")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, w[2], "sub/scratch.txt", "work in progress\n")
	writeFile(t, w[2], "big.log", strings.Repeat("x", 2<<20))
	from := b.mark()
	var del protocol.WorktreeDeleteResult
	b.must(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[2]}, &del)
	if !strings.HasPrefix(del.Snapshot, "refs/knightcode/snapshots/") || exists(w[2], "") {
		t.Errorf("worktree/delete = %s; directory exists %v", mustJSON(del), exists(w[2], ""))
	}
	// Notifications reach the client on their own goroutine: wait for it.
	at := from
	b.waitNote(t, &at, protocol.WarningNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == first[2].Thread.ID })
	if ws := b.warningsSince(t, from, first[2].Thread.ID); len(ws) != 1 || !strings.Contains(ws[0].Message, "big.log") {
		t.Errorf("worktree/delete warnings %s; want one to its thread naming big.log", mustJSON(ws))
	}
	b.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[2]}, wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeDeleted"})

	// Restore brings a pruned worktree back and loads its thread there.
	var restored protocol.ThreadWorktreeRestoreResult
	b.must(t, protocol.ThreadWorktreeRestore.Name, protocol.ThreadWorktreeRestoreParams{ThreadID: first[2].Thread.ID}, &restored)
	if restored.Thread.Workspace.Deleted || readFile(t, w[2], "sub/scratch.txt") != "work in progress\n" {
		t.Errorf("restored %s", mustJSON(restored.Thread))
	}
	b.wantErr(t, protocol.WorktreeDelete.Name, protocol.WorktreeDeleteParams{Path: w[2]}, wireErr{Code: protocol.CodeGitConflict, Reason: "worktreeInUse"})

	if diff := cmp.Diff(stateOf(t, repo), before); diff != "" {
		t.Errorf("main checkout changed (-now +before):\n%s", diff)
	}
	userWorktreeIntact(t, repo, userWT)
}

// TestE2EThreadArchiveAndDelete checks thread/archive, thread/unarchive and
// thread/delete of a local thread: refusals while it runs and before it is
// archived, collisions that keep both files, hard links, the listings and
// the thread/archived, thread/unarchived and thread/deleted broadcasts.
func TestE2EThreadArchiveAndDelete(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{"slow": script(map[string]any{"text": "slow", "delayMs": 60000})})
	thread := s.startThread(t, repo, "slow")
	file := s.readThread(t, thread).Thread.SessionFile
	archived := filepath.Join(filepath.Dir(file), "archive", filepath.Base(file))
	id := protocol.ThreadArchiveParams{ThreadID: thread}
	notArchived := wireErr{Code: protocol.CodeThreadNotArchived}

	s.wantErr(t, protocol.ThreadDelete.Name, protocol.ThreadDeleteParams{ThreadID: thread}, notArchived)
	s.wantErr(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, notArchived)
	_, from := s.startTurn(t, thread, "take your time")
	s.wantErr(t, protocol.ThreadArchive.Name, id, wireErr{Code: protocol.CodeTurnInProgress})
	s.wantErr(t, protocol.ThreadDelete.Name, protocol.ThreadDeleteParams{ThreadID: thread}, wireErr{Code: protocol.CodeTurnInProgress})
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread}, nil)
	s.waitTurnCompleted(t, &from, thread)

	// A file in the archive's way: refused, both files kept.
	writeFile(t, filepath.Dir(archived), filepath.Base(archived), "someone else's\n")
	err := s.call(t, protocol.ThreadArchive.Name, id, nil)
	if got := toWireErr(t, err); got.Code != protocol.CodeArchiveConflict {
		t.Fatalf("archive over a file: %v", err)
	}
	var data protocol.ArchiveConflictData
	if err := json.Unmarshal(errData(t, err), &data); err != nil || !slices.Equal(data.Surviving, []string{file, archived}) || data.Destination != archived {
		t.Errorf("archiveConflict data %+v (%v)", data, err)
	}
	if readFile(t, filepath.Dir(archived), filepath.Base(archived)) != "someone else's\n" || !exists(file, "") {
		t.Errorf("a refused archive changed a file")
	}
	if err := os.Remove(archived); err != nil {
		t.Fatal(err)
	}

	mark := s.mark()
	s.must(t, protocol.ThreadArchive.Name, id, nil)
	s.waitNote(t, &mark, protocol.ThreadArchived.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	if exists(file, "") || !exists(archived, "") {
		t.Errorf("transcript not moved to %s", archived)
	}
	s.must(t, protocol.ThreadArchive.Name, id, nil) // already archived: nothing to do
	if _, ok := s.listThreads(t, false)[thread]; ok {
		t.Errorf("an archived thread is listed")
	}
	if got := s.listThreads(t, true)[thread]; got.SessionFile != archived || got.Status == nil || got.Status.Type != "notLoaded" {
		t.Errorf("archived listing row %s", mustJSON(got))
	}
	s.wantErr(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadNotFound})

	// Unarchive refuses to overwrite a transcript at the old path.
	writeFile(t, filepath.Dir(file), filepath.Base(file), "not a transcript\n")
	s.wantErr(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, wireErr{Code: protocol.CodeArchiveConflict})
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	mark = s.mark()
	var un protocol.ThreadUnarchiveResult
	s.must(t, protocol.ThreadUnarchive.Name, protocol.ThreadUnarchiveParams{ThreadID: thread}, &un)
	s.waitNote(t, &mark, protocol.ThreadUnarchived.Name, nil)
	if un.Thread.SessionFile != file || un.Thread.Workspace.Mode != "local" {
		t.Errorf("unarchived %s", mustJSON(un.Thread))
	}
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if len(resumed.Turns) != 1 {
		t.Errorf("resumed after unarchive with %d turns", len(resumed.Turns))
	}

	// Delete: a hard-linked transcript is refused; then it is removed and
	// every connection hears of it.
	s.must(t, protocol.ThreadArchive.Name, id, nil)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(archived, link); err != nil {
		t.Fatal(err)
	}
	s.wantErr(t, protocol.ThreadDelete.Name, protocol.ThreadDeleteParams{ThreadID: thread}, wireErr{Code: protocol.CodeArchiveConflict})
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	mark = s.mark()
	s.must(t, protocol.ThreadDelete.Name, protocol.ThreadDeleteParams{ThreadID: thread}, nil)
	s.waitNote(t, &mark, protocol.ThreadDeleted.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	if exists(archived, "") {
		t.Errorf("deleted transcript still at %s", archived)
	}
	for _, m := range []string{protocol.ThreadDelete.Name, protocol.ThreadArchive.Name, protocol.ThreadUnarchive.Name, protocol.ThreadRead.Name} {
		s.wantErr(t, m, protocol.ThreadDeleteParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadNotFound})
	}
}

// TestE2EEnvironmentsAndTrust checks environment/save validation and
// environment/list, project trust at a project and at a managed worktree's
// cwd, and that a setup script runs only in a trusted project, streaming its
// output, with a failing one reported as a warning.
func TestE2EEnvironmentsAndTrust(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }

	var envs protocol.EnvironmentListResult
	s.must(t, protocol.EnvironmentList.Name, protocol.EnvironmentListParams{Cwd: repo}, &envs)
	if len(envs.Environments) != 0 || envs.Trusted {
		t.Errorf("environment/list of a new project: %s", mustJSON(envs))
	}
	env := func(name, script string) protocol.Environment {
		return protocol.Environment{Name: name, Setup: protocol.EnvironmentScript{Default: script}}
	}
	many := make([]protocol.Environment, 51)
	for i := range many {
		many[i] = env(strings.Repeat("e", i+1), "true")
	}
	for _, c := range []struct {
		p     protocol.EnvironmentSaveParams
		field string
	}{
		{protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{env("a", ""), env(" a ", "")}}, "environments[1].name"},
		{protocol.EnvironmentSaveParams{Cwd: repo, Environments: []protocol.Environment{env("  ", "")}}, "environments[0].name"},
		{protocol.EnvironmentSaveParams{Cwd: repo, Environments: many}, "environments"},
		{protocol.EnvironmentSaveParams{Cwd: "relative", Environments: []protocol.Environment{}}, "cwd"},
		{protocol.EnvironmentSaveParams{Cwd: filepath.Join(repo, "missing"), Environments: []protocol.Environment{}}, "cwd"},
	} {
		s.wantErr(t, protocol.EnvironmentSave.Name, c.p, invalid(c.field))
	}
	if exists(repo, ".knightcode") {
		t.Errorf("a refused environment/save wrote the project")
	}
	saved := []protocol.Environment{
		env("ok", `echo "hello from setup"; pwd > setup-ran.txt; echo "$KNIGHTCODE_WORKTREE_PATH" >> setup-ran.txt`),
		env("fail", "echo partial; exit 3"),
	}
	s.must(t, protocol.EnvironmentSave.Name, protocol.EnvironmentSaveParams{Cwd: filepath.Join(repo, "sub"), Environments: saved}, nil)
	s.must(t, protocol.EnvironmentList.Name, protocol.EnvironmentListParams{Cwd: repo}, &envs)
	if diff := cmp.Diff(envs, protocol.EnvironmentListResult{Environments: saved}); diff != "" {
		t.Errorf("environment/list (-got +want):\n%s", diff)
	}

	var trust protocol.ProjectTrustReadResult
	s.must(t, protocol.ProjectTrustRead.Name, protocol.ProjectTrustReadParams{Cwd: filepath.Join(repo, "sub")}, &trust)
	if diff := cmp.Diff(trust, protocol.ProjectTrustReadResult{NeedsTrust: true, Project: repo}); diff != "" {
		t.Errorf("project/trust/read undecided (-got +want):\n%s", diff)
	}

	// Untrusted: the worktree is made, the script does not run.
	mark := s.mark()
	untrusted := s.startWT(t, repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "ok" }))
	uw := untrusted.Thread.Workspace.Path
	if !slices.ContainsFunc(untrusted.Warnings, func(w protocol.Warning) bool { return w.Source == "trust" }) || exists(uw, "setup-ran.txt") {
		t.Errorf("untrusted start: warnings %s, setup ran %v", mustJSON(untrusted.Warnings), exists(uw, "setup-ran.txt"))
	}
	s.wantErr(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Workspace: worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "nope" })}, invalid("workspace.environment"))

	// Trust set at the managed worktree's cwd is its project's decision.
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: untrusted.Thread.Cwd, Trusted: true}, nil)
	yes := true
	for _, cwd := range []string{repo, uw} {
		s.must(t, protocol.ProjectTrustRead.Name, protocol.ProjectTrustReadParams{Cwd: cwd}, &trust)
		if diff := cmp.Diff(trust, protocol.ProjectTrustReadResult{Trusted: &yes, Project: repo}); diff != "" {
			t.Errorf("project/trust/read at %s (-got +want):\n%s", cwd, diff)
		}
	}
	s.must(t, protocol.EnvironmentList.Name, protocol.EnvironmentListParams{Cwd: uw}, &envs)
	if !envs.Trusted || len(envs.Environments) != 2 {
		t.Errorf("environment/list at the worktree: %s", mustJSON(envs))
	}

	// Trusted: the script runs in the new worktree and streams its output.
	ok := s.startWT(t, filepath.Join(repo, "sub"), worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "ok" }))
	ow := ok.Thread.Workspace.Path
	const wantOutput = "hello from setup\n"
	var output strings.Builder
	for output.Len() < len(wantOutput) {
		p := decode[protocol.ThreadWorkspaceProgressParams](t, s.waitNote(t, &mark, protocol.ThreadWorkspaceProgress.Name, nil))
		if p.ThreadID != ok.Thread.ID || p.Phase != "setup" {
			t.Errorf("progress %s, want thread %s's setup (the untrusted start runs none)", mustJSON(p), ok.Thread.ID)
		}
		output.WriteString(p.Output)
	}
	if output.String() != wantOutput {
		t.Errorf("setup output %q, want %q", output.String(), wantOutput)
	}
	if got := readFile(t, ow, "setup-ran.txt"); got != ow+"\n"+ow+"\n" {
		t.Errorf("setup-ran.txt = %q, want the worktree's path twice", got)
	}
	for _, w := range ok.Warnings {
		if w.Source == "trust" || strings.Contains(w.Message, "setup") {
			t.Errorf("warning on a successful setup: %s", mustJSON(w))
		}
	}
	failed := s.startWT(t, repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.Environment = "fail" }))
	if !slices.ContainsFunc(failed.Warnings, func(w protocol.Warning) bool {
		return w.Source == "server" && strings.Contains(w.Message, "exit code 3") && strings.Contains(w.Message, "partial")
	}) || failed.Thread.Status.Type != "idle" {
		t.Errorf("failing setup: %s", mustJSON(failed))
	}

	missing := filepath.Join(repo, "missing")
	for m, params := range map[string]any{
		protocol.ProjectTrustRead.Name: protocol.ProjectTrustReadParams{Cwd: missing},
		protocol.ProjectTrustSet.Name:  protocol.ProjectTrustSetParams{Cwd: missing, Trusted: true},
		protocol.EnvironmentList.Name:  protocol.EnvironmentListParams{Cwd: missing},
	} {
		s.wantErr(t, m, params, invalid("cwd"))
	}
	s.wantErr(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustReadParams{Cwd: repo}, invalid("trusted"))
}

// TestE2EWorktreeStartErrors checks the refusals of a worktree start:
// outside git, an unborn or bare repository, a bad baseRef; none leaves a
// worktree behind.
func TestE2EWorktreeStartErrors(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	plain := t.TempDir()
	unborn := t.TempDir()
	fixtureGit(t, unborn, "init", "-q")
	bare := filepath.Join(t.TempDir(), "bare.git")
	fixtureGit(t, repo, "clone", "-q", "--bare", repo, bare)
	s := startDiffServer(t, nil)
	for _, c := range []struct {
		cwd  string
		ws   *protocol.ThreadStartWorkspace
		want wireErr
	}{
		{plain, worktreeMode(), wireErr{Code: protocol.CodeNotGitRepo}},
		{unborn, worktreeMode(), wireErr{Code: protocol.CodeInvalidParams, Reason: "unbornHead"}},
		{bare, worktreeMode(), wireErr{Code: protocol.CodeInvalidParams, Reason: "bareRepository"}},
		{repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.BaseRef = "no-such-ref" }), wireErr{Code: protocol.CodeInvalidParams, Field: "workspace.baseRef"}},
		{repo, &protocol.ThreadStartWorkspace{Mode: "cloud"}, wireErr{Code: protocol.CodeInvalidParams, Field: "workspace.mode"}},
	} {
		s.wantErr(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: c.cwd, Workspace: c.ws}, c.want)
	}
	if got := s.listWorktrees(t, ""); len(got) != 0 {
		t.Errorf("failed starts left worktrees: %s", mustJSON(got))
	}
	if ents, _ := os.ReadDir(filepath.Join(s.home, "agent", "worktrees")); len(ents) != 0 {
		t.Errorf("failed starts left directories under the worktrees root: %v", ents)
	}
	// A baseRef other than HEAD works.
	first := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD"))
	writeFile(t, repo, "later.txt", "later\n")
	fixtureGit(t, repo, "add", "later.txt")
	fixtureGit(t, repo, "commit", "-q", "-m", "later")
	res := s.startWT(t, repo, worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.BaseRef = first }))
	if got := strings.TrimSpace(fixtureGit(t, res.Thread.Workspace.Path, "rev-parse", "HEAD")); got != first || res.Thread.Workspace.BaseRef != first || exists(res.Thread.Workspace.Path, "later.txt") {
		t.Errorf("worktree at baseRef: HEAD %s, workspace %s", got, mustJSON(res.Thread.Workspace))
	}
}
