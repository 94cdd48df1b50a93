package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// FetchError is a fetch of a plugin or marketplace source that failed:
// Source is the source as shown (credentials redacted), Output git's words
// (redacted) or the file system's, Hint (optional) how the request's
// source was read, when that may not be what the user meant. Nothing was
// installed or changed. rpc maps it to externalFailure (reason
// toolFailed, tool git).
type FetchError struct {
	Source string
	Output string
	Hint   string
	Err    error
}

func (e *FetchError) Error() string {
	msg := fmt.Sprintf("fetching %s failed: %s", e.Source, e.Output)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

func (e *FetchError) Unwrap() error { return e.Err }

// fetched is a source's files in a temporary folder of the agent
// directory (so the move into the cache is a rename on one file system).
type fetched struct {
	tmp    string // removed by cleanup
	dir    string // the plugin (or catalog) folder inside tmp
	commit string // the commit, or the folder's content hash
}

func (f *fetched) cleanup() { _ = os.RemoveAll(f.tmp) }

// tempDir makes a new folder under <agentDir>/plugins/tmp.
func (m *Manager) tempDir() (string, error) {
	root := filepath.Join(m.agentDir, "plugins", "tmp")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(root, "fetch-")
}

// fetch gets src's files (GitHub and git sources: a clone at Ref, or the
// default branch; a folder: a copy without .git) into a temporary folder,
// keeping only Path's subfolder. Errors: [*FetchError] naming the source
// and git's words; the temporary folder is removed on failure.
func (m *Manager) fetch(ctx context.Context, src Source) (*fetched, error) {
	tmp, err := m.tempDir()
	if err != nil {
		return nil, err
	}
	f := &fetched{tmp: tmp}
	fail := func(output string, err error) (*fetched, error) {
		f.cleanup()
		return nil, &FetchError{Source: Redact(src.Canonical()), Output: Redact(output), Err: err}
	}
	switch src.Kind {
	case KindPath:
		from := src.Dir
		if src.Path != "" {
			from = filepath.Join(from, filepath.FromSlash(src.Path))
		}
		f.dir = filepath.Join(tmp, "copy")
		if err := copyTree(from, f.dir); err != nil {
			return fail(err.Error(), err)
		}
		if f.commit, err = contentHash(f.dir); err != nil {
			return fail(err.Error(), err)
		}
		return f, nil
	case KindGitHub, KindGit:
	default:
		return fail("not a fetchable source", errors.New("plugins: not a fetchable source"))
	}
	repo := filepath.Join(tmp, "repo")
	if err := m.git.CloneSource(ctx, src.CloneURL(), repo); err != nil {
		return fail(gitWords(err), err)
	}
	revs := []string{"HEAD"}
	if src.Ref != "" {
		revs = []string{"refs/remotes/origin/" + src.Ref, "refs/tags/" + src.Ref, src.Ref}
	}
	for _, rev := range revs {
		if f.commit, err = m.git.ResolveCommit(ctx, repo, rev); err == nil {
			break
		}
	}
	if f.commit == "" {
		return fail(fmt.Sprintf("%s names no branch, tag or commit of the repository", src.Ref), err)
	}
	if err := m.git.CheckoutDetached(ctx, repo, f.commit); err != nil {
		return fail(gitWords(err), err)
	}
	f.dir = repo
	if src.Path != "" {
		f.dir = filepath.Join(repo, filepath.FromSlash(src.Path))
		if st, err := os.Lstat(f.dir); err != nil || !st.IsDir() {
			return fail(fmt.Sprintf("%s is not a folder of the repository at %s", src.Path, f.commit), err)
		}
	} else if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		return fail(err.Error(), err)
	}
	return f, nil
}

// gitWords is git's stderr of a failed call, else the error's text.
func gitWords(err error) string {
	if ge, ok := errors.AsType[*gitcli.Error](err); ok && ge.Stderr != "" {
		return strings.TrimSpace(ge.Stderr)
	}
	return err.Error()
}

// place moves a fetched plugin folder into its immutable cache folder
// <agentDir>/plugins/cache/<hash(identity)>/<commit>/ by one rename and
// returns it. A folder already there (the same commit, installed before or
// by a concurrent install) is kept and the fetched copy dropped.
func (m *Manager) place(identity string, f *fetched) (string, error) {
	dst := config.PluginDir(m.agentDir, identity, f.commit)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if _, err := os.Lstat(dst); err == nil {
		return dst, nil
	}
	if err := os.Rename(f.dir, dst); err != nil {
		if _, serr := os.Lstat(dst); serr == nil {
			return dst, nil
		}
		return "", err
	}
	return dst, nil
}

// copyTree copies the folder from into to (which must not exist): folders,
// regular files with their executable bit, symbolic links as links; .git
// is left out.
func copyTree(from, to string) error {
	st, err := os.Stat(from)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", from)
	}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.Name() == ".git" && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm()|0o600)
		}
		return nil
	})
}

// contentHash is the SHA-256 (hex) of a folder's contents: each entry's
// slash-separated path, kind, executable bit and bytes (a link's target),
// in path order; a FIFO, socket or device by its kind only, never read. A
// folder source's "commit".
func contentHash(dir string) (string, error) {
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		st, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		switch {
		case st.IsDir():
			fmt.Fprintf(h, "d %s\x00", filepath.ToSlash(rel))
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "l %s\x00%s\x00", filepath.ToSlash(rel), target)
		case !st.Mode().IsRegular():
			// A FIFO, socket or device: its kind only (reading one would
			// block; copyDir does not copy it).
			fmt.Fprintf(h, "o %s %s\x00", filepath.ToSlash(rel), st.Mode().Type())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "f %s %o %d\x00", filepath.ToSlash(rel), st.Mode().Perm()&0o100, len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
