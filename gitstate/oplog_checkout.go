package gitstate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file serves the external actions that write whole checkouts
// (handoff: the destination's tree transplant, the source's cleanup, a
// rollback): the same atomic writes as Checkout, Remove and WriteIndex,
// into any checkout of the journal's repository, without per-path
// records. Such an action decides after a crash from captures of the
// checkouts against the trees it journaled, so what it needs of the
// writes is that a kill at any instant leaves every file at its old or
// its new content (never part-written) and the index as it was or as it
// is meant to be, with no lock file of its own left behind.

// CheckoutRecord is a checkout an external action wrote with
// [Journal.WriteCheckout]: its work tree, its index file and the folder
// its files were staged in. A recovery removes what a kill left of them
// (the stage folder, an index lock that is the journal's own) before
// the action's resolver looks at the checkout.
type CheckoutRecord struct {
	Root      string `json:"root"`
	IndexPath string `json:"indexPath"`
	Stage     string `json:"stage"`
}

// CheckoutWrite is what [Journal.WriteCheckout] writes into a checkout.
type CheckoutWrite struct {
	// Write maps repository-relative, /-separated paths to the entries
	// to write: files and symlinks, written as git checks them out; a
	// gitlink (160000) makes an empty folder when the path is free, as
	// git does for a submodule it does not check out.
	Write map[string]Entry
	// Remove lists paths whose files or symlinks to delete (a missing
	// one is fine; a folder is left alone), then the parent folders that
	// became empty. Removals come before writes, so a folder may become
	// a file and the reverse; a folder that holds no file
	// ([EmptyFolder]) where a file is written goes, as git removes it.
	Remove []string
	// RemoveLinks lists gitlinks (submodules) whose entries go: the
	// folder of each goes when it holds no file (a submodule that is not
	// initialized), after the parent folders that became empty, as git
	// removes it; one with files (an initialized submodule) stays.
	RemoveLinks []string
	// From, when set, is an index file the new index starts from instead
	// of a copy of the checkout's index, made from the checkout's index
	// as it was when os.Stat gave FromIndex: when the checkout's index is
	// no longer that file, the new index is not committed (a
	// [*LockedError] with Changed).
	From      string
	FromIndex os.FileInfo
	// Check, when set, runs once the files are staged and before the
	// first is placed, on a view whose index is the new index's start
	// (the copy, or From): an error stops the write with nothing of the
	// checkout's written, and is returned.
	Check func(ctx context.Context, tmp *gitcli.Repo) error
	// Attributes, when not nil, are the .gitattributes files (path ->
	// entry, [AttributesOf]) of the state the checkout ends in: the files
	// are checked out with them rather than with the work tree's, which
	// a write that changes a .gitattributes makes stale until it lands
	// (git checkout converts with the new index's too).
	Attributes map[string]Entry
	// Index, when set, runs once every file is placed, on the same view:
	// it turns the copy into the new index, which then replaces the
	// checkout's index the way git commits an index (a [*LockedError]
	// when another process holds the index's lock or the index changed
	// since the copy). Unset, the checkout's index is left as it is.
	Index func(ctx context.Context, tmp *gitcli.Repo) error
}

