package gitstate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file holds the only ways a journal writes the user's state. No git
// process writes a user's file or index directly: git writes files into
// the journal's stage folder and indexes into temporary files, and the
// journal renames each into place itself, so a crash at any instant (the
// server's, or a git child's) leaves every path at its before or its after
// entry, and the index as it was or as it is meant to be.

// LockedError is a write refused because the index's lock file exists (or
// the index changed while the new one was prepared): another git process
// is at work. It matches [gitcli.ErrLocked]; its message is git's own
// words for the condition ("Unable to create '<path>': File exists.").
type LockedError struct {
	// Path is the lock file.
	Path string
	// Changed reports the index changed while the journal prepared its
	// own (rather than the lock file existing).
	Changed bool
}

func (e *LockedError) Error() string {
	if e.Changed {
		return fmt.Sprintf("the index %s changed while knightcode prepared its update", strings.TrimSuffix(e.Path, ".lock"))
	}
	return fmt.Sprintf("fatal: Unable to create '%s': File exists.", e.Path)
}

// Is matches gitcli.ErrLocked.
func (e *LockedError) Is(target error) bool { return target == gitcli.ErrLocked }

// Checkout writes entries (path -> present entry) into the working tree
// exactly as git checks them out (filters, eol conversion, modes,
// symlinks): into the journal's stage folder, by `checkout-index --prefix`
// from a temporary index, or, where git would write the blob's bytes as
// they are ([Plain.Path]: no attributes, no core.autocrlf), by knightcode
// from the object store; then, after the journal records each path's
// after entry, one rename per path into place (missing parent folders are
// made). A path held by a folder is an error (nothing is renamed over it).
// Gitlinks must not be passed.
func (j *Journal) Checkout(ctx context.Context, entries map[string]Entry) error {
	if len(entries) == 0 {
		return nil
	}
	paths := sortedPaths(entries)
	idx, err := j.expect(ctx, paths, false)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if entries[p].Absent() {
			return fmt.Errorf("gitstate: checkout %s: absent entry (use Remove)", p)
		}
	}
	if done, err := stagePlain(ctx, j.repo, j.f.Stage, entries); err != nil {
		return err
	} else if !done {
		if err := stageEntries(ctx, j.repo, j.f.Stage, filepath.Join(j.work, "checkout-index"), entries); err != nil {
			return err
		}
	}
	for i, p := range paths {
		e := entries[p].norm()
		j.f.Paths[idx[i]].WorktreeAfter = &e
	}
	if err := j.save(); err != nil {
		return err
	}
	for _, p := range paths {
		j.step("checkout")
		if err := placeStaged(j.repo.Root, j.f.Stage, p); err != nil {
			return err
		}
	}
	return os.RemoveAll(j.f.Stage)
}

// Remove deletes paths (files or symlinks; a missing one is fine) from the
// working tree after the journal records them as absent, and then their
// parent folders that became empty, as git does. A path held by a folder
// is left alone, folder and contents: only the paths named are deleted.
func (j *Journal) Remove(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	idx, err := j.expect(ctx, paths, false)
	if err != nil {
		return err
	}
	for _, i := range idx {
		j.f.Paths[i].WorktreeAfter = &Entry{}
	}
	if err := j.save(); err != nil {
		return err
	}
	for _, p := range paths {
		j.step("remove")
		if err := removeFile(j.repo.Root, p); err != nil {
			return err
		}
	}
	return nil
}

