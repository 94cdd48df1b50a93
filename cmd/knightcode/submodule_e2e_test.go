package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCaseC20_TurnFilesListASubmoduleEditedInside runs a turn that edits a
// file inside a submodule without committing (its gitlink does not move):
// the turn's files list the submodule as one path with no line totals, the
// same in turn/completed, turn/diff/updated and the read-back.
func TestCaseC20_TurnFilesListASubmoduleEditedInside(t *testing.T) {
	t.Parallel()
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(top, "subsrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, src, "init", "-q", "-b", "main")
	writeFile(t, src, "s.txt", "s1\n")
	fixtureGit(t, src, "add", "-A")
	fixtureGit(t, src, "commit", "-q", "-m", "s1")
	repo := threadsRepo(t)
	fixtureGit(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "mod")
	fixtureGit(t, repo, "commit", "-q", "-m", "add sub")

	s := startDiffServer(t, map[string]string{"inside": script(
		map[string]any{"toolCalls": []any{call("c", "bash", map[string]any{"command": "cd mod && echo wip > s.txt"})}},
		map[string]any{"text": "edited inside the submodule"},
	)})
	thread := s.startThread(t, repo, "inside")
	turn, totals := s.runTurn(t, thread, "edit inside mod")
	if got := readFile(t, repo, "mod/s.txt"); got != "wip\n" {
		t.Fatalf("the turn did not edit mod/s.txt: %q", got)
	}
	type totalsOf struct{ Completed, DiffUpdated, ReadBack any }
	read := s.readThread(t, thread)
	got := totalsOf{turn.Files, totals, nil}
	if len(read.Turns) == 1 {
		got.ReadBack = read.Turns[0].Files
	}
	want := `[{"path":"mod","additions":0,"deletions":0}]`
	if diff := cmp.Diff([]string{mustJSON(got.Completed), mustJSON(got.DiffUpdated), mustJSON(got.ReadBack)}, []string{want, want, want}); diff != "" {
		t.Errorf("files of turn/completed, turn/diff/updated and the read-back (-got +want):\n%s", diff)
	}
}
