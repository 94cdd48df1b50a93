package diffscope

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// hunkIDs lists "<path> <header> <id>" of every hunk of a read.
func hunkIDs(res *Result) []string {
	var out []string
	for _, f := range res.Files {
		out = append(out, f.Path+" file "+f.ID)
		for _, h := range f.Hunks {
			out = append(out, f.Path+" "+h.Header+" "+h.ID)
		}
	}
	return out
}

// sameUnderConfig reads dir plainly, then with each user config set in
// the repository, and fails when hunks or ids change.
func sameUnderConfig(t *testing.T, dir string, configs [][2]string) {
	t.Helper()
	d := newDiffer(t)
	want := mustRead(t, d, dir, ReadOptions{})
	if len(want.Files) == 0 {
		t.Fatal("nothing to compare: the read is empty")
	}
	for _, kv := range configs {
		t.Run(kv[0]+"="+kv[1], func(t *testing.T) {
			gittest.Git(t, dir, "config", kv[0], kv[1])
			defer gittest.Git(t, dir, "config", "--unset", kv[0])
			got := mustRead(t, d, dir, ReadOptions{})
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("read under %s=%s differs (-got +want):\n%s", kv[0], kv[1], diff)
			}
		})
	}
	t.Run("all at once", func(t *testing.T) {
		for _, kv := range configs {
			gittest.Git(t, dir, "config", kv[0], kv[1])
		}
		got := mustRead(t, d, dir, ReadOptions{})
		if diff := cmp.Diff(hunkIDs(got), hunkIDs(want)); diff != "" {
			t.Errorf("ids under all configs differ (-got +want):\n%s", diff)
		}
	})
}

func TestCaseC01_UserDiffContextDoesNotChangeHunks(t *testing.T) {
	dir := gittest.InitCommit(t, "t.txt", "line one\nline two\n")
	gittest.Write(t, dir, "t.txt", "line one and something\nline two\nline three\n")
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	if f := fileByPath(t, res, "t.txt"); len(f.Hunks) != 1 {
		t.Fatalf("t.txt has %d hunks at context 3, want 1", len(f.Hunks))
	}
	sameUnderConfig(t, dir, [][2]string{{"diff.context", "0"}, {"diff.interHunkContext", "10"}})
}

func TestCaseC07_UserDiffAlgorithmDoesNotChangeHunks(t *testing.T) {
	dir := gittest.InitCommit(t, "s.txt", "1\n2\na\n\nb\n3\n4\n")
	gittest.Write(t, dir, "s.txt", "1\n2\na\n\nb\na\n\nb\n3\n4\n")
	sameUnderConfig(t, dir, [][2]string{{"diff.algorithm", "patience"}, {"diff.algorithm", "histogram"},
		{"diff.indentHeuristic", "false"}, {"diff.renames", "false"}})
}

func TestCaseC08_UserPrefixConfigDoesNotChangeHunks(t *testing.T) {
	dir := gittest.InitCommit(t, "lib/app/code.ex", "a\nb\n")
	gittest.Write(t, dir, "lib/app/code.ex", "a\nB\n")
	sameUnderConfig(t, dir, [][2]string{{"diff.noprefix", "true"}, {"diff.mnemonicPrefix", "true"},
		{"diff.external", "false"}, {"color.diff", "always"}, {"core.quotePath", "true"}})
}

func TestCaseC02_EOFNewlineHunksGetDistinctIDs(t *testing.T) {
	dir := gittest.InitCommit(t,
		"f.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nlast",
		"g.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nlast\n",
	)
	gittest.Write(t, dir, "f.txt", "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast\nadded1\nadded2")
	gittest.Write(t, dir, "g.txt", "A\nb\nc\nd\ne\nf\ng\nh\ni\nlast\nadded1\nadded2\n")
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	f, g := fileByPath(t, res, "f.txt"), fileByPath(t, res, "g.txt")
	if len(f.Hunks) != 2 || len(g.Hunks) != 2 {
		t.Fatalf("hunks: f.txt %d, g.txt %d; want 2 each", len(f.Hunks), len(g.Hunks))
	}
	wantF := []string{" g", " h", " i", "-last", `\ No newline at end of file`, "+last", "+added1", "+added2", `\ No newline at end of file`}
	if diff := cmp.Diff(f.Hunks[1].Lines, wantF); diff != "" {
		t.Errorf("f.txt hunk 2 (-got +want):\n%s", diff)
	}
	// Two hunks that differ only in the final newline have different
	// ids, and so do files whose headers differ only in blob ids.
	if f.Hunks[1].ID == g.Hunks[1].ID {
		t.Errorf("EOF hunks share id %s", f.Hunks[1].ID)
	}
	// The hash covers the marker: the same file header with the marker
	// line removed gives another id.
	e := rawEntry{oldPath: "f.txt", newPath: "f.txt", oldMode: "100644", newMode: "100644", oldOID: "1", newOID: "2"}
	h := newIDHasher(&e, 3, false)
	with := "@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n"
	without := "@@ -1 +1 @@\n-x\n+y\n"
	if h.hunkID([]byte(with)) == h.hunkID([]byte(without)) {
		t.Errorf("the id does not cover the no-newline marker")
	}
}

func TestHunkIDsDependOnContextAndWhitespace(t *testing.T) {
	// A one-line file has the same hunk text at every context, so only
	// the context and whitespace flag in the hash tell the ids apart.
	dir := gittest.InitCommit(t, "one.txt", "a\n")
	gittest.Write(t, dir, "one.txt", "b\n")
	d := newDiffer(t)
	reads := map[string]*Result{
		"context 3":         mustRead(t, d, dir, ReadOptions{}),
		"context 3 again":   mustRead(t, d, dir, ReadOptions{Context: intp(3)}),
		"context 0":         mustRead(t, d, dir, ReadOptions{Context: intp(0)}),
		"context 1":         mustRead(t, d, dir, ReadOptions{Context: intp(1)}),
		"ignore whitespace": mustRead(t, d, dir, ReadOptions{IgnoreWhitespace: true}),
	}
	lines := reads["context 3"].Files[0].Hunks[0].Lines
	seen := map[string]string{}
	for name, res := range reads {
		f := res.Files[0]
		if diff := cmp.Diff(f.Hunks[0].Lines, lines); diff != "" {
			t.Fatalf("%s: lines differ (-got +want):\n%s", name, diff)
		}
		key := f.Hunks[0].ID + f.ID
		if other, dup := seen[key]; dup && !strings.HasPrefix(name, "context 3") {
			t.Errorf("%s has the ids of %s", name, other)
		}
		seen[key] = name
	}
	if reads["context 3"].Files[0].Hunks[0].ID != reads["context 3 again"].Files[0].Hunks[0].ID {
		t.Errorf("the default context and an explicit 3 give different ids")
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct id sets, want 4", len(seen))
	}
}
