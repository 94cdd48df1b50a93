package tools

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// applyDiff applies a unifiedDiff result to old with go-gitdiff's strict
// applier, as git apply would.
func applyDiff(t *testing.T, diff, old string) string {
	t.Helper()
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		t.Fatalf("parse %q: %v", diff, err)
	}
	if len(files) != 1 {
		t.Fatalf("diff %q has %d files", diff, len(files))
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, strings.NewReader(old), files[0]); err != nil {
		t.Fatalf("apply %q to %q: %v", diff, old, err)
	}
	return out.String()
}

func TestUnifiedDiffHunks(t *testing.T) {
	t.Parallel()
	old := numbered(30)
	tests := []struct {
		name  string
		new   string
		hunks []string
	}{
		{"farApartTwoHunks", strings.Replace(strings.Replace(old, "line 5\n", "five\n", 1), "line 25\n", "twenty-five\n", 1),
			[]string{"@@ -2,7 +2,7 @@", "@@ -22,7 +22,7 @@"}},
		{"sixApartOneHunk", strings.Replace(strings.Replace(old, "line 5\n", "five\n", 1), "line 12\n", "twelve\n", 1),
			[]string{"@@ -2,14 +2,14 @@"}},
		{"sevenApartTwoHunks", strings.Replace(strings.Replace(old, "line 5\n", "five\n", 1), "line 13\n", "thirteen\n", 1),
			[]string{"@@ -2,7 +2,7 @@", "@@ -10,7 +10,7 @@"}},
		{"insertAtTop", "new\n" + old, []string{"@@ -1,3 +1,4 @@"}},
		{"appendAtEnd", old + "new\n", []string{"@@ -28,3 +28,4 @@"}},
		{"deleteAll", "", []string{"@@ -1,30 +0,0 @@"}},
	}
	for _, tc := range tests {
		d := unifiedDiff("f", old, tc.new, false)
		var got []string
		for _, l := range strings.Split(d, "\n") {
			if strings.HasPrefix(l, "@@ ") {
				got = append(got, l)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.hunks, "|") {
			t.Errorf("%s: hunks %q, want %q\n%s", tc.name, got, tc.hunks, d)
		}
		if applied := applyDiff(t, d, old); applied != tc.new {
			t.Errorf("%s: applying the diff gives %q", tc.name, applied)
		}
	}
	if d := unifiedDiff("f", old, old, false); d != "" {
		t.Errorf("diff of equal texts = %q, want empty", d)
	}
}

// TestUnifiedDiffApplies checks on random texts (short lines from a small
// alphabet so lines repeat, CRLF and missing final newlines included) that
// every diff parses and applies back to the new text.
func TestUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var sb strings.Builder
		n := rng.IntN(25)
		for range n {
			sb.WriteString([]string{"a", "b", "c", "", "dd", "é"}[rng.IntN(6)])
			sb.WriteString([]string{"\n", "\n", "\n", "\r\n"}[rng.IntN(4)])
		}
		s := sb.String()
		if s != "" && rng.IntN(3) == 0 {
			s = strings.TrimRight(s, "\r\n") + "tail"
		}
		return s
	}
	for i := range 2000 {
		old, new := text(), text()
		if old == "" && new == "" {
			continue
		}
		d := unifiedDiff("f.txt", old, new, old == "")
		if old == new {
			if d != "" {
				t.Fatalf("case %d: equal texts gave a diff", i)
			}
			continue
		}
		if got := applyDiff(t, d, old); got != new {
			t.Fatalf("case %d: old %q new %q: diff\n%s\napplies to %q", i, old, new, d, got)
		}
	}
}
