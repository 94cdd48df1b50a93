package diffscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file builds the patches and index updates that revert, stage and
// unstage apply. Every patch is cut from the bytes git printed (a file's
// header lines plus whole fragments, "\ No newline at end of file" markers
// and CR bytes included: shared/cases C02, C04, C10) and never rebuilt from
// parsed lines. Mode lines are left out of hunk patches, so a hunk never
// carries a file's mode change with it (C16), and binary sections never
// travel with a text hunk (C17).

// rawPatch is one file's patch as git printed it: header lines (each ending
// in "\n") and its fragments.
type rawPatch struct {
	header [][]byte
	frags  []rawFrag
}

// rawFrag is one fragment: its "@@" line's numbers and every byte of it
// from the "@@" line through its last line (marker lines included).
type rawFrag struct {
	oldStart, oldLines int
	newStart, newLines int
	body               []byte
}

// splitRaw splits the patch git printed for one file into its header lines
// and fragments. Empty lines after the last fragment (patch text stored with
// a stray blank line, which git apply tolerates: C04) are dropped; any other
// line that is not part of a fragment, or a fragment whose line counts do
// not match its "@@" line, is an error.
func splitRaw(raw []byte) (*rawPatch, error) {
	p := &rawPatch{}
	var cur *rawFrag
	var oldLeft, newLeft int
	rest := raw
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			line, rest = append(rest[:len(rest):len(rest)], '\n'), nil
		}
		if bytes.HasPrefix(line, []byte("@@ -")) {
			if cur != nil && (oldLeft != 0 || newLeft != 0) {
				return nil, fmt.Errorf("diffscope: fragment %q miscounts lines", firstLine(cur.body))
			}
			f, err := parseFragHeader(line)
			if err != nil {
				return nil, err
			}
			p.frags = append(p.frags, f)
			cur = &p.frags[len(p.frags)-1]
			cur.body = append([]byte(nil), line...)
			oldLeft, newLeft = f.oldLines, f.newLines
			continue
		}
		if cur == nil {
			p.header = append(p.header, line)
			continue
		}
		switch line[0] {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		case '\\':
		case '\n':
			if len(bytes.Trim(rest, "\n")) == 0 {
				rest = nil
				continue
			}
			return nil, fmt.Errorf("diffscope: empty line inside fragment %q", firstLine(cur.body))
		default:
			return nil, fmt.Errorf("diffscope: unexpected line %q in fragment %q", firstLine(line), firstLine(cur.body))
		}
		cur.body = append(cur.body, line...)
	}
	if cur != nil && (oldLeft != 0 || newLeft != 0) {
		return nil, fmt.Errorf("diffscope: fragment %q miscounts lines", firstLine(cur.body))
	}
	return p, nil
}

// parseFragHeader reads a fragment's "@@ -a[,b] +c[,d] @@[ section]" line
// (its line ending included) with hunkHeader.
func parseFragHeader(line []byte) (rawFrag, error) {
	var f rawFrag
	var err error
	f.oldStart, f.oldLines, f.newStart, f.newLines, err = hunkHeader(strings.TrimRight(string(line), "\r\n"))
	if err != nil {
		return rawFrag{}, err
	}
	return f, nil
}

func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 80 {
		b = b[:80]
	}
	return string(b)
}

// textPatch returns a patch of the selected fragments (indexes into
// p.frags, in any order) under a header of only the "diff --git", "---" and
// "+++" lines, exactly as git printed them. Without mode and index lines git
// apply keeps the mode the target already has (C16). The result is parsed
// back with go-gitdiff as a self-check: one text file, the selected
// fragments, each self-consistent.
func (p *rawPatch) textPatch(sel ...int) ([]byte, error) {
	if len(sel) == 0 {
		return nil, errors.New("diffscope: no fragment selected")
	}
	sel = append([]int(nil), sel...)
	sort.Ints(sel)
	var b bytes.Buffer
	var haveDiff, haveOld, haveNew bool
	for _, l := range p.header {
		switch {
		case bytes.HasPrefix(l, []byte("diff --git ")):
			haveDiff = true
		case bytes.HasPrefix(l, []byte("--- ")):
			haveOld = true
		case bytes.HasPrefix(l, []byte("+++ ")):
			haveNew = true
		default:
			continue
		}
		b.Write(l)
	}
	if !haveDiff || !haveOld || !haveNew {
		return nil, errors.New("diffscope: patch header lacks diff --git, --- or +++ lines")
	}
	for i, idx := range sel {
		if idx < 0 || idx >= len(p.frags) || (i > 0 && sel[i-1] == idx) {
			return nil, fmt.Errorf("diffscope: bad fragment index %d of %d", idx, len(p.frags))
		}
		b.Write(p.frags[idx].body)
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("diffscope: built patch does not parse: %w", err)
	}
	if len(files) != 1 || files[0].IsBinary || len(files[0].TextFragments) != len(sel) {
		return nil, errors.New("diffscope: built patch is not the selected fragments of one text file")
	}
	for _, f := range files[0].TextFragments {
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("diffscope: built patch: %w", err)
		}
	}
	return b.Bytes(), nil
}

// changeSpan is where a fragment changes its old side, in half-line units:
// deleting old line k is 2k, inserting before old line k is 2k-1. It is
// (-1, -1) for a fragment without changes.
func (f rawFrag) changeSpan() (lo, hi int) {
	cur := f.oldStart
	if f.oldLines == 0 {
		cur++ // "-5,0" inserts after line 5
	}
	lo, hi = -1, -1
	mark := func(x int) {
		if lo < 0 || x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	body := f.body[bytes.IndexByte(f.body, '\n')+1:]
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		line := body[:i+1]
		body = body[i+1:]
		switch line[0] {
		case ' ':
			cur++
		case '-':
			mark(2 * cur)
			cur++
		case '+':
			mark(2*cur - 1)
		}
	}
	return lo, hi
}

