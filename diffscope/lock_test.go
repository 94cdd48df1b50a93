package diffscope

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// TestStageAndUnstageWhileIndexIsLocked checks that git/stage and
// git/unstage answer a concurrentChange conflict naming the paths involved,
// with git's stderr, while another git process holds index.lock, and
// change nothing: the index and working files stay as they were.
func TestStageAndUnstageWhileIndexIsLocked(t *testing.T) {
	body := actLines(1, 30)
	dir := actRepo(t, map[string]string{"f.txt": body, "g.txt": "g\n"})
	gittest.Write(t, dir, "f.txt", strings.Replace(body, "3\n", "three\n", 1))
	gittest.Git(t, dir, "add", "f.txt")
	gittest.Write(t, dir, "f.txt", strings.Replace(body, "3\n", "three\n", 1)+"31\n")
	gittest.Write(t, dir, "g.txt", "G\n")
	d := newDiffer(t)
	_, unstagedHunk := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
	_, stagedHunk := actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "f.txt", 0)
	status := actStatus(t, dir)
	files := actFiles(t, dir, "f.txt", "g.txt")
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		act       func() error
		wantPaths []string
	}{
		{"stage all", func() error { _, err := d.Stage(context.Background(), dir, StageOptions{}); return err }, []string{"f.txt", "g.txt"}},
		{"stage path", func() error {
			_, err := d.Stage(context.Background(), dir, StageOptions{Path: "g.txt"})
			return err
		}, []string{"g.txt"}},
		{"stage hunk", func() error {
			_, err := d.Stage(context.Background(), dir, StageOptions{Path: "f.txt", HunkID: unstagedHunk.ID})
			return err
		}, []string{"f.txt"}},
		{"unstage path", func() error {
			_, err := d.Unstage(context.Background(), dir, StageOptions{Path: "f.txt"})
			return err
		}, []string{"f.txt"}},
		{"unstage hunk", func() error {
			_, err := d.Unstage(context.Background(), dir, StageOptions{HunkID: stagedHunk.ID})
			return err
		}, []string{"f.txt"}},
	}
	for _, tt := range tests {
		ce := actConflict(t, tt.act(), ReasonConcurrentChange)
		if diff := cmp.Diff(ce.Paths, tt.wantPaths); diff != "" {
			t.Errorf("%s: paths (-got +want):\n%s", tt.name, diff)
		}
		if !strings.Contains(ce.Output, "Unable to create '") || !strings.Contains(ce.Output, "index.lock': File exists") {
			t.Errorf("%s: output %q, want git's lock message", tt.name, ce.Output)
		}
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if got := actStatus(t, dir); got != status {
		t.Errorf("status %q -> %q", status, got)
	}
	if diff := cmp.Diff(actFiles(t, dir, "f.txt", "g.txt"), files); diff != "" {
		t.Errorf("working files changed (-got +want):\n%s", diff)
	}
}
