package gitcli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// This file keeps, per repository, the configuration values that decide
// whether knightcode may do a piece of git's work in-process (issue 24,
// ARCHITECTURE.md "The object store is the exception"): the values come
// from one `git config -z --list --show-origin` (includes, conditional
// includes and every scope resolved by git itself) and are reused while
// every configuration file that could hold them is stat-unchanged.

// ConfigSnapshot is a repository's configuration as git lists it: every
// key (lower-cased section and variable names, the subsection as written)
// with its values in the order git reads them, the last one winning.
// Values given on git's command line (knightcode's pinned -c options) are
// left out. It is immutable.
type ConfigSnapshot struct {
	values map[string][]string
	files  []fileStamp
	taken  time.Time // when the files were stamped, before git read them
}

// Get returns the last value of key ("" and false when unset); key is
// "section.name" or "section.subsection.name", section and name in any
// case.
func (c *ConfigSnapshot) Get(key string) (string, bool) {
	v := c.values[normConfigKey(key)]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// All returns every value of key, in the order git reads them.
func (c *ConfigSnapshot) All(key string) []string { return c.values[normConfigKey(key)] }

// Bool returns key read as git reads a boolean (true, yes, on, 1 and a
// key without value are true; false, no, off, 0 and "" are false); ok is
// false when it is unset or not a boolean.
func (c *ConfigSnapshot) Bool(key string) (value, ok bool) {
	v, set := c.Get(key)
	if !set {
		return false, false
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1", "\x00":
		return true, true
	case "false", "no", "off", "0", "":
		return false, true
	}
	return false, false
}

// Keys returns the keys that start with prefix (lower-cased).
func (c *ConfigSnapshot) Keys(prefix string) []string {
	prefix = strings.ToLower(prefix)
	var out []string
	for k := range c.values {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// normConfigKey lower-cases the section and the variable name of key,
// keeping a subsection as written (git's rule).
func normConfigKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// fileStamp is what tells a configuration file from another: absent, or
// its inode, size, mtime and ctime.
type fileStamp struct {
	path string
	st   statKey
}

// statKey is the part of a file's stat data that changes when it is
// rewritten (git's stat validation of its index: device, inode, size,
// mtime and ctime to the nanosecond); the zero value means absent.
type statKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
	mode         fs.FileMode
	exists       bool
}

func stampOf(path string) statKey {
	fi, err := os.Stat(path)
	if err != nil {
		return statKey{}
	}
	return statKeyOf(fi)
}

// StatChanged reports whether the file at path is no longer the one
// described by the os.Stat result before (nil: it was absent): a different
// device, inode, size, mtime or ctime (nanoseconds), or present where it
// was absent and the other way round.
func StatChanged(path string, before os.FileInfo) bool {
	now := stampOf(path)
	if before == nil {
		return now.exists
	}
	return now != statKeyOf(before)
}

// configCandidates are the files git may read the configuration from
// besides those it lists (a global file that does not exist yet, a
// worktree's config.worktree): system (GIT_CONFIG_SYSTEM, else /etc and
// the git binary's prefix), global (GIT_CONFIG_GLOBAL, else
// $XDG_CONFIG_HOME/git/config and ~/.gitconfig), the repository's and the
// worktree's.
func configCandidates(r *Repo, gitPath string) []string {
	var out []string
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		out = append(out, p)
	} else if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		out = append(out, "/etc/gitconfig")
		if gitPath != "" {
			out = append(out, filepath.Join(filepath.Dir(filepath.Dir(gitPath)), "etc", "gitconfig"))
		}
	}
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		out = append(out, p)
	} else {
		home, _ := os.UserHomeDir()
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			out = append(out, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			out = append(out, filepath.Join(home, ".gitconfig"))
		}
	}
	return append(out, filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree"))
}

// configCache holds the snapshots of a Runner's repositories, by git dir.
type configCache struct {
	mu    sync.Mutex
	snaps map[string]*ConfigSnapshot
}

// maxCached bounds the per-repository caches of a Runner (configuration
// snapshots, object stores, HEAD resolvers, ref writers): a full cache is
// emptied before the next entry goes in.
const maxCached = 32

