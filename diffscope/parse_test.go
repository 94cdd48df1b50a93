package diffscope

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHunkHeader(t *testing.T) {
	tests := []struct {
		line string
		want [4]int
		ok   bool
	}{
		{"@@ -1,3 +1,4 @@", [4]int{1, 3, 1, 4}, true},
		{"@@ -1 +1 @@", [4]int{1, 1, 1, 1}, true},
		{"@@ -0,0 +1 @@", [4]int{0, 0, 1, 1}, true},
		{"@@ -7,4 +7,6 @@ func f() {", [4]int{7, 4, 7, 6}, true},
		{"@@ -1,2 +1,2 @@ @@ inside", [4]int{1, 2, 1, 2}, true},
		{"@@ -x +1 @@", [4]int{}, false},
		{"@@@ -1 -1 +1 @@@", [4]int{}, false},
		{"@@ -1", [4]int{}, false},
		{"@@ -1 +-1 @@", [4]int{}, false},
		{"@@ -1,-2 +1 @@", [4]int{}, false},
	}
	for _, tc := range tests {
		a, b, c, d, err := hunkHeader(tc.line)
		if (err == nil) != tc.ok || [4]int{a, b, c, d} != tc.want {
			t.Errorf("hunkHeader(%q) = %v, %v; want %v, ok %v", tc.line, [4]int{a, b, c, d}, err, tc.want, tc.ok)
		}
	}
}

func TestAppendQuoted(t *testing.T) {
	// Expected forms are git's (quote_c_style with core.quotePath=false).
	tests := map[string]string{
		"a/plain.txt":   "a/plain.txt",
		"a/with space":  "a/with space",
		"a/ünï":         "a/ünï",
		`a/q"t`:         `"a/q\"t"`,
		`a/b\s`:         `"a/b\\s"`,
		"a/t\tb":        `"a/t\tb"`,
		"a/n\nl":        `"a/n\nl"`,
		"a/bell\a\x01":  `"a/bell\a\001"`,
		"a/del\x7f":     `"a/del\177"`,
		"a/cr\r\v\f\b.": `"a/cr\r\v\f\b."`,
	}
	for in, want := range tests {
		if got := string(appendQuoted(nil, in)); got != want {
			t.Errorf("appendQuoted(%q) = %s, want %s", in, got, want)
		}
	}
}

const rawM = ":100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 M\x00f.txt\x00"

func TestParseTreeDiffLimit(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	patch := "diff --git a/f.txt b/f.txt\nindex 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644\n--- a/f.txt\n+++ b/f.txt\n" +
		"@@ -1 +1,2 @@\n-old\n+" + long + "\n+two\n"
	stream := rawM + "\x00" + patch
	type got struct {
		Hunks      int
		Dropped    bool
		Adds, Dels int
		HunkBytes  int
		Header     string
	}
	sum := func(es []*parsedEntry) got {
		s := es[0].parts[0]
		return got{len(s.hunks), s.dropped, s.adds, s.dels, s.hunkBytes, string(s.header)}
	}
	hunkLen := len("@@ -1 +1,2 @@\n-old\n+") + len(long) + len("\n+two\n")
	header := patch[:strings.Index(patch, "@@")]
	for _, tc := range []struct {
		name  string
		limit int
		want  got
	}{
		{"no limit keeps the long line", 0, got{1, false, 2, 1, hunkLen, header}},
		{"limit above the hunk", hunkLen, got{1, false, 2, 1, hunkLen, header}},
		{"limit below the hunk drops it but counts", hunkLen - 1, got{0, true, 2, 1, hunkLen, header}},
		{"tiny limit", 1, got{0, true, 2, 1, hunkLen, header}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := parseAll(stream, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sum(es), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
			if !tc.want.Dropped && string(es[0].parts[0].hunks[0]) != patch[len(header):] {
				t.Errorf("hunk bytes differ from the input")
			}
		})
	}
}

func TestParseTreeDiffMalformed(t *testing.T) {
	for name, stream := range map[string]string{
		"section matching no record": rawM + "\x00diff --git a/other b/other\n",
		"text before any section":    rawM + "\x00garbage\n",
		"truncated raw record":       ":100644 100644 11 22 M\x00f.t",
		"short raw record":           ":100644 M\x00f\x00",
	} {
		if _, err := parseAll(stream, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	es, err := parseAll("", 0)
	if err != nil || len(es) != 0 {
		t.Errorf("empty diff: %v, %v", es, err)
	}
}

// parseAll collects what parseTreeDiff hands over.
func parseAll(stream string, limit int) ([]*parsedEntry, error) {
	var es []*parsedEntry
	err := parseTreeDiff(strings.NewReader(stream), limit, func(e *parsedEntry) error {
		es = append(es, e)
		return nil
	})
	return es, err
}

func TestParseTreeDiffTypeChangeAndSkips(t *testing.T) {
	stream := ":100644 100644 1111111111111111111111111111111111111111 2222222222222222222222222222222222222222 M\x00ws.txt\x00" +
		":100644 120000 3333333333333333333333333333333333333333 4444444444444444444444444444444444444444 T\x00t\x00" +
		":000000 100644 0000000000000000000000000000000000000000 5555555555555555555555555555555555555555 A\x00z\x00\x00" +
		"diff --git a/t b/t\ndeleted file mode 100644\n@@ -1 +0,0 @@\n-x\n" +
		"diff --git a/t b/t\nnew file mode 120000\n@@ -0,0 +1 @@\n+y\n\\ No newline at end of file\n" +
		"diff --git a/z b/z\nnew file mode 100644\n"
	es, err := parseAll(stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%s %c %d", e.newPath, e.status, len(e.parts)))
	}
	if diff := cmp.Diff(got, []string{"t T 2", "z A 1"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
