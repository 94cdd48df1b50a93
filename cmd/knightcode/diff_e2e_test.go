package main

// End-to-end tests of the diff, git stage and file methods over the built
// binary (spec: Method reference, thread/diff/read, thread/diff/file,
// thread/diff/revert, git/stage, git/unstage, file/read, file/list,
// file/write; "Workspaces, diffs and git"). Each test runs its own server
// with a temporary home and agent directory, scripted models for its turns,
// and real git repositories made in t.TempDir().

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EDiffRead reads every scope of a checkout with edits, both sides of
// its files, and checks that reads leave the user's index byte-identical.
func TestE2EDiffRead(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	base := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD"))
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{2: "LINE 2", 15: "LINE 15"}))
	writeFile(t, repo, "b.txt", "b\nstaged\n")
	fixtureGit(t, repo, "add", "b.txt")
	writeFile(t, repo, "n.txt", "new\n")
	if err := os.Remove(filepath.Join(repo, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	before := readIndex(t, repo)

	s := startDiffServer(t, nil)
	thread := s.startThread(t, filepath.Join(repo, "sub"), "")

	res := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread})
	if res.Scope != protocol.ScopeUncommitted || res.Root != repo || res.FromTree == "" || res.ToTree == "" {
		t.Errorf("uncommitted: scope %q root %q trees %q %q", res.Scope, res.Root, res.FromTree, res.ToTree)
	}
	wantUncommitted := []fileSummary{
		{"a.txt", "", "modified", 2, 2, 2},
		{"b.txt", "", "modified", 1, 0, 1},
		{"gone.txt", "", "deleted", 0, 1, 1},
		{"n.txt", "", "added", 1, 0, 1},
	}
	if diff := cmp.Diff(summarize(res.Files), wantUncommitted); diff != "" {
		t.Errorf("uncommitted files (-got +want):\n%s", diff)
	}
	a := fileOf(t, res, "a.txt")
	if len(a.Hunks) != 2 {
		t.Fatalf("a.txt has %d hunks, want 2", len(a.Hunks))
	}
	if got, want := a.Hunks[0].Lines, []string{" line 1", "-line 2", "+LINE 2", " line 3", " line 4", " line 5"}; !slices.Equal(got, want) {
		t.Errorf("a.txt first hunk lines %q, want %q", got, want)
	}
	if a.Hunks[0].ID == "" || a.Hunks[0].ID == a.Hunks[1].ID {
		t.Errorf("hunk ids %q %q", a.Hunks[0].ID, a.Hunks[1].ID)
	}

	scopes := []struct {
		p    protocol.ThreadDiffReadParams
		want []fileSummary
	}{
		{protocol.ThreadDiffReadParams{Scope: protocol.ScopeUnstaged}, []fileSummary{
			{"a.txt", "", "modified", 2, 2, 2}, {"gone.txt", "", "deleted", 0, 1, 1}, {"n.txt", "", "added", 1, 0, 1}}},
		{protocol.ThreadDiffReadParams{Scope: protocol.ScopeStaged}, []fileSummary{{"b.txt", "", "modified", 1, 0, 1}}},
		{protocol.ThreadDiffReadParams{Scope: protocol.ScopeCommitted, Commit: base}, []fileSummary{
			{"a.txt", "", "added", 20, 0, 1}, {"b.txt", "", "added", 1, 0, 1}, {"gone.txt", "", "added", 1, 0, 1}, {"sub/c.txt", "", "added", 1, 0, 1}}},
		{protocol.ThreadDiffReadParams{Scope: protocol.ScopeLastTurn}, []fileSummary{}},
		{protocol.ThreadDiffReadParams{Context: intp(0)}, wantUncommitted},
		{protocol.ThreadDiffReadParams{IgnoreWhitespace: true}, wantUncommitted},
	}
	for _, sc := range scopes {
		sc.p.ThreadID = thread
		got := s.readDiff(t, sc.p)
		if diff := cmp.Diff(summarize(got.Files), sc.want); diff != "" {
			t.Errorf("%s: files (-got +want):\n%s", mustJSON(sc.p), diff)
		}
		noTrees := sc.p.IgnoreWhitespace || sc.p.Scope == protocol.ScopeLastTurn // no turn yet
		if noTrees != (got.FromTree == "") {
			t.Errorf("%s: trees %q %q", mustJSON(sc.p), got.FromTree, got.ToTree)
		}
	}
	ctx1 := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Context: intp(1)})
	if got := fileOf(t, ctx1, "a.txt").Hunks[0].Lines; !slices.Equal(got, []string{" line 1", "-line 2", "+LINE 2", " line 3"}) {
		t.Errorf("context 1 lines %q", got)
	}

	// Both sides of files by the trees the read named.
	sides := []struct {
		path     string
		old, new *string
	}{
		{"a.txt", &baseLines, ptrTo(replaceLines(map[int]string{2: "LINE 2", 15: "LINE 15"}))},
		{"n.txt", nil, ptrTo("new\n")},
		{"gone.txt", ptrTo("gone\n"), nil},
	}
	for _, sd := range sides {
		var got protocol.ThreadDiffFileResult
		s.must(t, protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: res.FromTree, ToTree: res.ToTree, Path: sd.path}, &got)
		want := protocol.ThreadDiffFileResult{Old: sd.old, New: sd.new}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("thread/diff/file %s (-got +want):\n%s", sd.path, diff)
		}
	}
	// The trees stay readable after the working tree moved on.
	writeFile(t, repo, "a.txt", "moved on\n")
	var later protocol.ThreadDiffFileResult
	s.must(t, protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: res.FromTree, ToTree: res.ToTree, Path: "a.txt"}, &later)
	if later.New == nil || *later.New != replaceLines(map[int]string{2: "LINE 2", 15: "LINE 15"}) {
		t.Errorf("a side after the working tree moved on: %+v", later)
	}

	if after := readIndex(t, repo); !before.same(after) {
		t.Errorf("reads changed .git/index")
	}
}

