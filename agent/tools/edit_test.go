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

type edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

type editCall struct {
	Path  string `json:"path"`
	Edits []edit `json:"edits"`
}

func TestEdit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		edits    []edit
		want     string // the file afterwards
		wantText string // the result text
		wantDiff string // "" for failed calls
	}{
		{
			name:     "single",
			content:  "alpha\nbeta\ngamma\n",
			edits:    []edit{{"beta", "BETA"}},
			want:     "alpha\nBETA\ngamma\n",
			wantText: "Applied 1 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
		},
		{
			name:     "matchedAgainstOriginal",
			content:  "one two three",
			edits:    []edit{{"three", "one"}, {"one", "1"}},
			want:     "1 two one",
			wantText: "Applied 2 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one two three\n\\ No newline at end of file\n+1 two one\n\\ No newline at end of file\n",
		},
		{
			name:     "adjacentEdits",
			content:  "abcdef\n",
			edits:    []edit{{"abc", "x"}, {"def", "y"}},
			want:     "xy\n",
			wantText: "Applied 2 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-abcdef\n+xy\n",
		},
		{
			name:     "deleteText",
			content:  "keep\ndrop\nkeep too\n",
			edits:    []edit{{"drop\n", ""}},
			want:     "keep\nkeep too\n",
			wantText: "Applied 1 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,2 @@\n keep\n-drop\n keep too\n",
		},
		{
			name:     "crlfKept",
			content:  "a\r\nb\r\nc\r\n",
			edits:    []edit{{"b\r\n", "B\r\n"}},
			want:     "a\r\nB\r\nc\r\n",
			wantText: "Applied 1 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n",
		},
		{
			name:     "lfOldTextInCRLFFile",
			content:  "a\r\nb\r\nc\r\nlast line without newline",
			edits:    []edit{{"a\nb\n", "A\nB\nB2\n"}},
			want:     "A\r\nB\r\nB2\r\nc\r\nlast line without newline",
			wantText: "Applied 1 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,5 @@\n-a\r\n-b\r\n+A\r\n+B\r\n+B2\r\n c\r\n last line without newline\n\\ No newline at end of file\n",
		},
		{
			name:     "mixedEndingsUntouchedBytesKept",
			content:  "x\r\ny\nz\r\n",
			edits:    []edit{{"y", "Y"}},
			want:     "x\r\nY\nz\r\n",
			wantText: "Applied 1 edit(s) to f.txt.",
			wantDiff: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n x\r\n-y\n+Y\n z\r\n",
		},
		{
			name:     "notFound",
			content:  "alpha\n",
			edits:    []edit{{"beta", "x"}},
			want:     "alpha\n",
			wantText: "edit: edits[0].oldText was not found in f.txt; it must match the file exactly, including whitespace and line endings",
		},
		{
			name:     "matchesTwice",
			content:  "x = 1\nx = 1\n",
			edits:    []edit{{"x = 1", "x = 2"}},
			want:     "x = 1\nx = 1\n",
			wantText: "edit: edits[0].oldText occurs 2 times in f.txt; it must occur exactly once, so include more surrounding lines",
		},
		{
			name:     "overlappingOccurrencesCount",
			content:  "aaa",
			edits:    []edit{{"aa", "b"}},
			want:     "aaa",
			wantText: "edit: edits[0].oldText occurs 2 times in f.txt; it must occur exactly once, so include more surrounding lines",
		},
		{
			name:     "allOrNothing",
			content:  "one\ntwo\n",
			edits:    []edit{{"one", "ONE"}, {"three", "THREE"}},
			want:     "one\ntwo\n",
			wantText: "edit: edits[1].oldText was not found in f.txt; it must match the file exactly, including whitespace and line endings",
		},
		{
			name:     "overlapRefused",
			content:  "abcdef\n",
			edits:    []edit{{"cde", "X"}, {"abcd", "Y"}},
			want:     "abcdef\n",
			wantText: "edit: edits[0] and edits[1] overlap in f.txt; merge them into one edit",
		},
		{
			name:     "emptyOldText",
			content:  "a\n",
			edits:    []edit{{"", "x"}},
			want:     "a\n",
			wantText: "edit: edits[0].oldText is empty",
		},
		{
			name:     "noChange",
			content:  "a\n",
			edits:    []edit{{"a", "a"}},
			want:     "a\n",
			wantText: "edit: the edits leave f.txt unchanged (each newText equals its oldText)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeFile(t, dir, "f.txt", tc.content, 0o644)
			res, text := execute(t, context.Background(), NewEdit(dir), editCall{Path: "f.txt", Edits: tc.edits})
			if got := readFile(t, path); got != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
			if text != tc.wantText {
				t.Errorf("text = %q, want %q", text, tc.wantText)
			}
			if res.IsError != (tc.wantDiff == "") {
				t.Errorf("isError = %v", res.IsError)
			}
			var want []agent.FileChange
			if tc.wantDiff != "" {
				want = []agent.FileChange{{Path: "f.txt", Kind: agent.FileModify, Diff: tc.wantDiff}}
			}
			if diff := cmp.Diff(res.Details.FileChanges, want); diff != "" {
				t.Errorf("fileChanges (-got +want):\n%s", diff)
			}
		})
	}
}

func TestEditKeepsMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o755, 0o600, 0o644 | os.ModeSetgid} {
		dir := t.TempDir()
		path := writeFile(t, dir, "run.sh", "#!/bin/sh\necho hi\n", mode)
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		res, text := execute(t, context.Background(), NewEdit(dir), editCall{Path: "run.sh", Edits: []edit{{"hi", "hello"}}})
		if res.IsError {
			t.Fatalf("edit: %s", text)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != before.Mode() {
			t.Errorf("mode after edit = %v, want %v", fi.Mode(), before.Mode())
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("edit left extra files: %v", entries)
		}
	}
}

func TestEditThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := writeFile(t, dir, "real.txt", "old\n", 0o644)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	res, text := execute(t, context.Background(), NewEdit(dir), editCall{Path: "link.txt", Edits: []edit{{"old", "new"}}})
	if res.IsError {
		t.Fatalf("edit: %s", text)
	}
	if got := readFile(t, target); got != "new\n" {
		t.Errorf("target = %q, want %q", got, "new\n")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink (%v, %v)", fi, err)
	}
	if got := res.Details.FileChanges[0].Path; got != "real.txt" {
		t.Errorf("fileChanges path = %q, want the link's target real.txt", got)
	}
}

// TestSymlinkChangeNamesTarget edits and writes through symlinks inside the
// project (issue 15): fileChanges names the file that changed — the outside
// file (absolute) for a link leading out of the project, the target's
// project path for a link inside it — never the link.
func TestSymlinkChangeNamesTarget(t *testing.T) {
	t.Parallel()
	cwd, outside := t.TempDir(), t.TempDir()
	realOutside, err := filepath.EvalSymlinks(outside)
	if err != nil {
		t.Fatal(err)
	}
	symlink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(cwd, link)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, outside, "edit.txt", "old\n", 0o644)
	writeFile(t, outside, "write.txt", "old\n", 0o644)
	writeFile(t, cwd, "docs/inner.txt", "old\n", 0o644)
	symlink(filepath.Join(outside, "edit.txt"), "out-edit.txt")
	symlink(filepath.Join(outside, "write.txt"), "out-write.txt")
	symlink("docs/inner.txt", "in-link.txt")
	symlink(outside, "outdir")

	tests := []struct {
		name string
		tool agent.Tool
		args any
		want string // the fileChanges path
		file string // the file that must hold "new\n"
	}{
		{"edit outside", NewEdit(cwd), editCall{Path: "out-edit.txt", Edits: []edit{{"old", "new"}}},
			filepath.ToSlash(filepath.Join(realOutside, "edit.txt")), filepath.Join(outside, "edit.txt")},
		{"write outside", NewWrite(cwd), writeCall{"out-write.txt", "new\n"},
			filepath.ToSlash(filepath.Join(realOutside, "write.txt")), filepath.Join(outside, "write.txt")},
		{"write new file through a linked folder", NewWrite(cwd), writeCall{"outdir/created.txt", "new\n"},
			filepath.ToSlash(filepath.Join(realOutside, "created.txt")), filepath.Join(outside, "created.txt")},
		{"edit inside", NewEdit(cwd), editCall{Path: "in-link.txt", Edits: []edit{{"old", "new"}}},
			"docs/inner.txt", filepath.Join(cwd, "docs", "inner.txt")},
	}
	for _, tc := range tests {
		res, text := execute(t, context.Background(), tc.tool, tc.args)
		if res.IsError {
			t.Fatalf("%s: %s", tc.name, text)
		}
		if got := readFile(t, tc.file); got != "new\n" {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.file, got, "new\n")
		}
		fc := res.Details.FileChanges
		if len(fc) != 1 || fc[0].Path != tc.want || !strings.Contains(fc[0].Diff, "+++ b/"+tc.want+"\n") {
			t.Errorf("%s: fileChanges = %+v, want path %s", tc.name, fc, tc.want)
		}
	}
}

func TestEditOutsideCwdReportsAbsolutePath(t *testing.T) {
	t.Parallel()
	cwd, other := t.TempDir(), t.TempDir()
	path := writeFile(t, other, "x.txt", "a\n", 0o644)
	res, text := execute(t, context.Background(), NewEdit(cwd), editCall{Path: path, Edits: []edit{{"a", "b"}}})
	if res.IsError {
		t.Fatalf("edit: %s", text)
	}
	fc := res.Details.FileChanges
	if len(fc) != 1 || fc[0].Path != path || !strings.HasPrefix(fc[0].Diff, "--- a/"+path+"\n") {
		t.Errorf("fileChanges = %+v, want the absolute path %s", fc, path)
	}
}

func TestEditMissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, text := execute(t, context.Background(), NewEdit(dir), editCall{Path: "nope.txt", Edits: []edit{{"a", "b"}}})
	if !res.IsError || !strings.Contains(text, "no such file") {
		t.Errorf("isError=%v text=%q, want a missing-file error", res.IsError, text)
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.txt")); !os.IsNotExist(err) {
		t.Errorf("a failed edit created the file")
	}
}
