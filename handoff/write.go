package handoff

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// toTree is the write that makes paths of a checkout hold what tree has
// at them: present entries written, absent ones removed.
func toTree(ctx context.Context, repo *gitcli.Repo, tree string, paths []string) (gitstate.CheckoutWrite, error) {
	ents, err := gitstate.TreeEntries(ctx, repo, tree, paths)
	if err != nil {
		return gitstate.CheckoutWrite{}, err
	}
	w := gitstate.CheckoutWrite{Write: map[string]gitstate.Entry{}}
	for _, p := range paths {
		if e, ok := ents[p]; ok && !e.Absent() {
			w.Write[p] = e
		} else {
			w.Remove = append(w.Remove, p)
		}
	}
	return w, nil
}

// unchanged is a Check: after refreshing the new index's start (tmp, whose
// entries are what the files at paths must hold), none of paths may
// differ from its entry (errChangedMeanwhile, with the paths), and none
// of free may exist in the working tree (an untracked or ignored file
// made meanwhile: a *ConflictError localChanges, never overwritten).
func unchanged(root string, paths, free []string) func(context.Context, *gitcli.Repo) error {
	return func(ctx context.Context, tmp *gitcli.Repo) error {
		for _, p := range free {
			_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
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
		if err := tmp.RefreshIndex(ctx); err != nil {
			return err
		}
		changed, err := tmp.DiffFilesNames(ctx)
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

// absentIn returns the paths that tree does not hold.
func absentIn(ctx context.Context, repo *gitcli.Repo, tree string, paths []string) ([]string, error) {
	ents, err := gitstate.TreeEntries(ctx, repo, tree, paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if e, ok := ents[p]; !ok || e.Absent() {
			out = append(out, p)
		}
	}
	return out, nil
}