// TestE2EDiffErrors checks the errors the spec names for the diff, git and
// file methods: threadNotFound, notGitRepo, invalidParams naming the field.
func TestE2EDiffErrors(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{2: "LINE 2"}))
	noGit := t.TempDir()
	writeFile(t, noGit, "plain.txt", "plain\n")
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")
	plain := s.startThread(t, noGit, "")
	res := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread})
	tree := res.FromTree

	notFound := wireErr{Code: protocol.CodeThreadNotFound}
	notRepo := wireErr{Code: protocol.CodeNotGitRepo}
	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	tests := []struct {
		method string
		params any
		want   wireErr
	}{
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: "no-such-thread"}, notFound},
		{protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: "no-such-thread", FromTree: tree, ToTree: tree, Path: "a.txt"}, notFound},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: "no-such-thread"}, notFound},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: "no-such-thread"}, notFound},
		{protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: "no-such-thread"}, notFound},
		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: "no-such-thread", Path: "a.txt"}, notFound},
		{protocol.FileList.Name, protocol.FileListParams{ThreadID: "no-such-thread"}, notFound},
		{protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: "no-such-thread", Path: "a.txt", Text: "x"}, notFound},

		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: plain}, notRepo},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: plain, Scope: protocol.ScopeLastTurn}, notRepo},
		{protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: plain, FromTree: tree, ToTree: tree, Path: "a.txt"}, notRepo},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: plain}, notRepo},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: plain}, notRepo},
		{protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: plain}, notRepo},

		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: "everything"}, invalid("scope")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Context: intp(-1)}, invalid("context")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Context: intp(1001)}, invalid("context")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeCommitted}, invalid("commit")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeCommitted, Commit: "no-such-commit"}, invalid("commit")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeBranch}, invalid("against")},
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeBranch, Against: "no-such-branch"}, invalid("against")},
		{protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: "abc123", ToTree: tree, Path: "a.txt"}, invalid("fromTree")},
		{protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: tree, ToTree: strings.Repeat("0", len(tree)), Path: "a.txt"}, invalid("toTree")},
		{protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: tree, ToTree: res.ToTree, Path: "nowhere.txt"}, invalid("path")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeStaged}, invalid("scope")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeCommitted, Commit: "HEAD"}, invalid("scope")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Reapply: true}, invalid("reapply")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, Reapply: true, HunkID: "x"}, invalid("reapply")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, TurnID: "t"}, invalid("turnId")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Path: "b.txt"}, invalid("path")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Context: intp(0), HunkID: fileOf(t, res, "a.txt").Hunks[0].ID}, invalid("context")},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn}, wireErr{Code: protocol.CodeInvalidParams, Reason: "noTurn"}},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, Context: intp(1001)}, invalid("context")},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, Path: "b.txt"}, invalid("path")},
		{protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: thread, Path: "a.txt"}, invalid("path")},

		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "missing.txt"}, invalid("path")},
		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "sub"}, invalid("path")},
		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: ""}, invalid("path")},
		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "a.txt", MaxBytes: intp(0)}, invalid("maxBytes")},
		{protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "a.txt", MaxBytes: intp(8<<20 + 1)}, invalid("maxBytes")},
		{protocol.FileList.Name, protocol.FileListParams{ThreadID: thread, Path: "a.txt"}, invalid("path")},
		{protocol.FileList.Name, protocol.FileListParams{ThreadID: thread, Path: "missing"}, invalid("path")},
		{protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "sub", Text: "x"}, invalid("path")},
		{protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "a.txt/below", Text: "x"}, invalid("path")},
		{protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "big.txt", Text: strings.Repeat("x", 8<<20+1)}, invalid("text")},
	}
	for _, tt := range tests {
		s.wantErr(t, tt.method, tt.params, tt.want)
	}
	// Missing required params are invalidParams too.
	for _, m := range []string{protocol.ThreadDiffFile.Name, protocol.FileRead.Name, protocol.FileWrite.Name} {
		s.wantErr(t, m, map[string]string{"threadId": thread}, wireErr{Code: protocol.CodeInvalidParams, Field: map[string]string{
			protocol.ThreadDiffFile.Name: "fromTree", protocol.FileRead.Name: "path", protocol.FileWrite.Name: "path"}[m]})
	}
	if exists(repo, "big.txt") {
		t.Errorf("a refused file/write created big.txt")
	}
	// File methods work outside git.
	var fr protocol.FileReadResult
	s.must(t, protocol.FileRead.Name, protocol.FileReadParams{ThreadID: plain, Path: "plain.txt"}, &fr)
	if fr.Text == nil || *fr.Text != "plain\n" {
		t.Errorf("file/read outside git: %+v", fr)
	}
}

