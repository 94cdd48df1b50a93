package diffscope

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// fileSummary is what TestReadFileKinds compares of each file.
type fileSummary struct {
	Path, OldPath, Status string
	Binary, Submodule     bool
	Additions, Deletions  int
	OldMode, NewMode      string
	Lines                 []string // every hunk's header and lines
}

func summarize(files []File) []fileSummary {
	out := []fileSummary{}
	for _, f := range files {
		s := fileSummary{Path: f.Path, OldPath: f.OldPath, Status: f.Status, Binary: f.Binary, Submodule: f.Submodule,
			Additions: f.Additions, Deletions: f.Deletions, OldMode: f.OldMode, NewMode: f.NewMode}
		for _, h := range f.Hunks {
			s.Lines = append(s.Lines, h.Header)
			s.Lines = append(s.Lines, h.Lines...)
		}
		out = append(out, s)
	}
	return out
}

func TestReadFileKinds(t *testing.T) {
	dir := gittest.Init(t)
	long := strings.Repeat("line of the renamed file\n", 20)
	gittest.Write(t, dir, "renamed-from.txt", long)
	gittest.Write(t, dir, "image.bin", "PNG\x00\x01v1")
	gittest.WriteMode(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o644)
	gittest.Write(t, dir, "crlf.txt", "l1\r\nl2\r\nl3\r\n")
	gittest.Write(t, dir, "noeol-add.txt", "a\nb")
	gittest.Write(t, dir, "noeol-remove.txt", "a\nb\n")
	gittest.Write(t, dir, "gone.txt", "bye\n")
	gittest.Write(t, dir, "was-file", "content\n")
	gittest.Write(t, dir, ".gitignore", "*.log\n")
	gittest.CommitAll(t, dir, "init")

	if err := os.Rename(filepath.Join(dir, "renamed-from.txt"), filepath.Join(dir, "renamed-to.txt")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "renamed-to.txt", strings.Replace(long, "line", "LINE", 1))
	gittest.Write(t, dir, "image.bin", "PNG\x00\x01v2")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "crlf.txt", "l1\r\nL2\r\nl3\r\n")
	gittest.Write(t, dir, "noeol-add.txt", "a\nb\n")
	gittest.Write(t, dir, "noeol-remove.txt", "a\nb")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "was-file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("run.sh", filepath.Join(dir, "was-file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("crlf.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, dir, "empty.txt", "")
	gittest.Write(t, dir, "debug.log", "ignored\n")

	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	want := []fileSummary{
		{Path: "crlf.txt", Status: "modified", Additions: 1, Deletions: 1, OldMode: "100644", NewMode: "100644",
			Lines: []string{"@@ -1,3 +1,3 @@", " l1\r", "-l2\r", "+L2\r", " l3\r"}},
		{Path: "empty.txt", Status: "added", NewMode: "100644"},
		{Path: "gone.txt", Status: "deleted", Deletions: 1, OldMode: "100644",
			Lines: []string{"@@ -1 +0,0 @@", "-bye"}},
		{Path: "image.bin", Status: "modified", Binary: true, OldMode: "100644", NewMode: "100644"},
		{Path: "link", Status: "added", Additions: 1, NewMode: "120000",
			Lines: []string{"@@ -0,0 +1 @@", "+crlf.txt", `\ No newline at end of file`}},
		{Path: "noeol-add.txt", Status: "modified", Additions: 1, Deletions: 1, OldMode: "100644", NewMode: "100644",
			Lines: []string{"@@ -1,2 +1,2 @@", " a", "-b", `\ No newline at end of file`, "+b"}},
		{Path: "noeol-remove.txt", Status: "modified", Additions: 1, Deletions: 1, OldMode: "100644", NewMode: "100644",
			Lines: []string{"@@ -1,2 +1,2 @@", " a", "-b", "+b", `\ No newline at end of file`}},
		{Path: "renamed-to.txt", OldPath: "renamed-from.txt", Status: "renamed", Additions: 1, Deletions: 1, OldMode: "100644", NewMode: "100644",
			Lines: []string{"@@ -1,4 +1,4 @@", "-line of the renamed file", "+LINE of the renamed file",
				" line of the renamed file", " line of the renamed file", " line of the renamed file"}},
		{Path: "run.sh", Status: "modified", OldMode: "100644", NewMode: "100755"},
		{Path: "was-file", Status: "typeChanged", Additions: 1, Deletions: 1, OldMode: "100644", NewMode: "120000",
			Lines: []string{"@@ -1 +0,0 @@", "-content", "@@ -0,0 +1 @@", "+run.sh", `\ No newline at end of file`}},
	}
	if diff := cmp.Diff(summarize(res.Files), want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if res.Scope != ScopeUncommitted || res.Root != dir || res.FromTree == "" || res.ToTree == "" || res.FilesOmitted != 0 {
		t.Errorf("result = scope %q root %q trees %q %q omitted %d", res.Scope, res.Root, res.FromTree, res.ToTree, res.FilesOmitted)
	}
	ids := map[string]bool{}
	for _, f := range res.Files {
		if len(f.ID) != 64 || ids[f.ID] {
			t.Errorf("%s: file id %q not a fresh sha256", f.Path, f.ID)
		}
		ids[f.ID] = true
		for _, h := range f.Hunks {
			if len(h.ID) != 64 || ids[h.ID] {
				t.Errorf("%s: hunk id %q not a fresh sha256", f.Path, h.ID)
			}
			ids[h.ID] = true
		}
	}
	// The same state read again gives the same ids.
	again := mustRead(t, d, dir, ReadOptions{})
	if diff := cmp.Diff(again, res); diff != "" {
		t.Errorf("second read differs (-got +want):\n%s", diff)
	}
}

func TestReadState(t *testing.T) {
	dir := gittest.InitCommit(t, "a.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "t", "text\n")
	gittest.Write(t, dir, "a.txt", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n")
	if err := os.Remove(filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "t")); err != nil {
		t.Fatal(err)
	}
	d := newDiffer(t)
	st, err := d.read(context.Background(), dir, ReadOptions{Budget: -1})
	if err != nil {
		t.Fatal(err)
	}
	if st.from != st.capture.HeadTree || st.to != st.capture.WorktreeTree || st.context != 3 || st.scope != ScopeUncommitted || st.repo.Root != dir {
		t.Errorf("state: from %s to %s context %d scope %s root %s", st.from, st.to, st.context, st.scope, st.repo.Root)
	}
	if len(st.files) != 2 {
		t.Fatalf("files = %d, want 2", len(st.files))
	}
	a := st.files[0]
	wantRaw := gittest.Git(t, dir, append(append([]string{"diff-tree", "-r", "-p"}, diffFlagsForTest()...), st.from, st.to, "--", "a.txt")...)
	if string(a.raw) != wantRaw {
		t.Errorf("raw of a.txt:\n%q\nwant git's bytes\n%q", a.raw, wantRaw)
	}
	if pa := parseRaw(t, a.raw); len(pa) != 1 || len(pa[0].TextFragments) != 2 || pa[0].NewName != "a.txt" {
		t.Errorf("raw of a.txt parses to %+v, want one file a.txt with 2 fragments", pa)
	}
	if a.oldOID != strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD:a.txt")) || a.newOID == "" {
		t.Errorf("oids = %q, %q", a.oldOID, a.newOID)
	}
	tc := st.files[1]
	if ptc := parseRaw(t, tc.raw); tc.wire.Status != "typeChanged" || len(ptc) != 2 || !ptc[0].IsDelete || !ptc[1].IsNew {
		t.Errorf("type change: status %s raw parses to %+v, want a deletion then a creation", tc.wire.Status, ptc)
	}
	if diff := cmp.Diff(st.result.Files, []File{a.wire, tc.wire}); diff != "" {
		t.Errorf("result files differ from state (-got +want):\n%s", diff)
	}
}

// parseRaw parses a file's raw bytes with go-gitdiff, checking that what a
// read keeps for actions is a well-formed patch.
func parseRaw(t *testing.T, raw []byte) []*gitdiff.File {
	t.Helper()
	files, _, err := gitdiff.Parse(bytes.NewReader(raw))
	if err != nil || len(files) == 0 {
		t.Fatalf("raw patch %q does not parse: %d files, %v", raw, len(files), err)
	}
	return files
}

// diffFlagsForTest are the flags a read diffs with, for comparing bytes
// with git run by the test.
func diffFlagsForTest() []string {
	return []string{"--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/",
		"--diff-algorithm=myers", "--indent-heuristic", "--inter-hunk-context=0", "--full-index", "-U3"}
}

func TestReadScopes(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Write(t, dir, "root.txt", "r\n")
	root := gittest.CommitAll(t, dir, "root")
	gittest.Write(t, dir, "second.txt", "s\n")
	second := gittest.CommitAll(t, dir, "second")
	gittest.Write(t, dir, "staged.txt", "s\n")
	gittest.Git(t, dir, "add", "staged.txt")
	gittest.Write(t, dir, "staged.txt", "s\nmore\n")
	gittest.Write(t, dir, "untracked.txt", "u\n")
	d := newDiffer(t)
	ctx := context.Background()
	c := mustCapture(t, d, dir)

	tests := []struct {
		name      string
		opts      ReadOptions
		want      []string
		from, to  string
		noTrees   bool
		untracked bool
	}{
		{name: "uncommitted is the default", opts: ReadOptions{}, want: []string{"staged.txt", "untracked.txt"}, from: c.HeadTree, to: c.WorktreeTree},
		{name: "unstaged", opts: ReadOptions{Scope: ScopeUnstaged}, want: []string{"staged.txt", "untracked.txt"}, from: c.IndexTree, to: c.WorktreeTree},
		{name: "staged", opts: ReadOptions{Scope: ScopeStaged}, want: []string{"staged.txt"}, from: c.HeadTree, to: c.IndexTree},
		{name: "committed", opts: ReadOptions{Scope: ScopeCommitted, Commit: second}, want: []string{"second.txt"}},
		{name: "committed by name", opts: ReadOptions{Scope: ScopeCommitted, Commit: "HEAD"}, want: []string{"second.txt"}},
		{name: "committed root commit", opts: ReadOptions{Scope: ScopeCommitted, Commit: root}, want: []string{"root.txt"}, from: gitcli.EmptyTreeSHA1},
		{name: "lastTurn", opts: ReadOptions{Scope: ScopeLastTurn, FromTree: c.HeadTree, ToTree: c.IndexTree}, want: []string{"staged.txt"}, from: c.HeadTree, to: c.IndexTree},
		{name: "ignoreWhitespace names no trees", opts: ReadOptions{IgnoreWhitespace: true}, want: []string{"staged.txt", "untracked.txt"}, noTrees: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRead(t, d, dir, tc.opts)
			if diff := cmp.Diff(paths(res), tc.want); diff != "" {
				t.Errorf("files (-got +want):\n%s", diff)
			}
			if tc.from != "" && res.FromTree != tc.from || tc.to != "" && res.ToTree != tc.to {
				t.Errorf("trees %s..%s, want %s..%s", res.FromTree, res.ToTree, tc.from, tc.to)
			}
			if tc.noTrees != (res.FromTree == "" && res.ToTree == "") {
				t.Errorf("trees %q %q, noTrees %v", res.FromTree, res.ToTree, tc.noTrees)
			}
		})
	}

	bad := []struct {
		name  string
		opts  ReadOptions
		field string
	}{
		{"committed without commit", ReadOptions{Scope: ScopeCommitted}, "commit"},
		{"committed with an unknown commit", ReadOptions{Scope: ScopeCommitted, Commit: "no-such-rev"}, "commit"},
		{"committed with an option-like commit", ReadOptions{Scope: ScopeCommitted, Commit: "--all"}, "commit"},
		{"lastTurn without trees", ReadOptions{Scope: ScopeLastTurn}, "fromTree"},
		{"lastTurn without toTree", ReadOptions{Scope: ScopeLastTurn, FromTree: c.HeadTree}, "toTree"},
		{"lastTurn with a commit as tree", ReadOptions{Scope: ScopeLastTurn, FromTree: second, ToTree: c.HeadTree}, "fromTree"},
		{"lastTurn with a short id", ReadOptions{Scope: ScopeLastTurn, FromTree: c.HeadTree, ToTree: c.IndexTree[:12]}, "toTree"},
		{"lastTurn with a missing tree", ReadOptions{Scope: ScopeLastTurn, FromTree: strings.Repeat("ab", 20), ToTree: c.IndexTree}, "fromTree"},
		{"unknown scope", ReadOptions{Scope: "everything"}, "scope"},
		{"negative context", ReadOptions{Context: intp(-1)}, "context"},
		{"branch against an unknown ref", ReadOptions{Scope: ScopeBranch, Against: "nope"}, "against"},
		{"branch with nothing to compare", ReadOptions{Scope: ScopeBranch}, "against"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			check := guard(t, dir)
			_, err := d.Read(ctx, dir, tc.opts)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != tc.field {
				t.Errorf("Read: %v, want a ParamError for %q", err, tc.field)
			}
			check()
		})
	}
}

