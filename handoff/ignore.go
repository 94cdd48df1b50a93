package handoff

// A handoff moves .gitignore files like any other change, but the files
// they ignore stay where they are: what each side ignores changes under
// them.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// isGitignore reports whether the repository-relative path p is a
// .gitignore file.
func isGitignore(p string) bool {
	return p == ".gitignore" || strings.HasSuffix(p, "/.gitignore")
}

// movedIgnoreFile is one .gitignore file of the state a handoff moves:
// its repository-relative path and its rules. A symbolic link named
// .gitignore has none: git does not follow it (since 2.32, it opens
// .gitignore files with O_NOFOLLOW), so the mirror holds an empty file
// there (and no symbolic link check-ignore would refuse a path beyond).
type movedIgnoreFile struct {
	path string
	data []byte
}

// movedIgnoreFiles reads the .gitignore files of the state a handoff
// moves into the destination: those of tree (the captured worktree tree
// of a run) when tree is not "", else those of src's work tree that a
// capture would hold — tracked, or untracked and not ignored (Plan, which
// has no capture). A tracked one deleted from the work tree does not
// move.
func movedIgnoreFiles(ctx context.Context, src *gitcli.Repo, tree string) ([]movedIgnoreFile, error) {
	var out []movedIgnoreFile
	if tree == "" {
		names, err := src.LsFilesGitignores(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range names {
			if !isGitignore(p) {
				continue
			}
			f, ok, err := readIgnoreFile(filepath.Join(src.Root, filepath.FromSlash(p)))
			if err != nil {
				return nil, err
			}
			if ok {
				f.path = p
				out = append(out, f)
			}
		}
		return out, nil
	}
	entries, err := src.LsTree(ctx, tree, true)
	if err != nil {
		return nil, err
	}
	var cf *gitcli.CatFile
	defer func() {
		if cf != nil {
			cf.Close()
		}
	}()
	for _, e := range entries {
		if e.Type != "blob" || !isGitignore(e.Path) {
			continue
		}
		if cf == nil {
			if cf, err = src.StartCatFile(ctx); err != nil {
				return nil, err
			}
		}
		obj, err := cf.Read(e.OID)
		if err != nil {
			return nil, err
		}
		f := movedIgnoreFile{path: e.Path, data: obj.Data}
		if e.Mode == "120000" {
			f.data = nil
		}
		out = append(out, f)
	}
	return out, nil
}

// readIgnoreFile reads the .gitignore file at abs: its bytes, none for
// a symbolic link; ok is false when there is no file there (deleted, or
// a folder).
func readIgnoreFile(abs string) (f movedIgnoreFile, ok bool, err error) {
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist) || isNotDir(err):
		return f, false, nil
	case err != nil:
		return f, false, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return f, true, nil
	case !fi.Mode().IsRegular():
		return f, false, nil
	}
	b, err := os.ReadFile(abs)
	return movedIgnoreFile{data: b}, err == nil, err
}

// namedFiles is how many unignored files a refusal names one by one;
// past it, a folder whose every file becomes untracked is named instead
// of its files ("node_modules/").
const namedFiles = 20

