package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// The budget of ignored files a snapshot keeps (issue 9, "Ignored files and
// capture limits"; README "Ignored files"). Ignored files are user data
// (.env, local settings) but also regenerable build output; a snapshot
// keeps the small ones outside big folders:
const (
	// IgnoredMaxFile is the largest ignored file kept, in bytes (1 MiB).
	IgnoredMaxFile = 1 << 20
	// IgnoredMaxTotal is the most bytes of ignored files kept (16 MiB).
	IgnoredMaxTotal = 16 << 20
	// IgnoredMaxFiles is the most ignored files kept.
	IgnoredMaxFiles = 1000
	// IgnoredBigFolder: an ignored folder holding this many files or more
	// is not kept (node_modules and the like).
	IgnoredBigFolder = 1000
)

// regenerable are folder names never kept: package caches and build
// output that tools make again.
var regenerable = map[string]bool{
	"node_modules": true, ".venv": true, "venv": true, "__pycache__": true, ".gradle": true,
	".next": true, ".nuxt": true, ".cache": true, "target": true, "dist": true, "build": true,
	".tox": true, ".mypy_cache": true, ".pytest_cache": true, ".terraform": true, "bower_components": true,
}

// IgnoredFiles is what a snapshot did with the checkout's ignored files.
type IgnoredFiles struct {
	// Commit holds the kept files (a root commit whose tree has them at
	// their paths); "" when none was kept.
	Commit string `json:"commit,omitempty"`
	// Kept counts the files kept.
	Kept int `json:"kept,omitempty"`
	// NotKept lists what was left out (files, or folders ending in "/"),
	// repository relative, sorted.
	NotKept []string `json:"notKept,omitempty"`
	// Modes are the permission bits of the kept files whose bits a git
	// tree cannot hold (it has 0644 and 0755 only): a `.env` kept private
	// with 0600, say. A restore sets them back.
	Modes map[string]fs.FileMode `json:"modes,omitempty"`
}

// keepIgnored writes the ignored files of the work tree at root within the
// budget into a commit (a temporary index, `update-index --add`,
// write-tree, commit-tree): a snapshot's third parent. Ignored folders
// (`ls-files -o -i --directory`) are walked unless regenerable or big;
// nested repositories, sockets and devices are left out.
func (m *Manager) keepIgnored(ctx context.Context, root string) (*IgnoredFiles, error) {
	repo, err := m.git.Discover(ctx, root)
	if err != nil {
		return nil, err
	}
	var entries []string
	if err := repo.LsFilesIgnored(ctx, func(p string) error {
		if p != "" {
			entries = append(entries, p)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out := &IgnoredFiles{}
	var keep []string
	var total int64
	consider := func(rel string, fi fs.FileInfo) {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
		case !fi.Mode().IsRegular():
			return
		case fi.Size() > IgnoredMaxFile, total+fi.Size() > IgnoredMaxTotal, len(keep) >= IgnoredMaxFiles:
			out.NotKept = append(out.NotKept, rel)
			return
		}
		total += fi.Size()
		keep = append(keep, rel)
		if perm := fi.Mode().Perm(); fi.Mode().IsRegular() && perm != 0o644 && perm != 0o755 {
			if out.Modes == nil {
				out.Modes = map[string]fs.FileMode{}
			}
			out.Modes[rel] = perm
		}
	}
	for _, e := range entries {
		full := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(e, "/")))
		if !strings.HasSuffix(e, "/") {
			if fi, err := os.Lstat(full); err == nil {
				consider(e, fi)
			}
			continue
		}
		if regenerable[filepath.Base(full)] {
			out.NotKept = append(out.NotKept, e)
			continue
		}
		files, skipped, big := walkIgnored(root, full)
		if big {
			out.NotKept = append(out.NotKept, e)
			continue
		}
		out.NotKept = append(out.NotKept, skipped...)
		for _, f := range files {
			consider(f.rel, f.fi)
		}
	}
	slices.Sort(out.NotKept)
	if len(keep) == 0 {
		return out, nil
	}
	tmp, err := os.MkdirTemp("", "knightcode-ignored-")
	if err != nil {
		return nil, errorf("keep ignored files: %v", err)
	}
	defer os.RemoveAll(tmp)
	idx := repo.WithIndex(filepath.Join(tmp, "index"))
	if err := idx.UpdateIndexAdd(ctx, keep); err != nil {
		return nil, err
	}
	tree, err := idx.WriteTree(ctx)
	if err != nil {
		return nil, err
	}
	if out.Commit, err = repo.CommitTree(ctx, tree, nil, "ignored files of "+root+"\n", gitstate.Ident); err != nil {
		return nil, err
	}
	out.Kept = len(keep)
	return out, nil
}

type walked struct {
	rel string
	fi  fs.FileInfo
}

