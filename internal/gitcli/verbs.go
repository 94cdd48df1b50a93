package gitcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// This file holds one method per git verb knightcode runs on a repository.
// Each builds its argv here, once, with the pinned flags; callers pass
// typed options, never raw argv. Object ids are full hex ids; paths are
// repository-relative, /-separated and literal (GIT_LITERAL_PATHSPECS=1),
// always after "--" or on stdin with -z.

// exitCode reports git's exit code when err is a *Error, else -2.
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -2
}

func trimmed(out []byte, err error) (string, error) {
	return strings.TrimSpace(string(out)), err
}

func nulList(paths []string) *bytes.Buffer {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return &b
}

// nulRecords splits NUL-terminated output into its non-empty records.
func nulRecords(out []byte) []string {
	var recs []string
	for _, r := range strings.Split(string(out), "\x00") {
		if r != "" {
			recs = append(recs, r)
		}
	}
	return recs
}

// eachNul calls fn with every NUL-terminated record of r (a final record
// without its NUL is passed too).
func eachNul(r io.Reader, fn func(rec string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		rec, err := br.ReadString(0)
		if rec != "" {
			if ferr := fn(strings.TrimSuffix(rec, "\x00")); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Revisions.

// Head resolves HEAD: its commit and tree, with one `rev-parse
// HEAD^{commit} HEAD^{tree}`. On an unborn branch (verified with
// `rev-parse -q --verify HEAD^{commit}` exiting 1) commit is "" and tree
// the empty tree.
func (r *Repo) Head(ctx context.Context) (commit, tree string, err error) {
	out, err := r.git.run(ctx, r.cmd("rev-parse", "HEAD^{commit}", "HEAD^{tree}"))
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "unknown revision") {
			if _, verr := r.git.run(ctx, r.cmd("rev-parse", "-q", "--verify", "HEAD^{commit}")); exitCode(verr) == 1 {
				return "", r.EmptyTree(), nil
			} else if verr != nil {
				return "", "", verr
			}
		}
		return "", "", err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", fmt.Errorf("gitcli: unexpected rev-parse output %q", out)
	}
	return f[0], f[1], nil
}

// ResolveCommit resolves rev to a commit id (`rev-parse -q --verify
// --end-of-options <rev>^{commit}`); ok is false when rev names no commit
// (git exits 1, or rev holds a NUL, which no name holds and no argument
// can carry). A malformed name is git's error (exit 128).
func (r *Repo) ResolveCommit(ctx context.Context, rev string) (id string, ok bool, err error) {
	if strings.ContainsRune(rev, 0) {
		return "", false, nil // no argument can carry it, and no ref or object name holds one
	}
	out, err := r.git.run(ctx, r.cmd("rev-parse", "-q", "--verify", "--end-of-options", rev+"^{commit}"))
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// VerifyRef resolves ref as it is (`rev-parse -q --verify <ref>`); ok is
// false when it names nothing (exit 1).
func (r *Repo) VerifyRef(ctx context.Context, ref string) (id string, ok bool, err error) {
	out, err := r.git.run(ctx, r.cmd("rev-parse", "-q", "--verify", ref))
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// TreeOf returns the tree of rev (`rev-parse --verify <rev>^{tree}`).
func (r *Repo) TreeOf(ctx context.Context, rev string) (string, error) {
	return trimmed(r.git.run(ctx, r.cmd("rev-parse", "--verify", rev+"^{tree}")))
}

// TreeAndParents returns commit's tree and its parents in order, with one
// `rev-parse <commit>^{tree} <commit>^@`.
func (r *Repo) TreeAndParents(ctx context.Context, commit string) (tree string, parents []string, err error) {
	out, err := r.git.run(ctx, r.cmd("rev-parse", commit+"^{tree}", commit+"^@"))
	if err != nil {
		return "", nil, err
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", nil, fmt.Errorf("gitcli: unexpected rev-parse output %q", out)
	}
	return f[0], f[1:], nil
}

// Upstream returns the full ref name of the current branch's upstream
// (`rev-parse --symbolic-full-name @{upstream}`); ok is false when there is
// none (or HEAD is detached).
func (r *Repo) Upstream(ctx context.Context) (ref string, ok bool, err error) {
	out, err := r.git.run(ctx, r.cmd("rev-parse", "--symbolic-full-name", "@{upstream}"))
	if err != nil {
		if exitCode(err) == 128 && !errors.Is(err, ErrNotRepo) {
			return "", false, nil
		}
		return "", false, err
	}
	ref = strings.TrimSpace(string(out))
	return ref, ref != "", nil
}

// SymbolicRef reads the symbolic ref name (`symbolic-ref -q <name>`); ok is
// false when name is not a symbolic ref (exit 1: a detached HEAD, a missing
// refs/remotes/origin/HEAD).
func (r *Repo) SymbolicRef(ctx context.Context, name string) (target string, ok bool, err error) {
	out, err := r.git.run(ctx, r.cmd("symbolic-ref", "-q", name))
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	target = strings.TrimSpace(string(out))
	return target, target != "", nil
}

// MergeBase returns the best common ancestor of a and b (`merge-base a
// b`); ok is false when they have none (exit 1).
func (r *Repo) MergeBase(ctx context.Context, a, b string) (base string, ok bool, err error) {
	out, err := r.git.run(ctx, r.cmd("merge-base", a, b))
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// RevListCount counts the commits reachable from tips and from none of
// not (`rev-list --count <tips> --not <not>`); with notAllRefs, also from
// no branch, remote-tracking ref or tag (--branches --remotes --tags).
func (r *Repo) RevListCount(ctx context.Context, tips, not []string, notAllRefs bool) (int, error) {
	args := append([]string{"rev-list", "--count"}, tips...)
	args = append(args, "--not")
	args = append(args, not...)
	if notAllRefs {
		args = append(args, "--branches", "--remotes", "--tags")
	}
	s, err := trimmed(r.git.run(ctx, r.cmd(args...)))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

// Index and work tree reads.

// IndexEntry is one entry of `ls-files -s`: octal mode, object id, stage
// (0, or 1-3 for an unmerged path) and path.
type IndexEntry struct {
	Mode, OID string
	Stage     int
	Path      string
}

// LsFilesStage streams the index entries (`ls-files -s -z [-- <paths>]`)
// to each, in index order; an unmerged path comes once per stage.
func (r *Repo) LsFilesStage(ctx context.Context, paths []string, each func(IndexEntry) error) error {
	args := []string{"ls-files", "-s", "-z"}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return r.lsFiles(ctx, args, each)
}

// LsFilesUnmerged lists the unmerged entries of the index (`ls-files -u
// -z`), one per stage, in index order.
func (r *Repo) LsFilesUnmerged(ctx context.Context) ([]IndexEntry, error) {
	var out []IndexEntry
	err := r.lsFiles(ctx, []string{"ls-files", "-u", "-z"}, func(e IndexEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

func (r *Repo) lsFiles(ctx context.Context, args []string, each func(IndexEntry) error) error {
	return r.git.Stream(ctx, r.cmd(args...), func(rd io.Reader) error {
		return eachNul(rd, func(rec string) error {
			// "<mode> <oid> <stage>\t<path>"
			meta, path, ok := strings.Cut(rec, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) != 3 {
				return fmt.Errorf("gitcli: unexpected ls-files record %q", rec)
			}
			stage, err := strconv.Atoi(f[2])
			if err != nil {
				return fmt.Errorf("gitcli: unexpected ls-files record %q", rec)
			}
			return each(IndexEntry{Mode: f[0], OID: f[1], Stage: stage, Path: path})
		})
	})
}

// LsFilesAssumeUnchanged lists the index's entries marked
// assume-unchanged (`ls-files -v -z [-- paths]`: a lowercase tag), limited
// to paths when given, in index order. git trusts such an entry without
// looking at the file, which `update-index --add` does too; a check that
// must see the file clears the bit in a copy of the index first
// ([Repo.UpdateIndexNoAssumeUnchanged]).
func (r *Repo) LsFilesAssumeUnchanged(ctx context.Context, paths []string) ([]string, error) {
	args := []string{"ls-files", "-v", "-z"}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	var out []string
	err := r.git.Stream(ctx, r.cmd(args...), func(rd io.Reader) error {
		return eachNul(rd, func(rec string) error {
			tag, path, ok := strings.Cut(rec, " ")
			if ok && len(tag) == 1 && tag[0] >= 'a' && tag[0] <= 'z' {
				out = append(out, path)
			}
			return nil
		})
	})
	return out, err
}

// UpdateIndexNoAssumeUnchanged clears the assume-unchanged bit of paths
// (`update-index --no-assume-unchanged -z --stdin`), which must be in the
// index.
func (r *Repo) UpdateIndexNoAssumeUnchanged(ctx context.Context, paths []string) error {
	c := write(r.cmd("update-index", "--no-assume-unchanged", "-z", "--stdin"))
	c.Stdin = nulList(paths)
	_, err := r.git.run(ctx, c)
	return err
}

// LsFilesUntracked streams the untracked, non-ignored files of the work
// tree (`ls-files -o --exclude-standard -z`, run at the root:
// repository-relative, /-separated, literal names) to each, as git lists
// them: an untracked nested repository comes as "dir/".
func (r *Repo) LsFilesUntracked(ctx context.Context, each func(path string) error) error {
	return r.git.Stream(ctx, r.cmd("ls-files", "-o", "--exclude-standard", "-z"), func(rd io.Reader) error {
		return eachNul(rd, each)
	})
}

// DiffFilesAdded lists the paths `diff-files -z --name-only
// --diff-filter=A` reports: the index's intent-to-add entries, the only
// index entries a work tree diff shows as added.
func (r *Repo) DiffFilesAdded(ctx context.Context) ([]string, error) {
	out, err := r.git.run(ctx, r.cmd("diff-files", "-z", "--name-only", "--diff-filter=A"))
	if err != nil {
		return nil, err
	}
	return nulRecords(out), nil
}

// StatusV2 returns `status --porcelain=v2 -z --ignore-submodules=none`
// as git printed it (git-status(1), "Porcelain Format Version 2"), bounded
// by [LongTimeout].
func (r *Repo) StatusV2(ctx context.Context) ([]byte, error) {
	c := r.cmd("status", "--porcelain=v2", "-z", "--ignore-submodules=none")
	c.Timeout = LongTimeout
	return r.git.run(ctx, c)
}

// Objects and trees.

// TreeEntry is one entry of `ls-tree`: octal mode, type (blob, tree,
// commit for a gitlink), object id and path.
type TreeEntry struct {
	Mode, Type, OID, Path string
}

// LsTree lists tree's entries (`ls-tree [-r] -z --full-tree <tree> [--
// <paths>]`), recursively when recursive, bounded by [LongTimeout].
func (r *Repo) LsTree(ctx context.Context, tree string, recursive bool, paths ...string) ([]TreeEntry, error) {
	args := []string{"ls-tree"}
	if recursive {
		args = append(args, "-r")
	}
	args = append(args, "-z", "--full-tree", tree)
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	c := r.cmd(args...)
	c.Timeout = LongTimeout
	var out []TreeEntry
	err := r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, func(rec string) error {
			// "<mode> <type> <oid>\t<path>"
			meta, path, ok := strings.Cut(rec, "\t")
			f := strings.Fields(meta)
			if !ok || len(f) != 3 {
				return fmt.Errorf("gitcli: unexpected ls-tree record %q", rec)
			}
			out = append(out, TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Path: path})
			return nil
		})
	})
	return out, err
}

// CatFileCheck asks `cat-file --batch-check` about each name, in one call:
// an [Object] without Data per name, with Type "" for a name that is
// missing (or ambiguous). Names must not hold a newline.
func (r *Repo) CatFileCheck(ctx context.Context, names []string) ([]Object, error) {
	var in bytes.Buffer
	for _, n := range names {
		if strings.ContainsAny(n, "\n\x00") {
			return nil, fmt.Errorf("cat-file: object name %q: %w", n, ErrObjectMissing)
		}
		in.WriteString(n)
		in.WriteByte('\n')
	}
	c := r.cmd("cat-file", "--batch-check")
	c.Stdin = &in
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("gitcli: unexpected cat-file output %q", out)
	}
	objs := make([]Object, len(names))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue // "<name> missing"
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("gitcli: unexpected cat-file output %q", l)
		}
		objs[i] = Object{ID: f[0], Type: f[1], Size: size}
	}
	return objs, nil
}

// CatFileCommit returns the raw commit object id (`cat-file commit <id>`).
func (r *Repo) CatFileCommit(ctx context.Context, id string) ([]byte, error) {
	return r.git.run(ctx, r.cmd("cat-file", "commit", id))
}

// StartCatFile starts a long-lived `cat-file --batch-command` process for
// r ([Runner.StartCatFile] in r's directory).
func (r *Repo) StartCatFile(ctx context.Context) (*CatFile, error) {
	return r.git.StartCatFile(ctx, r.Dir())
}

// Diffs. Every patch is produced with [DiffFlags]: hunk ids depend on it.

// PatchOptions shape a patch diff: Context lines (-U), and -w.
type PatchOptions struct {
	Context          int
	IgnoreWhitespace bool
	// Paths, when set, limits the diff to these literal pathspecs (renames
	// are then found among them only).
	Paths []string
}

// DiffTreePatch streams the diff between trees from and to to read, as
// raw records followed by the patch: `diff-tree -r --raw -z -p -M
// <DiffFlags(Context)> [-w] <from> <to> [-- <paths>]`.
func (r *Repo) DiffTreePatch(ctx context.Context, from, to string, o PatchOptions, read func(io.Reader) error) error {
	args := []string{"diff-tree", "-r", "--raw", "-z", "-p", "-M"}
	args = append(args, DiffFlags(o.Context)...)
	if o.IgnoreWhitespace {
		args = append(args, "-w")
	}
	args = append(args, from, to)
	if len(o.Paths) > 0 {
		args = append(append(args, "--"), o.Paths...)
	}
	return r.git.Stream(ctx, r.cmd(args...), read)
}

// DiffIndexCachedPatch streams the diff between tree and the index to
// read, exactly as [Repo.DiffTreePatch] would print it between tree and
// the index's tree (`diff-index --cached -r --raw -z -p -M` with the pinned
// flags): raw records, then the patch. Use it on a temporary index that
// holds no intent-to-add or unmerged entry (write-tree would refuse or
// leave those out).
func (r *Repo) DiffIndexCachedPatch(ctx context.Context, tree string, o PatchOptions, read func(io.Reader) error) error {
	args := []string{"diff-index", "--cached", "-r", "--raw", "-z", "-p", "-M"}
	args = append(args, DiffFlags(o.Context)...)
	if o.IgnoreWhitespace {
		args = append(args, "-w")
	}
	args = append(args, tree)
	if len(o.Paths) > 0 {
		args = append(append(args, "--"), o.Paths...)
	}
	return r.git.Stream(ctx, r.cmd(args...), read)
}

// DiffTreeBinaryPatch writes to w the patch from tree from to tree to that
// `git apply` takes back, binary files included: `diff-tree -r -p --binary
// <DiffFlags(3)> <from> <to>`, bounded by [LongTimeout].
func (r *Repo) DiffTreeBinaryPatch(ctx context.Context, from, to string, w io.Writer) error {
	args := append([]string{"diff-tree", "-r", "-p", "--binary"}, DiffFlags(3)...)
	args = append(args, from, to)
	c := r.cmd(args...)
	c.Timeout = LongTimeout
	return r.git.Stream(ctx, c, func(rd io.Reader) error {
		_, err := io.Copy(w, rd)
		return err
	})
}

// DiffTreeNumstat streams `diff-tree -r --raw --numstat -z -M
// <DiffOptions> <from> <to>` to read: raw records, then numstat records in
// the same order.
func (r *Repo) DiffTreeNumstat(ctx context.Context, from, to string, read func(io.Reader) error) error {
	args := append([]string{"diff-tree", "-r", "--raw", "--numstat", "-z", "-M"}, DiffOptions()...)
	args = append(args, from, to)
	return r.git.Stream(ctx, r.cmd(args...), read)
}

// DiffTreeRaw returns the raw records of the paths that differ between
// trees from and to, submodules included, without rename detection:
// `diff-tree -r -z --no-renames --no-ext-diff --ignore-submodules=none
// <from> <to> [-- <paths>]`.
func (r *Repo) DiffTreeRaw(ctx context.Context, from, to string, paths []string) ([]byte, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--ignore-submodules=none", from, to}
	if len(paths) > 0 {
		args = append(append(args, "--"), paths...)
	}
	return r.git.run(ctx, r.cmd(args...))
}

// RawChange is one record of `diff-tree -r -z` raw output without rename
// detection: a path and its octal modes and object ids in the two trees
// (mode "000000" and the zero id where it is absent).
type RawChange struct {
	Path             string
	OldMode, NewMode string
	OldOID, NewOID   string
}

// ParseRawDiff parses `diff-tree -r -z` raw output (git-diff-tree(1), "Raw
// output format"): ":<old mode> <new mode> <old id> <new id> <status>\0<path>\0"
// records, as [Repo.DiffTreeRaw] returns them.
func ParseRawDiff(out []byte) ([]RawChange, error) {
	var changes []RawChange
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		rec := string(fields[i])
		if rec == "" {
			continue
		}
		meta, ok := strings.CutPrefix(rec, ":")
		parts := strings.Fields(meta)
		if !ok || len(parts) != 5 || i+1 >= len(fields) {
			return nil, fmt.Errorf("gitcli: unexpected diff-tree record %q", rec)
		}
		i++
		changes = append(changes, RawChange{Path: string(fields[i]),
			OldMode: parts[0], NewMode: parts[1], OldOID: parts[2], NewOID: parts[3]})
	}
	return changes, nil
}

