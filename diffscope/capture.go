package diffscope

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Limits on the untracked files a capture includes (spec, thread/diff/read:
// "More than 500 untracked files are counted in untrackedSkipped and left
// out"; ARCHITECTURE.md, "capture a checkout as trees").
const (
	// MaxUntracked is the most untracked files a capture includes.
	MaxUntracked = 500
	// BigFolder is the number of untracked files from which a folder is
	// left out first when there are more than MaxUntracked.
	BigFolder = 200
	// MaxUntrackedSize is the largest untracked file, in bytes, a capture
	// includes (10 MiB).
	MaxUntrackedSize = 10 << 20
)

// Empty tree ids of the two object formats git knows. Git treats the empty
// tree as present in every repository, so it can be diffed without writing.
const (
	emptyTreeSHA1   = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	emptyTreeSHA256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
)

// repoInfo is what one rev-parse call tells about a checkout.
type repoInfo struct {
	gitcli.Repo
	objectFormat string // "sha1" or "sha256"
	indexPath    string // the real index (rev-parse --git-path index)
	head         string // HEAD's commit; "" when unborn
	headTree     string // HEAD's tree; the empty tree when unborn
}

func (ri repoInfo) emptyTree() string {
	if ri.objectFormat == "sha256" {
		return emptyTreeSHA256
	}
	return emptyTreeSHA1
}

func (ri repoInfo) hexLen() int {
	if ri.objectFormat == "sha256" {
		return 64
	}
	return 40
}

// discover describes the checkout with one rev-parse: object format, git
// dirs, work tree root, prefix, the index path (per worktree: C13) and HEAD.
// Errors match gitcli.ErrNotRepo outside a repository and for a directory
// without a work tree (a bare repository or a git dir).
func (d *Differ) discover(ctx context.Context, checkout string) (repoInfo, error) {
	if st, err := os.Stat(checkout); err != nil || !st.IsDir() {
		return repoInfo{}, fmt.Errorf("diffscope: %s is not a directory: %w", checkout, gitcli.ErrNotRepo)
	}
	args := []string{"rev-parse", "--path-format=absolute", "--show-object-format",
		"--git-dir", "--git-common-dir", "--show-toplevel", "--show-prefix",
		"--git-path", "index", "HEAD^{commit}", "HEAD^{tree}"}
	out, err := d.git.Run(ctx, gitcli.Cmd{Dir: checkout, Args: args})
	unborn := false
	if err != nil {
		var ge *gitcli.Error
		switch {
		case errors.Is(err, gitcli.ErrNotRepo):
			return repoInfo{}, err
		case errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree"):
			return repoInfo{}, fmt.Errorf("diffscope: %s has no working tree: %w", checkout, gitcli.ErrNotRepo)
		case errors.As(err, &ge) && strings.Contains(ge.Stderr, "unknown revision"):
			// HEAD^{commit} did not resolve: an unborn branch, if a
			// verify of HEAD says so (exit 1, no output).
			if _, verr := d.git.Run(ctx, gitcli.Cmd{Dir: checkout, Args: []string{"rev-parse", "-q", "--verify", "HEAD^{commit}"}}); verr != nil {
				var ve *gitcli.Error
				if errors.As(verr, &ve) && ve.ExitCode == 1 {
					unborn = true
					break
				}
				return repoInfo{}, verr
			}
			return repoInfo{}, err
		default:
			return repoInfo{}, err
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 6 || (!unborn && len(lines) < 8) {
		return repoInfo{}, fmt.Errorf("diffscope: unexpected rev-parse output %q", out)
	}
	ri := repoInfo{
		Repo: gitcli.Repo{GitDir: lines[1], CommonDir: lines[2],
			Root: filepath.Clean(lines[3]), Prefix: lines[4]},
		objectFormat: lines[0],
		indexPath:    lines[5],
	}
	if unborn {
		ri.headTree = ri.emptyTree()
	} else {
		ri.head, ri.headTree = lines[6], lines[7]
	}
	return ri, nil
}

// Capture captures checkout (any directory inside a work tree: a
// subdirectory, a linked worktree, a bare-repository-plus-worktrees layout)
// as trees without writing the user's index:
//
//   - HeadTree: HEAD's tree, the empty tree when HEAD is unborn.
//   - IndexTree: write-tree of a temporary copy of the real index. For an
//     unmerged path the copy takes stage 2 ("ours", HEAD's side of the
//     merge), or leaves the path out when ours deleted it, so a conflicted
//     index never fails a capture.
//   - WorktreeTree: a second temporary copy (keeping the index's mtime, so
//     git's racy-clean check and stat cache behave as for the real index),
//     `git add -u` (tracked files as on disk through the user's filters and
//     core.autocrlf; unmerged paths take the file on disk; intent-to-add
//     entries take their content), then the untracked non-ignored files
//     chosen by [chooseUntracked] added with `update-index --add`, then
//     write-tree. Symlinks are mode 120000 blobs, submodules one gitlink
//     each. Untracked nested repositories (listed by git as "dir/") are not
//     captured.
//
// The real index is only read, with GIT_OPTIONAL_LOCKS=0: it stays byte
// identical with the same mtime and index.lock is never taken. Temporary
// files are removed before Capture returns.
//
// The trees are written to the object database but referenced by nothing:
// `git gc` may prune them after its grace period unless the caller pins them
// (the threads layer keeps them under refs/knightcode/).
//
// Submodules gets a token per initialized submodule (see [Capture]): the
// gitlinks are listed from the index (`ls-files -s`, read only) and each
// submodule's checkout is captured the same way, recursively, which writes
// its trees to the submodule's own object database, unreferenced like the
// parent's. A repository without submodules pays one `ls-files`.
//
// Errors: an error matching [gitcli.ErrNotRepo] when checkout is not inside
// a work tree; *gitcli.Error when git fails.
func (d *Differ) Capture(ctx context.Context, checkout string) (*Capture, error) {
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	var (
		wg      sync.WaitGroup
		subs    map[string]string
		subsErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		subs, subsErr = d.submoduleTokens(ctx, ri)
	}()
	c, err := d.capture(ctx, ri, true, true)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if subsErr != nil {
		return nil, subsErr
	}
	c.Submodules = subs
	return c, nil
}

// submoduleTokens returns the content token of every initialized submodule
// of the checkout ri (see Capture.Submodules), nil when there is none.
func (d *Differ) submoduleTokens(ctx context.Context, ri repoInfo) (map[string]string, error) {
	var gitlinks []string
	err := d.git.Stream(ctx, gitcli.Cmd{Dir: ri.Root, Args: []string{"ls-files", "-s", "-z"}}, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			rec, err := br.ReadString(0)
			// "<mode> <oid> <stage>\t<path>\0"; an unmerged gitlink is
			// listed once per stage.
			if meta, path, ok := strings.Cut(strings.TrimSuffix(rec, "\x00"), "\t"); ok && strings.HasPrefix(meta, modeGitlink+" ") &&
				(len(gitlinks) == 0 || gitlinks[len(gitlinks)-1] != path) {
				gitlinks = append(gitlinks, path)
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if err != nil || len(gitlinks) == 0 {
		return nil, err
	}
	var tokens map[string]string
	for _, p := range gitlinks {
		tok, ok := d.submoduleToken(ctx, filepath.Join(ri.Root, filepath.FromSlash(p)))
		if !ok {
			continue
		}
		if tokens == nil {
			tokens = map[string]string{}
		}
		tokens[p] = tok
	}
	return tokens, nil
}

// submoduleToken captures the submodule checked out at dir and returns its
// token; ok is false when dir is not the top of a repository of its own
// (a submodule not initialized: an empty folder of the parent) or the
// capture failed (the turn's totals then just cannot see into it).
func (d *Differ) submoduleToken(ctx context.Context, dir string) (string, bool) {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return "", false
	}
	ri, err := d.discover(ctx, dir)
	if err != nil || ri.Root != filepath.Clean(dir) {
		return "", false
	}
	c, err := d.capture(ctx, ri, false, true)
	if err != nil {
		return "", false
	}
	nested, err := d.submoduleTokens(ctx, ri)
	if err != nil {
		return "", false
	}
	h := sha256.New()
	fmt.Fprintf(h, "knightcode submodule\x00%s\x00%s\x00", c.Head, c.WorktreeTree)
	for _, p := range sortedKeys(nested) {
		fmt.Fprintf(h, "%s\x00%s\x00", p, nested[p])
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// capture computes the parts of a Capture a read needs: the index tree when
// withIndex, the worktree tree (and untracked accounting) when withWorktree.
// HeadTree and Head are always set.
func (d *Differ) capture(ctx context.Context, ri repoInfo, withIndex, withWorktree bool) (*Capture, error) {
	c := &Capture{Head: ri.head, HeadTree: ri.headTree}
	if !withIndex && !withWorktree {
		return c, nil
	}
	tmp, err := os.MkdirTemp("", "knightcode-capture-")
	if err != nil {
		return nil, fmt.Errorf("diffscope: capture: %w", err)
	}
	defer os.RemoveAll(tmp)

	var (
		wg       sync.WaitGroup
		indexErr error
		wtErr    error
	)
	if withIndex {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.IndexTree, indexErr = d.indexTree(ctx, ri, filepath.Join(tmp, "index-staged"))
		}()
	}
	if withWorktree {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wtErr = d.worktreeTree(ctx, ri, filepath.Join(tmp, "index-worktree"), c)
		}()
	}
	wg.Wait()
	if err := errors.Join(indexErr, wtErr); err != nil {
		return nil, err
	}
	return c, nil
}

// copyIndex copies the real index to dst keeping its modification time, and
// reports whether there was one. Without an index file git starts from an
// empty index, and so does the copy (dst is then not created).
func copyIndex(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("diffscope: read index: %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return false, fmt.Errorf("diffscope: read index: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("diffscope: copy index: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, fmt.Errorf("diffscope: copy index: %w", err)
	}
	if err := out.Close(); err != nil {
		return false, fmt.Errorf("diffscope: copy index: %w", err)
	}
	if err := os.Chtimes(dst, st.ModTime(), st.ModTime()); err != nil {
		return false, fmt.Errorf("diffscope: copy index: %w", err)
	}
	return true, nil
}

func indexEnv(path string) []string { return []string{"GIT_INDEX_FILE=" + path} }

// noSplitIndex keeps git from writing shared index files into the user's
// git dir when it writes a temporary index of a split-index repository.
var noSplitIndex = []string{"-c", "core.splitIndex=false"}

func withArgs(pre []string, args ...string) []string {
	return append(append([]string{}, pre...), args...)
}

// indexTree writes the tree of a copy of the real index at tmpIndex.
func (d *Differ) indexTree(ctx context.Context, ri repoInfo, tmpIndex string) (string, error) {
	if _, err := copyIndex(ri.indexPath, tmpIndex); err != nil {
		return "", err
	}
	cmd := gitcli.Cmd{Dir: ri.Root, Args: withArgs(noSplitIndex, "write-tree"), Env: indexEnv(tmpIndex), Write: true}
	out, err := d.git.Run(ctx, cmd)
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	// write-tree refuses unmerged entries; resolve them in the copy to
	// "ours" (stage 2) or leave the path out, then write again.
	fixed, ferr := d.resolveUnmerged(ctx, ri, tmpIndex)
	if ferr != nil || !fixed {
		return "", err
	}
	out, err = d.git.Run(ctx, cmd)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveUnmerged replaces every unmerged path of the index at tmpIndex by
// its stage-2 entry, or removes it when there is none, and reports whether
// there was any.
func (d *Differ) resolveUnmerged(ctx context.Context, ri repoInfo, tmpIndex string) (bool, error) {
	out, err := d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: []string{"ls-files", "-u", "-z"}, Env: indexEnv(tmpIndex)})
	if err != nil || len(out) == 0 {
		return false, err
	}
	type stage struct{ mode, oid string }
	ours := map[string]*stage{}
	var order []string
	for _, rec := range bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		// "<mode> <oid> <stage>\t<path>"
		meta, path, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return false, fmt.Errorf("diffscope: unexpected ls-files -u record %q", rec)
		}
		if _, seen := ours[path]; !seen {
			ours[path] = nil
			order = append(order, path)
		}
		if f[2] == "2" {
			ours[path] = &stage{f[0], f[1]}
		}
	}
	zero := strings.Repeat("0", ri.hexLen())
	var in bytes.Buffer
	for _, p := range order {
		// A mode-0 line removes every stage of the path; a stage-0 line
		// then adds ours back.
		fmt.Fprintf(&in, "0 %s\t%s\x00", zero, p)
		if s := ours[p]; s != nil {
			fmt.Fprintf(&in, "%s %s 0\t%s\x00", s.mode, s.oid, p)
		}
	}
	_, err = d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: withArgs(noSplitIndex, "update-index", "-z", "--index-info"),
		Stdin: &in, Env: indexEnv(tmpIndex), Write: true})
	return err == nil, err
}