// WriteIndex changes the index of the checkout: fn runs git verbs on a
// view whose index is a temporary copy of the real one (update-index,
// apply --cached, add --refresh, ...); the journal then records the after
// entries of paths (the paths fn may change: entries of other paths are
// not journaled) and commits the copy the way git commits an index: the
// copy is hard-linked as index.lock (which fails, as git does, when the
// lock exists: a [*LockedError]), checked against the index it was copied
// from (changed meanwhile: a [*LockedError] with Changed), and renamed
// over the index. Before the action's first index write the index file is
// kept as it is (keepIndex), so that a rollback that finds the same
// entries to put back puts that file back instead, byte for byte.
func (j *Journal) WriteIndex(ctx context.Context, paths []string, fn func(tmp *gitcli.Repo) error) error {
	idx, err := j.expect(ctx, paths, true)
	if err != nil {
		return err
	}
	tmp, before, err := j.copyIndex()
	if err != nil {
		return err
	}
	view := j.repo.WithIndex(tmp)
	if err := fn(view); err != nil {
		return err
	}
	after, err := indexEntries(ctx, view, paths)
	if err != nil {
		return err
	}
	for i, p := range paths {
		e := after[p].norm()
		j.f.Paths[idx[i]].IndexAfter = &e
	}
	if err := j.save(); err != nil {
		return err
	}
	j.step("index")
	_, err = commitIndex(j.repo.IndexPath, tmp, before, j.step)
	j.repo.NoteIndexWrite(nil, nil, nil)
	return err
}

// copyIndex copies the index to the journal's next temporary index (the
// one an index write commits) and returns it with the index's stat. Before
// the action's first index write the copy is also kept as it is
// (keepIndex): the index as the action found it, byte for byte.
func (j *Journal) copyIndex() (string, indexStat, error) {
	tmp := filepath.Join(j.work, fmt.Sprintf("index-%d", j.steps["index"]+1))
	_ = os.Remove(tmp)
	before, err := statIndex(j.repo.IndexPath)
	if err != nil {
		return "", indexStat{}, err
	}
	copied, err := CopyIndex(j.repo.IndexPath, tmp)
	if err != nil {
		return "", indexStat{}, err
	}
	if copied && j.steps["index"] == 0 {
		keepIndex(tmp, filepath.Join(j.work, keptIndexName))
	}
	return tmp, before, nil
}

// WriteIndexEntries sets the index entries of the paths of entries (an
// absent entry removes the path) in one `update-index -z --index-info` on
// a temporary copy of the index, then refreshes the stat data of refresh
// (`add --refresh`: paths whose new entry is the file on disk), and
// commits the copy as [Journal.WriteIndex] does. The journal records
// entries as the after entries without listing the copy, and the
// Runner's index cache learns the new index (gitcli.Repo.NoteIndexWrite),
// so an action that changes one path's entry runs one git process for
// it. The caller must have refused file/folder clashes (an entry where
// the index holds a folder of that name, or the other way round).
func (j *Journal) WriteIndexEntries(ctx context.Context, entries map[string]Entry, refresh []string) error {
	paths := sortedPaths(entries)
	idx, err := j.expect(ctx, paths, true)
	if err != nil {
		return err
	}
	list, err := j.repo.IndexList(ctx)
	if err != nil {
		return err
	}
	tmp, before, err := j.copyIndex()
	if err != nil {
		return err
	}
	view := j.repo.WithIndex(tmp)
	info := make([]gitcli.IndexInfo, 0, len(paths))
	changes := make(map[string]*gitcli.IndexEntry, len(paths))
	for _, p := range paths {
		e := entries[p].norm()
		if e.Absent() {
			info = append(info, gitcli.IndexInfo{Mode: "0", OID: j.repo.ZeroID(), Path: p})
			changes[p] = nil
		} else {
			info = append(info, gitcli.IndexInfo{Mode: e.Mode, OID: e.OID, Path: p})
			changes[p] = &gitcli.IndexEntry{Mode: e.Mode, OID: e.OID, Path: p}
		}
	}
	if err := view.UpdateIndexInfo(ctx, info); err != nil {
		return err
	}
	if len(refresh) > 0 {
		_ = view.AddRefresh(ctx, refresh)
	}
	for i, p := range paths {
		e := entries[p].norm()
		j.f.Paths[idx[i]].IndexAfter = &e
	}
	if err := j.save(); err != nil {
		return err
	}
	j.step("index")
	fi, err := commitIndex(j.repo.IndexPath, tmp, before, j.step)
	if err != nil {
		return err
	}
	if before.fi != nil && list.Describes(before.fi) {
		j.repo.NoteIndexWrite(list, changes, fi)
	} else {
		j.repo.NoteIndexWrite(nil, nil, nil)
	}
	return nil
}

// keptIndexName is the file in a journal's work folder that holds the
// index file as it was before the action's first index write (keepIndex),
// so that a rollback can put it back byte for byte, stat data included.
const keptIndexName = "index-kept"