// WriteCheckout writes w into the checkout repo (the journal's or another
// worktree of its repository) for an external action: the files are
// checked out into a stage folder next to the checkout's git dir
// (`checkout-index --prefix`, through the checkout's filters), the
// journal records the checkout ([CheckoutRecord]), w.Check runs, the
// removals and then one rename per file put them in place, and w.Index
// builds the new index, committed as git commits one. A kill at any
// instant leaves each path at its old or its new content and the index
// old or new; the journal's next recovery removes the stage folder and a
// lock file that is the journal's own before its resolver runs. The hook
// steps are "remove#n", "checkout#n" (before each placement), "index#n"
// and "index-locked#n". Errors: w.Check's; git's; a [*LockedError]; a
// path held by a folder with files in it where a file goes; filesystem
// errors. Files
// placed before an error stay placed: the action decides from its trees.
func (j *Journal) WriteCheckout(ctx context.Context, repo *gitcli.Repo, w CheckoutWrite) error {
	if repo.Root == "" {
		return errors.New("gitstate: write checkout: no work tree")
	}
	if err := os.MkdirAll(j.work, 0o700); err != nil {
		return fmt.Errorf("gitstate: oplog: %w", err)
	}
	n := len(j.f.Checkouts)
	rec := CheckoutRecord{Root: repo.Root, IndexPath: repo.IndexPath, Stage: stageDir(repo, fmt.Sprintf("%s-%d", j.f.ID, n))}
	tmp := filepath.Join(j.work, fmt.Sprintf("checkout-%d-index", n))
	files := map[string]Entry{}
	var links []string
	for p, e := range w.Write {
		switch {
		case e.Absent():
			return fmt.Errorf("gitstate: write checkout %s: absent entry (use Remove)", p)
		case e.Mode == "160000":
			links = append(links, p)
		default:
			files[p] = e
		}
	}
	slices.Sort(links)
	// The new index's start, taken before anything is placed.
	before, err := statIndex(repo.IndexPath)
	if err != nil {
		return err
	}
	base := repo.IndexPath
	if w.From != "" {
		base, before = w.From, indexStat{fi: w.FromIndex}
	}
	// A writer of this journal killed before it recorded its checkout
	// may have left the copy under the same name: only a name goes (a
	// committed index is another link to its own file).
	_ = os.Remove(tmp)
	if _, err := os.Lstat(base); err == nil {
		if _, err := CopyIndex(base, tmp); err != nil {
			return err
		}
	}
	view := repo.WithIndex(tmp)
	j.f.Checkouts = append(j.f.Checkouts, rec)
	if err := j.save(); err != nil {
		return err
	}
	// The stage folder goes once the files are placed, while the index
	// is built (its empty folders cost a removal each), and always
	// before WriteCheckout returns.
	removed := make(chan struct{})
	removeStage := sync.OnceFunc(func() {
		go func() {
			defer close(removed)
			_ = os.RemoveAll(rec.Stage)
		}()
	})
	defer func() {
		removeStage()
		<-removed
	}()
	if len(files) > 0 {
		if err := stageEntriesWith(ctx, repo, rec.Stage, filepath.Join(j.work, fmt.Sprintf("checkout-%d-stage", n)), files, w.Attributes); err != nil {
			return err
		}
	}
	// What every path holds before the check: a file changed after the
	// check read it is caught by its stat data right before it would be
	// replaced or removed (a *FileChangedError; what was placed before
	// stays, for the action to decide from its trees).
	remove := slices.Clone(w.Remove)
	slices.Sort(remove)
	targets := slices.Concat(remove, sortedPaths(files))
	seen := make(map[string]os.FileInfo, len(targets))
	for _, p := range targets {
		seen[p] = lstatTarget(repo.Root, p)
	}
	if w.Check != nil {
		if err := w.Check(ctx, view); err != nil {
			return err
		}
	}
	for _, p := range remove {
		j.step("remove")
		if err := unchangedSince(repo.Root, p, seen[p]); err != nil {
			return err
		}
		if err := removeFile(repo.Root, p); err != nil {
			return err
		}
	}
	for _, p := range w.RemoveLinks {
		if RemoveEmptyFolder(filepath.Join(repo.Root, filepath.FromSlash(p))) {
			removeEmptyParents(repo.Root, p)
		}
	}
	for _, p := range sortedPaths(files) {
		j.step("checkout")
		if err := unchangedSince(repo.Root, p, seen[p]); err != nil {
			return err
		}
		if seen[p] != nil && seen[p].IsDir() {
			RemoveEmptyFolder(filepath.Join(repo.Root, filepath.FromSlash(p)))
		}
		if err := placeStaged(repo.Root, rec.Stage, p); err != nil {
			return err
		}
	}
	for _, p := range links {
		_ = os.MkdirAll(filepath.Join(repo.Root, filepath.FromSlash(p)), 0o755)
	}
	removeStage()
	if w.Index == nil {
		return nil
	}
	if err := w.Index(ctx, view); err != nil {
		return err
	}
	j.step("index")
	_, err = commitIndex(repo.IndexPath, tmp, before, j.step)
	return err
}

// cleanCheckouts removes what a killed WriteCheckout may have left in the
// checkouts of f: the stage folders, and an index lock that is one of
// the journal's temporary indexes (work holds them).
func cleanCheckouts(f *journalFile, work string) {
	for _, c := range f.Checkouts {
		_ = os.RemoveAll(c.Stage)
		dropOwnIndexLock(c.IndexPath, work)
	}
}

// ErrFileChanged is what a [*FileChangedError] wraps.
var ErrFileChanged = errors.New("gitstate: a file changed while the checkout was written")

// FileChangedError is [Journal.WriteCheckout]'s refusal to replace or
// remove the file at Path (repository relative, /-separated): its stat
// data (identity, size, mode, modification time) changed after the
// write's check, so someone else wrote it meanwhile. Unwrap gives
// [ErrFileChanged].
type FileChangedError struct{ Path string }

func (e *FileChangedError) Error() string {
	return fmt.Sprintf("gitstate: %s changed while the checkout was written; it was left as it is", e.Path)
}

func (e *FileChangedError) Unwrap() error { return ErrFileChanged }

// lstatTarget is os.Lstat of root/p, nil when nothing is there (a missing
// parent folder, or a file where a parent folder would be, included).
func lstatTarget(root, p string) os.FileInfo {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		return nil
	}
	return fi
}

// unchangedSince returns a *FileChangedError when root/p is no longer
// what before (lstatTarget before the check) describes. A folder may
// have gone since (the write's own removals empty a folder that becomes
// a file); what is in it is checked path by path.
func unchangedSince(root, p string, before os.FileInfo) error {
	now := lstatTarget(root, p)
	switch {
	case before == nil && now == nil, before != nil && before.IsDir() && (now == nil || now.IsDir()):
		return nil
	case before == nil || now == nil:
	case os.SameFile(before, now) && before.Size() == now.Size() && before.Mode() == now.Mode() && before.ModTime().Equal(now.ModTime()):
		return nil
	}
	return &FileChangedError{Path: p}
}