// TestE2EStageUnstageRevert stages, unstages and reverts hunks and files by
// id and by path, and refuses stale hunk ids with gitConflict diffChanged.
func TestE2EStageUnstageRevert(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	edited := replaceLines(map[int]string{2: "LINE 2", 15: "LINE 15"})
	writeFile(t, repo, "a.txt", edited)
	writeFile(t, repo, "n.txt", "new\n")
	writeFile(t, repo, "-dash *.txt", "literal\n")
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")
	paths := func(method string, params any) []string {
		t.Helper()
		var res struct {
			Paths []string `json:"paths"`
		}
		s.must(t, method, params, &res)
		return res.Paths
	}
	cached := func() string { return fixtureGit(t, repo, "diff", "--cached", "--name-only") }

	// Stage the first hunk of a.txt by id: only its lines reach the index.
	unstaged := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeUnstaged})
	h1 := fileOf(t, unstaged, "a.txt").Hunks[0]
	if got := paths(protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, Path: "a.txt", HunkID: h1.ID}); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("git/stage hunk: paths %q", got)
	}
	if got, want := fixtureGit(t, repo, "show", ":a.txt"), replaceLines(map[int]string{2: "LINE 2"}); got != want {
		t.Errorf("index a.txt:\n%s\nwant:\n%s", got, want)
	}
	// The read's other hunk id is stale now (the file's index blob moved).
	h2 := fileOf(t, unstaged, "a.txt").Hunks[1]
	s.wantErr(t, protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, HunkID: h2.ID},
		wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged"})

	staged := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeStaged})
	if diff := cmp.Diff(summarize(staged.Files), []fileSummary{{"a.txt", "", "modified", 1, 1, 1}}); diff != "" {
		t.Errorf("staged (-got +want):\n%s", diff)
	}
	if got := paths(protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: thread, HunkID: staged.Files[0].Hunks[0].ID}); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("git/unstage hunk: paths %q", got)
	}
	if got := cached(); got != "" {
		t.Errorf("staged after unstaging: %q", got)
	}

	// A path is literal: "-dash *.txt" stages that one file only.
	if got := paths(protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, Path: "-dash *.txt"}); !slices.Equal(got, []string{"-dash *.txt"}) {
		t.Errorf("git/stage literal path: paths %q", got)
	}
	if got := cached(); got != "-dash *.txt\n" {
		t.Errorf("staged: %q", got)
	}
	// No path is everything, the untracked file included; then unstage all.
	if got := paths(protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread}); !slices.Equal(got, []string{"a.txt", "n.txt"}) {
		t.Errorf("git/stage everything: paths %q", got)
	}
	if got := paths(protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: thread}); !slices.Equal(got, []string{"-dash *.txt", "a.txt", "n.txt"}) {
		t.Errorf("git/unstage everything: paths %q", got)
	}
	if got := cached(); got != "" {
		t.Errorf("staged after unstaging everything: %q", got)
	}

	// Revert one hunk of the uncommitted diff by id; a stale id is refused.
	res := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread})
	a := fileOf(t, res, "a.txt")
	if got := paths(protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Path: "a.txt", HunkID: a.Hunks[1].ID}); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("revert hunk: paths %q", got)
	}
	if got, want := readFile(t, repo, "a.txt"), replaceLines(map[int]string{2: "LINE 2"}); got != want {
		t.Errorf("a.txt after the revert:\n%s", got)
	}
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, HunkID: a.Hunks[0].ID},
		wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged"})
	// Reverting an added file deletes it.
	if got := paths(protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Path: "n.txt"}); !slices.Equal(got, []string{"n.txt"}) {
		t.Errorf("revert added file: paths %q", got)
	}
	if exists(repo, "n.txt") {
		t.Errorf("n.txt still exists")
	}
	// The whole scope.
	if got := paths(protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeUncommitted}); !slices.Equal(got, []string{"-dash *.txt", "a.txt"}) {
		t.Errorf("revert everything: paths %q", got)
	}
	if got := fixtureGit(t, repo, "status", "--porcelain"); got != "" {
		t.Errorf("status after reverting everything: %q", got)
	}
	if got := paths(protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread}); len(got) != 0 {
		t.Errorf("revert of an empty diff: paths %q", got)
	}
}

