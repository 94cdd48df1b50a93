package gitcli

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	formatcfg "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// This file is the object store (issue 24, ARCHITECTURE.md "The object
// store is the exception"): a repository's objects are read and written
// in-process with go-git when its format is one go-git handles, and
// through long-lived git helpers otherwise. Nothing else of a repository
// (refs, the index, the working tree, hooks, filters, attributes) is
// touched here.

// ObjectStore reads and writes the objects of one repository (its common
// git dir's object database). It is safe for concurrent use. Get one with
// [Repo.Objects]; the Runner keeps one per repository.
//
// In-process (go-git v5): SHA-1 repositories whose repositoryformatversion
// is 0 or 1 with no extension but noop, preciousObjects, worktreeConfig,
// objectFormat=sha1 and refStorage, whose alternates (if any) are
// absolute paths of folders named "objects" without alternates of their
// own, and without core.sharedRepository (whose permissions git sets).
// Objects are read with go-git (loose and packed); loose objects are
// written as git writes them (zlib at core.looseCompression's level, 1 by
// default; a temporary file renamed into objects/xx/), not over an
// existing one (which is freshened instead), and synced
// only when the repository's configuration asks git to sync loose objects
// (core.fsync naming loose-object, objects, added, committed or all, or
// core.fsyncObjectFiles): no stronger than git's own durability. A kill
// between writing an object and the ref that names it leaves an
// unreferenced object (or a tmp_obj_ file that `git gc` removes), as git
// would.
//
// Otherwise (SHA-256, a promisor remote, another extension, relative or
// nested alternates, a shared repository, one go-git fails to open) every
// request goes
// to one long-lived `git cat-file --batch-command` for reads and one
// `git hash-object -w --no-filters --stdin-paths -t <type>` per object
// type for writes, started on first use and ended by [Runner.Close].
type ObjectStore struct {
	mu      sync.Mutex
	repo    *Repo
	stamp   []fileStamp // config and alternates files the format was read from
	why     string      // why objects go through git; "" in-process
	store   *filesystem.ObjectStorage
	packDir statKey // objects/pack when store was opened
	fsync   bool
	level   int // zlib level of loose objects (core.looseCompression)
	cat     *CatFile
	writers map[string]*hashWriter
	tmp     string // folder of the files fed to the hash-object helpers
	closed  bool
}

// runnerCaches are what a Runner keeps per repository: configuration
// snapshots, index lists, discoveries and HEAD resolvers, object stores.
type runnerCaches struct {
	config     configCache
	index      indexCache
	discover   discoveryCache
	mu         sync.Mutex
	stores     map[string]*ObjectStore
	refWriters map[string]*refWriter
}

var fallbackCaches = &runnerCaches{}

func (r *Runner) caches() *runnerCaches {
	if r.cache == nil {
		return fallbackCaches
	}
	return r.cache
}

