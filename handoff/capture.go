package handoff

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// capturing is a capture of a source checkout running in the background
// (gitstate.CompleteKeepingIndex), which keeps the index its worktree
// tree was written from for the source's cleanup. Once captured, the
// source's changes (HEAD's tree -> worktree tree, `diff-tree -r` raw) are
// listed and the binary patch of the changes is written to a temporary
// file, at the same time. The listing serves the plan (the changed
// paths), the destination's write and the source's cleanup (its
// reverse), so that none of them runs diff-tree again.
type capturing struct {
	repo   *gitcli.Repo
	cancel context.CancelFunc
	done   chan struct{} // closed once st, raw and err are set
	// dir is the capture's folder, <agentDir>/handoff/.capture-*, for
	// the kept index and the patch; lock (dir/lock) is held while the
	// capture is in use, so that [sweepCaptures] leaves it alone.
	dir  string
	lock *flock.Flock
	st   *gitstate.State
	raw  []gitcli.RawChange // HEAD's tree -> worktree tree
	err  error
	// kept is set when the capture succeeded and the real index did not
	// change while it ran.
	kept *keptIndex

	patchDone chan struct{} // closed once the patch is written or failed
	patch     string        // the patch file, set when written
	patchErr  error
}

// startCapture starts capturing repo's checkout completely, keeping its
// files in a new folder of root (<agentDir>/handoff).
func startCapture(ctx context.Context, repo *gitcli.Repo, root string) *capturing {
	ctx, cancel := context.WithCancel(ctx)
	c := &capturing{repo: repo, cancel: cancel, done: make(chan struct{}), patchDone: make(chan struct{})}
	go func() {
		defer close(c.done)
		patching := false
		defer func() {
			if !patching {
				close(c.patchDone)
			}
		}()
		dir, lock, err := newCaptureDir(root)
		if err != nil {
			c.err = errorf("capture: %v", err)
			return
		}
		c.dir, c.lock = dir, lock
		index := filepath.Join(dir, "index")
		before, berr := os.Stat(repo.IndexPath)
		st, err := gitstate.CompleteKeepingIndex(ctx, repo, index)
		if err != nil {
			c.err = err
			return
		}
		if berr == nil {
			if after, err := os.Stat(repo.IndexPath); err == nil && gitstate.SameIndexFile(before, after) {
				if _, err := os.Stat(index); err == nil {
					c.kept = &keptIndex{path: index, real: before}
				}
			}
		}
		patching = true
		go func() {
			defer close(c.patchDone)
			path := filepath.Join(dir, "patch")
			if c.patchErr = writePatch(ctx, repo, path, st.HeadTree, st.WorktreeTree); c.patchErr == nil {
				c.patch = path
			}
		}()
		c.raw, c.err = diffRaw(ctx, repo, st.HeadTree, st.WorktreeTree)
		c.st = st
	}()
	return c
}

// wait returns the capture and the source's changed paths.
func (c *capturing) wait() (*gitstate.State, []string, error) {
	<-c.done
	if c.err != nil {
		return nil, nil, c.err
	}
	var paths []string
	for _, r := range c.raw {
		paths = append(paths, r.Path)
	}
	return c.st, paths, nil
}

// savePatch waits for the patch and moves it to path (renamed, or
// copied across file systems), synced to disk.
func (c *capturing) savePatch(path string) error {
	<-c.patchDone
	if c.patchErr != nil {
		return c.patchErr
	}
	if err := os.Rename(c.patch, path); err != nil {
		if err := copyFile(c.patch, path); err != nil {
			return errorf("journal: %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return errorf("journal: %v", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf("journal: %v", err)
	}
	atomicfile.SyncDir(filepath.Dir(path))
	return nil
}

// discard stops the capture and the patch if they still run and removes
// their files.
func (c *capturing) discard() {
	c.cancel()
	<-c.done
	<-c.patchDone
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
		_ = c.lock.Unlock()
	}
}

// captureDirPrefix names the capture folders in <agentDir>/handoff.
const captureDirPrefix = ".capture-"

// newCaptureDir makes a capture folder in root and takes its lock.
func newCaptureDir(root string) (string, *flock.Flock, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp(root, captureDirPrefix)
	if err != nil {
		return "", nil, err
	}
	lock := flock.New(filepath.Join(dir, "lock"))
	if ok, err := lock.TryLock(); err != nil || !ok {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("lock %s: %v", dir, err)
	}
	return dir, lock, nil
}

// sweepCaptures removes the capture folders in root that no process uses
// (their lock free): what a handoff killed while it captured left.
func sweepCaptures(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), captureDirPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		lock := flock.New(filepath.Join(dir, "lock"))
		if ok, err := lock.TryLock(); err == nil && ok {
			removeCaptureDir(dir)
			_ = lock.Unlock()
		}
	}
}

// removeCaptureDir removes a capture folder no process holds. A git
// process the killed handoff started (writing the capture's index with
// GIT_INDEX_FILE) may still be ending, killed by its parent's death
// signal, and put an index.lock into the folder while it is removed: the
// removal is tried again for up to a second.
func removeCaptureDir(dir string) {
	for range 50 {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// copyFile copies the file src to dst (created, mode 0600).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// keptIndex is a capture's worktree index: the source's worktree tree,
// every entry with the stat data git read its file with.
type keptIndex struct {
	path string
	real os.FileInfo // the real index when the capture began
}

// usable reports whether the kept index can become the index at
// indexPath: it exists, and the real index is still the file the capture
// read. A nil k is not usable.
func (k *keptIndex) usable(indexPath string) bool {
	if k == nil {
		return false
	}
	if _, err := os.Lstat(k.path); err != nil {
		return false
	}
	now, err := os.Stat(indexPath)
	return err == nil && gitstate.SameIndexFile(k.real, now)
}

// changes are a capture's changes: `diff-tree -r` (raw) from HEAD's tree
// to the worktree tree of its state.
type changes struct {
	raw []gitcli.RawChange
}

// changes returns the capture's changes (nil when it failed).
func (c *capturing) changes() *changes {
	<-c.done
	if c.err != nil {
		return nil
	}
	return &changes{raw: c.raw}
}