// lastTurnScript is a scripted conversation of two turns: the first edits
// a.txt, writes new.txt and deletes gone.txt with bash; the second edits
// b.txt.
const lastTurnScript = `{"responses": [
  {"text": "Editing.", "toolCalls": [
    {"id": "e1", "name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "line 2\n", "newText": "LINE 2\n"}]}},
    {"id": "w1", "name": "write", "arguments": {"path": "new.txt", "content": "new\n"}},
    {"id": "b1", "name": "bash", "arguments": {"command": "rm gone.txt"}}
  ]},
  {"text": "Done."},
  {"text": "Again.", "toolCalls": [
    {"id": "e2", "name": "edit", "arguments": {"path": "b.txt", "edits": [{"oldText": "b\n", "newText": "B\n"}]}}
  ]},
  {"text": "Done again."}
]}`

// TestE2ELastTurn undoes and reapplies a turn: refused after a later manual
// edit of one of its files, allowed once the file is back, guarded by
// turnId; the user's staging survives the undo.
// wantStale reads thread's lastTurn diff and checks that the raw result
// carries "stale" with the value want (false is sent too), and that an
// uncommitted read carries none.
func wantStale(t *testing.T, s *diffServer, thread string, want bool) {
	t.Helper()
	var raw map[string]json.RawMessage
	s.must(t, protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn}, &raw)
	if got, ok := raw["stale"]; !ok || string(got) != strconv.FormatBool(want) {
		t.Errorf("lastTurn read: stale %s (present %v), want %v", got, ok, want)
	}
	raw = nil
	s.must(t, protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread}, &raw)
	if got, ok := raw["stale"]; ok {
		t.Errorf("uncommitted read carries stale %s", got)
	}
}