// Close ends the long-lived git helpers the Runner started: those of every
// object store it opened ([ObjectStore]), the HEAD resolvers of
// [Runner.DiscoverHead] and the ref writers of [Repo.CreateRefKept];
// later calls start theirs again.
func (r *Runner) Close() error {
	c := r.caches()
	c.discover.closeResolvers()
	c.mu.Lock()
	stores := c.stores
	c.stores = nil
	writers := c.refWriters
	c.refWriters = nil
	c.mu.Unlock()
	for _, w := range writers {
		w.close()
	}
	var errs []error
	for _, s := range stores {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// Objects returns the object store of r's repository, opened on first use
// and kept by the Runner (one per common git dir). The store is checked
// again against the repository's configuration and alternates files (by
// stat) at each call, so a repository converted to another format is
// never read in-process. Errors: reading the repository's configuration.
func (r *Repo) Objects(ctx context.Context) (*ObjectStore, error) {
	c := r.git.caches()
	c.mu.Lock()
	s := c.stores[r.CommonDir]
	c.mu.Unlock()
	if s != nil && s.current() {
		return s, nil
	}
	ns, err := openStore(ctx, r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stores == nil {
		c.stores = map[string]*ObjectStore{}
	}
	if old := c.stores[r.CommonDir]; old != nil {
		go old.close() // its helpers may still answer a request in flight
	}
	if len(c.stores) >= maxCached {
		for k, old := range c.stores {
			go old.close()
			delete(c.stores, k)
		}
	}
	c.stores[r.CommonDir] = ns
	return ns, nil
}

// InProcess reports whether objects are read and written in-process; when
// not, Fallback says why.
func (s *ObjectStore) InProcess() bool { return s.why == "" }

// Fallback is why the store goes through git helpers ("" in-process).
func (s *ObjectStore) Fallback() string { return s.why }

// current reports whether the files the store's format was read from are
// stat-unchanged.
func (s *ObjectStore) current() bool {
	for _, f := range s.stamp {
		if stampOf(f.path) != f.st {
			return false
		}
	}
	return true
}

// openStore decides how r's objects are reached and opens the store.
func openStore(ctx context.Context, r *Repo) (*ObjectStore, error) {
	cfgPath := filepath.Join(r.CommonDir, "config")
	altPath := filepath.Join(r.CommonDir, "objects", "info", "alternates")
	s := &ObjectStore{repo: r.baseView(), writers: map[string]*hashWriter{},
		stamp: []fileStamp{{path: cfgPath, st: stampOf(cfgPath)}, {path: altPath, st: stampOf(altPath)}}}
	s.why = inProcessRefusal(r, cfgPath, altPath)
	if s.why == "" {
		snap, err := r.Config(ctx)
		if err != nil {
			return nil, err
		}
		s.fsync = syncsLooseObjects(snap)
		s.level = looseCompression(snap)
		if v, set := snap.Get("core.sharedRepository"); set && !strings.EqualFold(v, "false") && !strings.EqualFold(v, "umask") && v != "0" {
			s.why = "core.sharedRepository " + v + " (git sets the objects' permissions)"
			return s, nil
		}
		if err := s.openGoGit(); err != nil {
			s.why = "go-git cannot open the object database: " + err.Error()
		}
	}
	return s, nil
}

// inProcessRefusal says why r's objects cannot be reached in-process ("" when
// they can): see [ObjectStore].
func inProcessRefusal(r *Repo, cfgPath, altPath string) string {
	if r.ObjectFormat != "" && r.ObjectFormat != "sha1" {
		return "object format " + r.ObjectFormat
	}
	f, err := os.Open(cfgPath)
	if err != nil {
		return "no readable repository configuration: " + err.Error()
	}
	defer f.Close()
	cfg := formatcfg.New()
	if err := formatcfg.NewDecoder(f).Decode(cfg); err != nil {
		return "repository configuration go-git cannot parse: " + err.Error()
	}
	switch v := cfg.Section("core").Option("repositoryformatversion"); v {
	case "", "0", "1":
	default:
		return "repositoryformatversion " + v
	}
	for _, o := range cfg.Section("extensions").Options {
		switch k := strings.ToLower(o.Key); k {
		case "noop", "noop-v1", "preciousobjects", "worktreeconfig", "refstorage":
		case "objectformat":
			if !strings.EqualFold(o.Value, "sha1") {
				return "extensions.objectFormat " + o.Value
			}
		default:
			return "extensions." + k // partialClone (a promisor remote) and every unknown one
		}
	}
	data, err := os.ReadFile(altPath)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		return "unreadable alternates: " + err.Error()
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) || filepath.Base(filepath.Clean(line)) != "objects" {
			return "alternate " + line + " (only absolute paths of folders named objects are read in-process)"
		}
		if _, err := os.Stat(filepath.Join(line, "info", "alternates")); err == nil {
			return "alternate " + line + " has alternates of its own"
		}
	}
	return ""
}

// syncsLooseObjects reports whether git would fsync a loose object it
// writes in this repository (core.fsync, core.fsyncObjectFiles; git's
// default syncs packs, not loose objects).
func syncsLooseObjects(c *ConfigSnapshot) bool {
	if v, ok := c.Bool("core.fsyncObjectFiles"); ok && v {
		return true
	}
	on := false
	for _, list := range c.All("core.fsync") {
		for _, item := range strings.Split(list, ",") {
			item = strings.ToLower(strings.TrimSpace(item))
			neg := strings.HasPrefix(item, "-")
			switch strings.TrimPrefix(item, "-") {
			case "none":
				on = false
			case "loose-object", "objects", "added", "committed", "all":
				on = !neg
			}
		}
	}
	return on
}

// looseCompression is the zlib level git writes loose objects with:
// core.looseCompression, else core.compression, else 1 (best speed);
// -1 is zlib's default.
func looseCompression(c *ConfigSnapshot) int {
	for _, k := range []string{"core.looseCompression", "core.compression"} {
		if v, ok := c.Get(k); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= -1 && n <= 9 {
				return n
			}
		}
	}
	return zlib.BestSpeed
}

// openGoGit opens the go-git object storage of the common dir.
func (s *ObjectStore) openGoGit() error {
	fs := osfs.New(s.repo.CommonDir)
	dg := dotgit.NewWithOptions(fs, dotgit.Options{AlternatesFS: osfs.New("/")})
	if _, err := os.Stat(filepath.Join(s.repo.CommonDir, "objects")); err != nil {
		return err
	}
	s.store = filesystem.NewObjectStorageWithOptions(dg, cache.NewObjectLRU(4*cache.MiByte),
		filesystem.Options{AlternatesFS: osfs.New("/")})
	s.packDir = stampOf(filepath.Join(s.repo.CommonDir, "objects", "pack"))
	return nil
}

