package gitstate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file decides when knightcode may hash a working file or write one
// from a blob itself instead of through git (issue 24): only where git
// would store and check out the bytes unchanged. Git converts a file's
// bytes between the working tree and the object database for attributes
// (text, eol, crlf, filter, ident, working-tree-encoding), for
// core.autocrlf (which applies without any attribute), and records modes
// and symlinks by core.fileMode and core.symlinks; everywhere any of these
// may apply, the work goes to git (hash-object with the path,
// checkout-index), which is the reference for them.

// Plain is what decides, for one repository at one moment, whether paths
// are plain ([Plain.Path]); get it with [PlainFor].
type Plain struct {
	repo *gitcli.Repo
	idx  *gitcli.IndexList
	// ok is false when the whole repository converts (core.autocrlf,
	// core.fileMode=false, core.symlinks=false, an attributes file that
	// applies to every path).
	ok bool
}

// PlainFor reads what decides plainness in repo: its configuration
// snapshot and index list (both cached by the Runner while their files are
// stat-unchanged) and the attributes files outside the work tree.
func PlainFor(ctx context.Context, repo *gitcli.Repo) (*Plain, error) {
	cfg, err := repo.Config(ctx)
	if err != nil {
		return nil, err
	}
	idx, err := repo.IndexList(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plain{repo: repo, idx: idx, ok: true}
	if _, set := cfg.Get("core.autocrlf"); set {
		if b, isBool := cfg.Bool("core.autocrlf"); !isBool || b {
			p.ok = false // true or input: CRLF conversion without attributes
		}
	}
	if v, set := cfg.Bool("core.fileMode"); set && !v {
		p.ok = false // modes come from the index, not the file
	}
	if v, set := cfg.Bool("core.symlinks"); set && !v {
		p.ok = false
	}
	if p.ok {
		for _, f := range globalAttributes(cfg, repo) {
			if _, err := os.Stat(f); err == nil || !errors.Is(err, fs.ErrNotExist) {
				p.ok = false
				break
			}
		}
	}
	return p, nil
}

// globalAttributes are the attributes files that apply to every path:
// the repository's info/attributes, core.attributesFile (default
// $XDG_CONFIG_HOME/git/attributes), and the system's.
func globalAttributes(cfg *gitcli.ConfigSnapshot, repo *gitcli.Repo) []string {
	out := []string{filepath.Join(repo.CommonDir, "info", "attributes")}
	home, _ := os.UserHomeDir()
	if f, set := cfg.Get("core.attributesFile"); set && f != "" {
		if rest, ok := strings.CutPrefix(f, "~/"); ok && home != "" {
			f = filepath.Join(home, rest)
		}
		out = append(out, f)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			out = append(out, filepath.Join(xdg, "git", "attributes"))
		}
	}
	if os.Getenv("GIT_ATTR_NOSYSTEM") == "" {
		out = append(out, "/etc/gitattributes")
		if gp := repo.Runner().GitPath(); gp != "" {
			out = append(out, filepath.Join(filepath.Dir(filepath.Dir(gp)), "etc", "gitattributes"))
		}
	}
	return out
}

// Path reports whether git stores the file at p (repository-relative) and
// checks it out byte for byte, with the mode and symlink the file system
// shows: the repository converts nothing (see PlainFor) and no
// .gitattributes file, in the work tree or in the index, is at the top or
// in a folder above p.
func (p *Plain) Path(path string) bool {
	if !p.ok {
		return false
	}
	for i := -1; i < len(path); i++ {
		if i >= 0 && path[i] != '/' {
			continue
		}
		name := ".gitattributes"
		if i > 0 {
			name = path[:i] + "/.gitattributes"
		}
		if len(p.idx.Entries(name)) > 0 {
			return false
		}
		if _, err := os.Lstat(filepath.Join(p.repo.Root, filepath.FromSlash(name))); !isAbsence(err) {
			return false
		}
	}
	return true
}

// Paths reports whether every path is plain.
func (p *Plain) Paths(paths []string) bool {
	for _, path := range paths {
		if !p.Path(path) {
			return false
		}
	}
	return true
}

// Index is the index list the decision was made with.
func (p *Plain) Index() *gitcli.IndexList { return p.idx }

// isAbsence reports an error of Lstat that means nothing is there: not
// found, or a file where a parent folder would be.
func isAbsence(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR))
}

// HashWorktree returns the entry git would add for the plain working file
// p (see [Plain.Path]): a regular file's bytes as a blob (mode 100755 when
// executable), a symlink's target (mode 120000), written to the object
// store; absent when nothing is there (or a file stands in a parent
// folder's place); folder true, and no entry, for a folder.
func HashWorktree(ctx context.Context, s *gitcli.ObjectStore, root, p string) (e Entry, folder bool, err error) {
	full := filepath.Join(root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if err != nil {
		if isAbsence(err) {
			return Entry{}, false, nil
		}
		return Entry{}, false, err
	}
	var data []byte
	mode := "100644"
	switch {
	case fi.IsDir():
		return Entry{}, true, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return Entry{}, false, err
		}
		data, mode = []byte(target), "120000"
	case fi.Mode().IsRegular():
		if data, err = os.ReadFile(full); err != nil {
			return Entry{}, false, err
		}
		if fi.Mode()&0o111 != 0 {
			mode = "100755"
		}
	default:
		return Entry{}, false, nil // a socket or device: git does not add it
	}
	oid, err := s.Write(ctx, "blob", data)
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Mode: mode, OID: oid}, false, nil
}
