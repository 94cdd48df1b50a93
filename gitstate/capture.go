package gitstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

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

// modeGitlink is a submodule's mode in trees and the index.
const modeGitlink = "160000"

// Capture is a checkout captured as trees without writing the user's index
// (ARCHITECTURE.md, "The mechanism everything shares").
type Capture struct {
	// Head is HEAD's commit id, "" when HEAD is unborn.
	Head string `json:"head,omitempty"`
	// HeadTree is HEAD's tree id; the empty tree when HEAD is unborn.
	HeadTree string `json:"headTree"`
	// IndexTree is the tree of the index as it is (write-tree of a copy).
	IndexTree string `json:"indexTree"`
	// WorktreeTree is the tree of the working files: tracked files as they
	// are on disk plus the untracked, non-ignored files within the limits
	// (every one with [Options.AllUntracked]).
	WorktreeTree string `json:"worktreeTree"`
	// Untracked lists the untracked files included in WorktreeTree,
	// repository-relative and /-separated, sorted.
	Untracked []string `json:"untracked,omitempty"`
	// UntrackedSkipped counts untracked files left out by the limits (500
	// files; folders with 200+ untracked files first; files over 10 MiB).
	UntrackedSkipped int `json:"untrackedSkipped,omitempty"`
	// UntrackedDropped reports that more than 500 untracked files remained
	// after leaving out large folders, so no untracked file was included
	// (turn totals then count tracked files only).
	UntrackedDropped bool `json:"untrackedDropped,omitempty"`
	// UntrackedLeftOut names what the limits left out, for a warning: the
	// folders left out whole ("dir/") and the files over 10 MiB, sorted,
	// at most [MaxLeftOutNames]+1 of them (one more says there are more);
	// empty when UntrackedDropped. Not saved with the capture.
	UntrackedLeftOut []string `json:"-"`
	// NestedRepositories lists the untracked nested repositories (folders
	// holding a repository of their own that the index does not know;
	// `ls-files -o` lists them as "dir/"), which no tree can hold:
	// repository-relative, /-separated, sorted. They are not in
	// WorktreeTree.
	NestedRepositories []string `json:"nestedRepositories,omitempty"`
	// Submodules maps each initialized submodule (a gitlink of the index
	// whose directory is the top of a repository of its own), by its
	// repository-relative, /-separated path, to a token of its content:
	// 64 hex digits hashing its HEAD, its own worktree tree (a Capture of
	// the submodule's checkout: tracked files as on disk and its untracked
	// files within the limits) and the tokens of its own submodules. The
	// gitlink in WorktreeTree records only the submodule's HEAD; the token
	// changes with any edit inside it too (shared/cases C20). nil when there
	// is none; a submodule that cannot be captured has no token.
	Submodules map[string]string `json:"submodules,omitempty"`
}

// Options select the parts of a capture [Take] computes. Head and HeadTree
// are always set.
type Options struct {
	// Index computes IndexTree.
	Index bool
	// Worktree computes WorktreeTree and the untracked accounting.
	Worktree bool
	// AllUntracked includes every untracked, non-ignored file in
	// WorktreeTree, without the limits (what a snapshot or a carry needs:
	// none of the user's files may be left out).
	AllUntracked bool
	// Submodules computes Submodules (a capture of every initialized
	// submodule, recursively).
	Submodules bool
	// WorktreeIndex, when not "" (with Worktree), is where the index that
	// WorktreeTree was written from is left instead of being removed: a
	// copy of the real index (its mtime kept) after `git add -u` and the
	// untracked files, so every entry carries the stat data git read its
	// file with. The file must not exist; the caller removes it.
	WorktreeIndex string
	// AlongsideTree, when set (with Worktree), is called once the index
	// WorktreeTree is written from is complete, with a view on it, and
	// runs while git writes the tree (a reader of that index: a diff of
	// it against another tree prints what a diff against WorktreeTree
	// would, one git process sooner). It must not write the index; its
	// error fails the capture. It is called again if the capture is
	// taken again (a file changed while git read it).
	AlongsideTree func(ctx context.Context, view *gitcli.Repo) error
}