// unignored lists the files that dst ignores today and that the rules in
// force in dst after a handoff moves the .gitignore files of the moved
// state (see [movedIgnoreFiles]) into it would not ignore: they would
// turn into untracked files of dst, which the move does not own and its
// verification would find.
//
// The rules after the move are the moved .gitignore files, dst's own
// ignored .gitignore files (they stay), $GIT_COMMON_DIR/info/exclude and
// core.excludesFile (the repository's, the same on both sides), applied
// with git's walk: an excluded folder is not read, and a file inside one
// cannot be re-included. Git itself applies them, so nothing here
// matches patterns: a temporary mirror work tree holds those .gitignore
// files, and `check-ignore` run there ([gitcli.Repo.CheckIgnoredIn])
// answers for dst's ignored paths, level by level. dst lists its ignored
// files and its wholly ignored folders ([gitcli.Repo.LsFilesIgnored]); a
// folder the new rules still exclude keeps everything in it ignored and
// is not read; one they do not exclude is read from dst, its .gitignore
// files copied into the mirror, and its entries asked about in turn. A
// nested repository stays one and is skipped, as is an ignored path
// where the moved state has a .gitignore file or needs a folder (the
// collision check names it).
//
// When there are more than [namedFiles], a folder is named ("dir/")
// instead of its files when every file under it is one of them and it is
// one of dst's wholly ignored folders or inside one (nothing tracked
// under it).
func unignored(ctx context.Context, src, dst *gitcli.Repo, movedTree string) ([]string, error) {
	moved, err := movedIgnoreFiles(ctx, src, movedTree)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knightcode-ignore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	m := &mirror{root: tmp, dirs: map[string]bool{"": true}, files: map[string]bool{}}
	for _, f := range moved {
		if ok, err := m.write(f.path, f.data); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("handoff: cannot mirror the moved %s", f.path)
		}
	}
	var (
		files   []string            // dst's ignored files to ask about
		level   []string            // folders to ask about, without "/"
		whole   []string            // dst's wholly ignored folders
		blocked = map[string]bool{} // folders holding something still ignored
	)
	block := func(p string) {
		for d := pathDir(p); d != "" && !blocked[d]; d = pathDir(d) {
			blocked[d] = true
		}
	}
	// add takes one ignored entry of dst: a folder waits for its level,
	// a .gitignore file is copied into the mirror.
	add := func(p string, isDir bool) error {
		abs := filepath.Join(dst.Root, filepath.FromSlash(p))
		if isDir {
			if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
				block(p + "/") // a nested repository
				return nil
			}
			if ok, err := m.mkdir(p); err != nil || !ok {
				block(p + "/") // a moved .gitignore is in the way
				return err
			}
			level = append(level, p)
			return nil
		}
		if m.files[p] {
			return nil // a moved .gitignore goes there
		}
		if isGitignore(p) {
			f, ok, err := readIgnoreFile(abs)
			if err != nil || !ok {
				return err
			}
			if ok, err := m.write(p, f.data); err != nil || !ok {
				return err
			}
		}
		files = append(files, p)
		return nil
	}
	err = dst.LsFilesIgnored(ctx, func(p string) error {
		d, isDir := strings.CutSuffix(p, "/")
		if isDir {
			whole = append(whole, d)
		}
		return add(d, isDir)
	})
	if err != nil {
		return nil, err
	}
	for len(level) > 0 {
		excluded, err := dst.CheckIgnoredIn(ctx, m.root, level)
		if err != nil {
			return nil, err
		}
		todo := level
		level = nil
		for _, d := range todo {
			if excluded[d] {
				block(d + "/x")
				continue
			}
			entries, err := os.ReadDir(filepath.Join(dst.Root, filepath.FromSlash(d)))
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				if e.Name() == ".git" {
					continue
				}
				if err := add(d+"/"+e.Name(), e.IsDir()); err != nil {
					return nil, err
				}
			}
		}
	}
	ignored, err := dst.CheckIgnoredIn(ctx, m.root, files)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range files {
		if ignored[p] {
			block(p)
		} else {
			out = append(out, p)
		}
	}
	if len(out) > namedFiles {
		out = foldFolders(out, whole, blocked)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// foldFolders names each path of un by its topmost folder that holds
// nothing still ignored (not blocked) and is one of dst's wholly ignored
// folders (whole) or inside one, or by itself when there is none.
func foldFolders(un, whole []string, blocked map[string]bool) []string {
	inWhole := map[string]bool{}
	for _, d := range whole {
		inWhole[d] = true
	}
	var out []string
	for _, p := range un {
		name := p
		var chain []string // p's folders, deepest first
		for d := pathDir(p); d != ""; d = pathDir(d) {
			chain = append(chain, d)
		}
		under := false // some folder of chain, or above it, is wholly ignored
		for i := len(chain) - 1; i >= 0; i-- {
			d := chain[i]
			if under = under || inWhole[d]; under && !blocked[d] {
				name = d + "/"
				break
			}
		}
		out = append(out, name)
	}
	return out
}

// mirror is the temporary work tree [unignored] builds: .gitignore files
// and folders only.
type mirror struct {
	root  string
	dirs  map[string]bool // folders made, repository relative ("" the root)
	files map[string]bool // files written
}

// mkdir makes the folder p (repository relative) and its parents in the
// mirror. ok is false, with no error, when a file is in the way.
func (m *mirror) mkdir(p string) (ok bool, err error) {
	if m.dirs[p] {
		return true, nil
	}
	if err := os.MkdirAll(filepath.Join(m.root, filepath.FromSlash(p)), 0o700); err != nil {
		if isNotDir(err) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, err
	}
	for d := p; !m.dirs[d]; d = pathDir(d) {
		m.dirs[d] = true
	}
	return true, nil
}

// write makes the file p (repository relative) in the mirror with data.
// ok is false, with no error, when the path is taken: a file is where a
// folder of p goes, or p exists.
func (m *mirror) write(p string, data []byte) (ok bool, err error) {
	if ok, err := m.mkdir(pathDir(p)); err != nil || !ok {
		return false, err
	}
	abs := filepath.Join(m.root, filepath.FromSlash(p))
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if errors.Is(err, os.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err == nil {
		m.files[p] = true
	}
	return err == nil, err
}

// leftUntracked lists the untracked files of src once it is clean: files
// only the moved .gitignore rules ignored, which stayed (ignored files do
// not move) and which src's own rules, HEAD's again, no longer ignore.
// The handoff's result warns of them: the checkout is not clean until
// they are moved or deleted, and a handoff back into it is refused.
// A folder of such files is named once ("dist/"); untracked nested
// repositories, which stay anyway (see nestedWarning), are not named.
func leftUntracked(ctx context.Context, src *gitcli.Repo) (string, error) {
	var left []string
	err := src.LsFilesUntrackedFolded(ctx, func(p string) error {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			if _, err := os.Lstat(filepath.Join(src.Root, filepath.FromSlash(dir), ".git")); err == nil {
				return nil
			}
			// A folder holding nested repositories alone.
			if files, _, err := filesIn(src.Root, dir); err != nil || len(files) == 0 {
				return err
			}
		}
		left = append(left, p)
		return nil
	})
	if err != nil || len(left) == 0 {
		return "", err
	}
	what, them := fmt.Sprintf("%d files or folders", len(left)), "them"
	if len(left) == 1 {
		what, them = "a file", "it"
		if strings.HasSuffix(left[0], "/") {
			what = "a folder"
		}
	}
	if len(left) > 5 {
		left = append(left[:5], "...")
	}
	return fmt.Sprintf("%s stayed in %s, ignored only by the .gitignore rules the handoff moved, and untracked there now (%s): move or delete %s before handing the thread back there",
		what, src.Root, strings.Join(left, ", "), them), nil
}