// oldRange is the whole old-side range of a fragment, context included, in
// the half-line units of changeSpan: from an insertion before its first
// line to an insertion after its last.
func (f rawFrag) oldRange() (lo, hi int) {
	first := f.oldStart
	if f.oldLines == 0 {
		first++
	}
	return 2*first - 1, 2*(first+f.oldLines) - 1
}

// touches reports whether fragment a (of a diff from the same old side as
// h) changes anything inside h's old range. Staged fragments that touch a
// hunk being reverted are reverted in the index with it: hunks of one diff
// are separated by more unchanged lines than their context, so a staged
// change within a hunk's range (its changes and their context) belongs to
// that hunk even where the two diffs aligned an ambiguous insertion
// differently.
func touches(a, h rawFrag) bool {
	alo, ahi := a.changeSpan()
	hlo, hhi := h.oldRange()
	return alo >= 0 && alo <= hhi && hlo <= ahi
}

// splitFiles splits a multi-file patch as git printed it at each
// "diff --git" line.
func splitFiles(out []byte) [][]byte {
	var files [][]byte
	start := -1
	for off := 0; off < len(out); {
		end := bytes.IndexByte(out[off:], '\n')
		next := len(out)
		if end >= 0 {
			next = off + end + 1
		}
		if bytes.HasPrefix(out[off:], []byte("diff --git ")) {
			if start >= 0 {
				files = append(files, out[start:off])
			}
			start = off
		}
		off = next
	}
	if start >= 0 {
		files = append(files, out[start:])
	}
	return files
}

// Tree entries.

// nullOID is the all-zero object id git uses for "no object".
const nullOID = "0000000000000000000000000000000000000000"

const (
	modeAbsent  = "000000"
	modeGitlink = "160000"
	modeSymlink = "120000"
)

// entry is a path's tree or index entry: its octal mode and object id.
// Mode modeAbsent means the path is not there.
type entry struct {
	mode, oid string
}

func (e entry) absent() bool { return e.mode == modeAbsent || e.mode == "" || e.mode == "0" }

// change is one path changed between two trees (no rename detection: a
// rename is a deletion and an addition).
type change struct {
	path     string
	old, new entry
}

// treeChanges lists the paths that differ between trees from and to, with
// both entries, limited to paths when paths is not empty (literal
// pathspecs): [gitcli.Repo.DiffTreeRaw].
func (d *Differ) treeChanges(ctx context.Context, repo *gitcli.Repo, from, to string, paths []string) ([]change, error) {
	out, err := repo.DiffTreeRaw(ctx, from, to, paths)
	if err != nil {
		return nil, err
	}
	return parseRawDiff(out)
}

// parseRawDiff parses `git diff-tree -r -z` raw output
// ([gitcli.ParseRawDiff]).
func parseRawDiff(out []byte) ([]change, error) {
	raw, err := gitcli.ParseRawDiff(out)
	if err != nil {
		return nil, err
	}
	changes := make([]change, 0, len(raw))
	for _, c := range raw {
		changes = append(changes, change{path: c.Path,
			old: entry{mode: c.OldMode, oid: c.OldOID}, new: entry{mode: c.NewMode, oid: c.NewOID}})
	}
	return changes, nil
}

// indexInfo writes entries into the index of repo (a [gitcli.Repo.WithIndex]
// view for a temporary one) in one `git update-index --index-info` call,
// which either applies every line or none: a present entry replaces the
// path's entry (stage 0, so a conflict is resolved, as git add does), an
// absent one removes the path.
func (d *Differ) indexInfo(ctx context.Context, repo *gitcli.Repo, entries map[string]entry) error {
	info := make([]gitcli.IndexInfo, 0, len(entries))
	for _, p := range sortedKeys(entries) {
		e := entries[p]
		if e.absent() {
			info = append(info, gitcli.IndexInfo{Mode: "0", OID: repo.ZeroID(), Path: p})
		} else {
			info = append(info, gitcli.IndexInfo{Mode: e.mode, OID: e.oid, Path: p})
		}
	}
	return repo.UpdateIndexInfo(ctx, info)
}

// refreshIndex refreshes the stat data of paths in the checkout's index
// (`git add --refresh`), so entries written from trees or by `git apply
// --cached` do not look modified to the next status or capture. It is an
// optimisation: its failure changes no content and is ignored.
func (d *Differ) refreshIndex(ctx context.Context, repo *gitcli.Repo, paths []string) {
	if len(paths) == 0 {
		return
	}
	_ = repo.AddRefresh(ctx, paths)
}

// indexEntries returns the stage-0 entries of paths in the checkout's
// index, including intent-to-add entries (which write-tree leaves out of
// the index tree), from the Runner's index cache (gitcli.Repo.IndexList:
// `ls-files -s -z` only when the index file changed since it was listed).
// Paths are looked up exactly (a folder's entries are not listed).
func (d *Differ) indexEntries(ctx context.Context, repo *gitcli.Repo, paths []string) (map[string]entry, error) {
	ix, err := gitstate.IndexEntries(ctx, repo, paths)
	if err != nil {
		return nil, err
	}
	m := make(map[string]entry, len(ix))
	for p, e := range ix {
		m[p] = entry{mode: e.Mode, oid: e.OID}
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isRegularMode(m string) bool { return m == "100644" || m == "100755" }
