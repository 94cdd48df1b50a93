package diffscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file makes single-hunk actions exact (issue 15, "Wrong results found
// on real repositories' history"). A hunk cut out of a file's diff carries
// the line numbers git printed for the whole diff; `git apply` takes the
// start on the side it produces as its position guess (apply.c looks for
// the preimage near newpos, assuming earlier hunks were applied) and
// searches outward from there, so on a file of repeated blocks it can patch
// the wrong place and succeed. Instead the result is computed here: the
// hunk is applied to the blob it was read from, at its own numbers on that
// side (the old start going forward, the new start in reverse: the header
// rebased to the state it applies to), with go-gitdiff's strict applier (no
// fuzz, no offset search, every context and removed line compared), and the
// resulting blob is written to the object store (in-process, or git's
// helpers: gitcli.ObjectStore); the index entry is written by git
// (update-index), the working file by git's checkout-index wherever git
// would convert it (filters, eol attributes, core.autocrlf) and from the
// blob's bytes elsewhere (gitstate.Plain), so what lands is what git
// would write. The blob the hunk applies to is checked to
// be the one the read saw before anything is written.

// textFragments returns the selected fragments of p (indexes into p.frags)
// parsed by go-gitdiff, in order.
func (p *rawPatch) textFragments(sel ...int) ([]*gitdiff.TextFragment, error) {
	patch, err := p.textPatch(sel...)
	if err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, err
	}
	return files[0].TextFragments, nil
}

// applyExact applies frags (fragments of one diff, any order) to src: each
// fragment's lines on the side it applies to (its old side; its new side
// when reverse) must be src's lines at that side's own start, exactly. A
// fragment that does not match is a [*ConflictError] patchFailed naming path
// with go-gitdiff's message as Output.
func applyExact(path string, src []byte, frags []*gitdiff.TextFragment, reverse bool) ([]byte, error) {
	fs := make([]*gitdiff.TextFragment, len(frags))
	for i, f := range frags {
		fs[i] = strictFragment(f, reverse)
	}
	sort.SliceStable(fs, func(a, b int) bool { return fs[a].OldPosition < fs[b].OldPosition })
	var out bytes.Buffer
	a := gitdiff.NewTextApplier(&out, bytes.NewReader(src))
	for _, f := range fs {
		if err := a.ApplyFragment(f); err != nil {
			var c *gitdiff.Conflict
			if errors.As(err, &c) {
				return nil, &ConflictError{Reason: ReasonPatchFailed, Paths: []string{path}, Output: fmt.Sprintf("%s: hunk %s does not apply at its own lines: %v", path, f.Header(), err)}
			}
			return nil, err
		}
	}
	if err := a.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// strictFragment returns f (reversed when reverse) with positions as
// go-gitdiff's applier reads them. git's "-5,0" means "after line 5" and
// "+0,0" an empty side; go-gitdiff starts every fragment at position-1 and
// takes a new side at 0 for a whole-file deletion, so a side without lines
// starts one line further on.
func strictFragment(f *gitdiff.TextFragment, reverse bool) *gitdiff.TextFragment {
	g := *f
	if reverse {
		g.OldPosition, g.NewPosition = f.NewPosition, f.OldPosition
		g.OldLines, g.NewLines = f.NewLines, f.OldLines
		g.LinesAdded, g.LinesDeleted = f.LinesDeleted, f.LinesAdded
		g.Lines = make([]gitdiff.Line, len(f.Lines))
		for i, l := range f.Lines {
			switch l.Op {
			case gitdiff.OpAdd:
				l.Op = gitdiff.OpDelete
			case gitdiff.OpDelete:
				l.Op = gitdiff.OpAdd
			}
			g.Lines[i] = l
		}
		// A hunk lists its removed lines before its added ones; order
		// does not matter to the applier, which reads old lines in order
		// and writes new ones in order.
	}
	if g.OldLines == 0 {
		g.OldPosition++
	}
	if g.NewLines == 0 {
		g.NewPosition++
	}
	return &g
}

// readBlob returns the content of blob oid of repo, read through its
// object store (in-process where go-git handles the repository).
func readBlob(ctx context.Context, repo *gitcli.Repo, oid string) ([]byte, error) {
	s, err := repo.Objects(ctx)
	if err != nil {
		return nil, err
	}
	obj, err := s.Read(ctx, oid)
	if err != nil {
		return nil, err
	}
	if obj.Type != "blob" {
		return nil, fmt.Errorf("diffscope: %s is a %s, not a blob", oid, obj.Type)
	}
	return obj.Data, nil
}

// worktreeBlob returns the blob id of the working file p as git add would
// store it, written to the object database, and its mode as git would
// record it (100755 when executable). A path that is not a regular file
// (missing, a folder, a symlink) is reported with ok false. Where git
// converts nothing for p (gitstate.Plain) the file is hashed in-process;
// otherwise git hashes it through the repository's filters
// ([gitcli.Repo.HashObject] with its path).
func worktreeBlob(ctx context.Context, repo *gitcli.Repo, p string) (oid, mode string, ok bool, err error) {
	full := filepath.Join(repo.Root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	plain, err := gitstate.PlainFor(ctx, repo)
	if err != nil {
		return "", "", false, err
	}
	if plain.Path(p) {
		s, err := repo.Objects(ctx)
		if err != nil {
			return "", "", false, err
		}
		e, _, err := gitstate.HashWorktree(ctx, s, repo.Root, p)
		if err != nil || e.Absent() || !isRegularMode(e.Mode) {
			return "", "", false, err
		}
		return e.OID, e.Mode, true, nil
	}
	f, err := os.Open(full)
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	if oid, err = repo.HashObject(ctx, f, gitcli.HashOptions{Write: true, Path: p}); err != nil {
		return "", "", false, err
	}
	mode = "100644"
	if fi.Mode()&0o111 != 0 {
		mode = "100755"
	}
	return oid, mode, true, nil
}

// writeBlob stores data as a blob, as it is (no filters), through the
// repository's object store, and returns its id.
func writeBlob(ctx context.Context, repo *gitcli.Repo, data []byte) (string, error) {
	s, err := repo.Objects(ctx)
	if err != nil {
		return "", err
	}
	return s.Write(ctx, "blob", data)
}

// exactHunkBlob applies frags to blob base of path (reversed when reverse)
// and returns the id of the resulting blob, written to the object
// database. A fragment that does not match base at its own lines is a
// [*ConflictError] patchFailed, and nothing is written.
func exactHunkBlob(ctx context.Context, repo *gitcli.Repo, path, base string, frags []*gitdiff.TextFragment, reverse bool) (string, error) {
	src, err := readBlob(ctx, repo, base)
	if err != nil {
		return "", err
	}
	out, err := applyExact(path, src, frags, reverse)
	if err != nil {
		return "", err
	}
	return writeBlob(ctx, repo, out)
}
