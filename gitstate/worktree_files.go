package gitstate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// fileTargets sorts paths (repository-relative, /-separated) by what the
// working tree under root holds at each: files lists, in order, the paths
// that hold a file or nothing (what `update-index --add --remove` can
// hash); folders the paths held by a folder; beyond the paths under a
// symlink or a file, which cannot exist (git refuses to add them: "beyond
// a symbolic link").
func fileTargets(root string, paths []string) (files []string, folders, beyond map[string]bool) {
	folders, beyond = map[string]bool{}, map[string]bool{}
	notDir := map[string]bool{} // parent folders that are not folders
	isDir := map[string]bool{}
	for _, p := range paths {
		blocked := false
		for i := strings.IndexByte(p, '/'); i >= 0 && !blocked; {
			parent := p[:i]
			switch {
			case notDir[parent]:
				blocked = true
			case isDir[parent]:
			default:
				fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(parent)))
				if err == nil && !fi.IsDir() {
					notDir[parent], blocked = true, true
				} else {
					isDir[parent] = err == nil
				}
			}
			if next := strings.IndexByte(p[i+1:], '/'); next >= 0 {
				i += 1 + next
			} else {
				break
			}
		}
		if blocked {
			beyond[p] = true
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			folders[p] = true
			continue
		}
		files = append(files, p)
	}
	return files, folders, beyond
}

// seeFiles clears the assume-unchanged bit of paths in the temporary
// index of view, so that `update-index --add` hashes their files instead
// of trusting the entries: a recovery point and a check before a write
// must see what is on disk (git's own checks before overwriting a file
// ignore the bit too).
func seeFiles(ctx context.Context, view *gitcli.Repo, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var limit []string
	if len(paths) <= 256 {
		limit = paths
	}
	marked, err := view.LsFilesAssumeUnchanged(ctx, limit)
	if err != nil || len(marked) == 0 {
		return err
	}
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	var clear []string
	for _, p := range marked {
		if want[p] {
			clear = append(clear, p)
		}
	}
	if len(clear) == 0 {
		return nil
	}
	return view.UpdateIndexNoAssumeUnchanged(ctx, clear)
}

// EmptyFolder reports whether path is a folder that holds no file: it is
// empty, or holds only folders that hold none. git lists no untracked
// file there and removes such a folder to check a file out in its place,
// as it removes a submodule's empty folder when the gitlink goes; it is
// never work to keep (an uninitialized submodule leaves one).
func EmptyFolder(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() || !EmptyFolder(filepath.Join(path, e.Name())) {
			return false
		}
	}
	return true
}

// RemoveEmptyFolder removes path when it is a folder that holds no file
// ([EmptyFolder]), the folders in it deepest first (each only while
// empty: a file made meanwhile stays, and its folders with it); anything
// else is left as it is. It reports whether nothing is at path
// afterwards.
func RemoveEmptyFolder(path string) bool {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if !EmptyFolder(path) {
		return false
	}
	return removeFolders(path)
}

// removeFolders removes the folder path and the folders in it, deepest
// first, each with os.Remove (which leaves a folder that is not empty).
func removeFolders(path string) bool {
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if !e.IsDir() || !removeFolders(filepath.Join(path, e.Name())) {
			return false
		}
	}
	return os.Remove(path) == nil
}