// walkIgnored lists the files under dir (an ignored folder of the work
// tree at root), skipping regenerable folders and nested repositories,
// which skipped lists (root-relative, /-separated, ending in "/": they are
// not kept, and the warning names them); big reports IgnoredBigFolder
// files or more.
func walkIgnored(root, dir string) (files []walked, skipped []string, big bool) {
	errBig := errors.New("big")
	rel := func(p string) (string, bool) {
		r, err := filepath.Rel(root, p)
		return filepath.ToSlash(r), err == nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			_, gerr := os.Lstat(filepath.Join(p, ".git"))
			if p != dir && regenerable[d.Name()] || gerr == nil {
				if r, ok := rel(p); ok {
					skipped = append(skipped, r+"/")
				}
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		r, ok := rel(p)
		if !ok {
			return nil
		}
		if files = append(files, walked{rel: r, fi: fi}); len(files) >= IgnoredBigFolder {
			return errBig
		}
		return nil
	})
	return files, skipped, errors.Is(err, errBig)
}

// restoreIgnored writes the files of the ignored-files commit into the
// work tree at root (a temporary index read from its tree, then
// `checkout-index -a`; the checkout's own index is not touched), then
// gives the files of modes their permission bits back. A path that exists
// already is left as it is.
func (m *Manager) restoreIgnored(ctx context.Context, root, commit string, modes map[string]fs.FileMode) error {
	repo, err := m.git.Discover(ctx, root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "knightcode-ignored-")
	if err != nil {
		return errorf("restore ignored files: %v", err)
	}
	defer os.RemoveAll(tmp)
	idx := repo.WithIndex(filepath.Join(tmp, "index")).WithConfig("core.fsmonitor=false")
	if err := idx.ReadTree(ctx, commit+"^{tree}", gitcli.ReadTreeOptions{}); err != nil {
		return err
	}
	existed := map[string]bool{}
	for p := range modes {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			existed[p] = true // not written, so not ours to chmod
		}
	}
	if err := idx.CheckoutIndexNew(ctx); err != nil {
		return err
	}
	for p, perm := range modes {
		full := filepath.Join(root, filepath.FromSlash(p))
		if fi, err := os.Lstat(full); existed[p] || err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Chmod(full, perm); err != nil {
			return errorf("restore ignored files: %v", err)
		}
	}
	return nil
}

// WorktreeIncludeFile is the file at a project's root naming, in
// gitignore syntax, the ignored files a new managed worktree gets copies
// of (as Codex and Conductor read it).
const WorktreeIncludeFile = ".worktreeinclude"

// copyIncluded copies into the new worktree at dst the ignored files of
// the main checkout at project that its .worktreeinclude lists, keeping modes and
// symlinks; a path that exists in dst is left as it is. It returns the
// paths copied, sorted; none without the file.
func (m *Manager) copyIncluded(ctx context.Context, project, dst string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(project, WorktreeIncludeFile)); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	src, err := m.git.Discover(ctx, project)
	if err != nil || src.Root == "" {
		return nil, err
	}
	patterns := filepath.Join(src.Root, WorktreeIncludeFile)
	if _, err := os.Stat(patterns); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, errorf("%s: %v", WorktreeIncludeFile, err)
	}
	notIgnored := map[string]bool{}
	if err := src.LsFilesUntracked(ctx, func(p string) error { notIgnored[p] = true; return nil }); err != nil {
		return nil, err
	}
	var listed []string
	if err := src.MatchExcludeFrom(ctx, patterns, func(p string) error {
		if p != "" && !notIgnored[p] && !strings.HasSuffix(p, "/") {
			listed = append(listed, p)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	slices.Sort(listed)
	var copied []string
	for _, p := range listed {
		from := filepath.Join(src.Root, filepath.FromSlash(p))
		to := filepath.Join(dst, filepath.FromSlash(p))
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		ok, err := copyEntry(from, to)
		if err != nil {
			return copied, errorf("copy %s: %v", p, err)
		}
		if ok {
			copied = append(copied, p)
		}
	}
	return copied, nil
}

// copyEntry copies a regular file (with its mode) or a symlink; other
// kinds are skipped (ok false).
func copyEntry(from, to string) (bool, error) {
	fi, err := os.Lstat(from)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return false, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return false, err
		}
		return true, os.Symlink(target, to)
	}
	if !fi.Mode().IsRegular() {
		return false, nil
	}
	in, err := os.Open(from)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, err
	}
	if err := out.Close(); err != nil {
		return false, err
	}
	return true, os.Chmod(to, fi.Mode().Perm())
}

// summary lists what was not kept: up to five paths, then how many more.
func (f *IgnoredFiles) summary() string {
	if f == nil || len(f.NotKept) == 0 {
		return ""
	}
	const show = 5
	list := f.NotKept
	more := ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(" and %d more", len(f.NotKept)-show)
	}
	return strings.Join(list, ", ") + more
}
