package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Manager creates, lists, snapshots, deletes, restores and prunes managed
// worktrees. It holds the git runner, the agent directory and the registry;
// it is safe for concurrent use (repository changes are serialized by the
// repository lock, registry changes by the registry's lock).
type Manager struct {
	git      *gitcli.Runner
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
		agentDir: agentDir,
		reg:      NewRegistry(agentDir),
		now:      time.Now,
	}
}

// Registry returns the Manager's registry.
func (m *Manager) Registry() *Registry { return m.reg }

// RecordHead records head as the commit the managed worktree holding dir
// (any directory in it) is at ([Registry.RecordHead]): a turn ended there
// or git/commit committed there. It does nothing for a directory outside
// the managed worktrees. Errors: the registry's.
func (m *Manager) RecordHead(dir, head string) error {
	w, ok, err := m.reg.Lookup(dir)
	if err != nil || !ok || w.Head == head {
		return err // most turns commit nothing: no registry write then
	}
	err = m.reg.RecordHead(w.Path, head)
	if errors.Is(err, ErrNotRegistered) {
		return nil // forgotten meanwhile
	}
	return err
}

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

// repoAt describes the repository of dir (any directory of it, its common
// git dir included) for repository-wide verbs: refs, objects, worktrees.
func (m *Manager) repoAt(ctx context.Context, dir string) (*gitcli.Repo, error) {
	return m.git.DiscoverGitDir(ctx, dir)
}

// revParseCommit resolves rev to a commit id in repo, reporting ok=false
// when it names no commit (rev-parse --verify exits 1, or 128 for
// malformed names).
func revParseCommit(ctx context.Context, repo *gitcli.Repo, rev string) (string, bool, error) {
	id, ok, err := repo.ResolveCommit(ctx, rev)
	if err != nil {
		var ge *gitcli.Error
		if errors.As(err, &ge) && ge.ExitCode == 128 && !errors.Is(err, gitcli.ErrNotRepo) {
			return "", false, nil
		}
		return "", false, err
	}
	return id, ok, nil
}

// entry is one record of `git worktree list --porcelain -z`.
type entry = gitcli.Worktree

// listWorktrees lists the worktrees of the repository of dir (any
// directory of it, its common git dir included). The first entry is the
// main worktree.
func (m *Manager) listWorktrees(ctx context.Context, dir string) ([]entry, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return nil, err
	}
	return repo.WorktreeList(ctx)
}

// parsePorcelain parses `git worktree list --porcelain -z`
// ([gitcli.ParseWorktreeList]).
func parsePorcelain(out []byte) []entry { return gitcli.ParseWorktreeList(out) }

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

// checkoutConfig are the configuration overrides ("key=value", for
// [gitcli.Repo.WithConfig]) of every command that writes files into a
// worktree (read-tree -u): no fsmonitor hook, no submodule recursion, and
// every filter driver configured for the repository disabled (smudge and
// process emptied, required off), so creation and restore run no user code
// (spec: "Creation runs no hook, filter or user code"). Hooks are already off
// (gitcli's core.hooksPath=/dev/null). Built-in conversions (eol, ident,
// working-tree-encoding) still apply. A file under a disabled filter is
// written as stored in git (for Git LFS: the pointer file).
func (m *Manager) checkoutConfig(ctx context.Context, repo *gitcli.Repo) ([]string, error) {
	cfg := []string{"core.fsmonitor=false", "submodule.recurse=false"}
	keys, err := repo.ConfigNames(ctx, `^filter\.`)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, key := range keys {
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
		cfg = append(cfg,
			"filter."+driver+".smudge=",
			"filter."+driver+".clean=",
			"filter."+driver+".process=",
			"filter."+driver+".required=false")
	}
	return cfg, nil
}

// lock takes the repository lock of commonDir (gitcli.LockCommonDir).
func lock(ctx context.Context, commonDir string) (*gitcli.RepoLock, error) {
	return gitcli.LockCommonDir(ctx, commonDir)
}

// commitTree writes a commit of tree with parents in the repository of
// dir, as knightcode ([gitstate.Ident]).
func (m *Manager) commitTree(ctx context.Context, dir, tree, msg string, parents ...string) (string, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return "", err
	}
	return repo.CommitTree(ctx, tree, parents, msg, gitstate.Ident)
}

func errorf(format string, args ...any) error { return fmt.Errorf("workspace: "+format, args...) }
