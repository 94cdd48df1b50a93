package diffscope

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// Property tests of the actions over random multi-hunk edits: insertions,
// deletions and replacements anywhere (first and last lines included),
// repeated lines (ambiguous alignments), CRLF lines, and files gaining or
// losing their final newline. Seeded: a failure prints its seed and
// iteration and reproduces.

const actPropIterations = 30

// actPropFiles are the files an iteration edits; names need no quoting
// except the one with a space.
var actPropFiles = []string{"a.txt", "dir/b.txt", "c d.txt"}

// actRandLines returns n random lines: short repeated words (so the diff has
// ambiguous alignments), numbered lines, empty lines, some CRLF.
func actRandLines(rng *rand.Rand, n int) []string {
	words := []string{"a", "b", "{", "}", "", "x y", "return nil"}
	out := make([]string, n)
	for i := range out {
		var l string
		if rng.Intn(3) == 0 {
			l = words[rng.Intn(len(words))]
		} else {
			l = fmt.Sprintf("line %d", rng.Intn(1000))
		}
		if rng.Intn(6) == 0 {
			l += "\r"
		}
		out[i] = l + "\n"
	}
	return out
}

// actRandFile is a random file of 1..40 lines, without a final newline
// one time in five.
func actRandFile(rng *rand.Rand) string {
	s := strings.Join(actRandLines(rng, 1+rng.Intn(40)), "")
	if rng.Intn(5) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// actRandEdit edits content with 1..6 random operations and, one time in
// five, adds or removes the final newline. It never returns content
// unchanged.
func actRandEdit(rng *rand.Rand, content string) string {
	noEOL := !strings.HasSuffix(content, "\n")
	ls := strings.SplitAfter(content, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	if noEOL && len(ls) > 0 {
		ls[len(ls)-1] += "\n"
	}
	for n := 1 + rng.Intn(6); n > 0; n-- {
		pos := rng.Intn(len(ls) + 1)
		switch {
		case rng.Intn(5) == 0: // at the start or the end
			if rng.Intn(2) == 0 {
				pos = 0
			} else {
				pos = len(ls)
			}
		}
		count := 1 + rng.Intn(3)
		end := min(pos+count, len(ls))
		switch rng.Intn(3) {
		case 0: // insert
			ls = append(ls[:pos], append(actRandLines(rng, count), ls[pos:]...)...)
		case 1: // delete (keep at least one line)
			if end-pos < len(ls) {
				ls = append(ls[:pos], ls[end:]...)
			}
		default: // replace
			ls = append(ls[:pos], append(actRandLines(rng, count), ls[end:]...)...)
		}
	}
	out := strings.Join(ls, "")
	if noEOL != (rng.Intn(5) == 0) {
		out = strings.TrimSuffix(out, "\n")
	}
	if out == content {
		return content + "extra\n"
	}
	return out
}

// actHunks lists (path, hunk id) of every hunk of a scope.
func actHunks(t testing.TB, d *Differ, dir string, scope Scope) [][2]string {
	t.Helper()
	var out [][2]string
	for _, f := range mustRead(t, d, dir, ReadOptions{Scope: scope, Budget: -1}).Files {
		if len(f.Hunks) == 0 {
			t.Fatalf("%s changed with no hunks (%s, binary %v)", f.Path, f.Status, f.Binary)
		}
		for _, h := range f.Hunks {
			out = append(out, [2]string{f.Path, h.ID})
		}
	}
	return out
}

// actEditedRepo makes a repository of actPropFiles with random contents
// committed and random edits of them in the working tree; it returns the
// repository and HEAD's contents.
func actEditedRepo(t testing.TB, rng *rand.Rand) (dir string, base map[string]string) {
	t.Helper()
	base = map[string]string{}
	for _, p := range actPropFiles {
		base[p] = actRandFile(rng)
	}
	dir = actRepo(t, base)
	for _, p := range actPropFiles {
		gittest.Write(t, dir, p, actRandEdit(rng, base[p]))
	}
	return dir, base
}

// actEveryHunk applies act (verb names it) to a random hunk of scope,
// re-reading the ids after each, until the scope has none; more than 200
// steps, or an error, fails the test (what names the run).
func actEveryHunk(t testing.TB, d *Differ, dir string, scope Scope, rng *rand.Rand, what, verb string, act func(path, id string) error) {
	t.Helper()
	for step := 0; ; step++ {
		hunks := actHunks(t, d, dir, scope)
		if len(hunks) == 0 {
			return
		}
		if step > 200 {
			t.Fatalf("%s: still %d hunks after 200 %ss", what, len(hunks), verb)
		}
		h := hunks[rng.Intn(len(hunks))]
		if err := act(h[0], h[1]); err != nil {
			t.Fatalf("%s step %d: %s %s: %v", what, step, verb, h[0], err)
		}
	}
}

// TestPropertyRevertEveryHunkRestoresHEAD reverts the hunks of the
// uncommitted scope one at a time, in random order and re-reading the ids
// after each, from a state where random hunks were staged first (so the
// index step runs too). At the end the working files are HEAD's bytes and
// nothing is staged.
func TestPropertyRevertEveryHunkRestoresHEAD(t *testing.T) {
	t.Parallel()
	const seed = 20240601
	rng := rand.New(rand.NewSource(seed))
	d := newDiffer(t)
	ctx := context.Background()
	for it := 0; it < actPropIterations; it++ {
		dir, base := actEditedRepo(t, rng)
		// Stage up to three random hunks, re-reading after each (the
		// file's other ids change).
		for k := 0; k < 3 && rng.Intn(4) != 0; k++ {
			hunks := actHunks(t, d, dir, ScopeUnstaged)
			if len(hunks) == 0 {
				break
			}
			h := hunks[rng.Intn(len(hunks))]
			if _, err := d.Stage(ctx, dir, StageOptions{Path: h[0], HunkID: h[1]}); err != nil {
				t.Fatalf("seed %d iteration %d: stage %s: %v", seed, it, h[0], err)
			}
		}
		actEveryHunk(t, d, dir, ScopeUncommitted, rng, fmt.Sprintf("seed %d iteration %d", seed, it), "revert", func(path, id string) error {
			_, err := d.Revert(ctx, dir, RevertOptions{Path: path, HunkID: id})
			return err
		})
		for _, p := range actPropFiles {
			if got := gittest.Read(t, dir, p); got != base[p] {
				t.Errorf("seed %d iteration %d: %s = %q, want HEAD's %q", seed, it, p, got, base[p])
			}
		}
		if got := actStatus(t, dir); got != "" {
			t.Errorf("seed %d iteration %d: status %q after reverting every hunk, want clean", seed, it, got)
		}
	}
}

// TestPropertyStageEveryHunkMatchesWorktree stages the hunks of the
// unstaged scope one at a time, in random order and re-reading the ids
// after each; at the end the index holds exactly the working files' blobs.
func TestPropertyStageEveryHunkMatchesWorktree(t *testing.T) {
	t.Parallel()
	const seed = 20240602
	rng := rand.New(rand.NewSource(seed))
	d := newDiffer(t)
	ctx := context.Background()
	for it := 0; it < actPropIterations; it++ {
		dir, _ := actEditedRepo(t, rng)
		actEveryHunk(t, d, dir, ScopeUnstaged, rng, fmt.Sprintf("seed %d iteration %d", seed, it), "stage", func(path, id string) error {
			_, err := d.Stage(ctx, dir, StageOptions{Path: path, HunkID: id})
			return err
		})
		for _, p := range actPropFiles {
			index := strings.Fields(gittest.Git(t, dir, "ls-files", "-s", "--", p))
			work := strings.TrimSpace(gittest.Git(t, dir, "hash-object", "--", p))
			if len(index) < 2 || index[1] != work {
				t.Errorf("seed %d iteration %d: %s index entry %v, working file %s", seed, it, p, index, work)
			}
		}
		if got := gittest.Git(t, dir, "diff", "--name-only"); got != "" {
			t.Errorf("seed %d iteration %d: unstaged diff left: %q", seed, it, got)
		}
	}
}
