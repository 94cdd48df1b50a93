package handoff

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// A handoff writes the checkouts' files and indexes only through its
// journal (gitstate.Journal.WriteCheckout): each file is checked out into
// a stage folder and renamed into place, and each index is built on a
// copy and committed as git commits one. A kill -9 at any instant, of
// the server or of a git child, leaves every path at its old or its new
// content and no lock file of git's behind, so the journal's recovery
// always finds each side at a journaled state (or at a mix of two of
// them, path by path), never at a half-written file.

// errChangedMeanwhile is a Check's refusal: a file the write would
// replace or remove no longer matches the entry it was checked against.
var errChangedMeanwhile = errors.New("handoff: a file changed during the handoff")

// treeMove is what writing a checkout from tree from to tree to changes:
// the write (present entries of to written, absent ones removed), every
// path the trees differ in, and those absent from from (added).
type treeMove struct {
	w            gitstate.CheckoutWrite
	paths, added []string
}

// moveBetween lists, in one `diff-tree -r` (raw), what writing a checkout
// that holds tree from into tree to changes.
func moveBetween(ctx context.Context, repo *gitcli.Repo, from, to string) (treeMove, error) {
	raw, err := diffRaw(ctx, repo, from, to)
	if err != nil {
		return treeMove{}, err
	}
	return moveOf(raw, false), nil
}

// diffRaw is `diff-tree -r` (raw) from tree from to tree to, parsed.
func diffRaw(ctx context.Context, repo *gitcli.Repo, from, to string) ([]gitcli.RawChange, error) {
	out, err := repo.DiffTreeRaw(ctx, from, to, nil)
	if err != nil {
		return nil, err
	}
	return gitcli.ParseRawDiff(out)
}

// modeGitlink is a submodule's entry mode.
const modeGitlink = "160000"

// moveOf is the treeMove of raw, the `diff-tree -r` of a tree from to a
// tree to; reversed, that of to to from (the same records, each with its
// sides swapped: without rename detection, diff-tree lists the same
// paths in the same order either way).
func moveOf(raw []gitcli.RawChange, reversed bool) treeMove {
	m := treeMove{w: gitstate.CheckoutWrite{Write: make(map[string]gitstate.Entry, len(raw))}}
	for _, c := range raw {
		if reversed {
			c.OldMode, c.NewMode, c.OldOID, c.NewOID = c.NewMode, c.OldMode, c.NewOID, c.OldOID
		}
		m.paths = append(m.paths, c.Path)
		if e := (gitstate.Entry{Mode: c.NewMode, OID: c.NewOID}); e.Absent() && c.OldMode == modeGitlink {
			// A submodule's folder goes when empty, as git removes it.
			m.w.RemoveLinks = append(m.w.RemoveLinks, c.Path)
		} else if e.Absent() {
			m.w.Remove = append(m.w.Remove, c.Path)
		} else {
			m.w.Write[c.Path] = e
		}
		if (gitstate.Entry{Mode: c.OldMode}).Absent() {
			m.added = append(m.added, c.Path)
		}
	}
	return m
}

// convertWith sets the Attributes of m's write to the .gitattributes
// files of tree, the tree the checkout ends at, when m changes one: the
// files are then converted as that state says, not as the
// .gitattributes being replaced says (QA: a moved `eol=crlf`
// .gitattributes left every file of the cleaned source modified).
func (m *treeMove) convertWith(ctx context.Context, repo *gitcli.Repo, tree string) error {
	if !slices.ContainsFunc(m.paths, isGitattributes) {
		return nil
	}
	attrs, err := gitstate.AttributesOf(ctx, repo, tree)
	m.w.Attributes = attrs
	return err
}

// isGitattributes reports whether the repository-relative path p is a
// .gitattributes file.
func isGitattributes(p string) bool {
	return p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes")
}

// unchanged is a Check: none of paths may differ in content from its
// entry in the new index's start (tmp, whose entries are what the files
// at paths must hold) (errChangedMeanwhile, with the paths), and none
// of free may exist in the working tree (an untracked or ignored file
// made meanwhile: a *ConflictError localChanges, never overwritten), but
// for a folder that the write's removals empty (a folder that becomes a
// file: removed, sorted, lists what the folder held) and a folder that
// holds no file (gitstate.EmptyFolder: a submodule's, say).
func unchanged(root string, paths, free, removed []string) func(context.Context, *gitcli.Repo) error {
	return func(ctx context.Context, tmp *gitcli.Repo) error {
		for _, p := range free {
			full := filepath.Join(root, filepath.FromSlash(p))
			fi, err := os.Lstat(full)
			if err == nil && fi.IsDir() && (emptiedFolder(p, removed) || gitstate.EmptyFolder(full)) {
				continue
			}
			if err == nil {
				return conflict(ReasonLocalChanges, []string{p},
					"%s appeared in %s during the handoff; move it away and hand off again", p, root)
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return err
			}
		}
		if len(paths) == 0 {
			return nil
		}
		changed, err := tmp.ChangedFiles(ctx)
		if err != nil {
			return err
		}
		sorted := slices.Clone(paths)
		slices.Sort(sorted)
		var hit []string
		for _, p := range changed {
			if _, ok := slices.BinarySearch(sorted, p); ok {
				hit = append(hit, p)
			}
		}
		if len(hit) > 0 {
			return &changedError{paths: hit}
		}
		return nil
	}
}

// changedError is errChangedMeanwhile with the paths.
type changedError struct{ paths []string }

func (e *changedError) Error() string { return errChangedMeanwhile.Error() }
func (e *changedError) Unwrap() error { return errChangedMeanwhile }

// emptiedFolder reports whether removed (sorted) holds a path under the
// folder dir: the tree the write leaves had files there.
func emptiedFolder(dir string, removed []string) bool {
	i, _ := slices.BinarySearch(removed, dir+"/")
	return i < len(removed) && strings.HasPrefix(removed[i], dir+"/")
}