// DiffIndexOptions shape [Repo.DiffIndexPatch]: Context lines, Cached
// (the index instead of the work tree), Renames (-M; else --no-renames),
// and the literal Paths to limit it to.
type DiffIndexOptions struct {
	Context int
	Cached  bool
	Renames bool
	Paths   []string
}

// DiffIndexPatch returns the patch from tree to the work tree (to the
// index when Cached): `diff-index [--cached] -p <DiffFlags(Context)>
// (-M|--no-renames) <tree> [-- <paths>]`.
func (r *Repo) DiffIndexPatch(ctx context.Context, tree string, o DiffIndexOptions) ([]byte, error) {
	args := []string{"diff-index"}
	if o.Cached {
		args = append(args, "--cached")
	}
	args = append(append(args, "-p"), DiffFlags(o.Context)...)
	if o.Renames {
		args = append(args, "-M")
	} else {
		args = append(args, "--no-renames")
	}
	args = append(args, tree)
	if len(o.Paths) > 0 {
		args = append(append(args, "--"), o.Paths...)
	}
	return r.git.run(ctx, r.cmd(args...))
}

// Index writes.

// WriteTree writes the index as a tree and returns its id (`write-tree`).
func (r *Repo) WriteTree(ctx context.Context) (string, error) {
	return trimmed(r.git.run(ctx, write(r.cmd("write-tree"))))
}

