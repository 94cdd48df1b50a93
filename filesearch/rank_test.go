package filesearch

import (
	"math/rand"
	"testing"

	"github.com/sahilm/fuzzy"
)

// TestSubsequenceFoldAgreesWithMatcher checks the prefilter rank relies
// on: for ASCII strings, subsequenceFold is true exactly when
// sahilm/fuzzy finds a match, on random paths and queries over a small
// alphabet (so that near misses are common).
func TestSubsequenceFoldAgreesWithMatcher(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	const alphabet = "abAB/_.-cC xy"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		s, q := word(rng.Intn(12)), word(1+rng.Intn(4))
		got := subsequenceFold(q, s)
		want := len(fuzzy.FindNoSort(q, []string{s})) == 1
		if got != want {
			t.Fatalf("subsequenceFold(%q, %q) = %v, the matcher says %v", q, s, got, want)
		}
	}
}

// TestRankBestLimit checks that a query matching more paths than four
// times the limit (the bounded-heap path) returns the same answer as
// sorting them all.
func TestRankBestLimit(t *testing.T) {
	t.Parallel()
	l := &listing{}
	for i := range 500 {
		l.paths = append(l.paths, "dir"+string(rune('a'+i%26))+"/file"+string(rune('a'+i%7))+".go")
	}
	full := rank(l, "fg", len(l.paths))
	top := rank(l, "fg", 10)
	if len(full) < 50 || len(top) != 10 {
		t.Fatalf("%d matches, top %d", len(full), len(top))
	}
	for i := range top {
		if top[i].Path != full[i].Path || top[i].Score != full[i].Score {
			t.Errorf("top[%d] = %+v, the full ranking has %+v", i, top[i], full[i])
		}
	}
}
