package handoff

// A handoff moves .gitignore files like any other change, but the files
// they ignore stay where they are: what each side ignores changes under
// them.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// isGitignore reports whether the repository-relative path p is a
// .gitignore file.
func isGitignore(p string) bool {
	return p == ".gitignore" || strings.HasSuffix(p, "/.gitignore")
}

// unignored lists the files that dst's ignore rules ignore today and
// src's do not: a handoff that moves src's .gitignore files into dst
// would turn them into untracked files of dst, which the move does not
// own and its verification would find. src's work tree holds the
// .gitignore files dst ends with; info/exclude and core.excludesFile are
// the repository's and the same on both sides. An ignored folder src
// still ignores is skipped whole, as git skips it (a file inside an
// excluded folder cannot be re-included); one it no longer ignores is
// read entry by entry, except a nested repository, which stays one.
func unignored(ctx context.Context, src, dst *gitcli.Repo) ([]string, error) {
	var todo []string // dst's ignored files and folders ("dir/")
	err := dst.LsFilesIgnored(ctx, func(p string) error {
		todo = append(todo, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for len(todo) > 0 {
		still, err := src.CheckIgnored(ctx, todo)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, p := range todo {
			if still[p] {
				continue
			}
			dir, isDir := strings.CutSuffix(p, "/")
			if !isDir {
				out = append(out, p)
				continue
			}
			abs := filepath.Join(dst.Root, filepath.FromSlash(dir))
			if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
				continue
			}
			entries, err := os.ReadDir(abs)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				name := dir + "/" + e.Name()
				if e.IsDir() {
					name += "/"
				}
				next = append(next, name)
			}
		}
		todo = next
	}
	return out, nil
}

// leftUntracked lists the untracked files of src once it is clean: files
// only the moved .gitignore rules ignored, which stayed (ignored files do
// not move) and which src's own rules, HEAD's again, no longer ignore.
// The handoff's result warns of them: the checkout is not clean until
// they are moved or deleted, and a handoff back into it is refused.
func leftUntracked(ctx context.Context, src *gitcli.Repo) (string, error) {
	var left []string
	err := src.LsFilesUntracked(ctx, func(p string) error {
		left = append(left, p)
		return nil
	})
	if err != nil || len(left) == 0 {
		return "", err
	}
	what, them := fmt.Sprintf("%d files", len(left)), "them"
	if len(left) == 1 {
		what, them = "a file", "it"
	}
	if len(left) > 5 {
		left = append(left[:5], "...")
	}
	return fmt.Sprintf("%s stayed in %s, ignored only by the .gitignore rules the handoff moved, and untracked there now (%s): move or delete %s before handing the thread back there",
		what, src.Root, strings.Join(left, ", "), them), nil
}
