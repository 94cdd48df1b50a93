package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Where is where a file tool's path lands: Path is the absolute path with
// every symlink resolved, and Why says why it is outside the checkout, or is
// empty when it is inside.
type Where struct {
	Path string
	Why  string
}

// Inside reports whether the path is inside the checkout's working tree.
func (w Where) Inside() bool { return w.Why == "" }

// Locate resolves path as the file tools do (agent/tools.ResolvePath: "~" and
// "~/..." expand to os.UserHomeDir, an absolute path is cleaned, anything else
// joins cwd) and then through every symlink on the way, the last component
// included, even when its target does not exist; the part of the path that
// does not exist yet is taken as written. The result is inside when it lies
// under the checkout's resolved root and not
//   - in the agent directory, when agentDir is not empty and lies in the
//     checkout (a worktree thread's checkout may itself lie in the agent
//     directory: <agentDir>/worktrees by default);
//   - in a directory named .git;
//   - under a directory below the root that holds a .git entry of its own
//     (another worktree, a nested repository or a submodule).
//
// Errors: an empty path, a checkout or cwd (for a relative path) that is not
// absolute, an unknown home directory, a symlink loop (more than 255 links),
// and any failure other than "does not exist" while reading the filesystem
// (a component that is not a directory, permission denied).
func Locate(path, cwd, checkout, agentDir string) (Where, error) {
	if !filepath.IsAbs(checkout) {
		return Where{}, fmt.Errorf("the checkout %q is not an absolute path", checkout)
	}
	abs, err := resolvePath(cwd, path)
	if err != nil {
		return Where{}, err
	}
	real, err := realPath(abs)
	if err != nil {
		return Where{}, err
	}
	root, err := realPath(filepath.Clean(checkout))
	if err != nil {
		return Where{}, err
	}
	w := Where{Path: real}
	shown := abs
	if real != abs {
		shown = fmt.Sprintf("%s (which resolves to %s)", abs, real)
	}
	if !within(real, root) {
		w.Why = fmt.Sprintf("%s is outside the checkout %s", shown, root)
		return w, nil
	}
	if agentDir != "" {
		a, err := realPath(filepath.Clean(agentDir))
		if err != nil {
			return Where{}, err
		}
		// A worktree thread's checkout lies in the agent directory
		// (<agentDir>/worktrees by default): the rule is for an agent
		// directory inside the checkout.
		if within(a, root) && within(real, a) {
			w.Why = fmt.Sprintf("%s is in the agent directory %s, outside the checkout", shown, a)
			return w, nil
		}
	}
	dir := root
	rel := strings.TrimPrefix(strings.TrimPrefix(real, root), string(filepath.Separator))
	if rel == "" {
		return w, nil
	}
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, c)
		if c == ".git" {
			w.Why = fmt.Sprintf("%s is in the git directory %s, outside the checkout's working tree", shown, dir)
			return w, nil
		}
		switch _, err := os.Lstat(filepath.Join(dir, ".git")); {
		case err == nil:
			w.Why = fmt.Sprintf("%s is inside %s, another git worktree or repository, outside the checkout", shown, dir)
			return w, nil
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		default:
			return Where{}, err
		}
	}
	return w, nil
}

// resolvePath is agent/tools.ResolvePath, with relative cwds refused.
func resolvePath(cwd, p string) (string, error) {
	if p == "" {
		return "", errors.New(`"path" is empty`)
	}
	var abs string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand %q: %w", p, err)
		}
		abs = filepath.Join(home, p[1:])
	case filepath.IsAbs(p):
		abs = filepath.Clean(p)
	default:
		abs = filepath.Join(cwd, p)
	}
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("%q does not resolve to an absolute path (cwd %q)", p, cwd)
	}
	return abs, nil
}

// maxLinks bounds the symlinks realPath follows (Linux's MAXSYMLINKS is 40;
// this is generous and still ends a loop).
const maxLinks = 255

// realPath returns the absolute, clean path p with every symlink resolved,
// component by component, as the kernel would follow it; once a component
// does not exist, the rest is joined as written.
func realPath(p string) (string, error) {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(p)
	resolved := vol + sep
	pending := strings.Split(p[len(vol):], sep)
	for links := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, pending...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			resolved, target = tv+sep, target[len(tv):]
		}
		pending = append(strings.Split(target, sep), pending...)
	}
	return resolved, nil
}

// within reports whether p is dir or lies under it; both are clean and
// absolute.
func within(p, dir string) bool {
	if dir == filepath.VolumeName(dir)+string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
