package diffscope

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file finds file/folder clashes (issue 15): a path that is a file on
// one side of an action and a folder on the other. Writing a file where a
// folder is (or a folder's file where a file is) makes git delete what is
// in the way, in the working tree (checkout-index -f) and in the index
// (update-index replaces conflicting entries), and that may be work the
// action did not name: untracked files in the folder, a new file, other
// staged entries. Actions check before their first write and refuse with a
// [*ConflictError] patchFailed naming the clashing paths (clashError).

// clashError is the refusal of an action whose writes would change paths it
// did not name: patchFailed with the sorted paths, nil when there are none.
func clashError(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	sort.Strings(paths)
	return &ConflictError{Reason: ReasonPatchFailed, Paths: paths,
		Output: "the change would delete or replace files the diff does not show (a path that is a file on one side and a folder on the other, or an ignored file where a deleted file comes back); move them away first: " + strings.Join(paths, ", ")}
}

// parents returns the proper parent folders of p ("a/b/c" -> "a", "a/b").
func parents(p string) []string {
	var out []string
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// namedDeletion reports whether writes holds p as a deletion: the action removes it
// itself, so what git removes there was named.
func namedDeletion(writes map[string]entry, p string) bool {
	e, ok := writes[p]
	return ok && e.absent()
}

// worktreeClashes returns the paths of root's working tree outside writes
// that writing writes (path -> entry, an absent entry deleting the path)
// would delete or replace: a file, symlink or anything else that is not a
// folder in the place of a folder an entry needs, and anything inside a
// folder in the place of an entry (a file to write, or a file to delete
// whose place is now a folder), unless writes deletes it too; and a file
// or symlink at the path of an entry to write that the diff's current
// side does not hold (held false: an ignored file where a deleted tracked
// file comes back, as after `git rm --cached .env`; no capture records
// it, so writing over it would lose it).
func worktreeClashes(root string, writes map[string]entry, held map[string]bool) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range sortedKeys(writes) {
		e := writes[p]
		if !e.absent() {
			for _, q := range parents(p) {
				fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(q)))
				if notExist(err) {
					break
				}
				if err != nil {
					return nil, err
				}
				if !fi.IsDir() && !namedDeletion(writes, q) {
					add(q)
				}
			}
		}
		full := filepath.Join(root, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if err == nil && !fi.IsDir() && !e.absent() && !held[p] {
			add(p)
			continue
		}
		if notExist(err) || (err == nil && !fi.IsDir()) {
			continue
		}
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(full, func(w string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if de.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(root, w)
			if err != nil {
				return err
			}
			if r := filepath.ToSlash(rel); !namedDeletion(writes, r) {
				add(r)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// indexClashes returns the index entries of repo outside writes that
// writing writes into the index (`update-index --index-info`, which drops
// entries in the way) would remove: an entry at a parent folder of a
// present entry, or an entry inside a present entry's path as a folder,
// unless writes removes it too. Up to 64 written paths are looked up by
// pathspec, more by listing the whole index.
func (d *Differ) indexClashes(ctx context.Context, repo *gitcli.Repo, writes map[string]entry) ([]string, error) {
	need := map[string]bool{} // folders of present entries
	var specs []string
	for p, e := range writes {
		if e.absent() {
			continue
		}
		specs = append(specs, p)
		for _, q := range parents(p) {
			need[q] = true
		}
	}
	if len(specs) == 0 {
		return nil, nil
	}
	for q := range need {
		specs = append(specs, q)
	}
	if len(writes) > 64 {
		specs = nil
	}
	seen := map[string]bool{}
	var out []string
	err := repo.LsFilesStage(ctx, specs, func(ie gitcli.IndexEntry) error {
		x := ie.Path
		if seen[x] {
			return nil
		}
		if _, ok := writes[x]; ok {
			return nil // named: written or removed by the action itself
		}
		clash := need[x]
		for _, q := range parents(x) {
			if e, ok := writes[q]; ok && !e.absent() {
				clash = true
			}
		}
		if clash {
			seen[x] = true
			out = append(out, x)
		}
		return nil
	})
	return out, err
}

// dedupe returns paths without repeats, sorted.
func dedupe(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// notExist reports an error saying a path is not there: missing, or a
// file where a parent folder would be (ENOTDIR).
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
