package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EIndexLockedByAnotherProcess checks git/stage, git/unstage and
// thread/diff/revert while another git process holds index.lock: each
// answers gitConflict concurrentChange naming its paths with git's stderr
// as output (not internal), and nothing is half-applied: once the lock is
// gone, the index and the working files are as they were.
func TestE2EIndexLockedByAnotherProcess(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{3: "three"}))
	fixtureGit(t, repo, "add", "a.txt")
	writeFile(t, repo, "a.txt", replaceLines(map[int]string{3: "three", 17: "seventeen"}))
	writeFile(t, repo, "b.txt", "B\n")
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")
	res := s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread})
	hunk := fileOf(t, res, "a.txt").Hunks[0].ID
	status := fixtureGit(t, repo, "status", "--porcelain")
	index := readIndex(t, repo)
	files := map[string]string{"a.txt": readFile(t, repo, "a.txt"), "b.txt": readFile(t, repo, "b.txt")}

	lock := filepath.Join(repo, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method string
		params any
		paths  []string
	}{
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Path: "a.txt", HunkID: hunk}, []string{"a.txt"}},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread}, []string{"a.txt", "b.txt"}},
		{protocol.GitUnstage.Name, protocol.GitUnstageParams{ThreadID: thread, Path: "a.txt"}, []string{"a.txt"}},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread, Path: "a.txt"}, []string{"a.txt"}},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: thread}, []string{"a.txt", "b.txt"}},
	}
	for _, tt := range tests {
		err := s.call(t, tt.method, tt.params, nil)
		if got, want := toWireErr(t, err), (wireErr{Code: protocol.CodeGitConflict, Reason: "concurrentChange", Paths: tt.paths}); !cmp.Equal(got, want) {
			t.Errorf("%s %+v: %+v, want %+v", tt.method, tt.params, got, want)
			continue
		}
		var e *client.Error
		if errors.As(err, &e) {
			if out := mustJSON(e.Data); !strings.Contains(out, `index.lock': File exists`) {
				t.Errorf("%s: data %s lacks git's lock message as output", tt.method, out)
			}
		}
	}
	if !index.same(readIndex(t, repo)) {
		t.Errorf("the refused actions changed .git/index")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if got := fixtureGit(t, repo, "status", "--porcelain"); got != status {
		t.Errorf("status %q -> %q", status, got)
	}
	for p, want := range files {
		if got := readFile(t, repo, p); got != want {
			t.Errorf("%s = %q, want %q (unchanged)", p, got, want)
		}
	}
}