func TestE2ELastTurn(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	s := startDiffServer(t, map[string]string{"turns": lastTurnScript})
	thread := s.startThread(t, repo, "turns")

	// No turn yet: an empty lastTurn diff; nothing to undo.
	empty := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn})
	if diff := cmp.Diff(empty, protocol.ThreadDiffReadResult{Scope: protocol.ScopeLastTurn, Root: repo, Files: []protocol.DiffFile{}}); diff != "" {
		t.Errorf("lastTurn before any turn (-got +want):\n%s", diff)
	}
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: "turn-x"},
		wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged"})
	// Nothing to undo is a refusal caused by the thread's state: a reason,
	// no field (the scope was fine).
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "noTurn"})
	// stale comes with every lastTurn read, false included.
	wantStale(t, s, thread, false)

	turn1, totals := s.runTurn(t, thread, "edit a, write new, delete gone")
	wantTotals := []protocol.FileTotal{{Path: "a.txt", Additions: 1, Deletions: 1}, {Path: "gone.txt", Deletions: 1}, {Path: "new.txt", Additions: 1}}
	if diff := cmp.Diff(totals, wantTotals); diff != "" {
		t.Errorf("turn/diff/updated (-got +want):\n%s", diff)
	}
	afterTurn := replaceLines(map[int]string{2: "LINE 2"})

	// The user stages an unrelated change; the undo must keep it.
	writeFile(t, repo, "sub/c.txt", "c\nstaged by the user\n")
	fixtureGit(t, repo, "add", "sub/c.txt")
	before := readIndex(t, repo)

	last := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn})
	wantFiles := []fileSummary{{"a.txt", "", "modified", 1, 1, 1}, {"gone.txt", "", "deleted", 0, 1, 1}, {"new.txt", "", "added", 1, 0, 1}}
	if diff := cmp.Diff(summarize(last.Files), wantFiles); diff != "" {
		t.Errorf("lastTurn files (-got +want):\n%s", diff)
	}
	if last.TurnID != turn1.ID || last.Stale || last.FromTree == "" || last.ToTree == "" {
		t.Errorf("lastTurn: turnId %q (want %q) stale %v trees %q %q", last.TurnID, turn1.ID, last.Stale, last.FromTree, last.ToTree)
	}
	wantStale(t, s, thread, false)
	var sides protocol.ThreadDiffFileResult
	s.must(t, protocol.ThreadDiffFile.Name, protocol.ThreadDiffFileParams{ThreadID: thread, FromTree: last.FromTree, ToTree: last.ToTree, Path: "a.txt"}, &sides)
	if diff := cmp.Diff(sides, protocol.ThreadDiffFileResult{Old: &baseLines, New: &afterTurn}); diff != "" {
		t.Errorf("lastTurn sides (-got +want):\n%s", diff)
	}

	// A manual edit of a file outside the turn does not make it stale; one
	// of the turn's files does, and the undo is refused, changing nothing.
	writeFile(t, repo, "b.txt", "b\nuser\n")
	if got := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn}); got.Stale {
		t.Errorf("stale after editing a file the turn did not touch")
	}
	var fr protocol.FileReadResult
	s.must(t, protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "a.txt"}, &fr)
	var fw protocol.FileWriteResult
	s.must(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "a.txt", Text: afterTurn + "manual\n", ExpectedMtimeMs: &fr.MtimeMs}, &fw)
	if got := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn}); !got.Stale || got.TurnID != turn1.ID {
		t.Errorf("after a manual edit of a.txt: stale %v turnId %q", got.Stale, got.TurnID)
	}
	if after := readIndex(t, repo); !before.same(after) {
		t.Errorf("lastTurn reads changed .git/index")
	}
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: turn1.ID},
		wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged", Paths: []string{"a.txt"}})
	if !exists(repo, "new.txt") || exists(repo, "gone.txt") {
		t.Errorf("a refused undo changed files")
	}

	// Back as the turn left it: the undo works and keeps the user's staging
	// and their edit of b.txt.
	s.must(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "a.txt", Text: afterTurn, ExpectedMtimeMs: &fw.MtimeMs}, nil)
	var rev protocol.ThreadDiffRevertResult
	s.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: turn1.ID}, &rev)
	if !slices.Equal(rev.Paths, []string{"a.txt", "gone.txt", "new.txt"}) {
		t.Errorf("undo: paths %q", rev.Paths)
	}
	if readFile(t, repo, "a.txt") != baseLines || readFile(t, repo, "gone.txt") != "gone\n" || exists(repo, "new.txt") || readFile(t, repo, "b.txt") != "b\nuser\n" {
		t.Errorf("files after the undo are not as the turn found them")
	}
	// shared/cases C32: the undo restores working files only.
	if got := fixtureGit(t, repo, "diff", "--cached", "--name-only"); got != "sub/c.txt\n" {
		t.Errorf("staged after the undo: %q, want the user's sub/c.txt", got)
	}
	if got := fixtureGit(t, repo, "show", ":sub/c.txt"); got != "c\nstaged by the user\n" {
		t.Errorf("staged sub/c.txt after the undo: %q", got)
	}
	// Reapply: the turn's changes come back.
	s.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, Reapply: true}, &rev)
	if !slices.Equal(rev.Paths, []string{"a.txt", "gone.txt", "new.txt"}) || readFile(t, repo, "a.txt") != afterTurn || exists(repo, "gone.txt") || !exists(repo, "new.txt") {
		t.Errorf("reapply: paths %q", rev.Paths)
	}

	// A later turn: an undo shown on the first turn is refused.
	turn2, _ := s.runTurn(t, thread, "edit b")
	if turn2.ID == turn1.ID {
		t.Fatalf("two turns with id %s", turn1.ID)
	}
	s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: turn1.ID},
		wireErr{Code: protocol.CodeGitConflict, Reason: "diffChanged"})
	last = s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread, Scope: protocol.ScopeLastTurn})
	if last.TurnID != turn2.ID || len(last.Files) != 1 || last.Files[0].Path != "b.txt" {
		t.Errorf("lastTurn after turn 2: %q %+v", last.TurnID, summarize(last.Files))
	}
	s.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeLastTurn, TurnID: turn2.ID, Path: "b.txt"}, &rev)
	if !slices.Equal(rev.Paths, []string{"b.txt"}) || readFile(t, repo, "b.txt") != "b\nuser\n" {
		t.Errorf("undo of turn 2's file: paths %q, b.txt %q", rev.Paths, readFile(t, repo, "b.txt"))
	}
}