func TestReadBranch(t *testing.T) {
	origin := gittest.Init(t)
	gittest.Write(t, origin, "base.txt", "base\n")
	gittest.CommitAll(t, origin, "base")
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, parent, "clone", "-q", origin, "clone")
	dir := filepath.Join(parent, "clone")
	gittest.Git(t, dir, "checkout", "-q", "-b", "feature")
	gittest.Write(t, dir, "feature.txt", "f\n")
	gittest.CommitAll(t, dir, "feature")
	gittest.Write(t, dir, "wip.txt", "w\n")
	// origin moves on: the branch diff is from the merge base, so this
	// file is not in it.
	gittest.Write(t, origin, "later.txt", "l\n")
	gittest.CommitAll(t, origin, "later")
	gittest.Git(t, dir, "fetch", "-q")
	d := newDiffer(t)

	want := []string{"feature.txt", "wip.txt"}
	check := func(t *testing.T, opts ReadOptions, against string) {
		t.Helper()
		res := mustRead(t, d, dir, opts)
		if diff := cmp.Diff(paths(res), want); diff != "" {
			t.Errorf("files (-got +want):\n%s", diff)
		}
		if res.Against != against {
			t.Errorf("against = %q, want %q", res.Against, against)
		}
		base := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "main^{tree}"))
		if res.FromTree != base {
			t.Errorf("fromTree = %s, want the merge base's tree %s", res.FromTree, base)
		}
	}
	t.Run("against", func(t *testing.T) { check(t, ReadOptions{Scope: ScopeBranch, Against: "main"}, "main") })
	t.Run("base ref", func(t *testing.T) { check(t, ReadOptions{Scope: ScopeBranch, BaseRef: "main"}, "main") })
	t.Run("default branch from origin/HEAD", func(t *testing.T) { check(t, ReadOptions{Scope: ScopeBranch}, "origin/main") })
	t.Run("upstream", func(t *testing.T) {
		gittest.Git(t, dir, "branch", "-q", "--set-upstream-to=origin/main")
		defer gittest.Git(t, dir, "branch", "-q", "--unset-upstream")
		gittest.Git(t, dir, "remote", "set-head", "origin", "-d")
		defer gittest.Git(t, dir, "remote", "set-head", "origin", "main")
		check(t, ReadOptions{Scope: ScopeBranch}, "origin/main")
	})
	t.Run("local main when there is no remote default", func(t *testing.T) {
		gittest.Git(t, dir, "remote", "set-head", "origin", "-d")
		defer gittest.Git(t, dir, "remote", "set-head", "origin", "main")
		check(t, ReadOptions{Scope: ScopeBranch}, "main")
	})
	t.Run("nothing when on main without remote default", func(t *testing.T) {
		solo := gittest.Init(t)
		gittest.Write(t, solo, "a", "a\n")
		gittest.CommitAll(t, solo, "a")
		_, err := d.Read(context.Background(), solo, ReadOptions{Scope: ScopeBranch})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Field != "against" {
			t.Errorf("Read: %v, want a ParamError for against", err)
		}
	})
	t.Run("no common ancestor", func(t *testing.T) {
		gittest.Git(t, dir, "checkout", "-q", "--orphan", "island")
		gittest.CommitAll(t, dir, "island")
		defer gittest.Git(t, dir, "checkout", "-q", "-f", "feature")
		_, err := d.Read(context.Background(), dir, ReadOptions{Scope: ScopeBranch, Against: "main"})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Field != "against" {
			t.Errorf("Read: %v, want a ParamError for against", err)
		}
	})
}

