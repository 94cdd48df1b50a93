package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Project returns the project dir belongs to, the path that project
// decisions (trust, environments, worktree/list filtering) are kept under:
//
//   - inside a managed worktree: that worktree's ProjectCwd (spec,
//     project/trust/read: "At a managed worktree's cwd, trusted is its
//     project's decision");
//   - inside a git work tree: the repository's main checkout root (the
//     first entry of `git worktree list`), or the work tree's own root when
//     the main worktree is a bare repository;
//   - elsewhere (no repository, a bare repository): dir itself.
//
// Paths are absolute with symlinks resolved. Errors: [*ParamError] (field
// "cwd") when dir is not an existing directory; git failures.
func (m *Manager) Project(ctx context.Context, dir string) (string, error) {
	clean, err := existingDir("cwd", dir)
	if err != nil {
		return "", err
	}
	repo, err := m.git.Discover(ctx, clean)
	if err != nil {
		var ge *gitcli.Error
		if errors.Is(err, gitcli.ErrNotRepo) || (errors.As(err, &ge) && ge.ExitCode == 128) {
			if w, ok, lerr := m.reg.Lookup(clean); lerr != nil {
				return "", lerr
			} else if ok {
				return w.ProjectCwd, nil
			}
			return clean, nil
		}
		return "", err
	}
	if repo.Bare || repo.Root == "" {
		return clean, nil
	}
	return m.projectOfRepo(ctx, clean, repo)
}

// projectOfRepo is [Manager.Project] for a directory of a known work tree.
func (m *Manager) projectOfRepo(ctx context.Context, dir string, repo *gitcli.Repo) (string, error) {
	if w, ok, err := m.reg.Lookup(dir); err != nil {
		return "", err
	} else if ok {
		return w.ProjectCwd, nil
	}
	if repo.GitDir == repo.CommonDir {
		return repo.Root, nil
	}
	list, err := m.listWorktrees(ctx, repo.Root)
	if err != nil {
		return "", err
	}
	if len(list) == 0 || list[0].Bare {
		return repo.Root, nil
	}
	main, err := cleanDir(list[0].Path)
	if err != nil {
		return "", err
	}
	return main, nil
}

// Lookup returns the live managed worktree dir is in (its path or below),
// for "a start whose cwd is inside a managed worktree is a new thread in
// that worktree".
func (m *Manager) Lookup(dir string) (Worktree, bool, error) {
	clean, err := cleanDir(dir)
	if err != nil {
		return Worktree{}, false, err
	}
	return m.reg.Lookup(clean)
}

// List returns the managed worktrees (worktree/list), of project when it is
// not "" (a path as [Manager.Project] returns it), sorted by path. Live
// worktrees report their current HEAD and branch as `git worktree list`
// says; deleted ones what was recorded at deletion. A repository that can
// no longer be read leaves its worktrees as recorded. A worktree whose
// deletion did not finish ([StateRemoving]) is listed deleted; one being
// created is not listed, and creations that died are cleaned up first
// ([Manager.Reconcile]; a failure there leaves them for the next call).
func (m *Manager) List(ctx context.Context, project string) ([]Worktree, error) {
	_, _ = m.Reconcile(ctx)
	all, err := m.reg.List()
	if err != nil {
		return nil, err
	}
	var out []Worktree
	live := map[string][]entry{} // commonDir -> git's list
	for _, w := range all {
		if (project != "" && w.ProjectCwd != project) || w.State == StateCreating {
			continue
		}
		if !w.Deleted {
			list, ok := live[w.CommonDir]
			if !ok {
				if _, err := os.Stat(w.CommonDir); err == nil {
					list, _ = m.listWorktrees(ctx, w.CommonDir)
				}
				live[w.CommonDir] = list
			}
			if e := findEntry(list, w.Path); e != nil && !e.Prunable {
				w.Head, w.Branch = e.Head, e.Branch
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// inManagedLayout reports whether path has the shape
// <root>/<4 lowercase hex>/<name>.
func inManagedLayout(path string) bool {
	b := filepath.Base(filepath.Dir(path))
	if len(b) != 4 {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
