package diffscope

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// twoHunks is git's patch for a file with a mode change, a CRLF hunk and an
// end-of-file hunk without a final newline.
const twoHunks = "diff --git a/f.txt b/f.txt\n" +
	"old mode 100644\n" +
	"new mode 100755\n" +
	"index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222\n" +
	"--- a/f.txt\n" +
	"+++ b/f.txt\n" +
	"@@ -1,2 +1,2 @@\n" +
	"-a\r\n" +
	"+A\r\n" +
	" b\r\n" +
	"@@ -9,2 +9,3 @@ section\n" +
	" i\n" +
	"-last\n" +
	"\\ No newline at end of file\n" +
	"+last\n" +
	"+added\n" +
	"\\ No newline at end of file\n"

func TestSplitRaw(t *testing.T) {
	p, err := splitRaw([]byte(twoHunks))
	if err != nil {
		t.Fatal(err)
	}
	gotHeader := ""
	for _, l := range p.header {
		gotHeader += string(l)
	}
	if want := twoHunks[:strings.Index(twoHunks, "@@")]; gotHeader != want {
		t.Errorf("header:\n%q\nwant\n%q", gotHeader, want)
	}
	type frag struct {
		OldStart, OldLines, NewStart, NewLines int
		Body                                   string
	}
	var got []frag
	for _, f := range p.frags {
		got = append(got, frag{f.oldStart, f.oldLines, f.newStart, f.newLines, string(f.body)})
	}
	want := []frag{
		{1, 2, 1, 2, "@@ -1,2 +1,2 @@\n-a\r\n+A\r\n b\r\n"},
		{9, 2, 9, 3, "@@ -9,2 +9,3 @@ section\n i\n-last\n\\ No newline at end of file\n+last\n+added\n\\ No newline at end of file\n"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("fragments (-got +want):\n%s", diff)
	}
}

func TestSplitRawStrayBlankLineAtEnd(t *testing.T) {
	// shared/cases C04: stored patch text may end with an empty line,
	// which git apply tolerates.
	raw := "diff --git a/v b/v\n--- a/v\n+++ b/v\n@@ -1,3 +1,2 @@\n a\n b\n-\n"
	for _, in := range []string{raw, raw + "\n", raw + "\n\n"} {
		p, err := splitRaw([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got, want := string(p.frags[0].body), "@@ -1,3 +1,2 @@\n a\n b\n-\n"; got != want {
			t.Errorf("%q: fragment %q, want %q", in, got, want)
		}
	}
}

func TestSplitRawRejects(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"miscount", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n"},
		{"blank inside", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n\n+b\n c\n"},
		{"bad op", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n*a\n"},
		{"bad header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -x +1 @@\n-a\n+b\n"},
	}
	for _, tt := range tests {
		if _, err := splitRaw([]byte(tt.raw)); err == nil {
			t.Errorf("%s: splitRaw accepted %q", tt.name, tt.raw)
		}
	}
}

func TestTextPatchOneHunkDropsModeAndIndexLines(t *testing.T) {
	p, err := splitRaw([]byte(twoHunks))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sel  []int
		want string
	}{
		{[]int{0}, "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\r\n+A\r\n b\r\n"},
		{[]int{1}, "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n" + twoHunks[strings.Index(twoHunks, "@@ -9"):]},
		{[]int{1, 0}, "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n" + twoHunks[strings.Index(twoHunks, "@@ -1"):]},
	}
	for _, tt := range tests {
		got, err := p.textPatch(tt.sel...)
		if err != nil {
			t.Fatalf("textPatch(%v): %v", tt.sel, err)
		}
		if diff := cmp.Diff(string(got), tt.want); diff != "" {
			t.Errorf("textPatch(%v) (-got +want):\n%s", tt.sel, diff)
		}
	}
	for _, bad := range [][]int{nil, {2}, {-1}, {0, 0}} {
		if _, err := p.textPatch(bad...); err == nil {
			t.Errorf("textPatch(%v) accepted", bad)
		}
	}
}

func TestTextPatchNeedsFileLines(t *testing.T) {
	p, err := splitRaw([]byte("diff --git a/x b/x\nindex 1..2 100644\n@@ -1 +1 @@\n-a\n+b\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.textPatch(0); err == nil {
		t.Error("textPatch without ---/+++ lines accepted")
	}
}

func TestTouches(t *testing.T) {
	frag := func(h string, lines ...string) rawFrag {
		f, err := parseFragHeader([]byte(h + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		f.body = []byte(h + "\n" + strings.Join(lines, "\n") + "\n")
		return f
	}
	// The hunk being reverted: old lines 10..16, line 13 replaced.
	h := frag("@@ -10,7 +10,7 @@", " j", " k", " l", "-m", "+M", " n", " o", " p")
	tests := []struct {
		name   string
		staged rawFrag
		want   bool
	}{
		{"same change", frag("@@ -10,7 +10,7 @@", " j", " k", " l", "-m", "+M", " n", " o", " p"), true},
		{"part of it, aligned elsewhere", frag("@@ -8,3 +8,4 @@", " h", " i", "+x", " j"), true},
		{"insertion after its last line", frag("@@ -14,3 +14,4 @@", " n", " o", " p", "+x"), true},
		{"insertion before its first line", frag("@@ -7,3 +7,4 @@", " g", " h", " i", "+x", " j"), true},
		{"deletion just past it", frag("@@ -14,4 +14,3 @@", " n", " o", " p", "-q"), false},
		{"deletion just before it", frag("@@ -6,4 +6,3 @@", "-f", " g", " h", " i"), false},
		{"far away", frag("@@ -30,3 +30,3 @@", " a", "-b", "+B", " c"), false},
	}
	for _, tt := range tests {
		if got := touches(tt.staged, h); got != tt.want {
			t.Errorf("%s: touches = %v, want %v", tt.name, got, tt.want)
		}
	}
	if lo, hi := frag("@@ -3,2 +3,3 @@", " c", "+x", " d").changeSpan(); lo != 7 || hi != 7 {
		t.Errorf("insert before old line 4: span %d..%d, want 7..7", lo, hi)
	}
	if lo, hi := frag("@@ -0,0 +1,2 @@", "+a", "+b").changeSpan(); lo != 1 || hi != 1 {
		t.Errorf("insert into an empty file: span %d..%d, want 1..1", lo, hi)
	}
}

func TestSplitFiles(t *testing.T) {
	out := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-diff --git a/y b/y\n+z\ndiff --git a/y b/y\nBinary files a/y and b/y differ\n"
	got := splitFiles([]byte(out))
	want := []string{
		"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-diff --git a/y b/y\n+z\n",
		"diff --git a/y b/y\nBinary files a/y and b/y differ\n",
	}
	var gotS []string
	for _, f := range got {
		gotS = append(gotS, string(f))
	}
	if diff := cmp.Diff(gotS, want); diff != "" {
		t.Errorf("splitFiles (-got +want):\n%s", diff)
	}
}

func TestParseRawDiff(t *testing.T) {
	out := ":100644 100755 " + strings.Repeat("1", 40) + " " + strings.Repeat("2", 40) + " M\x00a b\x00" +
		":000000 120000 " + nullOID + " " + strings.Repeat("3", 40) + " A\x00-dash\x00"
	got, err := parseRawDiff([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []change{
		{path: "a b", old: entry{"100644", strings.Repeat("1", 40)}, new: entry{"100755", strings.Repeat("2", 40)}},
		{path: "-dash", old: entry{modeAbsent, nullOID}, new: entry{modeSymlink, strings.Repeat("3", 40)}},
	}
	if diff := cmp.Diff(got, want, cmp.AllowUnexported(change{}, entry{})); diff != "" {
		t.Errorf("parseRawDiff (-got +want):\n%s", diff)
	}
	if _, err := parseRawDiff([]byte(":100644 M\x00x\x00")); err == nil {
		t.Error("parseRawDiff accepted a short record")
	}
}

func TestApplyExactIsStrict(t *testing.T) {
	const src = "a\nb\nc\nb\nc\n"
	head := "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n"
	tests := []struct {
		name, frag string
		reverse    bool
		src, want  string // want "" means refused
	}{
		{"at its own lines", "@@ -4,2 +4,2 @@\n-b\n+B\n c\n", false, src, "a\nb\nc\nB\nc\n"},
		{"the same lines elsewhere do not count", "@@ -3,2 +3,2 @@\n-b\n+B\n c\n", false, src, ""},
		{"reverse at its new lines", "@@ -1,2 +1,2 @@\n a\n-x\n+b\n", true, src, "a\nx\nc\nb\nc\n"},
		{"-2,0 inserts after line 2", "@@ -2,0 +3 @@\n+X\n", false, src, "a\nb\nX\nc\nb\nc\n"},
		{"-0,0 inserts before line 1", "@@ -0,0 +1 @@\n+X\n", false, src, "X\n" + src},
		{"reverse of an insertion removes it", "@@ -2,0 +3 @@\n+X\n", true, "a\nb\nX\nc\n", "a\nb\nc\n"},
		{"+1,0 deletes the first line", "@@ -1 +0,0 @@\n-a\n", false, src, "b\nc\nb\nc\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := splitRaw([]byte(head + tc.frag))
			if err != nil {
				t.Fatal(err)
			}
			frags, err := rp.textFragments(0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := applyExact("f.txt", []byte(tc.src), frags, tc.reverse)
			if tc.want == "" {
				var ce *ConflictError
				if !errors.As(err, &ce) || ce.Reason != ReasonPatchFailed || !cmp.Equal(ce.Paths, []string{"f.txt"}) {
					t.Fatalf("applyExact = %q, %v; want a patchFailed conflict on f.txt", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("applyExact = %q, want %q", got, tc.want)
			}
		})
	}
}
