package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// CreateOptions are the parameters of [Manager.Create] (spec, thread/start
// with workspace {mode: "worktree", baseRef?, carryLocalChanges?}).
type CreateOptions struct {
	// Cwd is the directory the thread was started in: inside the checkout
	// to branch off (the user's checkout, a linked worktree, or a managed
	// worktree). Required; must be an existing directory.
	Cwd string
	// BaseRef is the commit-ish the worktree is detached at; "" means the
	// checkout's HEAD.
	BaseRef string
	// CarryLocalChanges brings the checkout's uncommitted changes along as
	// uncommitted edits: staged stay staged, unstaged stay unstaged,
	// untracked files come along, ignored files do not; exec bits,
	// symlinks, deletions and intent-to-add entries as they are
	// (shared/cases C15). The checkout itself is not written.
	CarryLocalChanges bool
	// Root is worktrees.root; "" means [Manager.DefaultRoot].
	Root string
	// ThreadID, when set, is attached to the new worktree in the registry.
	ThreadID string
	// Environment is the name of the environment the worktree is created
	// with, recorded in the registry ([Worktree.Environment]); "" for none.
	Environment string
	// Snapshot, when set, is a snapshot ref ([Snapshot.Ref]) of the
	// repository the new worktree starts from: detached at the snapshot's
	// HEAD with its worktree and index trees and intent-to-add entries, as
	// [Manager.Restore] brings a worktree back (thread/fork of a thread
	// whose worktree is deleted). BaseRef and CarryLocalChanges must then
	// be unset.
	Snapshot string
}

// Created is a new managed worktree.
type Created struct {
	// Worktree is the registry entry written for it.
	Worktree Worktree
	// Cwd is where the thread runs: the same subdirectory of the worktree
	// as Cwd had in its checkout (created when the base lacks it).
	Cwd string
	// Carried describes what CarryLocalChanges brought; nil without it.
	Carried *Carried
	// Included lists the ignored files copied from the main checkout
	// because its .worktreeinclude names them ([WorktreeIncludeFile]),
	// sorted.
	Included []string
}

// Carried describes the changes a creation carried.
type Carried struct {
	// Untracked counts the untracked files carried.
	Untracked int
	// IntentToAdd lists the intent-to-add entries re-created.
	IntentToAdd []string
	// Rebased reports that the changes were applied with a 3-way merge
	// onto a BaseRef other than the checkout's HEAD (shared/cases C31).
	Rebased bool
	// DirtySubmodules lists the submodules (repository relative,
	// /-separated, sorted) whose own uncommitted contents were not carried:
	// edits or untracked files inside them, or a new commit checked out and
	// not staged. Only their gitlink is carried, as the capture recorded
	// it; a worktree's submodules are not checked out.
	DirtySubmodules []string
}

// bucketAttempts bounds the tries at a free 4-hex bucket.
const bucketAttempts = 256