// worktreeTree fills c.WorktreeTree, c.Untracked, c.UntrackedSkipped and
// c.UntrackedDropped, working in a copy of the real index at tmpIndex.
func (d *Differ) worktreeTree(ctx context.Context, ri repoInfo, tmpIndex string, c *Capture) error {
	if _, err := copyIndex(ri.indexPath, tmpIndex); err != nil {
		return err
	}
	env := indexEnv(tmpIndex)
	var (
		wg     sync.WaitGroup
		addErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, addErr = d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: withArgs(noSplitIndex, "add", "-u"), Env: env, Write: true})
	}()
	untracked, lsErr := d.listUntracked(ctx, ri.Root)
	wg.Wait()
	if err := errors.Join(addErr, lsErr); err != nil {
		return err
	}
	choice := chooseUntracked(untracked, func(p string) (os.FileInfo, error) {
		return os.Lstat(filepath.Join(ri.Root, filepath.FromSlash(p)))
	})
	c.Untracked, c.UntrackedSkipped, c.UntrackedDropped = choice.include, choice.skipped, choice.dropped
	if len(choice.include) > 0 {
		var in bytes.Buffer
		for _, p := range choice.include {
			in.WriteString(p)
			in.WriteByte(0)
		}
		// --remove: a file deleted since it was listed is simply absent.
		if _, err := d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: withArgs(noSplitIndex, "update-index", "--add", "--remove", "-z", "--stdin"),
			Stdin: &in, Env: env, Write: true}); err != nil {
			return err
		}
	}
	out, err := d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: withArgs(noSplitIndex, "write-tree"), Env: env, Write: true})
	if err != nil {
		return err
	}
	c.WorktreeTree = strings.TrimSpace(string(out))
	return nil
}

