package gitcli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
)

// Repo describes the repository a directory belongs to, as
// `git rev-parse` reports it (absolute paths, symlinks as git resolved them).
type Repo struct {
	// Root is the top of the working tree (--show-toplevel); empty for a
	// bare repository.
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
}

// Discover reports the repository that dir is in. It returns an error
// matching [ErrNotRepo] when dir is not inside one (or does not exist).
func (r *Runner) Discover(ctx context.Context, dir string) (Repo, error) {
	out, err := r.Run(ctx, Cmd{Dir: dir, Args: []string{"rev-parse", "--path-format=absolute",
		"--is-bare-repository", "--git-dir", "--git-common-dir", "--show-prefix"}})
	if err != nil {
		return Repo{}, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 3 {
		return Repo{}, &Error{Args: []string{"rev-parse"}, Dir: dir, ExitCode: 0, Err: errors.New("unexpected rev-parse output: " + string(out))}
	}
	repo := Repo{Bare: lines[0] == "true", GitDir: lines[1], CommonDir: lines[2]}
	if len(lines) > 3 {
		repo.Prefix = lines[3]
	}
	if repo.Bare {
		return repo, nil
	}
	top, err := r.Run(ctx, Cmd{Dir: dir, Args: []string{"rev-parse", "--show-toplevel"}})
	if err != nil {
		// Inside a git dir (e.g. .git itself) there is no work tree.
		return repo, err
	}
	repo.Root = filepath.Clean(strings.TrimSuffix(string(top), "\n"))
	return repo, nil
}