// Create makes a managed worktree: a detached worktree (no branch) at
// BaseRef under <Root>/<4 random hex>/<repository name>, populated without
// running any hook, filter or user code, and registered in the registry.
//
// Steps: the source is captured first when carrying (gitstate.Complete:
// every untracked file, through temporary indexes only); by default the
// base is the source's own HEAD (C31) and an explicit different BaseRef gets
// the changes by `git apply --cached --3way` into temporary indexes, so
// changes that do not apply are refused before anything is created. Then,
// under the repository lock, `git worktree add --no-checkout --detach`
// (which runs no post-checkout hook), and outside it the checkout with
// read-tree into the new worktree's own index ([Manager.populate]) with
// every configured filter driver and fsmonitor disabled. Concurrent
// creations in one repository are safe.
//
// A .worktreeinclude file at the root of the main checkout (gitignore
// syntax) names ignored files copied from there into the new worktree
// ([Created.Included]).
//
// Carrying reads the source as `git add` would (gitstate.Complete: through
// the repository's clean filters and core.autocrlf, into temporary indexes);
// the new worktree's files are written without smudge filters.
//
// A creation that fails at any step leaves nothing behind: its directory is
// removed, its registration is removed with `git worktree remove --force`
// of that one path (never a repository-wide prune, C27), no ref is written
// and the registry is unchanged. The registry records the worktree (state
// [StateCreating]) before `git worktree add` and marks it complete at the
// end, so a process killed in between leaves an entry that
// [Manager.Reconcile] removes with what git and the disk have of it.
//
// Errors: [*ParamError] for Cwd (not a directory) or BaseRef (names no
// commit); an error matching gitcli.ErrNotRepo outside a repository;
// [ErrBareRepository]; [ErrUnbornHead] when BaseRef is empty and HEAD is
// unborn; [*ConflictError] with diffscope.ReasonPatchFailed when carried
// changes do not apply onto BaseRef (Paths are the conflicting paths,
// Output git's message); *gitcli.Error and filesystem errors otherwise.
func (m *Manager) Create(ctx context.Context, o CreateOptions) (*Created, error) {
	cwd, err := existingDir("cwd", o.Cwd)
	if err != nil {
		return nil, err
	}
	repo, err := m.git.Discover(ctx, cwd)
	if err != nil {
		var ge *gitcli.Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "must be run in a work tree") {
			return nil, ErrBareRepository
		}
		return nil, err
	}
	if repo.Bare || repo.Root == "" {
		return nil, ErrBareRepository
	}
	project, err := m.projectOfRepo(ctx, cwd, repo)
	if err != nil {
		return nil, err
	}
	head, born, err := revParseCommit(ctx, repo, "HEAD")
	if err != nil {
		return nil, err
	}
	base := head
	if o.BaseRef != "" {
		c, ok, err := revParseCommit(ctx, repo, o.BaseRef)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, paramErr("baseRef", "%q names no commit", o.BaseRef)
		}
		base = c
	} else if !born {
		return nil, ErrUnbornHead
	}

	var carried *Carried
	var st *state
	if o.Snapshot != "" {
		if o.BaseRef != "" || o.CarryLocalChanges {
			return nil, paramErr("snapshot", "a worktree made from a snapshot takes no baseRef and carries nothing")
		}
		snap, ok, err := m.ReadSnapshot(ctx, repo.CommonDir, o.Snapshot)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, paramErr("snapshot", "no snapshot %s", o.Snapshot)
		}
		base = snap.Head
		st = &state{Head: snap.Head, HeadTree: snap.HeadTree, IndexTree: snap.IndexTree, WorktreeTree: snap.WorktreeTree, IntentToAdd: snap.IntentToAdd}
	} else if o.CarryLocalChanges {
		if st, err = m.captureState(ctx, repo.Root); err != nil {
			return nil, err
		}
		carried = &Carried{Untracked: st.Untracked, IntentToAdd: st.IntentToAdd, DirtySubmodules: st.DirtySubmodules}
		if base != st.Head {
			if st, err = m.rebaseState(ctx, repo, st, base); err != nil {
				return nil, err
			}
			carried.Rebased = true
		}
	}
	cfg, err := m.checkoutConfig(ctx, repo)
	if err != nil {
		return nil, err
	}

	root := o.Root
	if root == "" {
		root = m.DefaultRoot()
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, errorf("worktrees root: %v", err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, errorf("worktrees root: %v", err)
	}
	bucketDir, path, err := m.reserve(root, repoName(project, repo))
	if err != nil {
		return nil, err
	}

	// The registry knows of the worktree before git does (state
	// creating), so a process that dies from here on leaves an entry that
	// Reconcile clears; the creation lock tells it this one is still
	// running.
	held, err := m.lockCreation(path)
	if err != nil {
		os.Remove(bucketDir)
		return nil, err
	}
	defer held.release()
	now := m.now()
	w := Worktree{Path: path, ProjectCwd: project, CommonDir: repo.CommonDir, Head: base,
		BaseRef: o.BaseRef, Base: base, Environment: o.Environment, ThreadIDs: []string{}, CreatedAt: now, LastUsedAt: now, State: StateCreating}
	if o.ThreadID != "" {
		w.ThreadIDs = []string{o.ThreadID}
	}
	if err := m.reg.Add(w); err != nil {
		os.Remove(bucketDir)
		return nil, err
	}
	added := false
	fail := func(err error) (*Created, error) {
		if m.rollbackCreate(ctx, repo.CommonDir, path, bucketDir, added) {
			if rerr := m.reg.Remove(path); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	if err := m.runStep("registered"); err != nil {
		return fail(err)
	}
	lk, err := lock(ctx, repo.CommonDir)
	if err != nil {
		return fail(err)
	}
	err = repo.WorktreeAdd(ctx, path, base)
	// git removes what it made when worktree add itself fails; a
	// registration exists from here on when it succeeded.
	added = err == nil
	lk.Unlock()
	if err != nil {
		return fail(err)
	}
	if err := m.runStep("added"); err != nil {
		return fail(err)
	}
	tree, index, ita := base+"^{tree}", base+"^{tree}", []string(nil)
	if st != nil {
		tree, index, ita = st.WorktreeTree, st.IndexTree, st.IntentToAdd
	}
	if err := m.populate(ctx, path, cfg, tree, index, ita); err != nil {
		return fail(err)
	}
	included, err := m.copyIncluded(ctx, project, path)
	if err != nil {
		return fail(err)
	}
	if err := m.runStep("populated"); err != nil {
		return fail(err)
	}
	threadCwd := filepath.Join(path, filepath.FromSlash(strings.TrimSuffix(repo.Prefix, "/")))
	if err := os.MkdirAll(threadCwd, 0o755); err != nil {
		return fail(errorf("thread cwd: %v", err))
	}
	w, err = m.reg.Update(path, func(x *Worktree) error { x.State = ""; return nil })
	if err != nil {
		return fail(err)
	}
	return &Created{Worktree: w, Cwd: threadCwd, Carried: carried, Included: included}, nil
}

// repoName is the last path element of the worktree path: the project's
// directory name (for a bare repository, its name without ".git").
func repoName(project string, repo *gitcli.Repo) string {
	name := filepath.Base(project)
	if name == "." || name == string(filepath.Separator) || name == "" {
		name = strings.TrimSuffix(filepath.Base(repo.CommonDir), ".git")
	}
	if name == "" || name == "." {
		name = "repo"
	}
	return name
}

// reserve picks a free bucket under root (a 4-hex directory not on disk and
// not used by any registry entry, deleted ones included, so a deleted
// worktree's path stays free for its restore) and creates the bucket
// directory, which makes the choice atomic between processes.
func (m *Manager) reserve(root, name string) (bucketDir, path string, err error) {
	for i := 0; i < bucketAttempts; i++ {
		var b [2]byte
		if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
			return "", "", err
		}
		bucketDir = filepath.Join(root, hex.EncodeToString(b[:]))
		path = filepath.Join(bucketDir, name)
		if _, ok, err := m.reg.Get(path); err != nil {
			return "", "", err
		} else if ok {
			continue
		}
		if err := os.Mkdir(bucketDir, 0o755); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", "", errorf("worktrees root: %v", err)
		}
		return bucketDir, path, nil
	}
	return "", "", errorf("no free worktree bucket under %s after %d attempts", root, bucketAttempts)
}

