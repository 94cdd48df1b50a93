package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Manager creates, lists, snapshots, deletes, restores and prunes managed
// worktrees. It holds the git runner, the agent directory and the registry;
// it is safe for concurrent use (repository changes are serialized by the
// repository lock, registry changes by the registry's lock).
type Manager struct {
	git      *gitcli.Runner
	differ   *diffscope.Differ
	agentDir string
	reg      *Registry
	now      func() time.Time
	// step, when set (tests only), is called after each named step of a
	// creation or restore; an error makes the operation fail there.
	step func(name string) error
}

// New returns a Manager that runs git through r and keeps its registry and
// default worktrees root in agentDir (absolute; session.AgentDir).
func New(r *gitcli.Runner, agentDir string) *Manager {
	return &Manager{
		git:      r,
		differ:   diffscope.New(r),
		agentDir: agentDir,
		reg:      NewRegistry(agentDir),
		now:      time.Now,
	}
}

// Registry returns the Manager's registry.
func (m *Manager) Registry() *Registry { return m.reg }

// DefaultRoot is the worktrees root used when no worktrees.root is set:
// <agentDir>/worktrees.
func (m *Manager) DefaultRoot() string { return filepath.Join(m.agentDir, "worktrees") }

func (m *Manager) runStep(name string) error {
	if m.step == nil {
		return nil
	}
	return m.step(name)
}

// cleanDir makes dir absolute and resolves symlinks, as git reports paths:
// of dir when it exists, else of its longest existing ancestor (a deleted
// worktree's path).
func cleanDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// existingDir cleans dir and checks it is an existing directory; field
// names the parameter in the [*ParamError] otherwise.
func existingDir(field, dir string) (string, error) {
	if dir == "" {
		return "", paramErr(field, "is required")
	}
	clean, err := cleanDir(dir)
	if err != nil {
		return "", paramErr(field, "%v", err)
	}
	st, err := os.Stat(clean)
	if err != nil || !st.IsDir() {
		return "", paramErr(field, "%s is not an existing directory", dir)
	}
	return clean, nil
}

// withoutCancel returns a context for cleanup after a failure: not
// cancelled by ctx, bounded.
func withoutCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}

// revParseCommit resolves rev to a commit id in dir, reporting ok=false
// when it names no commit.
func (m *Manager) revParseCommit(ctx context.Context, dir, rev string) (string, bool, error) {
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: []string{"rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		var ge *gitcli.Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", false, nil
		}
		// rev-parse --verify exits 128 for malformed names.
		if errors.As(err, &ge) && ge.ExitCode == 128 && !errors.Is(err, gitcli.ErrNotRepo) {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// entry is one record of `git worktree list --porcelain -z`.
type entry struct {
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

// listWorktrees runs `git worktree list --porcelain -z` in dir (any
// directory of the repository, its common git dir included). The first
// entry is the main worktree.
func (m *Manager) listWorktrees(ctx context.Context, dir string) ([]entry, error) {
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, err
	}
	return parsePorcelain(out), nil
}

// parsePorcelain parses `git worktree list --porcelain -z`: attributes are
// NUL-terminated, an empty attribute ends a worktree (git-worktree(1),
// "Porcelain Format").
func parsePorcelain(out []byte) []entry {
	var list []entry
	var cur *entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		line := string(rec)
		if line == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		if key == "worktree" {
			list = append(list, entry{Path: filepath.Clean(val)})
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

func findEntry(list []entry, path string) *entry {
	for i := range list {
		if list[i].Path == path {
			return &list[i]
		}
		// git may record a path with unresolved symlinks.
		if r, err := filepath.EvalSymlinks(list[i].Path); err == nil && r == path {
			return &list[i]
		}
	}
	return nil
}

// checkoutConfig are the -c options of every command that writes files into
// a worktree (read-tree -u): no fsmonitor hook, no submodule recursion, and
// every filter driver configured for the repository disabled (smudge and
// process emptied, required off), so creation and restore run no user code
// (spec: "Creation runs no hook, filter or user code"). Hooks are already off
// (gitcli's core.hooksPath=/dev/null). Built-in conversions (eol, ident,
// working-tree-encoding) still apply. A file under a disabled filter is
// written as stored in git (for Git LFS: the pointer file).
func (m *Manager) checkoutConfig(ctx context.Context, dir string) ([]string, error) {
	args := []string{"-c", "core.fsmonitor=false", "-c", "submodule.recurse=false"}
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: []string{"config", "-z", "--name-only", "--get-regexp", `^filter\.`}})
	if err != nil {
		var ge *gitcli.Error
		if errors.As(err, &ge) && ge.ExitCode == 1 { // no filter configured
			return args, nil
		}
		return nil, err
	}
	seen := map[string]bool{}
	for _, key := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		// filter.<driver>.<variable>; the driver may contain dots.
		rest, ok := strings.CutPrefix(key, "filter.")
		i := strings.LastIndexByte(rest, '.')
		if !ok || i <= 0 {
			continue
		}
		driver := rest[:i]
		if seen[driver] {
			continue
		}
		seen[driver] = true
		args = append(args,
			"-c", "filter."+driver+".smudge=",
			"-c", "filter."+driver+".clean=",
			"-c", "filter."+driver+".process=",
			"-c", "filter."+driver+".required=false")
	}
	return args, nil
}

// lock takes the repository lock of commonDir (gitcli.LockCommonDir).
func lock(ctx context.Context, commonDir string) (*gitcli.RepoLock, error) {
	return gitcli.LockCommonDir(ctx, commonDir)
}

func (m *Manager) commitTree(ctx context.Context, dir, tree, msg string, parents ...string) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: args, Stdin: strings.NewReader(msg), Env: snapshotIdent, Write: true})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// snapshotIdent is the identity of knightcode's own commits (snapshots),
// so they work in repositories whose user has no identity configured.
var snapshotIdent = []string{
	"GIT_AUTHOR_NAME=knightcode", "GIT_AUTHOR_EMAIL=knightcode@localhost",
	"GIT_COMMITTER_NAME=knightcode", "GIT_COMMITTER_EMAIL=knightcode@localhost",
}

func errorf(format string, args ...any) error { return fmt.Errorf("workspace: "+format, args...) }
