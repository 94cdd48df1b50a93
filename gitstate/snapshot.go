package gitstate

import (
	"context"
	"errors"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Ident is the author and committer of knightcode's own commits
// (snapshots, leftovers), so they work in repositories whose user has no
// identity configured.
var Ident = gitcli.Ident{Name: "knightcode", Email: "knightcode@localhost"}

// SnapshotSpec is what [WriteSnapshot] commits: a checkout's state as
// trees ([State] or [Capture]) and the two commit messages.
type SnapshotSpec struct {
	// Head is the commit HEAD was at; required (an unborn HEAD has no
	// snapshot shape).
	Head string
	// IndexTree and WorktreeTree are the captured index and worktree trees.
	IndexTree, WorktreeTree string
	// Ignored, when set, is a commit holding kept ignored files: the
	// snapshot commit's third parent.
	Ignored string
	// IndexMessage and Message are the messages of the index commit and
	// of the snapshot commit.
	IndexMessage, Message string
}

// Snapshot commits the state of a checkout in the shape of git's stash
// (ARCHITECTURE.md, "Worktrees, snapshots, handoff"): IndexCommit =
// commit-tree IndexTree -p Head; Commit = commit-tree WorktreeTree -p Head
// -p IndexCommit [-p Ignored].
type Snapshot struct {
	Commit, IndexCommit string
}

// ErrUnbornHead is returned by [WriteSnapshot] for a spec without Head.
var ErrUnbornHead = errors.New("HEAD has no commit yet")

// WriteSnapshot writes the two commits of a snapshot with [Ident] as
// author and committer and returns them; no ref points at them yet (the
// caller names one). Errors: [ErrUnbornHead]; *gitcli.Error when git
// fails.
func WriteSnapshot(ctx context.Context, repo *gitcli.Repo, s SnapshotSpec) (Snapshot, error) {
	if s.Head == "" {
		return Snapshot{}, ErrUnbornHead
	}
	ic, err := repo.CommitTree(ctx, s.IndexTree, []string{s.Head}, s.IndexMessage, Ident)
	if err != nil {
		return Snapshot{}, err
	}
	parents := []string{s.Head, ic}
	if s.Ignored != "" {
		parents = append(parents, s.Ignored)
	}
	wc, err := repo.CommitTree(ctx, s.WorktreeTree, parents, s.Message, Ident)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{Commit: wc, IndexCommit: ic}, nil
}
