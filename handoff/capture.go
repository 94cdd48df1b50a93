package handoff

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// capturing is a capture of a source checkout running in the background
// (gitstate.CompleteKeepingIndex), which keeps the index its worktree
// tree was written from for the source's cleanup.
type capturing struct {
	repo   *gitcli.Repo
	cancel context.CancelFunc
	done   chan struct{}
	dir    string // temporary folder of the kept index
	st     *gitstate.State
	err    error
	// kept is set when the capture succeeded and the real index did not
	// change while it ran.
	kept *keptIndex
}

// startCapture starts capturing repo's checkout completely.
func startCapture(ctx context.Context, repo *gitcli.Repo) *capturing {
	ctx, cancel := context.WithCancel(ctx)
	c := &capturing{repo: repo, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		dir, err := os.MkdirTemp("", "knightcode-handoff-")
		if err != nil {
			c.err = errorf("capture: %v", err)
			return
		}
		c.dir = dir
		index := filepath.Join(dir, "index")
		before, berr := os.Stat(repo.IndexPath)
		c.st, c.err = gitstate.CompleteKeepingIndex(ctx, repo, index)
		if c.err != nil || berr != nil {
			return
		}
		if after, err := os.Stat(repo.IndexPath); err == nil && sameIndex(before, after) {
			if _, err := os.Stat(index); err == nil {
				c.kept = &keptIndex{path: index, real: before}
			}
		}
	}()
	return c
}

// wait returns the capture's result.
func (c *capturing) wait() (*gitstate.State, error) {
	<-c.done
	return c.st, c.err
}

// discard stops the capture if it still runs and removes its files.
func (c *capturing) discard() {
	c.cancel()
	<-c.done
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// keptIndex is a capture's worktree index: the source's worktree tree,
// every entry with the stat data git read its file with.
type keptIndex struct {
	path string
	real os.FileInfo // the real index when the capture began
}

// install makes the kept index the real index at indexPath the way git
// commits an index, and reports whether it did: it is copied to
// <index>.lock (created exclusively: refused, as by git, while another
// process holds the lock) with its own mtime, so that git's racy-clean
// check treats its entries as it would have in the capture; then, when
// the real index is still the file the capture read (same inode, size
// and mtime), renamed over it. A nil k installs nothing.
func (k *keptIndex) install(indexPath string) bool {
	if k == nil {
		return false
	}
	lock := indexPath + ".lock"
	if ok, err := gitstate.CopyIndex(k.path, lock); err != nil || !ok {
		if err != nil && !errors.Is(err, fs.ErrExist) {
			_ = os.Remove(lock) // a partial copy of ours
		}
		return false
	}
	now, err := os.Stat(indexPath)
	if err != nil || !sameIndex(k.real, now) {
		_ = os.Remove(lock)
		return false
	}
	if err := os.Rename(lock, indexPath); err != nil {
		_ = os.Remove(lock)
		return false
	}
	return true
}

// sameIndex reports whether a and b describe the same index file, not
// rewritten in between (git replaces an index by renaming a new file over
// it).
func sameIndex(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
