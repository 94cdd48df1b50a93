package gitcli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Repo is the repository a directory belongs to, as one `git rev-parse`
// reports it (absolute paths, symlinks as git resolved them), and the
// handle every git verb runs through: one method per verb, argv built in
// this package with the pinned flags (see verbs.go). A Repo is a value
// that views derive from ([Repo.WithIndex], [Repo.AtWorkTree],
// [Repo.WithConfig]); it is safe for concurrent use.
type Repo struct {
	// Root is the top of the working tree (--show-toplevel); empty for a
	// bare repository and for a Repo found with [Runner.DiscoverGitDir].
	Root string
	// GitDir is this worktree's git directory (--git-dir); for a linked
	// worktree it is under the common dir's worktrees/.
	GitDir string
	// CommonDir is the repository's common git directory
	// (--git-common-dir), where refs, objects and knightcode's lock live.
	CommonDir string
	// Prefix is the directory's path relative to Root, /-separated with a
	// trailing slash, or "" at the root (--show-prefix).
	Prefix string
	// Bare reports a bare repository (--is-bare-repository).
	Bare bool
	// ObjectFormat is "sha1" or "sha256" (--show-object-format).
	ObjectFormat string
	// IndexPath is this worktree's own index file (--git-path index; per
	// worktree, shared/cases C13).
	IndexPath string

	git *Runner
	// dir is where verbs run: Root, or the directory discovered from when
	// there is no work tree.
	dir string
	// indexFile, when set, is a temporary index every verb reads and
	// writes instead of the repository's own (GIT_INDEX_FILE).
	indexFile string
	// workTree, when set, runs verbs with --git-dir=CommonDir
	// --work-tree=workTree in workTree.
	workTree string
	// config are extra -c key=value options of this view.
	config []string
}

// Empty tree ids of the two object formats git knows. Git treats the empty
// tree as present in every repository, so it can be diffed without writing.
const (
	EmptyTreeSHA1   = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	EmptyTreeSHA256 = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
)

// EmptyTree is the empty tree id of the repository's object format.
func (r *Repo) EmptyTree() string {
	if r.ObjectFormat == "sha256" {
		return EmptyTreeSHA256
	}
	return EmptyTreeSHA1
}

// HexLen is the length of a full object id of the repository's object
// format: 40, or 64 for sha256.
func (r *Repo) HexLen() int {
	if r.ObjectFormat == "sha256" {
		return 64
	}
	return 40
}

// ZeroID is the all-zero object id of the repository's object format.
func (r *Repo) ZeroID() string { return strings.Repeat("0", r.HexLen()) }

// Dir is the directory verbs run in: the work tree's root, or the
// directory the Repo was discovered from when it has none.
func (r *Repo) Dir() string {
	if r.workTree != "" {
		return r.workTree
	}
	return r.dir
}

// Runner is the runner this Repo's verbs run through.
func (r *Repo) Runner() *Runner { return r.git }

// WithIndex returns a view of r whose verbs use the index file path
// instead of the repository's own (GIT_INDEX_FILE), with
// core.splitIndex=false so git never writes shared index files into the
// user's git dir for it. The user's index is never read or written through
// the view.
func (r *Repo) WithIndex(path string) *Repo {
	v := r.clone()
	v.indexFile = path
	return v
}

// IndexFile is the index file r's verbs read and write: the temporary
// index of a [Repo.WithIndex] view, else IndexPath (which stays the real
// index's path in a view).
func (r *Repo) IndexFile() string {
	if r.indexFile != "" {
		return r.indexFile
	}
	return r.IndexPath
}

// AtWorkTree returns a view of r whose verbs run in dir with
// --git-dir=<CommonDir> --work-tree=<dir>: dir is treated as a work tree
// of the repository whether or not git still registers it (a half-removed
// worktree's leftovers). Use it with [Repo.WithIndex]: the common dir's
// own index belongs to the main worktree.
func (r *Repo) AtWorkTree(dir string) *Repo {
	v := r.clone()
	v.workTree = dir
	return v
}

// WithConfig returns a view of r that passes each "key=value" as a -c
// option to every verb, after the pinned configuration (so it may override
// it, e.g. a filter driver disabled for a checkout).
func (r *Repo) WithConfig(kv ...string) *Repo {
	v := r.clone()
	v.config = append(append([]string{}, r.config...), kv...)
	return v
}

func (r *Repo) clone() *Repo {
	v := *r
	return &v
}

// cmd builds the Cmd of one verb: the view's global options, then args.
func (r *Repo) cmd(args ...string) Cmd {
	var pre []string
	if r.workTree != "" {
		pre = append(pre, "--git-dir="+r.CommonDir, "--work-tree="+r.workTree)
	}
	if r.indexFile != "" {
		pre = append(pre, "-c", "core.splitIndex=false")
	}
	for _, kv := range r.config {
		pre = append(pre, "-c", kv)
	}
	c := Cmd{Dir: r.Dir(), Args: append(pre, args...)}
	if r.indexFile != "" {
		c.Env = []string{"GIT_INDEX_FILE=" + r.indexFile}
	}
	return c
}

// write marks c as a call that may write the repository.
func write(c Cmd) Cmd {
	c.Write = true
	return c
}