// slowScript is one reply that takes a minute, so a turn is surely running
// while the test acts; the test interrupts it.
const slowScript = `{"responses": [{"text": "Thinking slowly about it.", "delayMs": 60000}]}`

// TestE2EActionsRefusedDuringTurn checks that revert, stage and unstage are
// refused with turnInProgress while a turn runs in the checkout (also from a
// second thread in the same checkout), that reads and file methods still
// answer, and that the actions work again once the turn ended.
func TestE2EActionsRefusedDuringTurn(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{2: "LINE 2"}))
	s := startDiffServer(t, map[string]string{"slow": slowScript})
	thread := s.startThread(t, repo, "slow")
	other := s.startThread(t, filepath.Join(repo, "sub"), "")
	turnID, from := s.startTurn(t, thread, "take your time")

	busy := wireErr{Code: protocol.CodeTurnInProgress}
	for _, id := range []string{thread, other} {
		s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: id, Path: "a.txt"}, busy)
		s.wantErr(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: id, Scope: protocol.ScopeLastTurn}, busy)
		s.wantErr(t, protocol.GitStage.Name, protocol.GitStageParams{ThreadID: id}, busy)
		s.wantErr(t, protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: id}, busy)
	}
	if res := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread}); len(res.Files) != 1 {
		t.Errorf("read during a turn: %+v", summarize(res.Files))
	}
	s.must(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "notes.txt", Text: "written during the turn\n"}, nil)
	if readFile(t, repo, "a.txt") != replaceLines(map[int]string{2: "LINE 2"}) || fixtureGit(t, repo, "diff", "--cached", "--name-only") != "" {
		t.Errorf("a refused action changed the checkout")
	}

	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turnID}, nil)
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, nil), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnInterrupted {
		t.Errorf("turn ended %s", done.Turn.Status)
	}
	s.waitNote(t, &from, protocol.TurnDiffUpdated.Name, nil)
	var staged protocol.GitStageResult
	s.must(t, protocol.GitStage.Name, protocol.GitStageParams{ThreadID: other, Path: "a.txt"}, &staged)
	if !slices.Equal(staged.Paths, []string{"a.txt"}) {
		t.Errorf("stage after the turn: %q", staged.Paths)
	}
}

