package workspace

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// longTimeout bounds git calls whose work grows with the repository
// (checkouts, hashing every untracked file).
const longTimeout = 30 * time.Minute

// state is a checkout captured completely, for carrying and snapshots:
// diffscope's capture (HEAD, index tree, worktree tree) with every
// untracked, non-ignored file in the worktree tree (diffscope leaves files
// out past its diff limits; a snapshot or a carry must not) and the
// intent-to-add entries (`git add -N`), which no tree can record.
type state struct {
	Head, HeadTree, IndexTree, WorktreeTree string
	// IntentToAdd lists the index's intent-to-add paths (repository
	// relative, /-separated, sorted).
	IntentToAdd []string
	// Untracked counts the untracked files in WorktreeTree.
	Untracked int
	// DirtySubmodules lists the submodules whose contents differ from
	// their recorded commit (see dirtySubmodules), sorted.
	DirtySubmodules []string
}

// captureState captures the checkout at root (the top of a work tree)
// without writing its index: diffscope.Capture, then, when the capture left
// untracked files out, a temporary index holding its worktree tree gets
// every untracked, non-ignored file (`ls-files -o --exclude-standard`;
// untracked nested repositories, listed as "dir/", cannot be captured and
// stay out).
func (m *Manager) captureState(ctx context.Context, root string) (*state, error) {
	c, err := m.differ.Capture(ctx, root)
	if err != nil {
		return nil, err
	}
	s := &state{Head: c.Head, HeadTree: c.HeadTree, IndexTree: c.IndexTree, WorktreeTree: c.WorktreeTree,
		Untracked: len(c.Untracked)}
	if c.UntrackedSkipped > 0 || c.UntrackedDropped {
		if err := m.completeUntracked(ctx, root, s); err != nil {
			return nil, err
		}
	}
	if s.IntentToAdd, err = m.intentToAdd(ctx, root); err != nil {
		return nil, err
	}
	if len(c.Submodules) > 0 {
		if s.DirtySubmodules, err = m.dirtySubmodules(ctx, root); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// dirtySubmodules lists (repository relative, /-separated, sorted) the
// submodules of the checkout at root whose own contents a carry cannot
// bring: edits or untracked files inside them, or a new commit checked out
// and not staged. It reads `git status --porcelain=v2 -z` (git-status(1),
// "Porcelain Format Version 2"): the <sub> field "S<c><m><u>" of an entry
// flags a submodule, M and U its tracked and untracked changes, and C with
// a worktree status (Y) other than "." a commit that differs from the
// index's gitlink. A staged gitlink alone is carried as is and not listed.
func (m *Manager) dirtySubmodules(ctx context.Context, root string) ([]string, error) {
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: root, Args: []string{"status", "--porcelain=v2", "-z", "--ignore-submodules=none"}, Timeout: longTimeout})
	if err != nil {
		return nil, err
	}
	var dirty []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		var n int // fields before the path
		switch {
		case strings.HasPrefix(rec, "1 "):
			n = 8
		case strings.HasPrefix(rec, "2 "):
			n = 9
			i++ // the original path follows in its own record
		case strings.HasPrefix(rec, "u "):
			n = 10
		default:
			continue
		}
		f := strings.SplitN(rec, " ", n+1)
		if len(f) != n+1 || len(f[1]) != 2 || len(f[2]) != 4 || f[2][0] != 'S' {
			continue
		}
		sub := f[2]
		if sub[2] == 'M' || sub[3] == 'U' || (sub[1] == 'C' && f[1][1] != '.') {
			dirty = append(dirty, f[n])
		}
	}
	slices.Sort(dirty)
	return dirty, nil
}

func (m *Manager) completeUntracked(ctx context.Context, root string, s *state) error {
	var list bytes.Buffer
	n := 0
	err := m.git.Stream(ctx, gitcli.Cmd{Dir: root, Args: []string{"ls-files", "-o", "--exclude-standard", "-z"}}, func(r io.Reader) error {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			rec, err := br.ReadString(0)
			if p := strings.TrimSuffix(rec, "\x00"); p != "" && len(p) < len(rec) && !strings.HasSuffix(p, "/") {
				list.WriteString(rec)
				n++
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
		return err
	}
	tmp, err := os.MkdirTemp("", "knightcode-snapshot-")
	if err != nil {
		return errorf("capture: %v", err)
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	pre := []string{"-c", "core.splitIndex=false"}
	if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: root, Args: append(pre, "read-tree", s.WorktreeTree), Env: env, Write: true}); err != nil {
		return err
	}
	if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: root, Args: append(pre, "update-index", "--add", "--remove", "-z", "--stdin"),
		Stdin: &list, Env: env, Write: true, Timeout: longTimeout}); err != nil {
		return err
	}
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: root, Args: append(pre, "write-tree"), Env: env, Write: true})
	if err != nil {
		return err
	}
	s.WorktreeTree, s.Untracked = strings.TrimSpace(string(out)), n
	return nil
}

// intentToAdd lists the index's intent-to-add entries: the only index
// entries `git diff-files` reports as added.
func (m *Manager) intentToAdd(ctx context.Context, root string) ([]string, error) {
	out, err := m.git.Run(ctx, gitcli.Cmd{Dir: root, Args: []string{"diff-files", "-z", "--name-only", "--diff-filter=A"}})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// populate fills the worktree at dir, whose index is empty (created with
// --no-checkout): `read-tree --reset -u` writes the worktree tree's files,
// `read-tree -m` of the index tree sets the index (keeping the stat data of
// entries that match), then the intent-to-add entries are marked again
// (`add -N`). cfg are the checkout -c options ([Manager.checkoutConfig]).
// Mode bits, symlinks, deletions and staged-vs-unstaged differences come out
// as captured; ignored files were never captured.
func (m *Manager) populate(ctx context.Context, dir string, cfg []string, worktreeTree, indexTree string, ita []string) error {
	args := append(append([]string{}, cfg...), "read-tree", "--reset", "-u", worktreeTree)
	if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: args, Write: true, Timeout: longTimeout}); err != nil {
		return err
	}
	if indexTree != worktreeTree {
		args := append(append([]string{}, cfg...), "read-tree", "-m", indexTree)
		if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: args, Write: true, Timeout: longTimeout}); err != nil {
			return err
		}
	}
	if len(ita) > 0 {
		var in bytes.Buffer
		for _, p := range ita {
			in.WriteString(p)
			in.WriteByte(0)
		}
		args := append(append([]string{}, cfg...), "add", "--intent-to-add", "--force", "--pathspec-from-file=-", "--pathspec-file-nul")
		if _, err := m.git.Run(ctx, gitcli.Cmd{Dir: dir, Args: args, Stdin: &in, Write: true}); err != nil {
			return err
		}
	}
	return nil
}