// keepIndex keeps src, a journal's fresh copy of the index (CopyIndex:
// the same bytes and mtime), as kept: a hard link to it, else a copy of
// it written under another name and renamed. The link holds the bytes as
// they are: git writes an index by renaming a new file over it, never in
// place, so the verbs that change the copy leave the linked file alone.
// Linking the copy rather than the index leaves the index's own inode (and
// its ctime, which the index listing cache compares) untouched. Nothing is
// kept when neither works: the rollback then rewrites the entries instead.
func keepIndex(src, kept string) {
	_ = os.Remove(kept)
	if err := os.Link(src, kept); err == nil {
		return
	}
	part := kept + ".part"
	_ = os.Remove(part)
	if ok, err := CopyIndex(src, part); err != nil || !ok || os.Rename(part, kept) != nil {
		_ = os.Remove(part)
		_ = os.Remove(kept)
	}
}

// ApplyWorktree applies patch (reversed when reverse) to the working-tree
// content of paths: `git apply --cached` on a temporary index that holds
// the paths as they are in the working tree (so git checks and applies
// the patch exactly as `git apply` on the files would, through the clean
// filters), then the results are written with [Journal.Checkout] and
// [Journal.Remove]. A refusal is git's *gitcli.Error; nothing is written
// then.
func (j *Journal) ApplyWorktree(ctx context.Context, paths []string, patch []byte, reverse bool) error {
	tmp := filepath.Join(j.work, "apply-index")
	_ = os.Remove(tmp)
	if _, err := CopyIndex(j.repo.IndexPath, tmp); err != nil {
		return err
	}
	// update-index --add resolves an unmerged path to the file as it is;
	// other unmerged entries do not matter to a patch of these paths.
	view := j.repo.WithIndex(tmp)
	if err := view.UpdateIndexAdd(ctx, paths); err != nil {
		return err
	}
	if err := view.Apply(ctx, strings.NewReader(string(patch)), gitcli.ApplyOptions{Cached: true, Reverse: reverse}); err != nil {
		return err
	}
	got, err := indexEntries(ctx, view, paths)
	if err != nil {
		return err
	}
	write := map[string]Entry{}
	var gone []string
	for _, p := range paths {
		if e, ok := got[p]; ok {
			write[p] = e
		} else {
			gone = append(gone, p)
		}
	}
	if err := j.Remove(ctx, gone); err != nil {
		return err
	}
	return j.Checkout(ctx, write)
}

// stageEntries writes entries into stage/<path> from a temporary index at
// tmpIndex (`update-index --index-info`, `checkout-index --prefix`),
// converted with the attributes of the work tree's .gitattributes files.
func stageEntries(ctx context.Context, repo *gitcli.Repo, stage, tmpIndex string, entries map[string]Entry) error {
	return stageEntriesWith(ctx, repo, stage, tmpIndex, entries, nil)
}

// stageEntriesWith is stageEntries converting with the .gitattributes
// files attrs (path -> entry) when attrs is not nil, instead of the work
// tree's. checkout-index reads a directory's .gitattributes from the work
// tree, else from its index (attr.c, the checkin direction); git checkout
// reads those of the index it checks out. So with attrs the files are
// checked out against an empty work tree (a folder next to tmpIndex),
// from an index holding entries and attrs: a .gitattributes the checkout
// is about to remove or replace does not convert what it writes. The
// attrs entries are staged too (an empty blob for none).
func stageEntriesWith(ctx context.Context, repo *gitcli.Repo, stage, tmpIndex string, entries, attrs map[string]Entry) error {
	_ = os.RemoveAll(stage)
	_ = os.Remove(tmpIndex)
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return fmt.Errorf("gitstate: stage folder: %w", err)
	}
	all := entries
	view := repo.WithIndex(tmpIndex)
	if attrs != nil {
		all = maps.Clone(entries)
		for p, e := range attrs {
			if _, ok := all[p]; !ok {
				all[p] = e
			}
		}
		empty := tmpIndex + "-worktree"
		_ = os.RemoveAll(empty)
		if err := os.MkdirAll(empty, 0o700); err != nil {
			return fmt.Errorf("gitstate: stage folder: %w", err)
		}
		defer os.RemoveAll(empty)
		view = repo.AtWorkTree(empty).WithIndex(tmpIndex)
	}
	info := make([]gitcli.IndexInfo, 0, len(all))
	for _, p := range sortedPaths(all) {
		e := all[p]
		info = append(info, gitcli.IndexInfo{Mode: e.Mode, OID: e.OID, Path: p})
	}
	if err := view.UpdateIndexInfo(ctx, info); err != nil {
		return err
	}
	return view.CheckoutIndexPrefix(ctx, stage)
}