// Take captures the checkout of repo (a work tree: repo.Root set) whose
// HEAD is head (commit, "" when unborn) and headTree, as trees, without
// writing the user's index:
//
//   - IndexTree: write-tree of a temporary copy of the real index. For an
//     unmerged path the copy takes stage 2 ("ours", HEAD's side of the
//     merge), or leaves the path out when ours deleted it, so a conflicted
//     index never fails a capture.
//   - WorktreeTree: a second temporary copy (keeping the index's mtime, so
//     git's racy-clean check and stat cache behave as for the real index),
//     `git add -u` (tracked files as on disk through the user's filters and
//     core.autocrlf; unmerged paths take the file on disk; intent-to-add
//     entries take their content), then the untracked non-ignored files
//     chosen by chooseUntracked (every one with AllUntracked) added with
//     `update-index --add`, then write-tree. Symlinks are mode 120000
//     blobs, submodules one gitlink each. Untracked nested repositories
//     (listed by git as "dir/") are not captured.
//   - Submodules: the gitlinks are listed from the index (`ls-files -s`,
//     read only) and each initialized submodule's checkout is captured the
//     same way, recursively, which writes its trees to the submodule's own
//     object database.
//
// The real index is only read, with GIT_OPTIONAL_LOCKS=0: it stays byte
// identical with the same mtime and index.lock is never taken. Temporary
// files are removed before Take returns. The trees are written to the
// object database but referenced by nothing: `git gc` may prune them after
// its grace period unless the caller pins them.
//
// Errors: *gitcli.Error when git fails; filesystem errors for the
// temporary copies.
func Take(ctx context.Context, repo *gitcli.Repo, head, headTree string, o Options) (*Capture, error) {
	var (
		wg      sync.WaitGroup
		subs    map[string]string
		subsErr error
	)
	if o.Submodules {
		wg.Add(1)
		go func() {
			defer wg.Done()
			subs, subsErr = submoduleTokens(ctx, repo)
		}()
	}
	c, err := take(ctx, repo, head, headTree, o)
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

// take is Take without submodules.
func take(ctx context.Context, repo *gitcli.Repo, head, headTree string, o Options) (*Capture, error) {
	c := &Capture{Head: head, HeadTree: headTree}
	if !o.Index && !o.Worktree {
		return c, nil
	}
	tmp, err := os.MkdirTemp("", "knightcode-capture-")
	if err != nil {
		return nil, fmt.Errorf("gitstate: capture: %w", err)
	}
	defer os.RemoveAll(tmp)

	var (
		wg       sync.WaitGroup
		indexErr error
		wtErr    error
	)
	if o.Index {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.IndexTree, indexErr = indexTree(ctx, repo, filepath.Join(tmp, "index-staged"))
		}()
	}
	if o.Worktree {
		wtIndex := o.WorktreeIndex
		if wtIndex == "" {
			wtIndex = filepath.Join(tmp, "index-worktree")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A file another process is writing can fail git's read of
			// it (gitcli.ErrFileChanging, QA: an archive while a build
			// wrote its logs): the tree is written again a moment later,
			// three times at most.
			for attempt := 0; ; attempt++ {
				wtErr = worktreeTree(ctx, repo, wtIndex, o.AllUntracked, c, o.AlongsideTree)
				if attempt == 2 || !errors.Is(wtErr, gitcli.ErrFileChanging) {
					return
				}
				_ = os.Remove(wtIndex)
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(indexErr, wtErr); err != nil {
		return nil, err
	}
	return c, nil
}

// submoduleTokens returns the content token of every initialized submodule
// of repo (see Capture.Submodules), nil when there is none.
func submoduleTokens(ctx context.Context, repo *gitcli.Repo) (map[string]string, error) {
	gitlinks, err := Gitlinks(ctx, repo)
	if err != nil || len(gitlinks) == 0 {
		return nil, err
	}
	var tokens map[string]string
	for _, p := range gitlinks {
		tok, ok := submoduleToken(ctx, repo.Runner(), filepath.Join(repo.Root, filepath.FromSlash(p)))
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

// Gitlinks lists the paths of the index's gitlinks (submodules), in index
// order, each once (`ls-files -s`; an unmerged gitlink is listed once per
// stage by git).
func Gitlinks(ctx context.Context, repo *gitcli.Repo) ([]string, error) {
	var gitlinks []string
	err := repo.LsFilesStage(ctx, nil, func(e gitcli.IndexEntry) error {
		if e.Mode == modeGitlink && (len(gitlinks) == 0 || gitlinks[len(gitlinks)-1] != e.Path) {
			gitlinks = append(gitlinks, e.Path)
		}
		return nil
	})
	return gitlinks, err
}

// submoduleToken captures the submodule checked out at dir and returns its
// token; ok is false when dir is not the top of a repository of its own
// (a submodule not initialized: an empty folder of the parent) or the
// capture failed (the turn's totals then just cannot see into it).
func submoduleToken(ctx context.Context, git *gitcli.Runner, dir string) (string, bool) {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return "", false
	}
	repo, err := git.Discover(ctx, dir)
	if err != nil || repo.Root != filepath.Clean(dir) {
		return "", false
	}
	head, headTree, err := repo.Head(ctx)
	if err != nil {
		return "", false
	}
	c, err := take(ctx, repo, head, headTree, Options{Worktree: true})
	if err != nil {
		return "", false
	}
	nested, err := submoduleTokens(ctx, repo)
	if err != nil {
		return "", false
	}
	h := sha256.New()
	fmt.Fprintf(h, "knightcode submodule\x00%s\x00%s\x00", c.Head, c.WorktreeTree)
	for _, p := range slices.Sorted(maps.Keys(nested)) {
		fmt.Fprintf(h, "%s\x00%s\x00", p, nested[p])
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// CopyIndex copies the real index src to dst keeping its modification
// time and permissions, and reports whether there was one. Git's racy-clean check compares
// file mtimes with the index's own: a copy with a fresh mtime would hide
// same-size edits made in the same second, and its stat cache keeps `git
// add` fast. Without an index file git starts from an empty index, and so
// does the copy (dst is then not created).
func CopyIndex(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gitstate: read index: %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return false, fmt.Errorf("gitstate: read index: %w", err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("gitstate: copy index: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, fmt.Errorf("gitstate: copy index: %w", err)
	}
	if err := out.Close(); err != nil {
		return false, fmt.Errorf("gitstate: copy index: %w", err)
	}
	// The copy keeps the index's permissions too: it may become the
	// index (Journal.WriteIndex, CommitIndex), which git wrote with the
	// umask and core.sharedRepository applied.
	if err := os.Chmod(dst, st.Mode().Perm()); err != nil {
		return false, fmt.Errorf("gitstate: copy index: %w", err)
	}
	if err := os.Chtimes(dst, st.ModTime(), st.ModTime()); err != nil {
		return false, fmt.Errorf("gitstate: copy index: %w", err)
	}
	return true, nil
}

// indexTree writes the tree of a copy of the real index at tmpIndex.
func indexTree(ctx context.Context, repo *gitcli.Repo, tmpIndex string) (string, error) {
	if _, err := CopyIndex(repo.IndexPath, tmpIndex); err != nil {
		return "", err
	}
	tmp := repo.WithIndex(tmpIndex)
	tree, err := tmp.WriteTree(ctx)
	if err == nil {
		return tree, nil
	}
	// write-tree refuses unmerged entries; resolve them in the copy to
	// "ours" (stage 2) or leave the path out, then write again.
	fixed, ferr := resolveUnmerged(ctx, tmp)
	if ferr != nil || !fixed {
		return "", err
	}
	return tmp.WriteTree(ctx)
}

// resolveUnmerged replaces every unmerged path of the temporary index of
// tmp by its stage-2 entry, or removes it when there is none, and reports
// whether there was any.
func resolveUnmerged(ctx context.Context, tmp *gitcli.Repo) (bool, error) {
	unmerged, err := tmp.LsFilesUnmerged(ctx)
	if err != nil || len(unmerged) == 0 {
		return false, err
	}
	ours := map[string]*gitcli.IndexEntry{}
	var order []string
	for i, e := range unmerged {
		if _, seen := ours[e.Path]; !seen {
			ours[e.Path] = nil
			order = append(order, e.Path)
		}
		if e.Stage == 2 {
			ours[e.Path] = &unmerged[i]
		}
	}
	var info []gitcli.IndexInfo
	for _, p := range order {
		// A mode-0 line removes every stage of the path; a stage-0 line
		// then adds ours back.
		info = append(info, gitcli.IndexInfo{Mode: "0", OID: tmp.ZeroID(), Path: p})
		if s := ours[p]; s != nil {
			info = append(info, gitcli.IndexInfo{Mode: s.Mode, OID: s.OID, Path: p})
		}
	}
	err = tmp.UpdateIndexInfo(ctx, info)
	return err == nil, err
}

// worktreeTree fills c.WorktreeTree, c.Untracked, c.UntrackedSkipped,
// c.UntrackedDropped and c.NestedRepositories, working in a copy of the
// real index at tmpIndex; alongside (when set) runs beside its write-tree
// (Options.AlongsideTree).
func worktreeTree(ctx context.Context, repo *gitcli.Repo, tmpIndex string, all bool, c *Capture, alongside func(context.Context, *gitcli.Repo) error) error {
	if _, err := CopyIndex(repo.IndexPath, tmpIndex); err != nil {
		return err
	}
	tmp := repo.WithIndex(tmpIndex)
	var (
		wg     sync.WaitGroup
		addErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		addErr = tmp.AddUpdated(ctx)
	}()
	untracked, nested, lsErr := ListUntracked(ctx, repo)
	wg.Wait()
	if err := errors.Join(addErr, lsErr); err != nil {
		return err
	}
	c.NestedRepositories = nested
	if all {
		c.Untracked = untracked
	} else {
		choice := chooseUntracked(untracked, func(p string) (os.FileInfo, error) {
			return os.Lstat(filepath.Join(repo.Root, filepath.FromSlash(p)))
		})
		c.Untracked, c.UntrackedSkipped, c.UntrackedDropped = choice.include, choice.skipped, choice.dropped
		c.UntrackedLeftOut = choice.leftOut
	}
	if len(c.Untracked) > 0 {
		// --remove: a file deleted since it was listed is simply absent.
		if err := tmp.UpdateIndexAdd(ctx, c.Untracked); err != nil {
			return err
		}
	}
	var alongErr error
	var along sync.WaitGroup
	if alongside != nil {
		along.Add(1)
		go func() {
			defer along.Done()
			alongErr = alongside(ctx, repo.WithIndex(tmpIndex))
		}()
	}
	tree, err := tmp.WriteTree(ctx)
	along.Wait()
	if err := errors.Join(err, alongErr); err != nil {
		return err
	}
	c.WorktreeTree = tree
	return nil
}

// ListUntracked lists the untracked, non-ignored files of repo's work tree
// (`ls-files -o --exclude-standard -z` at the root: repository-relative,
// /-separated, literal names, sorted), streamed so a huge listing is not
// capped. Untracked nested repositories, which git lists as "dir/", are
// left out of paths and listed in nested (without the "/", sorted).
func ListUntracked(ctx context.Context, repo *gitcli.Repo) (paths, nested []string, err error) {
	err = repo.LsFilesUntracked(ctx, func(p string) error {
		switch {
		case p == "":
		case strings.HasSuffix(p, "/"):
			nested = append(nested, strings.TrimSuffix(p, "/"))
		default:
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(paths)
	sort.Strings(nested)
	return paths, nested, nil
}

// untrackedChoice is what a capture does with the untracked files.
type untrackedChoice struct {
	include []string // added to the worktree tree, sorted
	skipped int      // left out (counted in untrackedSkipped)
	dropped bool     // more than MaxUntracked remained: none included
	leftOut []string // folders left out ("dir/") and big files, at most MaxLeftOutNames+1, sorted
}

// MaxLeftOutNames is how many of the paths a capture left out its
// warning names ([Capture.LeftOut]).
const MaxLeftOutNames = 5

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
	var leftOut []string
	if len(paths) > MaxUntracked {
		kept, leftOut = leaveOutBigFolders(paths)
	}
	include := make([]string, 0, min(len(kept), MaxUntracked+1))
	for _, p := range kept {
		fi, err := lstat(p)
		if err != nil {
			continue // gone since listed, or unreadable: not capturable
		}
		if fi.Mode().IsRegular() && fi.Size() > MaxUntrackedSize {
			leftOut = append(leftOut, p)
			continue
		}
		include = append(include, p)
		if len(include) > MaxUntracked {
			return untrackedChoice{skipped: len(paths), dropped: true}
		}
	}
	slices.Sort(leftOut)
	return untrackedChoice{include: include, skipped: len(paths) - len(include), leftOut: leftOut[:min(len(leftOut), MaxLeftOutNames+1)]}
}

// leaveOutBigFolders implements step 1 of chooseUntracked: it returns the
// paths kept and the folders left out ("dir/").
func leaveOutBigFolders(paths []string) (kept, leftOut []string) {
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
		return paths, nil
	}
	kept = make([]string, 0, remaining)
next:
	for _, p := range paths {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' && left[p[:i+1]] {
				continue next
			}
		}
		kept = append(kept, p)
	}
outer:
	for dir := range left {
		for i := 0; i < len(dir)-1; i++ {
			if dir[i] == '/' && left[dir[:i+1]] {
				continue outer // inside a folder left out too, which is named
			}
		}
		leftOut = append(leftOut, dir)
	}
	return kept, leftOut
}