// rollbackCreate undoes a failed creation: the registration of path only
// (`git worktree remove --force <path>`, again after the directory is gone
// when git could not remove it), then the bucket directory made for it. It
// reports whether the registration is known to be gone (false when the
// lock or the last removal failed: the registry entry then stays, in state
// creating, for [Manager.Reconcile]).
func (m *Manager) rollbackCreate(ctx context.Context, commonDir, path, bucketDir string, added bool) bool {
	ctx, cancel := withoutCancel(ctx)
	defer cancel()
	gone := !added
	if added {
		if lk, err := lock(ctx, commonDir); err == nil {
			var repo *gitcli.Repo
			if repo, err = m.repoAt(ctx, commonDir); err == nil {
				if err = repo.WorktreeRemove(ctx, path, 1); err != nil {
					os.RemoveAll(bucketDir)
					err = repo.WorktreeRemove(ctx, path, 1)
				}
			}
			gone = err == nil
			lk.Unlock()
		}
	}
	os.RemoveAll(bucketDir)
	return gone
}

// rebaseState moves carried changes onto base: each of the index and
// worktree trees becomes base plus the diff HEAD tree -> that tree, applied
// with `git apply --cached --3way` in a temporary index. Conflicts are a
// [*ConflictError] with diffscope.ReasonPatchFailed; nothing is written but
// objects.
func (m *Manager) rebaseState(ctx context.Context, repo *gitcli.Repo, s *state, base string) (*state, error) {
	out := *s
	var err error
	if out.IndexTree, err = m.applyOnto(ctx, repo, s.HeadTree, s.IndexTree, base); err != nil {
		return nil, err
	}
	if s.WorktreeTree == s.IndexTree {
		out.WorktreeTree = out.IndexTree
	} else if out.WorktreeTree, err = m.applyOnto(ctx, repo, s.HeadTree, s.WorktreeTree, base); err != nil {
		return nil, err
	}
	out.Head = base
	return &out, nil
}