// TestE2EFileMethods reads, lists and writes files of a thread over the
// wire, with fileChanged for a stale expectedMtimeMs.
func TestE2EFileMethods(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	writeFile(t, repo, ".hidden", "h\n")
	writeFile(t, repo, "bin.dat", "a\x00b")
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")

	var list protocol.FileListResult
	s.must(t, protocol.FileList.Name, protocol.FileListParams{ThreadID: thread}, &list)
	wantList := protocol.FileListResult{Root: repo, Entries: []protocol.FileEntry{
		{Path: ".git", Type: "directory"}, {Path: ".hidden", Type: "file"}, {Path: "a.txt", Type: "file"}, {Path: "b.txt", Type: "file"},
		{Path: "bin.dat", Type: "file"}, {Path: "gone.txt", Type: "file"}, {Path: "sub", Type: "directory"},
	}}
	if diff := cmp.Diff(list, wantList); diff != "" {
		t.Errorf("file/list (-got +want):\n%s", diff)
	}
	s.must(t, protocol.FileList.Name, protocol.FileListParams{ThreadID: thread, Path: "sub"}, &list)
	if diff := cmp.Diff(list, protocol.FileListResult{Root: repo, Entries: []protocol.FileEntry{{Path: "sub/c.txt", Type: "file"}}}); diff != "" {
		t.Errorf("file/list sub (-got +want):\n%s", diff)
	}

	fi, err := os.Stat(filepath.Join(repo, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		p    protocol.FileReadParams
		want protocol.FileReadResult
	}{
		{protocol.FileReadParams{Path: "a.txt"}, protocol.FileReadResult{Path: "a.txt", Size: int64(len(baseLines)), Text: &baseLines, MtimeMs: fi.ModTime().UnixMilli()}},
		{protocol.FileReadParams{Path: filepath.Join(repo, "a.txt"), MaxBytes: intp(10)}, protocol.FileReadResult{Path: "a.txt", Size: int64(len(baseLines)), TooLarge: true, MtimeMs: fi.ModTime().UnixMilli()}},
	}
	for _, r := range reads {
		r.p.ThreadID = thread
		var got protocol.FileReadResult
		s.must(t, protocol.FileRead.Name, r.p, &got)
		if diff := cmp.Diff(got, r.want); diff != "" {
			t.Errorf("file/read %s (-got +want):\n%s", r.p.Path, diff)
		}
	}
	var bin protocol.FileReadResult
	s.must(t, protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "bin.dat"}, &bin)
	if !bin.Binary || bin.Text != nil || bin.Size != 3 {
		t.Errorf("binary file/read: %+v", bin)
	}

	// Write with the read's mtime; a second write with the same stale mtime
	// after someone else changed the file is refused and changes nothing.
	mtime := fi.ModTime().UnixMilli()
	var w protocol.FileWriteResult
	s.must(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "a.txt", Text: "written\n", ExpectedMtimeMs: &mtime}, &w)
	if readFile(t, repo, "a.txt") != "written\n" {
		t.Errorf("a.txt not written")
	}
	later := time.UnixMilli(w.MtimeMs).Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(repo, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	s.wantErr(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "a.txt", Text: "lost\n", ExpectedMtimeMs: &w.MtimeMs},
		wireErr{Code: protocol.CodeFileChanged})
	if readFile(t, repo, "a.txt") != "written\n" {
		t.Errorf("a refused write changed a.txt")
	}
	// A missing file (and its folder) is created.
	s.must(t, protocol.FileWrite.Name, protocol.FileWriteParams{ThreadID: thread, Path: "new/dir/n.txt", Text: "n\n"}, &w)
	if readFile(t, repo, "new/dir/n.txt") != "n\n" {
		t.Errorf("new file not written")
	}
}

