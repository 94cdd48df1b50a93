package workspace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/knightcode/knightcode/gitstate"
)

// SnapshotRefPrefix is where snapshots are kept:
// refs/knightcode/snapshots/<bucket>/<UTC time with ms> (spec, "Workspaces,
// diffs and git").
const SnapshotRefPrefix = "refs/knightcode/snapshots/"

// TrashRefPrefix is where recovery refs for branches with unmerged commits
// go: refs/knightcode/trash/<branch> (shared/cases C22).
const TrashRefPrefix = "refs/knightcode/trash/"

// snapshotTimeFormat is the <time> of a snapshot ref: UTC, millisecond
// precision, valid in a ref name.
const snapshotTimeFormat = "20060102T150405.000Z"

// metaKey starts the snapshot commit message line that holds
// [snapshotMeta] as JSON.
const metaKey = "Knightcode-Snapshot: "

// Snapshot is a worktree saved as a commit shaped like git's stash
// (ARCHITECTURE.md, "Worktrees, snapshots, handoff"): IndexCommit =
// commit-tree IndexTree -p Head, Commit = commit-tree WorktreeTree -p Head -p
// IndexCommit [-p Ignored.Commit], kept as Ref. The commit message records
// what no tree can (the intent-to-add entries, the branch). Small ignored
// files outside big or regenerable folders are kept as the third parent
// (see [IgnoredMaxFile] and the constants next to it); IgnoredNotKept
// says some were left out (Ignored.NotKept lists them), for the caller to
// warn.
type Snapshot struct {
	Ref          string    `json:"ref"`
	Commit       string    `json:"commit"`
	IndexCommit  string    `json:"indexCommit"`
	Head         string    `json:"head"`
	Branch       string    `json:"branch,omitempty"`
	HeadTree     string    `json:"headTree"`
	IndexTree    string    `json:"indexTree"`
	WorktreeTree string    `json:"worktreeTree"`
	IntentToAdd  []string  `json:"intentToAdd,omitempty"`
	Untracked    int       `json:"untracked"`
	Time         time.Time `json:"time"`
	// DirectoryMissing marks a snapshot of a worktree whose directory was
	// already gone: it holds HEAD only (no uncommitted work is assumed,
	// shared/cases C27).
	DirectoryMissing bool `json:"directoryMissing,omitempty"`
	IgnoredNotKept   bool `json:"ignoredNotKept"`
	// Ignored is what the snapshot kept of the ignored files; nil for a
	// snapshot without them (a missing directory, or one written before
	// they were kept).
	Ignored *IgnoredFiles `json:"ignored,omitempty"`
}

// snapshotMeta is the JSON kept in the snapshot commit's message.
type snapshotMeta struct {
	Path             string   `json:"path"`
	Branch           string   `json:"branch,omitempty"`
	IntentToAdd      []string `json:"intentToAdd,omitempty"`
	Untracked        int      `json:"untracked"`
	DirectoryMissing bool     `json:"directoryMissing,omitempty"`
	Time             string   `json:"time"`
	// IgnoredKept and IgnoredNotKept describe the third parent.
	IgnoredKept    int      `json:"ignoredKept,omitempty"`
	IgnoredNotKept []string `json:"ignoredNotKept,omitempty"`
	// IgnoredModes are the kept files' permission bits a tree cannot
	// hold ([IgnoredFiles.Modes]).
	IgnoredModes map[string]fs.FileMode `json:"ignoredModes,omitempty"`
}

