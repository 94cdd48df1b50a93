package gitcli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// This file makes [Runner.DiscoverHead] cost no git process in a checkout
// it has seen (issue 24: a one-hunk action within 2x `git apply -R` leaves
// room for about two git processes, and every read and action starts with
// a discovery). What `git rev-parse` reports about a directory (work tree
// root, git dirs, prefix, object format, index path) is kept while the
// files that decide it are stat-unchanged, and HEAD is resolved by git
// itself, by a long-lived `git cat-file --batch-command` of the worktree
// ("info HEAD", "info HEAD^{tree}"), which reads the refs again at every
// request (loose refs, packed-refs by their stat, any ref backend git
// has), so knightcode never reads a ref itself.

// discovery is a kept discovery of a directory.
type discovery struct {
	repo   *Repo
	stamps []fileStamp // files whose full stat must not change
	inodes []fileStamp // files and folders whose identity (device, inode) must not change
	absent []string    // .git entries that must stay absent (no nested repository appeared)
}

// discoveryCache holds a Runner's kept discoveries, by directory, and its
// HEAD resolvers, by git dir.
type discoveryCache struct {
	mu        sync.Mutex
	dirs      map[string]*discovery
	resolvers map[string]*headResolver
}

// headResolverIdle is how long an unused HEAD resolver lives.
const headResolverIdle = 2 * time.Minute

// headResolver is a worktree's long-lived cat-file process answering
// "info HEAD" and "info HEAD^{tree}".
type headResolver struct {
	mu    sync.Mutex
	cf    *CatFile
	timer *time.Timer
}

// cachedDiscovery returns the kept discovery of dir while it holds.
func (r *Runner) cachedDiscovery(dir string) *Repo {
	c := &r.caches().discover
	c.mu.Lock()
	d := c.dirs[dir]
	c.mu.Unlock()
	if d == nil || !d.valid() {
		return nil
	}
	v := d.repo.clone()
	v.git = r
	return v
}

func (d *discovery) valid() bool {
	for _, f := range d.stamps {
		if stampOf(f.path) != f.st {
			return false
		}
	}
	for _, f := range d.inodes {
		now := stampOf(f.path)
		if !now.exists || now.dev != f.st.dev || now.ino != f.st.ino {
			return false
		}
	}
	for _, p := range d.absent {
		if _, err := os.Lstat(p); err == nil {
			return false
		}
	}
	return true
}

// keepDiscovery records repo as the discovery of dir, with what decides
// it: dir and every folder up to the root (their identity, and no .git
// appearing in those below the root), the root's .git (a folder's
// identity, or a gitfile's full stat), the git dir's identity and the
// common dir's configuration (core.worktree, core.bare) by full stat.
func (r *Runner) keepDiscovery(dir string, repo *Repo) {
	if repo.Bare || repo.Root == "" {
		return
	}
	d := &discovery{repo: repo}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	rel, err := filepath.Rel(repo.Root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		// dir reached the root through a symlink: keep it by identity
		// only when it is the root itself.
		if real, err := filepath.EvalSymlinks(abs); err != nil || real != repo.Root {
			return
		}
		rel = "."
	}
	d.inodes = append(d.inodes, fileStamp{path: abs, st: stampOf(abs)})
	for p := abs; rel != "." && p != repo.Root && strings.HasPrefix(p, repo.Root); p = filepath.Dir(p) {
		d.absent = append(d.absent, filepath.Join(p, ".git"))
		d.inodes = append(d.inodes, fileStamp{path: p, st: stampOf(p)})
	}
	dotGit := filepath.Join(repo.Root, ".git")
	st := stampOf(dotGit)
	if !st.exists {
		return // core.worktree or another layout: not kept
	}
	if st.mode.IsDir() {
		d.inodes = append(d.inodes, fileStamp{path: dotGit, st: st})
	} else {
		d.stamps = append(d.stamps, fileStamp{path: dotGit, st: st})
	}
	d.inodes = append(d.inodes, fileStamp{path: repo.GitDir, st: stampOf(repo.GitDir)})
	cfg := filepath.Join(repo.CommonDir, "config")
	d.stamps = append(d.stamps, fileStamp{path: cfg, st: stampOf(cfg)},
		fileStamp{path: filepath.Join(repo.GitDir, "config.worktree"), st: stampOf(filepath.Join(repo.GitDir, "config.worktree"))})
	c := &r.caches().discover
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs == nil || len(c.dirs) >= 4*maxCached {
		c.dirs = map[string]*discovery{}
	}
	c.dirs[dir] = d
}

// errHeadUnresolved is a HEAD the resolver could not answer as a commit
// and its tree (unborn, or anything unexpected): the caller asks
// rev-parse.
var errHeadUnresolved = errors.New("gitcli: HEAD not resolved by cat-file")

// resolveHead returns HEAD's commit and tree in repo's worktree through
// its resolver, started on first use.
func (r *Runner) resolveHead(ctx context.Context, repo *Repo) (commit, tree string, err error) {
	c := &r.caches().discover
	c.mu.Lock()
	h := keptProcess(&c.resolvers, repo.GitDir, func() *headResolver { return &headResolver{} })
	c.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cf == nil {
		// The process outlives ctx; the idle timer (or Runner.Close)
		// ends it.
		cf, err := r.StartCatFile(context.WithoutCancel(ctx), repo.Root)
		if err != nil {
			return "", "", err
		}
		h.cf = cf
		h.timer = time.AfterFunc(headResolverIdle, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.stop()
		})
	} else {
		h.timer.Reset(headResolverIdle)
	}
	co, err := h.cf.Info("HEAD")
	if err == nil && co.Type == "commit" && len(co.ID) == repo.HexLen() {
		var to Object
		if to, err = h.cf.Info(co.ID + "^{tree}"); err == nil && to.Type == "tree" && len(to.ID) == repo.HexLen() {
			return co.ID, to.ID, nil
		}
	}
	if err != nil && !errors.Is(err, ErrObjectMissing) {
		h.stop() // broken: the next call starts another
	}
	return "", "", errHeadUnresolved
}

// stop ends the resolver's process (h.mu held).
func (h *headResolver) stop() {
	if h.cf != nil {
		_ = h.cf.Close()
		h.cf = nil
	}
	if h.timer != nil {
		h.timer.Stop()
	}
}

func (h *headResolver) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stop()
}

// closeResolvers ends every HEAD resolver of the Runner.
func (c *discoveryCache) closeResolvers() {
	c.mu.Lock()
	rs := c.resolvers
	c.resolvers = nil
	c.mu.Unlock()
	for _, h := range rs {
		h.close()
	}
}