// AttributesOf returns the .gitattributes files of tree (path -> entry):
// what [CheckoutWrite.Attributes] takes for a checkout that ends at tree.
func AttributesOf(ctx context.Context, repo *gitcli.Repo, tree string) (map[string]Entry, error) {
	list, err := repo.LsTree(ctx, tree, true)
	if err != nil {
		return nil, err
	}
	attrs := map[string]Entry{}
	for _, e := range list {
		if e.Type == "blob" && (e.Path == ".gitattributes" || strings.HasSuffix(e.Path, "/.gitattributes")) {
			attrs[e.Path] = Entry{Mode: e.Mode, OID: e.OID}
		}
	}
	return attrs, nil
}

// placeStaged renames stage/p to root/p, making its parent folders.
func placeStaged(root, stage, p string) error {
	src := filepath.Join(stage, filepath.FromSlash(p))
	dst := filepath.Join(root, filepath.FromSlash(p))
	if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
		return fmt.Errorf("gitstate: %s is a folder in the working tree", p)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("gitstate: write %s: %w", p, err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("gitstate: write %s: %w", p, err)
	}
	return nil
}

// removeFile deletes root/p (a file or symlink; a missing one is fine) and
// then its parent folders that became empty, up to root. A folder at p is
// left alone: the file is already gone, and what the folder holds is
// deleted only where named itself (a folder goes once it is empty).
func removeFile(root, p string) error {
	full := filepath.Join(root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return nil
	}
	if err := os.Remove(full); err != nil {
		return err
	}
	removeEmptyParents(root, p)
	return nil
}

// removeEmptyParents removes the parent folders of root/p that are empty,
// deepest first, up to root.
func removeEmptyParents(root, p string) {
	full := filepath.Join(root, filepath.FromSlash(p))
	for dir := filepath.Dir(full); dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty
		}
	}
}

// indexStat is what tells an index file from another: absent, or its
// inode, size and mtime.
type indexStat struct {
	fi os.FileInfo
}

func statIndex(path string) (indexStat, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return indexStat{}, nil
	}
	if err != nil {
		return indexStat{}, err
	}
	return indexStat{fi: fi}, nil
}

func (s indexStat) same(o indexStat) bool {
	if s.fi == nil || o.fi == nil {
		return s.fi == nil && o.fi == nil
	}
	return SameIndexFile(s.fi, o.fi)
}

// SameIndexFile reports whether a and b (os.Stat of an index file at two
// moments) describe the same file, not rewritten in between: git replaces
// an index by renaming a new file over it, so the inode changes, and the
// size and mtime are compared as well.
func SameIndexFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// CommitIndex replaces the index at indexPath by the file tmp the way
// git commits an index (see commitIndex): tmp becomes <index>.lock, then,
// when the index is still the file before describes (same inode, size and
// mtime; nil: there was no index), the lock is renamed over it. tmp keeps
// its mtime, so git's racy-clean check treats its entries as it did when
// tmp was written. Errors: a [*LockedError] when another process holds
// the lock or the index changed since before (nothing is written then);
// filesystem errors.
func CommitIndex(indexPath, tmp string, before os.FileInfo) error {
	_, err := commitIndex(indexPath, tmp, indexStat{fi: before}, func(string) {})
	return err
}

