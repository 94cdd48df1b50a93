package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
)

type writeCall struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func TestWriteCreatesWithParents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, text := execute(t, context.Background(), NewWrite(dir), writeCall{"new/deep/f.txt", "one\ntwo"})
	if res.IsError {
		t.Fatalf("write: %s", text)
	}
	if got := readFile(t, filepath.Join(dir, "new", "deep", "f.txt")); got != "one\ntwo" {
		t.Errorf("file = %q", got)
	}
	want := []agent.FileChange{{Path: "new/deep/f.txt", Kind: agent.FileAdd,
		Diff: "--- /dev/null\n+++ b/new/deep/f.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n"}}
	if diff := cmp.Diff(res.Details.FileChanges, want); diff != "" {
		t.Errorf("fileChanges (-got +want):\n%s", diff)
	}
	if text != "Created new/deep/f.txt (7 bytes)." {
		t.Errorf("text = %q", text)
	}
}

func TestWriteReplaceKeepsMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "run.sh", "#!/bin/sh\necho a\n", 0o750)
	res, text := execute(t, context.Background(), NewWrite(dir), writeCall{"run.sh", "#!/bin/sh\necho b\n"})
	if res.IsError {
		t.Fatalf("write: %s", text)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o750 {
		t.Errorf("mode = %v, want 0750", fi.Mode())
	}
	want := []agent.FileChange{{Path: "run.sh", Kind: agent.FileModify,
		Diff: "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo a\n+echo b\n"}}
	if diff := cmp.Diff(res.Details.FileChanges, want); diff != "" {
		t.Errorf("fileChanges (-got +want):\n%s", diff)
	}
}

func TestWriteSameContentReportsNoChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "f.txt", "same\n", 0o644)
	res, text := execute(t, context.Background(), NewWrite(dir), writeCall{"f.txt", "same\n"})
	if res.IsError || res.Details.FileChanges != nil {
		t.Errorf("isError=%v fileChanges=%v text=%q, want success without changes", res.IsError, res.Details.FileChanges, text)
	}
}

func TestWriteEmptyNewFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, _ := execute(t, context.Background(), NewWrite(dir), writeCall{"empty", ""})
	want := []agent.FileChange{{Path: "empty", Kind: agent.FileAdd}}
	if diff := cmp.Diff(res.Details.FileChanges, want); diff != "" {
		t.Errorf("fileChanges (-got +want):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(dir, "empty")); got != "" {
		t.Errorf("file = %q", got)
	}
}

func TestWriteFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "sub/x", "x", 0o644)
	writeFile(t, dir, "plain", "x", 0o644)
	if err := os.Symlink("missing-target", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"sub", "sub is not a regular file"},
		{"plain/child", "not a directory"},
		{"dangling", "dangling is a dangling symlink"},
	}
	for _, tc := range tests {
		res, text := execute(t, context.Background(), NewWrite(dir), writeCall{tc.path, "data"})
		if !res.IsError || !strings.Contains(text, tc.want) || res.Details.FileChanges != nil {
			t.Errorf("write %s: isError=%v text=%q changes=%v, want an error containing %q", tc.path, res.IsError, text, res.Details.FileChanges, tc.want)
		}
	}
}

// TestWriteAndEditRefuseSystemPaths: edit and write read and change only
// regular files outside /proc, /sys and /dev (issue 15), also through a
// symlink in the project.
func TestWriteAndEditRefuseSystemPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("/proc/self/comm", filepath.Join(dir, "comm")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool agent.Tool
		args any
		want string
	}{
		{NewWrite(dir), writeCall{"/proc/self/comm", "x"}, "is under /proc; only regular files"},
		{NewWrite(dir), writeCall{"comm", "x"}, "is under /proc; only regular files"},
		{NewWrite(dir), writeCall{"/dev/knightcode-new", "x"}, "/dev/knightcode-new is under /dev; only regular files"},
		{NewEdit(dir), editCall{Path: "/proc/self/comm", Edits: []edit{{"a", "b"}}}, "is under /proc; only regular files"},
		{NewEdit(dir), editCall{Path: "comm", Edits: []edit{{"a", "b"}}}, "is under /proc; only regular files"},
	}
	for _, tc := range tests {
		res, text := execute(t, context.Background(), tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text, tc.want) || res.Details.FileChanges != nil {
			t.Errorf("%+v: isError=%v text=%q, want an error containing %q", tc.args, res.IsError, text, tc.want)
		}
	}
}