// listUntracked lists the untracked, non-ignored files of the work tree
// (`ls-files -o --exclude-standard -z` at the root: repository-relative,
// /-separated, literal names), streamed so a huge listing is not capped.
// Untracked nested repositories, which git lists as "dir/", are left out.
func (d *Differ) listUntracked(ctx context.Context, root string) ([]string, error) {
	var paths []string
	err := d.git.Stream(ctx, gitcli.Cmd{Dir: root, Args: []string{"ls-files", "-o", "--exclude-standard", "-z"}}, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			rec, err := br.ReadString(0)
			if len(rec) > 0 && strings.HasSuffix(rec, "\x00") {
				if p := rec[:len(rec)-1]; p != "" && !strings.HasSuffix(p, "/") {
					paths = append(paths, p)
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// untrackedChoice is what a capture does with the untracked files.
type untrackedChoice struct {
	include []string // added to the worktree tree, sorted
	skipped int      // left out (counted in untrackedSkipped)
	dropped bool     // more than MaxUntracked remained: none included
}

// chooseUntracked applies the limits to the untracked files paths
// (repository-relative, sorted):
//
//  1. At most [MaxUntracked] files are included. While more remain, folders
//     holding [BigFolder] or more of the remaining untracked files (counted
//     over the folder's whole subtree) are left out, deepest folders first
//     and, at one depth, the fullest first; so a node_modules inside a
//     project goes before the project folder holding it, and a user's own
//     new files outside such folders stay.
//  2. Files larger than [MaxUntrackedSize] are left out (lstat; a symlink
//     counts as its own small size). Files that vanished are ignored.
//  3. If more than MaxUntracked still remain, none is included and dropped
//     is set.
//
// skipped counts every untracked file not included.
func chooseUntracked(paths []string, lstat func(string) (os.FileInfo, error)) untrackedChoice {
	kept := paths
	if len(paths) > MaxUntracked {
		kept = leaveOutBigFolders(paths)
	}
	include := make([]string, 0, min(len(kept), MaxUntracked+1))
	for _, p := range kept {
		fi, err := lstat(p)
		if err != nil {
			continue // gone since listed, or unreadable: not capturable
		}
		if fi.Mode().IsRegular() && fi.Size() > MaxUntrackedSize {
			continue
		}
		include = append(include, p)
		if len(include) > MaxUntracked {
			return untrackedChoice{skipped: len(paths), dropped: true}
		}
	}
	return untrackedChoice{include: include, skipped: len(paths) - len(include)}
}

// leaveOutBigFolders implements step 1 of chooseUntracked.
func leaveOutBigFolders(paths []string) []string {
	count := map[string]int{} // folder ("a/b/") -> remaining files under it
	for _, p := range paths {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' {
				count[p[:i+1]]++
			}
		}
	}
	var cands []string
	for dir, n := range count {
		if n >= BigFolder {
			cands = append(cands, dir)
		}
	}
	depth := func(dir string) int { return strings.Count(dir, "/") }
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if da, db := depth(a), depth(b); da != db {
			return da > db
		}
		if count[a] != count[b] {
			return count[a] > count[b]
		}
		return a < b
	})
	remaining := len(paths)
	left := map[string]bool{}
	for _, dir := range cands {
		if remaining <= MaxUntracked {
			break
		}
		n := count[dir]
		if n < BigFolder {
			continue // shrunk by deeper folders already left out
		}
		left[dir] = true
		remaining -= n
		for i := 0; i < len(dir)-1; i++ {
			if dir[i] == '/' {
				count[dir[:i+1]] -= n
			}
		}
	}
	if len(left) == 0 {
		return paths
	}
	kept := make([]string, 0, remaining)
next:
	for _, p := range paths {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && left[p[:i+1]] {
				continue next
			}
		}
		kept = append(kept, p)
	}
	return kept
}