// commitIndex replaces the index at indexPath by the file tmp, as git
// commits an index: link tmp as <index>.lock (the lock; refused when it
// exists), check the index is still the one described by before, rename
// the lock over the index. A temporary index git never wrote (fn changed
// nothing and there was no index) is fine: nothing to commit.
func commitIndex(indexPath, tmp string, before indexStat, step func(string)) (os.FileInfo, error) {
	if _, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	// Held open to stat the file once it is the index: its stat after the
	// link and rename (which move its ctime) is what the index cache
	// compares with.
	held, err := os.Open(tmp)
	if err != nil {
		return nil, fmt.Errorf("gitstate: write index: %w", err)
	}
	defer held.Close()
	lock := indexPath + ".lock"
	linked := true
	if err := os.Link(tmp, lock); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, &LockedError{Path: lock}
		}
		// The journal's folder is on another file system than the
		// repository (or this one has no hard links): the lock is
		// created as git creates it, and the index written into it.
		if err := copyIntoLock(tmp, lock); err != nil {
			return nil, err
		}
		linked = false
	}
	now, err := statIndex(indexPath)
	if err != nil || !now.same(before) {
		_ = os.Remove(lock)
		if err != nil {
			return nil, err
		}
		return nil, &LockedError{Path: lock, Changed: true}
	}
	step("index-locked")
	if err := os.Rename(lock, indexPath); err != nil {
		_ = os.Remove(lock)
		return nil, fmt.Errorf("gitstate: write index: %w", err)
	}
	atomicfile.SyncDir(filepath.Dir(indexPath))
	if !linked {
		return nil, nil
	}
	// The temporary name goes now (its link count is part of the ctime
	// the cache compares).
	_ = os.Remove(tmp)
	fi, err := held.Stat()
	if err != nil {
		return nil, nil
	}
	return fi, nil
}

// copyIntoLock creates lock exclusively (a [*LockedError] when it exists)
// and writes the bytes of the file src into it, synced, keeping src's
// mtime (git's racy-clean check compares entries with the index's mtime).
// A failure removes the lock.
func copyIntoLock(src, lock string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &LockedError{Path: lock}
		}
		return fmt.Errorf("gitstate: lock index: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(lock, st.ModTime(), st.ModTime())
	}
	if err != nil {
		_ = os.Remove(lock)
		return fmt.Errorf("gitstate: write index lock: %w", err)
	}
	return nil
}

func sortedPaths(m map[string]Entry) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// stagePlain writes entries (present regular files and symlinks) into
// stage/<path> from the object store, as git's checkout-index would write
// them where git converts nothing ([Plain.Path]): a file's bytes with mode
// 0666 or 0777 less the umask, a symlink to its target. It reports false,
// having written nothing, when an entry is not plain, is a gitlink or is a
// .gitattributes file (which changes what git converts): the caller then
// stages through git.
func stagePlain(ctx context.Context, repo *gitcli.Repo, stage string, entries map[string]Entry) (bool, error) {
	paths := sortedPaths(entries)
	for _, p := range paths {
		switch entries[p].Mode {
		case "100644", "100755", "120000":
		default:
			return false, nil
		}
		if p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes") {
			return false, nil
		}
	}
	plain, err := PlainFor(ctx, repo)
	if err != nil || !plain.Paths(paths) {
		return false, err
	}
	store, err := repo.Objects(ctx)
	if err != nil {
		return false, err
	}
	_ = os.RemoveAll(stage)
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return false, fmt.Errorf("gitstate: stage folder: %w", err)
	}
	for _, p := range paths {
		e := entries[p]
		obj, err := store.Read(ctx, e.OID)
		if err != nil {
			return false, err
		}
		if obj.Type != "blob" {
			return false, fmt.Errorf("gitstate: checkout %s: %s is a %s", p, e.OID, obj.Type)
		}
		dst := filepath.Join(stage, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return false, fmt.Errorf("gitstate: stage %s: %w", p, err)
		}
		if e.Mode == "120000" {
			if err := os.Symlink(string(obj.Data), dst); err != nil {
				return false, fmt.Errorf("gitstate: stage %s: %w", p, err)
			}
			continue
		}
		perm := os.FileMode(0o666)
		if e.Mode == "100755" {
			perm = 0o777
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return false, fmt.Errorf("gitstate: stage %s: %w", p, err)
		}
		_, err = f.Write(obj.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return false, fmt.Errorf("gitstate: stage %s: %w", p, err)
		}
	}
	return true, nil
}