func (m *Manager) applyOnto(ctx context.Context, repo *gitcli.Repo, from, to, base string) (string, error) {
	tmp, err := os.MkdirTemp("", "knightcode-carry-")
	if err != nil {
		return "", errorf("carry: %v", err)
	}
	defer os.RemoveAll(tmp)
	idx := repo.WithIndex(filepath.Join(tmp, "index"))
	if err := idx.ReadTree(ctx, base+"^{tree}", gitcli.ReadTreeOptions{}); err != nil {
		return "", err
	}
	if from != to {
		patch, err := os.Create(filepath.Join(tmp, "carry.patch"))
		if err != nil {
			return "", errorf("carry: %v", err)
		}
		defer patch.Close()
		if err := repo.DiffTreeBinaryPatch(ctx, from, to, patch); err != nil {
			return "", err
		}
		if _, err := patch.Seek(0, io.SeekStart); err != nil {
			return "", errorf("carry: %v", err)
		}
		if err := idx.Apply(ctx, patch, gitcli.ApplyOptions{Cached: true, ThreeWay: true}); err != nil {
			var ge *gitcli.Error
			if !errors.As(err, &ge) || ge.ExitCode < 0 {
				return "", err
			}
			paths := unmergedPaths(ctx, idx)
			if len(paths) == 0 {
				// Refused outright (a file missing at base, say), not a
				// 3-way conflict: git's message names the paths.
				paths = gitcli.ApplyErrorPaths(ge.Stderr)
			}
			return "", &ConflictError{Reason: diffscope.ReasonPatchFailed, Paths: paths,
				Output: fmt.Sprintf("the local changes do not apply onto %s: %s", base, ge.Stderr)}
		}
	}
	return idx.WriteTree(ctx)
}

// unmergedPaths lists the unmerged paths of idx's index, each once (none
// when git fails).
func unmergedPaths(ctx context.Context, idx *gitcli.Repo) []string {
	paths, _ := listUnmerged(ctx, idx)
	return paths
}

// listUnmerged lists the unmerged paths of repo's index, each once, in
// index order.
func listUnmerged(ctx context.Context, repo *gitcli.Repo) ([]string, error) {
	ents, err := repo.LsFilesUnmerged(ctx)
	if err != nil {
		return nil, err
	}
	var paths []string
	seen := map[string]bool{}
	for _, e := range ents {
		if !seen[e.Path] {
			seen[e.Path] = true
			paths = append(paths, e.Path)
		}
	}
	return paths, nil
}
