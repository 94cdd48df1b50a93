package diffscope

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FileTotal is one file a turn changed with its net line totals, shaped as
// an entry of Turn.files (spec, "Threads and turns": files: [{path,
// additions, deletions}]). Path is repository-relative (the new path of a
// rename). A binary file has 0/0 and Binary set: it has no line count
// (shared/cases C21); a gitlink (submodule) has 0/0.
type FileTotal struct {
	Path      string `json:"path"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Binary    bool   `json:"binary,omitempty"`
}

// TurnFiles returns the files changed between two captures of checkout
// taken before and after a turn, in git's path order: `git diff-tree -r
// --raw --numstat -z -M` between before.WorktreeTree and after.WorktreeTree
// (ARCHITECTURE.md, "Turns use the same capture"). Names come from the -z
// records, never from numstat's "old => new" text (shared/cases C21).
// Untracked files count like any other (a final line without a newline is
// a line), within the capture limits; but when either capture dropped its
// untracked files (UntrackedDropped: more than 500), every path untracked in
// either capture is left out, so the totals count tracked files only rather
// than report files that merely went in or out of the capture.
//
// A submodule is one path with no line totals (0/0; shared/cases C20): it
// is listed when its gitlink changed (a new commit checked out in it) and
// also when only its content did (files edited inside it without a
// commit), which the gitlink cannot show: when its token in
// before.Submodules and after.Submodules differs (one side without a token
// counts as different when the other has one), at its place in path order.
//
// Errors: [*ParamError] ("before"/"after") for a nil capture or one without
// a worktree tree; an error matching [gitcli.ErrNotRepo] when checkout is
// not in a work tree; *gitcli.Error when git fails (a tree of another
// repository, for instance).
func (d *Differ) TurnFiles(ctx context.Context, checkout string, before, after *Capture) ([]FileTotal, error) {
	if before == nil || before.WorktreeTree == "" {
		return nil, paramErr("before", "needs a capture with a worktree tree")
	}
	if after == nil || after.WorktreeTree == "" {
		return nil, paramErr("after", "needs a capture with a worktree tree")
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	var leaveOut map[string]bool
	if before.UntrackedDropped || after.UntrackedDropped {
		leaveOut = map[string]bool{}
		for _, p := range before.Untracked {
			leaveOut[p] = true
		}
		for _, p := range after.Untracked {
			leaveOut[p] = true
		}
	}
	var totals []FileTotal
	err = ri.DiffTreeNumstat(ctx, before.WorktreeTree, after.WorktreeTree, func(r io.Reader) error {
		var err error
		totals, err = parseNumstat(bufio.NewReaderSize(r, 64<<10), leaveOut)
		return err
	})
	if err != nil {
		return nil, err
	}
	totals = addSubmodules(totals, before.Submodules, after.Submodules)
	if totals == nil {
		totals = []FileTotal{}
	}
	return totals, nil
}

// addSubmodules adds to totals, 0/0 at their place in path order, the
// submodules whose token differs between before and after and that totals
// does not list yet.
func addSubmodules(totals []FileTotal, before, after map[string]string) []FileTotal {
	listed := map[string]bool{}
	for _, t := range totals {
		listed[t.Path] = true
	}
	changed := map[string]bool{}
	for p, tok := range before {
		if after[p] != tok {
			changed[p] = true
		}
	}
	for p, tok := range after {
		if before[p] != tok {
			changed[p] = true
		}
	}
	for _, p := range sortedKeys(changed) {
		if listed[p] {
			continue
		}
		i := sort.Search(len(totals), func(i int) bool { return totals[i].Path > p })
		totals = slices.Insert(totals, i, FileTotal{Path: p})
	}
	return totals
}

// parseNumstat reads -z raw records (to know gitlinks) followed by -z
// numstat records ("<adds>\t<dels>\t<path>\0", or "<adds>\t<dels>\t\0<old>\0<new>\0"
// for a rename; "-" counts for binary files), in the same order.
func parseNumstat(br *bufio.Reader, leaveOut map[string]bool) ([]FileTotal, error) {
	token := func() (string, error) {
		s, err := br.ReadString(0)
		if err != nil {
			if err == io.EOF && s != "" {
				return "", fmt.Errorf("diffscope: truncated numstat record %q", s)
			}
			return "", err
		}
		return s[:len(s)-1], nil
	}
	var gitlink []bool
	var totals []FileTotal
	i := 0
	for {
		tok, err := token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(tok, ":") {
			f := strings.Fields(tok[1:])
			if len(f) != 5 {
				return nil, fmt.Errorf("diffscope: unexpected raw record %q", tok)
			}
			gitlink = append(gitlink, f[0] == "160000" || f[1] == "160000")
			if _, err := token(); err != nil {
				return nil, err
			}
			if f[4][0] == 'R' || f[4][0] == 'C' {
				if _, err := token(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if tok == "" {
			continue // separator
		}
		parts := strings.SplitN(tok, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("diffscope: unexpected numstat record %q", tok)
		}
		path := parts[2]
		oldPath := path
		if path == "" { // a rename: old and new names follow
			if oldPath, err = token(); err != nil {
				return nil, err
			}
			if path, err = token(); err != nil {
				return nil, err
			}
		}
		t := FileTotal{Path: path}
		binary := parts[0] == "-" || parts[1] == "-"
		t.Binary = binary
		if !binary && !(i < len(gitlink) && gitlink[i]) {
			if t.Additions, err = strconv.Atoi(parts[0]); err == nil {
				t.Deletions, err = strconv.Atoi(parts[1])
			}
			if err != nil {
				return nil, fmt.Errorf("diffscope: unexpected numstat record %q", tok)
			}
		}
		i++
		if leaveOut[path] || leaveOut[oldPath] {
			continue
		}
		totals = append(totals, t)
	}
	return totals, nil
}
