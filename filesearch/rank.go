package filesearch

import (
	"cmp"
	"slices"
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
func rank(l *listing, query string, limit int) []Match {
	bases, offs := l.basenames()
	byIdx := map[int]*ranked{}
	var all []*ranked
	for _, m := range fuzzy.FindNoSort(query, bases) {
		idx := make([]int, len(m.MatchedIndexes))
		for i, b := range m.MatchedIndexes {
			idx[i] = b + offs[m.Index]
		}
		r := &ranked{idx: m.Index, base: true, score: m.Score, indices: idx}
		byIdx[m.Index] = r
		all = append(all, r)
	}
	for _, m := range fuzzy.FindNoSort(query, l.paths) {
		if _, ok := byIdx[m.Index]; ok {
			continue
		}
		all = append(all, &ranked{idx: m.Index, score: m.Score, indices: slices.Clone(m.MatchedIndexes)})
	}
	slices.SortFunc(all, func(a, b *ranked) int {
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
	})
	if len(all) > limit {
		all = all[:limit]
	}
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
