package gitstate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// WorktreeTxn keeps what a multi-step action changes in the working tree so
// it can put it back: each saved path's bytes and mode (copied into a
// folder in the git dir, outside the working tree), its symlink target, or
// its absence. Use: [NewWorktreeTxn], [WorktreeTxn.Save] each path before
// it changes, [WorktreeTxn.Undo] on a failure, [WorktreeTxn.Close] always.
// It is not crash-safe: the copies live only as long as the process (a
// later journal replaces it).
type WorktreeTxn struct {
	root  string
	dir   string
	saved []savedPath
}

type savedPath struct {
	path    string
	existed bool
	isDir   bool
	link    string // symlink target, when a symlink
	perm    fs.FileMode
	backup  string // copy of a regular file's bytes
}

// NewWorktreeTxn starts a transaction over the work tree of repo, keeping
// its copies in a new folder knightcode-revert-* of repo.GitDir.
func NewWorktreeTxn(repo *gitcli.Repo) (*WorktreeTxn, error) {
	dir, err := os.MkdirTemp(repo.GitDir, "knightcode-revert-")
	if err != nil {
		return nil, fmt.Errorf("gitstate: revert: %w", err)
	}
	return &WorktreeTxn{root: repo.Root, dir: dir}, nil
}

// Save records path (repository-relative) as it is now.
func (t *WorktreeTxn) Save(p string) error {
	full := filepath.Join(t.root, filepath.FromSlash(p))
	s := savedPath{path: p}
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		t.saved = append(t.saved, s)
		return nil
	case err != nil:
		return err
	}
	s.existed = true
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if s.link, err = os.Readlink(full); err != nil {
			return err
		}
	case fi.IsDir():
		s.isDir = true
	case fi.Mode().IsRegular():
		s.perm = fi.Mode().Perm()
		s.backup = filepath.Join(t.dir, fmt.Sprintf("%d", len(t.saved)))
		if err := copyFile(full, s.backup, 0o600); err != nil {
			return fmt.Errorf("gitstate: keep %s: %w", p, err)
		}
	default:
		return fmt.Errorf("gitstate: %s is not a regular file", p)
	}
	t.saved = append(t.saved, s)
	return nil
}

// Undo puts every saved path back and returns cause, joined with any
// failure to put a path back.
func (t *WorktreeTxn) Undo(cause error) error {
	var errs []error
	for i := len(t.saved) - 1; i >= 0; i-- {
		if err := t.put(t.saved[i]); err != nil {
			errs = append(errs, fmt.Errorf("gitstate: could not put %s back (a copy is in %s): %w", t.saved[i].path, t.dir, err))
		}
	}
	if len(errs) > 0 {
		t.dir = "" // keep the copies for the user
		return errors.Join(append([]error{cause}, errs...)...)
	}
	return cause
}

func (t *WorktreeTxn) put(s savedPath) error {
	full := filepath.Join(t.root, filepath.FromSlash(s.path))
	if fi, err := os.Lstat(full); err == nil {
		if fi.IsDir() {
			if s.isDir {
				return nil
			}
			_ = os.Remove(full) // only if empty; a full folder stays
		} else if err := os.Remove(full); err != nil {
			return err
		}
	}
	if !s.existed {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	switch {
	case s.isDir:
		return os.MkdirAll(full, 0o755)
	case s.link != "":
		return os.Symlink(s.link, full)
	}
	if err := copyFile(s.backup, full, s.perm); err != nil {
		return err
	}
	return os.Chmod(full, s.perm)
}

// Close removes the saved copies (kept after a failed undo).
func (t *WorktreeTxn) Close() {
	if t.dir != "" {
		os.RemoveAll(t.dir)
	}
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
