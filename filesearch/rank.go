package filesearch

import (
	"cmp"
	"container/heap"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"
)

// ranked is one candidate while ranking.
type ranked struct {
	idx     int
	base    bool // the query matched within the file name
	score   int
	indices []int // byte offsets in the path
}

// rank scores l's paths against query and returns the best limit: paths
// whose file name matches the query first (indices within the file name),
// then paths that match only across folders; within each, by the
// matcher's score, then shorter paths, then by path. Scores are made
// monotonic with that order: file-name matches are lifted above every
// path-only match of the same answer.
//
// The matcher (sahilm/fuzzy) accepts a string exactly when the query is a
// case-folded subsequence of it, so a byte-level subsequence test first
// sorts each ASCII path into file-name candidates, path-only candidates
// and non-matches, and the matcher scores each candidate once, on the
// cores available; only the best limit are sorted.
func rank(l *listing, query string, limit int) []Match {
	bases, offs := l.basenames()
	var baseCand, pathCand []int
	asciiQuery := isASCII(query)
	for i, p := range l.paths {
		if asciiQuery && isASCII(p) {
			switch {
			case subsequenceFold(query, bases[i]):
				baseCand = append(baseCand, i)
			case subsequenceFold(query, p):
				pathCand = append(pathCand, i)
			}
			continue
		}
		// Unicode case folding (K and the Kelvin sign): ask the matcher.
		baseCand = append(baseCand, i)
		pathCand = append(pathCand, i)
	}
	all := make([]*ranked, 0, len(baseCand)+len(pathCand))
	inBase := map[int]bool{}
	for _, m := range findAll(query, bases, baseCand) {
		idx := make([]int, len(m.MatchedIndexes))
		for i, b := range m.MatchedIndexes {
			idx[i] = b + offs[m.Index]
		}
		inBase[m.Index] = true
		all = append(all, &ranked{idx: m.Index, base: true, score: m.Score, indices: idx})
	}
	for _, m := range findAll(query, l.paths, pathCand) {
		if inBase[m.Index] {
			continue
		}
		all = append(all, &ranked{idx: m.Index, score: m.Score, indices: m.MatchedIndexes})
	}
	better := func(a, b *ranked) int {
		if a.base != b.base {
			if a.base {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		pa, pb := l.paths[a.idx], l.paths[b.idx]
		if c := cmp.Compare(len(pa), len(pb)); c != 0 {
			return c
		}
		return cmp.Compare(pa, pb)
	}
	all = best(all, limit, better)
	// Lift file-name scores above the path-only ones.
	lift := 0
	minBase, maxPath, haveBase, havePath := 0, 0, false, false
	for _, r := range all {
		if r.base && (!haveBase || r.score < minBase) {
			minBase, haveBase = r.score, true
		}
		if !r.base && (!havePath || r.score > maxPath) {
			maxPath, havePath = r.score, true
		}
	}
	if haveBase && havePath && minBase <= maxPath {
		lift = maxPath - minBase + 1
	}
	out := make([]Match, len(all))
	for i, r := range all {
		p := l.paths[r.idx]
		score := r.score
		if r.base {
			score += lift
		}
		out[i] = Match{Path: p, Score: score, Indices: runeIndices(p, r.indices)}
	}
	return out
}

// runeIndices converts ascending byte offsets in s to code point indices.
func runeIndices(s string, byteIdx []int) []int {
	out := make([]int, 0, len(byteIdx))
	n, pos := 0, 0
	for _, b := range byteIdx {
		for pos < b && pos < len(s) {
			_, size := utf8.DecodeRuneInString(s[pos:])
			pos += size
			n++
		}
		out = append(out, n)
	}
	return out
}

// best returns the limit best of all in order (cmp < 0: a is better),
// selecting them with a bounded heap before sorting so that a query
// matching most of a large listing costs O(n log limit).
func best(all []*ranked, limit int, cmp func(a, b *ranked) int) []*ranked {
	if len(all) > 4*limit {
		h := &worstFirst{cmp: cmp}
		for _, r := range all {
			switch {
			case len(h.items) < limit:
				heap.Push(h, r)
			case cmp(r, h.items[0]) < 0:
				h.items[0] = r
				heap.Fix(h, 0)
			}
		}
		all = h.items
	}
	slices.SortFunc(all, cmp)
	if len(all) > limit {
		all = all[:limit]
	}
	return all
}

// worstFirst is a heap whose top is the worst of its items.
type worstFirst struct {
	items []*ranked
	cmp   func(a, b *ranked) int
}

func (h *worstFirst) Len() int           { return len(h.items) }
func (h *worstFirst) Less(i, j int) bool { return h.cmp(h.items[i], h.items[j]) > 0 }
func (h *worstFirst) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *worstFirst) Push(x any)         { h.items = append(h.items, x.(*ranked)) }
func (h *worstFirst) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// parallelMin is the number of candidates below which findAll runs on
// one goroutine.
const parallelMin = 8192

// findAll runs the matcher over strs[i] for each i of cand, split over
// GOMAXPROCS goroutines when there are many, and returns the matches with
// Index the index into strs, in cand's order.
func findAll(query string, strs []string, cand []int) []fuzzy.Match {
	workers := min(runtime.GOMAXPROCS(0), len(cand)/parallelMin)
	if workers <= 1 {
		return find(query, strs, cand)
	}
	parts := make([][]fuzzy.Match, workers)
	var wg sync.WaitGroup
	chunk := (len(cand) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(cand))
		wg.Go(func() { parts[w] = find(query, strs, cand[lo:hi]) })
	}
	wg.Wait()
	return slices.Concat(parts...)
}

// find is findAll on one goroutine.
func find(query string, strs []string, cand []int) []fuzzy.Match {
	ms := fuzzy.FindFromNoSort(query, subset{strs, cand})
	for i := range ms {
		ms[i].Index = cand[ms[i].Index]
	}
	return ms
}

// subset is the fuzzy.Source of strs[i] for each i of idx.
type subset struct {
	strs []string
	idx  []int
}

func (s subset) String(i int) string { return s.strs[s.idx[i]] }
func (s subset) Len() int            { return len(s.idx) }

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// subsequenceFold reports whether the ASCII query is a subsequence of the
// ASCII s, ignoring case: for ASCII strings, exactly when sahilm/fuzzy
// finds a match.
func subsequenceFold(query, s string) bool {
	q := 0
	for i := 0; i < len(s) && q < len(query); i++ {
		if lower(s[i]) == lower(query[q]) {
			q++
		}
	}
	return q == len(query)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
