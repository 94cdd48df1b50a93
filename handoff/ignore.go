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
// its repository-relative path and its bytes, or its link target when
// it is a symbolic link (git does not follow one: it reads no rules
// from it, and the mirror keeps it a link).
type movedIgnoreFile struct {
	path string
	data []byte
	link bool
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
		out = append(out, movedIgnoreFile{path: e.Path, data: obj.Data, link: e.Mode == "120000"})
	}
	return out, nil
}

// readIgnoreFile reads the .gitignore file at abs: its bytes, or its
// link target; ok is false when there is no file there (deleted, or a
// folder).
func readIgnoreFile(abs string) (f movedIgnoreFile, ok bool, err error) {
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist) || isNotDir(err):
		return f, false, nil
	case err != nil:
		return f, false, err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		return movedIgnoreFile{data: []byte(t), link: true}, err == nil, err
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
// force in dst after a handoff moves the .gitignore files moved (see
// [movedIgnoreFiles]) into it would not ignore: they would turn into
// untracked files of dst, which the move does not own and its
// verification would find.
//
// The rules after the move are the moved .gitignore files, dst's own
// ignored .gitignore files (they stay), $GIT_COMMON_DIR/info/exclude and
// core.excludesFile (the repository's, the same on both sides), applied
// with git's walk: an excluded folder is not read, and a file inside one
// cannot be re-included. Git itself applies them, so nothing here
// matches patterns: a temporary mirror work tree holds those .gitignore
// files and an empty file at the path of each of dst's ignored files
// ([gitcli.Repo.LsFilesIgnoredEach]), and `ls-files -o --exclude-standard`
// run there with an empty index ([gitcli.Repo.LsFilesOthersIn]) lists the
// ones no longer ignored. A nested repository stays one and is skipped,
// as is an ignored path where the moved state has a .gitignore file or
// needs a folder (the collision check names it).
//
// When there are more than [namedFiles], a folder is named ("dir/")
// instead of its files when every file under it is one of them and dst
// lists the folder or a parent as wholly ignored
// ([gitcli.Repo.LsFilesIgnored]: nothing tracked under it).
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
	m := &mirror{root: filepath.Join(tmp, "wt"), dirs: map[string]bool{"": true}}
	if err := os.Mkdir(m.root, 0o700); err != nil {
		return nil, err
	}
	for _, f := range moved {
		if ok, err := m.write(f.path, f.data, f.link); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("handoff: cannot mirror the moved %s", f.path)
		}
	}
	placeholders := map[string]bool{} // dst's ignored files in the mirror
	var nested []string               // dst's ignored nested repositories
	err = dst.LsFilesIgnoredEach(ctx, func(p string) error {
		if strings.HasSuffix(p, "/") {
			nested = append(nested, strings.TrimSuffix(p, "/"))
			return nil
		}
		if p == ".git" || strings.HasSuffix(p, "/.git") {
			return nil
		}
		var f movedIgnoreFile
		if isGitignore(p) {
			var ok bool
			var err error
			if f, ok, err = readIgnoreFile(filepath.Join(dst.Root, filepath.FromSlash(p))); err != nil || !ok {
				return err
			}
		}
		ok, err := m.write(p, f.data, f.link)
		if ok {
			placeholders[p] = true
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(placeholders) == 0 {
		return nil, nil
	}
	var out []string
	err = dst.LsFilesOthersIn(ctx, m.root, filepath.Join(tmp, "index"), func(p string) error {
		if placeholders[p] {
			out = append(out, p)
		}
		return nil
	})
	if err != nil || len(out) <= namedFiles {
		slices.Sort(out)
		return out, err
	}
	return foldFolders(ctx, dst, out, placeholders, nested)
}

// foldFolders replaces the files of un under a folder by the folder
// ("dir/", the topmost such) when every ignored file of dst under it
// (ignored: dst's ignored files, nested: its ignored nested repositories)
// is in un and dst lists the folder or one of its parents as wholly
// ignored. Sorted.
func foldFolders(ctx context.Context, dst *gitcli.Repo, un []string, ignored map[string]bool, nested []string) ([]string, error) {
	whole := map[string]bool{} // dst's wholly ignored folders, without "/"
	err := dst.LsFilesIgnored(ctx, func(p string) error {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			whole[d] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	total, count := map[string]int{}, map[string]int{}
	addUp := func(m map[string]int, p string) {
		for d := pathDir(p); d != ""; d = pathDir(d) {
			m[d]++
		}
	}
	for p := range ignored {
		addUp(total, p)
	}
	for _, p := range nested {
		addUp(total, p)
	}
	for _, p := range un {
		addUp(count, p)
	}
	inWhole := func(d string) bool {
		for ; d != ""; d = pathDir(d) {
			if whole[d] {
				return true
			}
		}
		return false
	}
	var out []string
	for _, p := range un {
		name := p
		for d := pathDir(p); d != ""; d = pathDir(d) {
			if count[d] == total[d] && inWhole(d) {
				name = d + "/"
			}
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// mirror is a temporary work tree [unignored] builds.
type mirror struct {
	root string
	dirs map[string]bool // folders made, repository relative ("" the root)
}

// write makes the file p (repository relative) in the mirror with data,
// or a symbolic link to data when link. ok is false, with no error, when
// the path is taken: a file is where a folder of p goes, or p exists.
func (m *mirror) write(p string, data []byte, link bool) (ok bool, err error) {
	abs := filepath.Join(m.root, filepath.FromSlash(p))
	if d := pathDir(p); !m.dirs[d] {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			if isNotDir(err) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, os.ErrExist) {
				return false, nil
			}
			return false, err
		}
		for ; !m.dirs[d]; d = pathDir(d) {
			m.dirs[d] = true
		}
	}
	if link {
		err = os.Symlink(string(data), abs)
	} else {
		var f *os.File
		if f, err = os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if errors.Is(err, os.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	return err == nil, err
}

// leftUntracked lists the untracked files of src once it is clean: files
// only the moved .gitignore rules ignored, which stayed (ignored files do
// not move) and which src's own rules, HEAD's again, no longer ignore.
// The handoff's result warns of them: the checkout is not clean until
// they are moved or deleted, and a handoff back into it is refused.
func leftUntracked(ctx context.Context, src *gitcli.Repo) (string, error) {
	var left []string
	err := src.LsFilesUntracked(ctx, func(p string) error {
		left = append(left, p)
		return nil
	})
	if err != nil || len(left) == 0 {
		return "", err
	}
	what, them := fmt.Sprintf("%d files", len(left)), "them"
	if len(left) == 1 {
		what, them = "a file", "it"
	}
	if len(left) > 5 {
		left = append(left[:5], "...")
	}
	return fmt.Sprintf("%s stayed in %s, ignored only by the .gitignore rules the handoff moved, and untracked there now (%s): move or delete %s before handing the thread back there",
		what, src.Root, strings.Join(left, ", "), them), nil
}