// Snapshot saves the live managed worktree at path under a new snapshot ref
// without changing it (the worktree stays; its index is only read). Errors:
// [*ParamError] (field "path") for a path the registry does not list;
// [*ConflictError] worktreeDeleted for a deleted one; [ErrUnbornHead]; git
// failures.
func (m *Manager) Snapshot(ctx context.Context, path string) (*Snapshot, error) {
	w, err := m.managed(path)
	if err != nil {
		return nil, err
	}
	lk, err := lock(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	list, err := m.listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	e := findEntry(list, w.Path)
	if e == nil {
		return nil, conflict(ReasonWorktreeMissing, []string{w.Path}, "git has no worktree registered at %s", w.Path)
	}
	return m.snapshotLocked(ctx, w, e)
}

// managed returns the live registry entry at path.
func (m *Manager) managed(path string) (Worktree, error) {
	w, err := m.registered(path)
	if err != nil {
		return Worktree{}, err
	}
	if w.Deleted {
		return Worktree{}, conflict(ReasonWorktreeDeleted, []string{w.Path}, "the worktree %s is deleted", w.Path)
	}
	return w, nil
}

// registered returns the registry entry at path, deleted or not; one
// being created ([StateCreating]) is not a managed worktree yet.
func (m *Manager) registered(path string) (Worktree, error) {
	clean, err := cleanDir(path)
	if err != nil {
		return Worktree{}, paramErr("path", "%v", err)
	}
	w, ok, err := m.reg.Get(clean)
	if err != nil {
		return Worktree{}, err
	}
	if !ok || !inManagedLayout(w.Path) || w.State == StateCreating {
		return Worktree{}, paramErr("path", "%s is not a managed worktree", path)
	}
	return w, nil
}

// snapshotLocked writes a snapshot of w (git's entry e) with the
// repository lock held.
func (m *Manager) snapshotLocked(ctx context.Context, w Worktree, e *entry) (*Snapshot, error) {
	var st *state
	var ign *IgnoredFiles
	if e.Prunable {
		tree, err := m.treeOf(ctx, w.CommonDir, e.Head)
		if err != nil {
			return nil, err
		}
		st = &state{Head: e.Head, HeadTree: tree, IndexTree: tree, WorktreeTree: tree}
	} else {
		var err error
		if st, err = m.captureState(ctx, w.Path); err != nil {
			return nil, err
		}
		if ign, err = m.keepIgnored(ctx, w.Path); err != nil {
			return nil, err
		}
	}
	if st.Head == "" {
		return nil, ErrUnbornHead
	}
	now := m.now().UTC()
	meta := snapshotMeta{Path: w.Path, Branch: e.Branch, IntentToAdd: st.IntentToAdd, Untracked: st.Untracked,
		DirectoryMissing: e.Prunable, Time: now.Format(time.RFC3339Nano)}
	ignoredCommit := ""
	if ign != nil {
		meta.IgnoredKept, meta.IgnoredNotKept, meta.IgnoredModes, ignoredCommit = ign.Kept, ign.NotKept, ign.Modes, ign.Commit
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	short := st.Head[:min(12, len(st.Head))]
	repo, err := m.repoAt(ctx, w.CommonDir)
	if err != nil {
		return nil, err
	}
	sc, err := gitstate.WriteSnapshot(ctx, repo, gitstate.SnapshotSpec{Head: st.Head, IndexTree: st.IndexTree, WorktreeTree: st.WorktreeTree, Ignored: ignoredCommit,
		IndexMessage: fmt.Sprintf("index of %s at %s\n", w.Path, short),
		Message:      fmt.Sprintf("knightcode snapshot of %s at %s\n\n%s%s\n", w.Path, short, metaKey, metaJSON)})
	if err != nil {
		return nil, err
	}
	wc, ic := sc.Commit, sc.IndexCommit
	ref, err := m.createRef(ctx, w.CommonDir, func(t time.Time) string {
		return SnapshotRefPrefix + w.Bucket() + "/" + t.Format(snapshotTimeFormat)
	}, now, wc)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Ref: ref, Commit: wc, IndexCommit: ic, Head: st.Head, Branch: e.Branch,
		HeadTree: st.HeadTree, IndexTree: st.IndexTree, WorktreeTree: st.WorktreeTree,
		IntentToAdd: st.IntentToAdd, Untracked: st.Untracked, Time: now,
		DirectoryMissing: e.Prunable, IgnoredNotKept: ign == nil || len(ign.NotKept) > 0, Ignored: ign}, nil
}

// createRef creates a ref named name(t) pointing at commit, only if it does
// not exist (`update-ref <ref> <commit> ""`); a taken name moves t on by a
// millisecond.
func (m *Manager) createRef(ctx context.Context, dir string, name func(time.Time) string, t time.Time, commit string) (string, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return "", err
	}
	var last error
	for i := 0; i < 50; i++ {
		ref := name(t.Add(time.Duration(i) * time.Millisecond))
		err := repo.CreateRef(ctx, ref, commit)
		if err == nil {
			return ref, nil
		}
		last = err
		if _, ok, _ := repo.VerifyRef(ctx, ref); !ok {
			return "", err
		}
	}
	return "", last
}

