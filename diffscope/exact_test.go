package diffscope

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// longRun enlarges the property tests: the -long flag (crash_test.go).
var longRun = long

// Property test of single-hunk actions over files made of repeated blocks
// (issue 15, "Wrong results found on real repositories' history"): where
// the same lines occur many times in a file, a hunk applied anywhere but at
// its own lines still finds matching context. Every action runs alone on a
// fresh state, and its result is compared with the hunk applied to the
// file's lines by its own numbers (exactOracle, which shares no code with
// the actions).

// exactBlocks are the blocks files are made of: near-identical, so a hunk's
// context and changed lines occur in many places.
var exactBlocks = []string{
	"if err != nil {\n\treturn err\n}\n\n",
	"if err != nil {\n\treturn nil\n}\n\n",
	"x++\n\n",
	"}\n",
}

func exactRandBlocks(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = exactBlocks[rng.Intn(len(exactBlocks))]
	}
	return out
}

// exactRandEdit replaces, inserts and deletes blocks at 1..6 random places.
func exactRandEdit(rng *rand.Rand, blocks []string) []string {
	bs := append([]string(nil), blocks...)
	for n := 1 + rng.Intn(6); n > 0; n-- {
		pos := rng.Intn(len(bs) + 1)
		switch rng.Intn(3) {
		case 0:
			bs = append(bs[:pos], append(exactRandBlocks(rng, 1+rng.Intn(3)), bs[pos:]...)...)
		case 1:
			if pos < len(bs) && len(bs) > 1 {
				bs = append(bs[:pos], bs[pos+1:]...)
			}
		default:
			if pos < len(bs) {
				bs[pos] = exactBlocks[rng.Intn(len(exactBlocks))]
			}
		}
	}
	return bs
}

// exactOracle applies h to content by its own numbers: forward replaces its
// old lines, which start at OldStart (after line OldStart when OldLines is
// 0), by its new lines; reverse replaces its new lines, at NewStart, by its
// old lines. It fails the test when the lines there are not the hunk's.
func exactOracle(t testing.TB, content string, h Hunk, reverse bool) string {
	t.Helper()
	var oldSide, newSide []string
	for i, l := range h.Lines {
		if strings.HasPrefix(l, `\`) {
			continue
		}
		text := l[1:] + "\n"
		if i+1 < len(h.Lines) && strings.HasPrefix(h.Lines[i+1], `\`) {
			text = l[1:]
		}
		switch l[0] {
		case ' ':
			oldSide = append(oldSide, text)
			newSide = append(newSide, text)
		case '-':
			oldSide = append(oldSide, text)
		case '+':
			newSide = append(newSide, text)
		}
	}
	start, count, from, to := h.OldStart, h.OldLines, oldSide, newSide
	if reverse {
		start, count, from, to = h.NewStart, h.NewLines, newSide, oldSide
	}
	if count > 0 {
		start-- // 0-based index of its first line
	}
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if start+count > len(lines) || strings.Join(lines[start:start+count], "") != strings.Join(from, "") {
		t.Fatalf("oracle: hunk %q does not match its own lines", h.Header)
	}
	out := append(append(append([]string(nil), lines[:start]...), to...), lines[start+count:]...)
	return strings.Join(out, "")
}

// exactKinds are the single-hunk actions the property test drives, each
// with the state it starts from.
var exactKinds = []struct {
	name   string
	scope  Scope
	staged bool // the edit is staged (else only in the working tree)
}{
	{"revert unstaged", ScopeUnstaged, false},
	{"revert uncommitted staged", ScopeUncommitted, true},
	{"revert uncommitted", ScopeUncommitted, false},
	{"stage", ScopeUnstaged, false},
	{"unstage", ScopeStaged, true},
}

func TestPropertyHunkActionsExactOnRepeatedBlocks(t *testing.T) {
	t.Parallel()
	const seed = 20261201
	rng := rand.New(rand.NewSource(seed))
	d := newDiffer(t)
	ctx := context.Background()
	cases, perKind := 14, 4 // about 280 actions
	if *longRun {
		cases, perKind = 120, 8
	}
	actions := 0
	for c := 0; c < cases; c++ {
		base := strings.Join(exactRandBlocks(rng, 20+rng.Intn(30)), "")
		edited := base
		for edited == base {
			edited = strings.Join(exactRandEdit(rng, strings.SplitAfter(base, "\n\n")), "")
		}
		nctx := 1 + c%5
		dir := actRepo(t, map[string]string{"f.go": base})
		for _, k := range exactKinds {
			reset := func() {
				t.Helper()
				gittest.Write(t, dir, "f.go", edited)
				if k.staged {
					gittest.Git(t, dir, "add", "f.go")
				} else {
					gittest.Git(t, dir, "reset", "-q")
				}
			}
			reset()
			f, _ := actHunk(t, d, dir, ReadOptions{Scope: k.scope, Context: intp(nctx)}, "f.go", -1)
			picks := rng.Perm(len(f.Hunks))
			if len(picks) > perKind {
				picks = picks[:perKind]
			}
			for _, i := range picks {
				h := f.Hunks[i]
				where := fmt.Sprintf("seed %d case %d context %d %s hunk %d/%d %q", seed, c, nctx, k.name, i, len(f.Hunks), h.Header)
				reset()
				indexBefore := actShow(t, dir, ":f.go")
				var err error
				switch k.name {
				case "stage":
					_, err = d.Stage(ctx, dir, StageOptions{Path: "f.go", HunkID: h.ID, Context: intp(nctx)})
				case "unstage":
					_, err = d.Unstage(ctx, dir, StageOptions{Path: "f.go", HunkID: h.ID, Context: intp(nctx)})
				default:
					_, err = d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: k.scope, Context: intp(nctx)}, Path: "f.go", HunkID: h.ID})
				}
				actions++
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				wantWork, wantIndex := edited, indexBefore
				switch k.name {
				case "stage":
					wantIndex = exactOracle(t, base, h, false)
				case "unstage":
					wantIndex = exactOracle(t, edited, h, true)
				case "revert uncommitted staged":
					wantWork = exactOracle(t, edited, h, true)
					wantIndex = wantWork // the staged hunks are the same hunks
				case "revert uncommitted":
					wantWork = exactOracle(t, edited, h, true)
				default:
					wantWork = exactOracle(t, edited, h, true)
				}
				if got := gittest.Read(t, dir, "f.go"); got != wantWork {
					t.Errorf("%s: working file changed other lines:\n%s", where, lineDiff(wantWork, got))
				}
				if got := actShow(t, dir, ":f.go"); got != wantIndex {
					t.Errorf("%s: index changed other lines:\n%s", where, lineDiff(wantIndex, got))
				}
			}
		}
	}
	t.Logf("%d actions", actions)
}

// lineDiff names the first line where got differs from want.
func lineDiff(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: want %q, got %q (want %d lines, got %d)", i+1, wl, gl, len(w), len(g))
		}
	}
	return "same"
}