// Discover reports the repository that dir is in, with one
// `git rev-parse --path-format=absolute --is-bare-repository
// --show-object-format --git-dir --git-common-dir --show-prefix --git-path
// index --show-toplevel`. It returns an error matching [ErrNotRepo] when
// dir is not inside a repository (or does not exist). Inside a git
// directory of a non-bare repository (.git itself) there is no work tree:
// the Repo is returned with git's error ("this operation must be run in a
// work tree"). A bare repository has Bare set and Root empty.
func (r *Runner) Discover(ctx context.Context, dir string) (*Repo, error) {
	out, err := r.run(ctx, Cmd{Dir: dir, Args: discoverArgs(true)})
	if err == nil {
		repo, perr := parseDiscover(r, dir, out, true)
		return repo, perr
	}
	var ge *Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "must be run in a work tree") {
		return nil, err
	}
	repo, gerr := r.DiscoverGitDir(ctx, dir)
	if gerr != nil {
		return nil, gerr
	}
	if repo.Bare {
		return repo, nil
	}
	return repo, err
}

// DiscoverHead is [Runner.Discover] and [Repo.Head] together. In a
// directory it has discovered before, while the files that decide the
// discovery are stat-unchanged (the directory and its folders up to the
// root, the root's .git, the git dir, the repository's configuration), the
// Runner reuses that discovery and resolves HEAD with the worktree's
// long-lived `cat-file --batch-command` (git reads the refs; no process
// starts). Otherwise one `rev-parse` reports both (the common case: a work
// tree whose HEAD is born), and an unborn HEAD, a bare repository or any
// failure falls back to the two calls, with their results and errors.
func (r *Runner) DiscoverHead(ctx context.Context, dir string) (repo *Repo, head, headTree string, err error) {
	if repo := r.cachedDiscovery(dir); repo != nil {
		if head, headTree, err := r.resolveHead(ctx, repo); err == nil {
			return repo, head, headTree, nil
		}
	}
	repo, head, headTree, err = r.discoverHead(ctx, dir)
	if err == nil && head != "" {
		r.keepDiscovery(dir, repo)
	}
	return repo, head, headTree, err
}

// discoverHead is DiscoverHead without the kept discoveries.
func (r *Runner) discoverHead(ctx context.Context, dir string) (repo *Repo, head, headTree string, err error) {
	args := append(discoverArgs(true), "HEAD^{commit}", "HEAD^{tree}")
	if out, err := r.run(ctx, Cmd{Dir: dir, Args: args}); err == nil {
		text := strings.TrimSuffix(string(out), "\n")
		if i := strings.LastIndexByte(text, '\n'); i > 0 {
			if j := strings.LastIndexByte(text[:i], '\n'); j > 0 {
				head, headTree = text[j+1:i], text[i+1:]
				if repo, err := parseDiscover(r, dir, []byte(text[:j]+"\n"), true); err == nil && !repo.Bare && len(head) == repo.HexLen() && len(headTree) == repo.HexLen() {
					return repo, head, headTree, nil
				}
			}
		}
	}
	if repo, err = r.Discover(ctx, dir); err != nil {
		return nil, "", "", err
	}
	if repo.Bare || repo.Root == "" {
		return repo, "", "", nil
	}
	head, headTree, err = repo.Head(ctx)
	return repo, head, headTree, err
}

// DiscoverGitDir reports the repository of dir, which may be any directory
// of it (a work tree, a git dir, the common dir), without its work tree:
// Root is empty and verbs run in dir. It is for repository-wide verbs (refs,
// worktree add/remove/list, objects). Errors as for [Runner.Discover].
func (r *Runner) DiscoverGitDir(ctx context.Context, dir string) (*Repo, error) {
	out, err := r.run(ctx, Cmd{Dir: dir, Args: discoverArgs(false)})
	if err != nil {
		return nil, err
	}
	return parseDiscover(r, dir, out, false)
}

func discoverArgs(withTop bool) []string {
	args := []string{"rev-parse", "--path-format=absolute", "--is-bare-repository", "--show-object-format",
		"--git-dir", "--git-common-dir", "--git-path", "index", "--show-prefix"}
	if withTop {
		args = append(args, "--show-toplevel")
	}
	return args
}

func parseDiscover(r *Runner, dir string, out []byte, withTop bool) (*Repo, error) {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	// --show-prefix prints an empty line at the root, so both counts are
	// exact.
	want := 6
	if withTop {
		want = 7
	}
	if len(lines) != want {
		return nil, &Error{Args: []string{"rev-parse"}, Dir: dir, ExitCode: 0, Err: fmt.Errorf("unexpected rev-parse output %q", out)}
	}
	repo := &Repo{Bare: lines[0] == "true", ObjectFormat: lines[1], GitDir: lines[2], CommonDir: lines[3],
		IndexPath: lines[4], Prefix: lines[5], git: r, dir: dir}
	if withTop {
		repo.Root = filepath.Clean(lines[6])
		repo.dir = repo.Root
	}
	return repo, nil
}

// LongTimeout bounds the verbs whose work grows with the size of the
// repository or work tree (checkouts, hashing every untracked file, status
// with submodules, walking every ref).
const LongTimeout = 30 * time.Minute