func (m *Manager) refExists(ctx context.Context, dir, ref string) (bool, string, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return false, "", err
	}
	id, ok, err := repo.VerifyRef(ctx, ref)
	return ok, id, err
}

func (m *Manager) treeOf(ctx context.Context, dir, commit string) (string, error) {
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return "", err
	}
	return repo.TreeOf(ctx, commit)
}

// ReadSnapshot reads the snapshot ref in the repository of dir (any
// directory of it, the common git dir included). ok is false when the ref
// does not exist.
func (m *Manager) ReadSnapshot(ctx context.Context, dir, ref string) (*Snapshot, bool, error) {
	exists, wc, err := m.refExists(ctx, dir, ref)
	if err != nil || !exists {
		return nil, false, err
	}
	repo, err := m.repoAt(ctx, dir)
	if err != nil {
		return nil, false, err
	}
	out, err := repo.CatFileCommit(ctx, wc)
	if err != nil {
		return nil, false, err
	}
	s := &Snapshot{Ref: ref, Commit: wc, IgnoredNotKept: true}
	var parents []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	inBody := false
	for sc.Scan() {
		line := sc.Text()
		if !inBody {
			switch {
			case line == "":
				inBody = true
			case strings.HasPrefix(line, "tree "):
				s.WorktreeTree = strings.TrimPrefix(line, "tree ")
			case strings.HasPrefix(line, "parent "):
				parents = append(parents, strings.TrimPrefix(line, "parent "))
			}
			continue
		}
		if js, ok := strings.CutPrefix(line, metaKey); ok {
			var meta snapshotMeta
			if err := json.Unmarshal([]byte(js), &meta); err != nil {
				return nil, false, errorf("snapshot %s: bad metadata: %v", ref, err)
			}
			s.Branch, s.IntentToAdd, s.Untracked, s.DirectoryMissing = meta.Branch, meta.IntentToAdd, meta.Untracked, meta.DirectoryMissing
			s.Time, _ = time.Parse(time.RFC3339Nano, meta.Time)
			if meta.IgnoredKept > 0 || len(meta.IgnoredNotKept) > 0 {
				s.Ignored = &IgnoredFiles{Kept: meta.IgnoredKept, NotKept: meta.IgnoredNotKept, Modes: meta.IgnoredModes}
			}
		}
	}
	if len(parents) != 2 && len(parents) != 3 {
		return nil, false, errorf("snapshot %s: %s is not a snapshot commit (%d parents)", ref, wc, len(parents))
	}
	s.Head, s.IndexCommit = parents[0], parents[1]
	if len(parents) == 3 {
		if s.Ignored == nil {
			s.Ignored = &IgnoredFiles{}
		}
		s.Ignored.Commit = parents[2]
	}
	s.IgnoredNotKept = s.Ignored == nil || len(s.Ignored.NotKept) > 0
	if s.HeadTree, err = m.treeOf(ctx, dir, s.Head); err != nil {
		return nil, false, err
	}
	if s.IndexTree, err = m.treeOf(ctx, dir, s.IndexCommit); err != nil {
		return nil, false, err
	}
	return s, true, nil
}