func TestReadBudget(t *testing.T) {
	dir := gittest.InitCommit(t, "small.txt", "s\n", "medium.txt", "m\n", "large.txt", "l\n")
	gittest.Write(t, dir, "small.txt", "s\nadded\n")
	gittest.Write(t, dir, "medium.txt", "m\n"+strings.Repeat("medium line\n", 100))
	gittest.Write(t, dir, "large.txt", "l\n"+strings.Repeat("large line\n", 1000))
	d := newDiffer(t)
	full := mustRead(t, d, dir, ReadOptions{})
	size := map[string]int{}
	for _, f := range full.Files {
		size[f.Path] = hunkBytes(&f)
		if f.TooLarge {
			t.Errorf("%s tooLarge under the default budget", f.Path)
		}
	}
	type got struct {
		TooLarge []string
		Hunks    []string
		Omitted  int
		Counts   map[string]int
	}
	summary := func(res *Result) got {
		g := got{Omitted: res.FilesOmitted, Counts: map[string]int{}}
		for _, f := range res.Files {
			if f.TooLarge {
				g.TooLarge = append(g.TooLarge, f.Path)
				if len(f.Hunks) != 0 {
					t.Errorf("%s: tooLarge with %d hunks", f.Path, len(f.Hunks))
				}
			} else if len(f.Hunks) > 0 {
				g.Hunks = append(g.Hunks, f.Path)
			}
			g.Counts[f.Path] = f.Additions
		}
		return g
	}
	over := 3*fileOverhead + len("small.txtmedium.txtlarge.txt")
	tests := []struct {
		name   string
		budget int
		want   got
	}{
		{"everything fits", over + size["small.txt"] + size["medium.txt"] + size["large.txt"],
			got{Hunks: []string{"large.txt", "medium.txt", "small.txt"}, Counts: map[string]int{"large.txt": 1000, "medium.txt": 100, "small.txt": 1}}},
		{"largest loses its hunks", over + size["small.txt"] + size["medium.txt"],
			got{TooLarge: []string{"large.txt"}, Hunks: []string{"medium.txt", "small.txt"}, Counts: map[string]int{"large.txt": 1000, "medium.txt": 100, "small.txt": 1}}},
		{"two largest lose their hunks", over + size["small.txt"],
			got{TooLarge: []string{"large.txt", "medium.txt"}, Hunks: []string{"small.txt"}, Counts: map[string]int{"large.txt": 1000, "medium.txt": 100, "small.txt": 1}}},
		{"files past the budget are counted", 2*fileOverhead + len("large.txtmedium.txt"),
			got{TooLarge: []string{"large.txt", "medium.txt"}, Omitted: 1, Counts: map[string]int{"large.txt": 1000, "medium.txt": 100}}},
		{"no budget", -1,
			got{Hunks: []string{"large.txt", "medium.txt", "small.txt"}, Counts: map[string]int{"large.txt": 1000, "medium.txt": 100, "small.txt": 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRead(t, d, dir, ReadOptions{Budget: tc.budget})
			if diff := cmp.Diff(summary(res), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestReadIgnoreWhitespace(t *testing.T) {
	dir := gittest.InitCommit(t, "ws.txt", "a b\nc\n", "real.txt", "x\n")
	gittest.Write(t, dir, "ws.txt", "a   b\nc\n")
	gittest.Write(t, dir, "real.txt", "y\n")
	d := newDiffer(t)
	plain := mustRead(t, d, dir, ReadOptions{})
	ws := mustRead(t, d, dir, ReadOptions{IgnoreWhitespace: true})
	if diff := cmp.Diff(paths(ws), []string{"real.txt"}); diff != "" {
		t.Errorf("ignoreWhitespace files (-got +want):\n%s", diff)
	}
	if ws.FromTree != "" || ws.ToTree != "" {
		t.Errorf("ignoreWhitespace read names trees %q %q", ws.FromTree, ws.ToTree)
	}
	p, w := fileByPath(t, plain, "real.txt"), fileByPath(t, ws, "real.txt")
	if cmp.Equal(p.Hunks[0].Lines, w.Hunks[0].Lines) && (p.Hunks[0].ID == w.Hunks[0].ID || p.ID == w.ID) {
		t.Errorf("ignoreWhitespace ids equal the plain read's: %s %s", p.Hunks[0].ID, p.ID)
	}
}

func TestCaseC04_TrailingEmptyLineDeletion(t *testing.T) {
	dir := gittest.InitCommit(t, "values.yaml", "nodeSelector: {}\naffinity: {}\n\n")
	gittest.Write(t, dir, "values.yaml", "nodeSelector: {}\naffinity: {}\n")
	d := newDiffer(t)
	st, err := d.read(context.Background(), dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := st.files[0]
	if diff := cmp.Diff(f.wire.Hunks[0].Lines, []string{" nodeSelector: {}", " affinity: {}", "-"}); diff != "" {
		t.Errorf("lines (-got +want):\n%s", diff)
	}
	if pf := parseRaw(t, f.raw); len(pf) != 1 || len(pf[0].TextFragments) != 1 || pf[0].TextFragments[0].LinesDeleted != 1 {
		t.Errorf("raw parses to %+v, want one fragment deleting one line", pf)
	}
}

func TestCaseC10_CRLFLinesKeepTheirCR(t *testing.T) {
	dir := gittest.Init(t)
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("l" + strconv.Itoa(i) + "\r\n")
	}
	gittest.Write(t, dir, "w.txt", b.String())
	gittest.CommitAll(t, dir, "init")
	edited := strings.Replace(strings.Replace(b.String(), "l2\r\n", "L2\r\n", 1), "l18\r\n", "L18\r\n", 1)
	gittest.Write(t, dir, "w.txt", edited)
	d := newDiffer(t)
	f := fileByPath(t, mustRead(t, d, dir, ReadOptions{}), "w.txt")
	if len(f.Hunks) != 2 || f.Additions != 2 || f.Deletions != 2 {
		t.Fatalf("hunks %d, +%d -%d; want 2 hunks, +2 -2", len(f.Hunks), f.Additions, f.Deletions)
	}
	if diff := cmp.Diff(f.Hunks[0].Lines, []string{" l1\r", "-l2\r", "+L2\r", " l3\r", " l4\r", " l5\r"}); diff != "" {
		t.Errorf("hunk 1 lines (-got +want):\n%s", diff)
	}
}

func TestCaseC12_AutoCRLFHasNoFalsePositives(t *testing.T) {
	dir := gittest.Init(t)
	gittest.Git(t, dir, "config", "core.autocrlf", "true")
	gittest.Write(t, dir, "f.txt", "hello\nworld\n")
	gittest.CommitAll(t, dir, "init")
	if err := os.Remove(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "checkout", "--", "f.txt")
	if got := gittest.Read(t, dir, "f.txt"); got != "hello\r\nworld\r\n" {
		t.Fatalf("checkout wrote %q, want CRLF", got)
	}
	ageIndex(t, dir)
	d := newDiffer(t)
	for _, scope := range []Scope{ScopeUncommitted, ScopeUnstaged, ScopeStaged} {
		if res := mustRead(t, d, dir, ReadOptions{Scope: scope}); len(res.Files) != 0 {
			t.Errorf("%s: files %v, want none", scope, paths(res))
		}
	}
	before := mustCapture(t, d, dir)
	after := mustCapture(t, d, dir)
	totals, err := d.TurnFiles(context.Background(), dir, before, after)
	if err != nil || len(totals) != 0 {
		t.Errorf("TurnFiles = %v, %v; want none", totals, err)
	}
}

func TestCaseC16_ModeChangeBesideHunks(t *testing.T) {
	dir := gittest.Init(t)
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	gittest.WriteMode(t, dir, "f.txt", b.String(), 0o644)
	gittest.CommitAll(t, dir, "init")
	edited := strings.Replace(strings.Replace(b.String(), "\n2\n", "\nCHANGED2\n", 1), "\n28\n", "\nCHANGED28\n", 1)
	gittest.WriteMode(t, dir, "f.txt", edited, 0o755)
	d := newDiffer(t)
	f := fileByPath(t, mustRead(t, d, dir, ReadOptions{}), "f.txt")
	if f.OldMode != "100644" || f.NewMode != "100755" || len(f.Hunks) != 2 || f.Status != "modified" {
		t.Errorf("f.txt: modes %s -> %s, %d hunks, %s; want 100644 -> 100755, 2 hunks, modified", f.OldMode, f.NewMode, len(f.Hunks), f.Status)
	}
	if f.ID == f.Hunks[0].ID || f.ID == f.Hunks[1].ID || f.Hunks[0].ID == f.Hunks[1].ID {
		t.Errorf("the mode change's file id must differ from the hunk ids")
	}
}

func TestCaseC17_BinaryBesideText(t *testing.T) {
	dir := gittest.InitCommit(t, "notes.txt", "a\nb\n", "en.spl", "SPL\x00\x01v1")
	gittest.Write(t, dir, "notes.txt", "a\nB\n")
	gittest.Write(t, dir, "en.spl", "SPL\x00\x01v2")
	d := newDiffer(t)
	st, err := d.read(context.Background(), dir, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bin, txt := st.files[0], st.files[1]
	if !bin.wire.Binary || len(bin.wire.Hunks) != 0 || bin.wire.Additions != 0 || bin.wire.Deletions != 0 || !parseRaw(t, bin.raw)[0].IsBinary {
		t.Errorf("en.spl = %+v, want binary without hunks or counts", bin.wire)
	}
	if bin.oldOID == "" || bin.newOID == "" || bin.oldOID == bin.newOID {
		t.Errorf("en.spl blob ids %q %q", bin.oldOID, bin.newOID)
	}
	if txt.wire.Binary || len(txt.wire.Hunks) != 1 || strings.Contains(string(txt.raw), "Binary") {
		t.Errorf("notes.txt = %+v raw %q", txt.wire, txt.raw)
	}
}

func TestCaseC19_UnusualPaths(t *testing.T) {
	dir := gittest.Init(t)
	names := []string{"configurações.txt", "-dash.txt", `quo"te.txt`, "with space.txt", "glob[*?].txt",
		`back\slash.txt`, "tab\there.txt", "new\nline.txt", "dir with space/inner -x.txt"}
	for _, n := range names {
		gittest.Write(t, dir, n, n+" v1\n"+strings.Repeat("same\n", 10))
	}
	gittest.CommitAll(t, dir, "init")
	for _, n := range names {
		gittest.Write(t, dir, n, n+" v2\n"+strings.Repeat("same\n", 10))
	}
	gittest.Write(t, dir, "ünïcode new.txt", "new\n")
	gittest.Write(t, dir, "*", "star\n")
	gittest.Write(t, dir, `renamed "q".txt`, `quo"te.txt v2`+"\n"+strings.Repeat("same\n", 10))
	if err := os.Remove(filepath.Join(dir, `quo"te.txt`)); err != nil {
		t.Fatal(err)
	}
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Status+" "+f.OldPath+">"+f.Path)
		if f.Additions != 1 || f.Deletions != map[bool]int{true: 0, false: 1}[f.Status == "added"] {
			t.Errorf("%q: +%d -%d", f.Path, f.Additions, f.Deletions)
		}
	}
	want := []string{"added >*", "modified >-dash.txt", `modified >back\slash.txt`, "modified >configurações.txt",
		"modified >dir with space/inner -x.txt", "modified >glob[*?].txt", "modified >new\nline.txt",
		`renamed quo"te.txt>renamed "q".txt`, "modified >tab\there.txt", "modified >with space.txt", "added >ünïcode new.txt"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
}

func TestCaseC20_SubmoduleIsOneGitlinkItem(t *testing.T) {
	dir := gittest.Init(t)
	src := gittest.Init(t)
	gittest.Write(t, src, "s.txt", "s1\n")
	gittest.CommitAll(t, src, "s1")
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, "sub")
	gittest.CommitAll(t, dir, "add sub")
	sub := filepath.Join(dir, "sub")
	gittest.Write(t, sub, "s.txt", "s2\n")
	gittest.CommitAll(t, sub, "s2")
	gittest.Write(t, sub, "s.txt", "wip\n")
	gittest.Write(t, sub, "untracked.txt", "new\n")
	d := newDiffer(t)
	before := mustCapture(t, d, dir)
	res := mustRead(t, d, dir, ReadOptions{})
	want := []fileSummary{{Path: "sub", Status: "modified", Submodule: true, OldMode: "160000", NewMode: "160000"}}
	if diff := cmp.Diff(summarize(res.Files), want); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if gittest.Read(t, sub, "s.txt") != "wip\n" || gittest.Read(t, sub, "untracked.txt") != "new\n" {
		t.Errorf("the read changed the submodule's files")
	}
	base := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD^{tree}"))
	totals, err := d.TurnFiles(context.Background(), dir, &Capture{WorktreeTree: base}, before)
	if err != nil {
		var ge *gitcli.Error
		errors.As(err, &ge)
		t.Fatalf("%v: %v", err, ge.Err)
	}
	if diff := cmp.Diff(totals, []FileTotal{{Path: "sub"}}); diff != "" {
		t.Errorf("totals (-got +want):\n%s", diff)
	}
}

func TestCaseC40_HugeOneLineFile(t *testing.T) {
	dir := gittest.InitCommit(t, "dump.json", "{}\n", "small.txt", "a\n")
	line := strings.Repeat(`"k":1,`, 29<<20/6) // one 29 MiB line without a final newline
	gittest.Write(t, dir, "dump.json", line)
	gittest.Write(t, dir, "untracked.json", line)
	gittest.Write(t, dir, "small.txt", "b\n")
	d := newDiffer(t)
	res := mustRead(t, d, dir, ReadOptions{})
	big := fileByPath(t, res, "dump.json")
	if !big.TooLarge || len(big.Hunks) != 0 || big.Additions != 1 || big.Deletions != 1 {
		t.Errorf("dump.json: tooLarge %v, %d hunks, +%d -%d; want tooLarge, no hunks, +1 -1", big.TooLarge, len(big.Hunks), big.Additions, big.Deletions)
	}
	if small := fileByPath(t, res, "small.txt"); small.TooLarge || len(small.Hunks) != 1 {
		t.Errorf("small.txt: %+v", small)
	}
	if res.UntrackedSkipped != 1 || len(res.Files) != 2 {
		t.Errorf("untrackedSkipped %d, files %v; want the 29 MiB untracked file left out", res.UntrackedSkipped, paths(res))
	}
	// Without a budget the whole line is kept intact.
	all := mustRead(t, d, dir, ReadOptions{Budget: -1})
	if f := fileByPath(t, all, "dump.json"); f.TooLarge || len(f.Hunks) != 1 || f.Hunks[0].Lines[1] != "+"+line {
		t.Errorf("dump.json without a budget: tooLarge %v, %d hunks", f.TooLarge, len(f.Hunks))
	}
}