// keptProcess returns (*m)[key] of a cache of long-lived git processes,
// making it with mk when there is none (the map too, when nil); a full
// cache (maxCached) is emptied first, each process in it ended with its
// close. The caller holds the lock that guards *m.
func keptProcess[P interface{ close() }](m *map[string]P, key string, mk func() P) P {
	if *m == nil {
		*m = map[string]P{}
	}
	p, ok := (*m)[key]
	if ok {
		return p
	}
	if len(*m) >= maxCached {
		for k, old := range *m {
			old.close()
			delete(*m, k)
		}
	}
	p = mk()
	(*m)[key] = p
	return p
}

// Config returns the repository's configuration snapshot: the one kept
// for its git dir while every file it came from (and every file git could
// read one from) is stat-unchanged, else a new `git config -z --list
// --show-origin`. A repository whose configuration git cannot read is
// git's *Error.
func (r *Repo) Config(ctx context.Context) (*ConfigSnapshot, error) {
	cc := &r.git.caches().config
	key := r.GitDir
	cc.mu.Lock()
	snap := cc.snaps[key]
	cc.mu.Unlock()
	if snap != nil && snap.fresh() {
		return snap, nil
	}
	cands := configCandidates(r, r.git.gitPath)
	taken := time.Now()
	stamps := make([]fileStamp, 0, len(cands)+2)
	for _, p := range cands {
		stamps = append(stamps, fileStamp{path: p, st: stampOf(p)})
	}
	out, err := r.git.run(ctx, r.cmd("config", "-z", "--list", "--show-origin"))
	if err != nil && exitCode(err) != 1 {
		return nil, err
	}
	snap = &ConfigSnapshot{values: map[string][]string{}, taken: taken}
	seen := map[string]bool{}
	for _, p := range cands {
		seen[p] = true
	}
	// Records: "<origin>\0<key>\n<value>\0" (a key without value has no
	// newline).
	recs := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(recs); i += 2 {
		origin := string(recs[i])
		kv := string(recs[i+1])
		if strings.HasPrefix(origin, "command line:") {
			continue
		}
		if f, ok := strings.CutPrefix(origin, "file:"); ok {
			if !filepath.IsAbs(f) {
				f = filepath.Join(r.Dir(), f)
			}
			if !seen[f] {
				seen[f] = true
				stamps = append(stamps, fileStamp{path: f, st: stampOf(f)})
			}
		}
		k, v, hasValue := strings.Cut(kv, "\n")
		if !hasValue {
			v = "\x00" // a key without "=": true as a boolean
		}
		k = normConfigKey(k)
		snap.values[k] = append(snap.values[k], v)
	}
	snap.files = stamps
	cc.mu.Lock()
	if cc.snaps == nil {
		cc.snaps = map[string]*ConfigSnapshot{}
	}
	if len(cc.snaps) >= maxCached {
		clear(cc.snaps)
	}
	cc.snaps[key] = snap
	cc.mu.Unlock()
	return snap, nil
}

// fresh reports whether every file the snapshot depends on is
// stat-unchanged and was not racily clean when stamped (see [racyGranule]).
func (c *ConfigSnapshot) fresh() bool {
	for _, f := range c.files {
		if now := stampOf(f.path); now != f.st || racy(now, c.taken) {
			return false
		}
	}
	return true
}

// racyGranule is how close to a stamp's time a file's mtime or ctime must
// be for the stamp to prove nothing (git's racy-git rule): file times come
// from the kernel's coarse clock, up to a tick (10 ms) behind the clock
// time.Now reads, so a file rewritten within that granule of its stamp may
// keep its size, mtime and ctime. A file system that keeps whole seconds
// (times without nanoseconds) gets [racySeconds] instead. Such a file is
// read again until its times are older than the stamp by more than the
// granule.
const (
	racyGranule = 20 * time.Millisecond
	racySeconds = 2 * time.Second
)

// racy reports whether st (present) may hide a rewrite made after taken:
// its mtime or ctime is within the granule of taken or later.
func racy(st statKey, taken time.Time) bool {
	if !st.exists {
		return false
	}
	g := racyGranule
	if st.mtime%int64(time.Second) == 0 || st.ctime%int64(time.Second) == 0 {
		g = racySeconds
	}
	limit := taken.Add(-g).UnixNano()
	return st.mtime >= limit || st.ctime >= limit
}