// Read returns the object oid (a full hex id) with its content. A missing
// object is [ErrObjectMissing].
func (s *ObjectStore) Read(ctx context.Context, oid string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why != "" {
		return s.readGit(ctx, oid)
	}
	if len(oid) != 40 || !isHex(oid) {
		return Object{}, fmt.Errorf("gitcli: object name %q: %w", oid, ErrObjectMissing)
	}
	// A repack since the packs were listed: list them again.
	if now := stampOf(filepath.Join(s.repo.CommonDir, "objects", "pack")); now != s.packDir {
		if err := s.openGoGit(); err != nil {
			return Object{}, err
		}
	}
	obj, err := s.readGoGit(oid)
	if errors.Is(err, ErrObjectMissing) {
		// Packed or pruned by git meanwhile within one stat granule of
		// the pack folder: open the storage again before saying missing.
		if err := s.openGoGit(); err != nil {
			return Object{}, err
		}
		obj, err = s.readGoGit(oid)
	}
	return obj, err
}

func (s *ObjectStore) readGoGit(oid string) (Object, error) {
	o, err := s.store.EncodedObject(plumbing.AnyObject, plumbing.NewHash(oid))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return Object{}, fmt.Errorf("object %s: %w", oid, ErrObjectMissing)
	}
	if err != nil {
		return Object{}, fmt.Errorf("gitcli: read object %s: %w", oid, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return Object{}, fmt.Errorf("gitcli: read object %s: %w", oid, err)
	}
	defer rd.Close()
	data := make([]byte, o.Size())
	if _, err := io.ReadFull(rd, data); err != nil {
		return Object{}, fmt.Errorf("gitcli: read object %s: %w", oid, err)
	}
	return Object{ID: oid, Type: o.Type().String(), Size: o.Size(), Data: data}, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// readGit reads through the cat-file helper, started on first use and
// again after a failure broke it.
func (s *ObjectStore) readGit(ctx context.Context, oid string) (Object, error) {
	if s.closed {
		return Object{}, ErrCatFileClosed
	}
	if s.cat == nil {
		// The helper outlives ctx: it is ended by Close.
		cf, err := s.repo.StartCatFile(context.WithoutCancel(ctx))
		if err != nil {
			return Object{}, err
		}
		s.cat = cf
	}
	obj, err := s.cat.Read(oid)
	if err != nil && !errors.Is(err, ErrObjectMissing) {
		_ = s.cat.Close()
		s.cat = nil
	}
	return obj, err
}

// Write stores data as an object of type typ (blob, tree, commit or tag),
// exactly as given (no filters), and returns its id. Trees and commits
// must be well formed: git's fsck rules are not checked in-process.
func (s *ObjectStore) Write(ctx context.Context, typ string, data []byte) (string, error) {
	t, err := plumbing.ParseObjectType(typ)
	if err != nil || t < plumbing.CommitObject || t > plumbing.TagObject {
		return "", fmt.Errorf("gitcli: object type %q", typ)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why != "" {
		return s.writeGit(ctx, typ, data)
	}
	oid := plumbing.ComputeHash(t, data).String()
	file := filepath.Join(s.repo.CommonDir, "objects", oid[:2], oid[2:])
	if freshen(file) {
		return oid, nil
	}
	if err := s.writeLoose(file, t, data); err != nil {
		return "", fmt.Errorf("gitcli: write object %s: %w", oid, err)
	}
	return oid, nil
}

// writeLoose writes the loose object file as git does: "<type> <size>\0"
// and the data, zlib-compressed at the configured level, into a temporary
// file beside it (synced when git would sync it), made read-only and
// renamed into place. A kill before the rename leaves a tmp_obj_ file,
// which `git gc` removes as it removes its own.
func (s *ObjectStore) writeLoose(file string, t plumbing.ObjectType, data []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	zw, err := zlibWriter(f, s.level)
	if err != nil {
		return err
	}
	defer zlibPools[s.level+1].Put(zw)
	if _, err := fmt.Fprintf(zw, "%s %d\x00", t, len(data)); err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if s.fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return err
	}
	ok = true
	if s.fsync {
		syncDirOf(file)
	}
	return nil
}

// zlibPools keep zlib writers by level (+1: -1 is zlib's default), as a
// writer's state is most of the cost of writing a small object.
var zlibPools [11]sync.Pool

func zlibWriter(w io.Writer, level int) (*zlib.Writer, error) {
	if zw, ok := zlibPools[level+1].Get().(*zlib.Writer); ok {
		zw.Reset(w)
		return zw, nil
	}
	return zlib.NewWriterLevel(w, level)
}

// freshen reports whether the object is already stored loose at file, and
// then moves its mtime as git does instead of writing it again, so `git
// gc` keeps it for its grace period. A packed object is written loose
// again (harmless: git's next gc drops the copy).
func freshen(file string) bool {
	if _, err := os.Stat(file); err == nil {
		now := time.Now()
		_ = os.Chtimes(file, now, now)
		return true
	}
	return false
}

func syncDirOf(p string) {
	if d, err := os.Open(filepath.Dir(p)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// writeGit writes through the hash-object helper of typ.
func (s *ObjectStore) writeGit(ctx context.Context, typ string, data []byte) (string, error) {
	if s.closed {
		return "", ErrCatFileClosed
	}
	if s.tmp == "" {
		dir, err := os.MkdirTemp("", "knightcode-objects-")
		if err != nil {
			return "", err
		}
		s.tmp = dir
	}
	hw := s.writers[typ]
	if hw == nil {
		var err error
		if hw, err = startHashWriter(context.WithoutCancel(ctx), s.repo, typ); err != nil {
			return "", err
		}
		s.writers[typ] = hw
	}
	f, err := os.CreateTemp(s.tmp, "object-")
	if err != nil {
		return "", err
	}
	name := f.Name()
	defer os.Remove(name)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	oid, err := hw.hash(name)
	if err != nil {
		hw.close()
		delete(s.writers, typ)
	}
	return oid, err
}

// close ends the store's helpers.
func (s *ObjectStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	if s.cat != nil {
		errs = append(errs, s.cat.Close())
		s.cat = nil
	}
	for t, hw := range s.writers {
		errs = append(errs, hw.close())
		delete(s.writers, t)
	}
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
	return errors.Join(errs...)
}

// baseView is r without a temporary index, work tree or -c options of a
// view: objects belong to the repository.
func (r *Repo) baseView() *Repo {
	v := r.clone()
	v.indexFile, v.workTree, v.config = "", "", nil
	return v
}

// hashWriter is a long-lived `git hash-object -w --no-filters --stdin-paths
// -t <type>`: each path written to it is stored and answered with its id.
type hashWriter struct {
	stdin  io.WriteCloser
	stdout *bufio.Reader
	done   chan error
	cancel context.CancelFunc
}

func startHashWriter(ctx context.Context, repo *Repo, typ string) (*hashWriter, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := write(repo.cmd("hash-object", "-w", "--no-filters", "--stdin-paths", "-t", typ))
	c.Timeout = 24 * time.Hour
	cmd, _, cancelRun, err := repo.git.command(ctx, c)
	if err != nil {
		cancel()
		return nil, err
	}
	stderr := &capWriter{max: maxStderr}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err == nil {
		var stdout io.ReadCloser
		if stdout, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				hw := &hashWriter{stdin: stdin, stdout: bufio.NewReader(stdout), done: make(chan error, 1),
					cancel: func() { cancel(); cancelRun() }}
				go func() {
					// Reaps the helper: ends when its stdin is closed or
					// its context is cancelled.
					err := cmd.Wait()
					if err != nil {
						err = repo.git.wrap(c, cmd, stderr, err)
					}
					hw.done <- err
				}()
				return hw, nil
			}
		}
	}
	cancel()
	cancelRun()
	return nil, repo.git.wrap(c, cmd, stderr, err)
}

// hash stores the file at path and returns its id.
func (h *hashWriter) hash(path string) (string, error) {
	if strings.ContainsAny(path, "\n") {
		return "", fmt.Errorf("gitcli: hash-object path %q", path)
	}
	if _, err := io.WriteString(h.stdin, path+"\n"); err != nil {
		return "", fmt.Errorf("hash-object: %w", err)
	}
	line, err := h.stdout.ReadString('\n')
	if err != nil {
		// The helper died: its error says why.
		_ = h.stdin.Close()
		if werr := <-h.done; werr != nil {
			h.done <- werr
			return "", werr
		}
		return "", fmt.Errorf("hash-object: %w", err)
	}
	oid := strings.TrimSpace(line)
	if !isHex(oid) || (len(oid) != 40 && len(oid) != 64) {
		return "", fmt.Errorf("hash-object: unexpected answer %q", bytes.TrimSpace([]byte(line)))
	}
	return oid, nil
}

func (h *hashWriter) close() error {
	_ = h.stdin.Close()
	err := <-h.done
	h.done <- err
	h.cancel()
	return err
}