// ReadTreeOptions shape a read-tree: Reset (--reset: discard unmerged
// entries), Update (-u: write the work tree too), Merge (-m: keep the stat
// data of entries that match), IndexOnly (-i, with Merge: do not check the
// work tree's files against the index).
type ReadTreeOptions struct {
	Reset, Update, Merge, IndexOnly bool
}

// ReadTree reads tree into the index (`read-tree [--reset] [-u] [-m] [-i]
// <tree>`), bounded by [LongTimeout].
func (r *Repo) ReadTree(ctx context.Context, tree string, o ReadTreeOptions) error {
	args := []string{"read-tree"}
	if o.Reset {
		args = append(args, "--reset")
	}
	if o.Update {
		args = append(args, "-u")
	}
	if o.Merge {
		args = append(args, "-m")
	}
	if o.IndexOnly {
		args = append(args, "-i")
	}
	c := write(r.cmd(append(args, tree)...))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// AddUpdated stages every tracked file as it is in the work tree (`add
// -u`): through the clean filters and core.autocrlf, deletions included.
func (r *Repo) AddUpdated(ctx context.Context) error {
	_, err := r.git.run(ctx, write(r.cmd("add", "-u")))
	return err
}

// AddAll stages everything in the work tree that is not ignored, without
// staging the removal of files that are gone (`add --ignore-removal --
// .`), bounded by [LongTimeout].
func (r *Repo) AddAll(ctx context.Context) error {
	c := write(r.cmd("add", "--ignore-removal", "--", "."))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// AddRefresh refreshes the stat data of paths in the index (`add
// --refresh --pathspec-from-file=- --pathspec-file-nul`).
func (r *Repo) AddRefresh(ctx context.Context, paths []string) error {
	c := write(r.cmd("add", "--refresh", "--pathspec-from-file=-", "--pathspec-file-nul"))
	c.Stdin = nulList(paths)
	_, err := r.git.run(ctx, c)
	return err
}

// AddIntentToAdd records paths as intent-to-add (`add --intent-to-add
// --force --pathspec-from-file=- --pathspec-file-nul`).
func (r *Repo) AddIntentToAdd(ctx context.Context, paths []string) error {
	c := write(r.cmd("add", "--intent-to-add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul"))
	c.Stdin = nulList(paths)
	_, err := r.git.run(ctx, c)
	return err
}

// UpdateIndexAdd adds paths as they are in the work tree, and removes
// those that are gone (`update-index --add --remove --replace -z --stdin`),
// bounded by [LongTimeout]. An entry in the way of a path (a file where
// the work tree has a folder of that name, or the other way round) is
// dropped, as the work tree has it: use it on temporary indexes that
// describe the work tree.
func (r *Repo) UpdateIndexAdd(ctx context.Context, paths []string) error {
	c := write(r.cmd("update-index", "--add", "--remove", "--replace", "-z", "--stdin"))
	c.Stdin = nulList(paths)
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// IndexInfo is one line of `update-index --index-info`: Mode "0" (with the
// zero id) removes every stage of Path; Stage 0 adds an ordinary entry.
type IndexInfo struct {
	Mode, OID string
	Stage     int
	Path      string
}

// UpdateIndexInfo writes entries into the index in one `update-index -z
// --index-info` call, which applies every line or none. A stage-0 entry is
// written "<mode> <oid>\t<path>", another "<mode> <oid> <stage>\t<path>".
func (r *Repo) UpdateIndexInfo(ctx context.Context, entries []IndexInfo) error {
	var b bytes.Buffer
	for _, e := range entries {
		if e.Stage == 0 {
			fmt.Fprintf(&b, "%s %s\t%s\x00", e.Mode, e.OID, e.Path)
		} else {
			fmt.Fprintf(&b, "%s %s %d\t%s\x00", e.Mode, e.OID, e.Stage, e.Path)
		}
	}
	c := write(r.cmd("update-index", "-z", "--index-info"))
	c.Stdin = &b
	_, err := r.git.run(ctx, c)
	return err
}

// CheckoutIndexAll writes every index entry into the work tree,
// overwriting what is there (`checkout-index -f -q -a`).
func (r *Repo) CheckoutIndexAll(ctx context.Context) error {
	_, err := r.git.run(ctx, write(r.cmd("checkout-index", "-f", "-q", "-a")))
	return err
}

// CheckoutIndexPrefix writes every index entry under the folder prefix
// instead of the work tree (`checkout-index -f -q -a --prefix=<prefix>/`):
// each file as git would check it out at its path (filters, eol
// conversion, modes, symlinks), at prefix/<path>, bounded by
// [LongTimeout]. The work tree is not touched.
func (r *Repo) CheckoutIndexPrefix(ctx context.Context, prefix string) error {
	c := write(r.cmd("checkout-index", "-f", "-q", "-a", "--prefix="+strings.TrimSuffix(prefix, "/")+"/"))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// ApplyOptions shape a `git apply`: Cached (the index only), ThreeWay
// (--3way), Reverse (-R), Check (only check that it applies).
type ApplyOptions struct {
	Cached, ThreeWay, Reverse, Check bool
}

// Apply applies patch (`apply <ApplyFlags> [--cached] [--3way] [-R]
// [--check]`), bounded by [LongTimeout]. A refusal is a *Error with git's
// exit code and stderr.
func (r *Repo) Apply(ctx context.Context, patch io.Reader, o ApplyOptions) error {
	args := append([]string{"apply"}, ApplyFlags()...)
	if o.Cached {
		args = append(args, "--cached")
	}
	if o.ThreeWay {
		args = append(args, "--3way")
	}
	if o.Reverse {
		args = append(args, "-R")
	}
	if o.Check {
		args = append(args, "--check")
	}
	c := write(r.cmd(args...))
	c.Stdin = patch
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// applyRefusals are the endings of git apply's per-path refusals
// ("error: <path>: <reason>", apply.c).
var applyRefusals = []string{
	": does not exist in index", ": already exists in index", ": does not match index",
	": patch does not apply", ": No such file or directory", ": already exists in working directory",
	": does not exist in working tree", ": wrong type",
}

// ApplyErrorPaths returns the paths a refused `git apply` names in its
// stderr ("error: patch failed: <path>:<line>", "error: <path>: does not
// exist in index", ...), each once, in order; none when it names none (a
// 3-way conflict leaves unmerged entries instead).
func ApplyErrorPaths(stderr string) []string {
	var out []string
	seen := map[string]bool{}
	for line := range strings.Lines(stderr) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		rest, ok := strings.CutPrefix(line, "error: ")
		if !ok {
			continue
		}
		path := ""
		if p, ok := strings.CutPrefix(rest, "patch failed: "); ok {
			if i := strings.LastIndexByte(p, ':'); i > 0 {
				path = p[:i]
			}
		} else {
			for _, r := range applyRefusals {
				if p, ok := strings.CutSuffix(rest, r); ok {
					path = p
					break
				}
			}
		}
		if path != "" && !seen[path] {
			seen[path] = true
			out = append(out, path)
		}
	}
	return out
}

// Commits and refs.

// Ident is the author and committer of a commit knightcode writes itself;
// the zero Ident means git's configured identity.
type Ident struct {
	Name, Email string
}

// CommitTree writes a commit of tree with parents and message
// (`commit-tree <tree> [-p <parent>]...`, message on stdin) and returns
// its id.
func (r *Repo) CommitTree(ctx context.Context, tree string, parents []string, message string, who Ident) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	c := write(r.cmd(args...))
	c.Stdin = strings.NewReader(message)
	if who != (Ident{}) {
		c.Env = append(c.Env, "GIT_AUTHOR_NAME="+who.Name, "GIT_AUTHOR_EMAIL="+who.Email,
			"GIT_COMMITTER_NAME="+who.Name, "GIT_COMMITTER_EMAIL="+who.Email)
	}
	return trimmed(r.git.run(ctx, c))
}

// CreateRef points ref at id only if ref does not exist (`update-ref -m
// knightcode <ref> <id> ""`).
func (r *Repo) CreateRef(ctx context.Context, ref, id string) error {
	_, err := r.git.run(ctx, write(r.cmd("update-ref", "-m", "knightcode", ref, id, "")))
	return err
}

// DeleteRef deletes ref only while it points at oldID (`update-ref -d
// <ref> <oldID>`).
func (r *Repo) DeleteRef(ctx context.Context, ref, oldID string) error {
	_, err := r.git.run(ctx, write(r.cmd("update-ref", "-d", ref, oldID)))
	return err
}

// RefUpdate is one command of an [Repo.UpdateRefs] transaction: Delete
// removes Ref while it is at OldID; otherwise Ref moves to NewID, from
// OldID ("" means whatever it was).
type RefUpdate struct {
	Ref, NewID, OldID string
	Delete            bool
}

// UpdateRefs applies updates in one `update-ref --stdin -z` transaction:
// every ref moves or none does (git-update-ref(1)).
func (r *Repo) UpdateRefs(ctx context.Context, updates []RefUpdate) error {
	var in bytes.Buffer
	for _, u := range updates {
		if u.Delete {
			fmt.Fprintf(&in, "delete %s\x00%s\x00", u.Ref, u.OldID)
		} else {
			fmt.Fprintf(&in, "update %s\x00%s\x00%s\x00", u.Ref, u.NewID, u.OldID)
		}
	}
	c := write(r.cmd("update-ref", "--stdin", "-z"))
	c.Stdin = &in
	_, err := r.git.run(ctx, c)
	return err
}

// ForEachRefOptions select refs for [Repo.ForEachRef]: Format is the
// --format string (required); Count limits the refs (0: all); Contains
// keeps refs whose commit contains this one; Patterns are ref prefixes or
// globs.
type ForEachRefOptions struct {
	Format   string
	Count    int
	Contains string
	Patterns []string
}

// ForEachRef lists refs, one formatted line each (`for-each-ref
// [--count=<n>] --format=<format> [--contains <commit>] [<patterns>]`),
// bounded by [LongTimeout].
func (r *Repo) ForEachRef(ctx context.Context, o ForEachRefOptions) ([]string, error) {
	args := []string{"for-each-ref"}
	if o.Count > 0 {
		args = append(args, "--count="+strconv.Itoa(o.Count))
	}
	args = append(args, "--format="+o.Format)
	if o.Contains != "" {
		args = append(args, "--contains", o.Contains)
	}
	args = append(args, o.Patterns...)
	c := r.cmd(args...)
	c.Timeout = LongTimeout
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// Configuration.

// ConfigNames lists the names of the configuration keys matching the
// regular expression re (`config -z --name-only --get-regexp <re>`); none
// matching is an empty list.
func (r *Repo) ConfigNames(ctx context.Context, re string) ([]string, error) {
	out, err := r.git.run(ctx, r.cmd("config", "-z", "--name-only", "--get-regexp", re))
	if exitCode(err) == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return nulRecords(out), nil
}

// Worktrees.

// Worktree is one record of `git worktree list --porcelain -z`.
type Worktree struct {
	Path       string
	Head       string
	Branch     string // refs/heads/x; "" when detached
	Bare       bool
	Detached   bool
	Locked     bool
	LockReason string
	Prunable   bool
	PruneWhy   string
}

// WorktreeList lists the repository's worktrees (`worktree list
// --porcelain -z`); the first is the main worktree.
func (r *Repo) WorktreeList(ctx context.Context) ([]Worktree, error) {
	out, err := r.git.run(ctx, r.cmd("worktree", "list", "--porcelain", "-z"))
	if err != nil {
		return nil, err
	}
	return ParseWorktreeList(out), nil
}

// ParseWorktreeList parses `git worktree list --porcelain -z`: attributes
// are NUL-terminated, an empty attribute ends a worktree (git-worktree(1),
// "Porcelain Format"). Paths are cleaned.
func ParseWorktreeList(out []byte) []Worktree {
	var list []Worktree
	var cur *Worktree
	for _, rec := range bytes.Split(out, []byte{0}) {
		line := string(rec)
		if line == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		if key == "worktree" {
			list = append(list, Worktree{Path: filepath.Clean(val)})
			cur = &list[len(list)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = val
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked, cur.LockReason = true, val
		case "prunable":
			cur.Prunable, cur.PruneWhy = true, val
		}
	}
	return list
}

// WorktreeAdd registers a new worktree at path detached at commit without
// checking anything out (`worktree add --no-checkout --detach <path>
// <commit>`; no post-checkout hook runs).
func (r *Repo) WorktreeAdd(ctx context.Context, path, commit string) error {
	_, err := r.git.run(ctx, write(r.cmd("worktree", "add", "--no-checkout", "--detach", path, commit)))
	return err
}

// WorktreeRemove removes the worktree at path (`worktree remove [--force
// ...] <path>`): force 1 removes one with changes, force 2 one that is
// locked.
func (r *Repo) WorktreeRemove(ctx context.Context, path string, force int) error {
	args := []string{"worktree", "remove"}
	for range force {
		args = append(args, "--force")
	}
	_, err := r.git.run(ctx, write(r.cmd(append(args, path)...)))
	return err
}