// TestCaseC40_HugeDiffStaysWithinTheResponseBudget changes every line of a
// 200,000-line file: thread/diff/read answers with the file's counts but no
// hunks (tooLarge) in a small response, and file/read sends no text for a
// file over maxBytes (shared/cases C40: a diff must never freeze a client).
func TestCaseC40_HugeDiffStaysWithinTheResponseBudget(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	const n = 200_000
	var old, changed strings.Builder
	for i := range n {
		fmt.Fprintf(&old, "row %d\n", i)
		fmt.Fprintf(&changed, "ROW %d\n", i)
	}
	writeFile(t, repo, "huge.txt", old.String())
	fixtureGit(t, repo, "add", "huge.txt")
	fixtureGit(t, repo, "commit", "-q", "-m", "huge")
	writeFile(t, repo, "huge.txt", changed.String())
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{2: "LINE 2"}))
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")

	var raw json.RawMessage
	s.must(t, protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: thread}, &raw)
	if len(raw) > 64<<10 {
		t.Errorf("diff response of %d bytes", len(raw))
	}
	var res protocol.ThreadDiffReadResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	huge := fileOf(t, res, "huge.txt")
	if !huge.TooLarge || len(huge.Hunks) != 0 || huge.Additions != n || huge.Deletions != n {
		t.Errorf("huge.txt: tooLarge %v, %d hunks, +%d -%d", huge.TooLarge, len(huge.Hunks), huge.Additions, huge.Deletions)
	}
	if a := fileOf(t, res, "a.txt"); a.TooLarge || len(a.Hunks) != 1 {
		t.Errorf("a.txt beside it: tooLarge %v, %d hunks", a.TooLarge, len(a.Hunks))
	}
	// The whole file still reverts by path.
	var rev protocol.ThreadDiffRevertResult
	s.must(t, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Path: "huge.txt"}, &rev)
	if readFile(t, repo, "huge.txt") != old.String() {
		t.Errorf("huge.txt not reverted")
	}
	var fr protocol.FileReadResult
	s.must(t, protocol.FileRead.Name, protocol.FileReadParams{ThreadID: thread, Path: "huge.txt", MaxBytes: intp(1 << 20)}, &fr)
	if !fr.TooLarge || fr.Text != nil || fr.Size != int64(old.Len()) {
		t.Errorf("file/read of huge.txt: tooLarge %v, text %v, size %d", fr.TooLarge, fr.Text != nil, fr.Size)
	}
}
