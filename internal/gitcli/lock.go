package gitcli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// LockFileName is the file in a repository's common git directory whose
// flock serializes knightcode's writes to shared repository state: worktree
// add/remove/prune and updates of refs under refs/knightcode/.
const LockFileName = "knightcode.lock"

// RepoLock is a held repository lock; Unlock releases it.
type RepoLock struct{ fl *flock.Flock }

// Unlock releases the lock. It is safe to call more than once.
func (l *RepoLock) Unlock() error {
	if l == nil || l.fl == nil {
		return nil
	}
	return l.fl.Unlock()
}

// LockRepo takes the exclusive cross-process lock of the repository that dir
// belongs to (a gofrs/flock on <common git dir>/knightcode.lock), waiting
// until ctx ends. Two calls in one process exclude each other as well, since
// each opens its own file description. Errors: those of [Runner.Discover],
// or ctx's error when the wait ends first.
func (r *Runner) LockRepo(ctx context.Context, dir string) (*RepoLock, error) {
	repo, err := r.Discover(ctx, dir)
	if err != nil {
		return nil, err
	}
	return LockCommonDir(ctx, repo.CommonDir)
}

// LockCommonDir is [Runner.LockRepo] for a known common git directory.
func LockCommonDir(ctx context.Context, commonDir string) (*RepoLock, error) {
	fl := flock.New(filepath.Join(commonDir, LockFileName))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("lock repository %s: %w", commonDir, err)
	}
	if !ok {
		return nil, fmt.Errorf("lock repository %s: %w", commonDir, ctx.Err())
	}
	return &RepoLock{fl: fl}, nil
}
