package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/uuid"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

// owners is the process's registry of owned session files, keyed by the
// symlink-resolved absolute path. flock ownership is per process, so the
// registry is too: it is what makes a symlinked alias of a loaded file
// resolve to its one owner within this process.
var owners = struct {
	sync.Mutex
	m map[string]*Session
}{m: map[string]*Session{}}

// Session is an owned session file: its parsed entries, the leaf new entries
// attach to, an O_APPEND writer and the exclusive lock. A created session
// has no file until its first entry is appended. Methods are safe for
// concurrent use.
type Session struct {
	mu      sync.Mutex
	dir     string // directory of a session not saved yet
	path    string // the file (symlink-resolved once saved or opened)
	saved   bool
	closed  bool
	header  Header
	entries []Entry
	index   map[string]int
	leaf    string

	w           *os.File     // O_WRONLY|O_APPEND
	lock        *flock.Flock // held while the session is open
	needNewline bool         // the file does not end with "\n" (torn tail)
}

// CreateOptions describes a new session.
type CreateOptions struct {
	// Cwd is the project directory recorded in the header.
	Cwd string
	// ParentSession is the path of the session this one forks, if any.
	ParentSession string
	// Workspace is the managed worktree the thread runs in (nil: the
	// user's own checkout), recorded in the header.
	Workspace *Workspace
}

// FileName is the name of a session file created at timestamp (ISO-8601)
// with header id id: the timestamp with ":" and "." replaced by "-", "_",
// the id, ".jsonl" (pi's layout).
func FileName(timestamp, id string) string {
	return strings.NewReplacer(":", "-", ".", "-").Replace(timestamp) + "_" + id + ".jsonl"
}

// Create starts a new session to be saved in dir. Nothing is written until
// the first [Session.Append], which creates dir (0700) and the file (0600),
// writes the header and the entry, and takes the lock; until then File
// reports "". The header gets a new UUID and the current time.
func Create(dir string, opts CreateOptions) (*Session, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	ts := isoTime(time.Now())
	h := Header{Type: "session", Version: CurrentVersion, ID: uuid.NewString(), Timestamp: ts, Cwd: opts.Cwd, ParentSession: opts.ParentSession}
	if opts.Workspace != nil {
		w := *opts.Workspace
		h.Workspace = &w
	}
	return &Session{
		dir:    abs,
		path:   filepath.Join(abs, FileName(ts, h.ID)),
		header: h,
		index:  map[string]int{},
	}, nil
}

// lockFile takes the exclusive lock for the session file at path (which
// must exist) and checks that path still names the file that was locked.
// Errors: *LockedError when another process holds it; fs.ErrNotExist when
// the file is gone.
func lockFile(path string) (*flock.Flock, error) {
	for range 3 {
		fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
		if lockPath(path) != path {
			fl = flock.New(lockPath(path)) // a sidecar, created on demand
		}
		ok, err := fl.TryLock()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &LockedError{Path: path}
		}
		if lockPath(path) != path {
			return fl, nil
		}
		// The file may have been replaced (renamed over) between open and
		// lock; then the lock guards a file nobody reaches by path.
		locked, err1 := fl.Stat()
		cur, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(locked, cur) {
			return fl, nil
		}
		_ = fl.Unlock()
		if err2 != nil {
			return nil, err2
		}
	}
	return nil, fmt.Errorf("%s: %w: the file keeps being replaced", path, ErrOwnershipLost)
}

// Open loads and owns the session file at path: it resolves symlinks, locks
// the file, refuses hard-linked files, parses it (migrating an older format
// version by rewriting the file under the lock) and opens it for appending.
// The next entry attaches to the last entry in the file.
//
// Errors: *LoadedError (ErrAlreadyLoaded) when this process already owns the
// file through this or another path; *LockedError (ErrLockedElsewhere) when
// another process does; *HardLinkError (ErrHardLinked) when the file has
// more than one link; fs.ErrNotExist; ErrNotSession.
func Open(path string) (*Session, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(canon); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", canon, ErrNotSession)
	}
	owners.Lock()
	defer owners.Unlock()
	if s := owners.m[canon]; s != nil {
		return nil, &LoadedError{Path: path, Owner: s}
	}
	fl, err := lockFile(canon)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(canon, fl)
	if err != nil {
		return nil, err
	}
	owners.m[canon] = s
	return s, nil
}

// openLocked reads the locked file at canon into a Session holding the lock.
// On error it releases the lock.
func openLocked(canon string, fl *flock.Flock) (s *Session, err error) {
	defer func() {
		if err != nil {
			_ = fl.Unlock()
		}
	}()
	fi, err := os.Stat(canon)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", canon, ErrNotSession)
	}
	n, err := linkCount(fi, canon)
	if err != nil {
		return nil, err
	}
	if n > 1 {
		return nil, &HardLinkError{Path: canon, Links: n}
	}
	f, err := os.Open(canon)
	if err != nil {
		return nil, err
	}
	t, err := parse(f, true)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", canon, err)
	}
	if t.Migrated {
		newLock, err := rewriteMigrated(canon, t.migratedLines)
		if err != nil {
			return nil, err
		}
		if newLock != nil {
			_ = fl.Unlock()
			fl = newLock
		}
		t.endsWithNewline = true
		t.migratedLines = nil
	}
	w, err := os.OpenFile(canon, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	s = &Session{
		path: canon, dir: filepath.Dir(canon), saved: true, header: t.Header,
		entries: t.Entries, index: t.index, w: w, lock: fl,
		needNewline: !t.endsWithNewline,
	}
	if len(t.Entries) > 0 {
		s.leaf = t.Entries[len(t.Entries)-1].ID
	}
	return s, nil
}

// rewriteMigrated replaces the file at path with lines (atomically: temp
// file, fsync, rename). On Unix the lock is on the file itself, so the new
// file is locked before it replaces the old one; that lock is returned for
// the caller to hold instead of the old one (nil when the lock is a sidecar
// and stays valid).
func rewriteMigrated(path string, lines [][]byte) (*flock.Flock, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".migrate-*.jsonl")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	var buf []byte
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	_, err = tmp.Write(buf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	var newLock *flock.Flock
	if lockPath(path) == path {
		newLock = flock.New(tmp.Name(), flock.SetFlag(os.O_RDONLY))
		ok, err := newLock.TryLock()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &LockedError{Path: path}
		}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		if newLock != nil {
			_ = newLock.Unlock()
		}
		return nil, err
	}
	atomicfile.SyncDir(filepath.Dir(path))
	return newLock, nil
}

// Lookup returns the session this process owns for path (or for the file a
// symlinked path resolves to), if any.
func Lookup(path string) (*Session, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, false
	}
	owners.Lock()
	defer owners.Unlock()
	s := owners.m[canon]
	return s, s != nil
}

// Header returns the session's header.
func (s *Session) Header() Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.header
}

// ID is the session's header id (the thread id).
func (s *Session) ID() string { return s.Header().ID }

// File is the session file's path once it has been saved, else "" (spec:
// a thread "carries sessionFile ... once it has been saved").
func (s *Session) File() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.saved {
		return ""
	}
	return s.path
}

// Path is the file the session is (or will be, once saved) stored in.
func (s *Session) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Leaf is the id of the entry the next append attaches to ("" when the
// next entry is a root).
func (s *Session) Leaf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// SetLeaf moves the leaf to the entry with the given id ("" for none), so
// the next append starts a new branch there. Nothing is written. Errors:
// ErrUnknownEntry.
func (s *Session) SetLeaf(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != "" {
		if _, ok := s.index[id]; !ok {
			return fmt.Errorf("%w: %s", ErrUnknownEntry, id)
		}
	}
	s.leaf = id
	return nil
}

// Transcript returns an immutable snapshot of the session's entries whose
// branch ends at the session's leaf.
func (s *Session) Transcript() *Transcript {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := make(map[string]int, len(s.index))
	for k, v := range s.index {
		idx[k] = v
	}
	t := &Transcript{
		Header:  s.header,
		Entries: s.entries[:len(s.entries):len(s.entries)],
		leaf:    s.leaf,
		leafSet: true,
		index:   idx,
	}
	if s.saved {
		t.Path = s.path
	}
	return t
}

// newID returns an 8-hex-character entry id not used in the file (pi's
// generateId), or a whole UUID after 100 collisions.
func (s *Session) newID() string {
	for range 100 {
		id := strings.ReplaceAll(uuid.NewString(), "-", "")[:8]
		if _, ok := s.index[id]; !ok {
			return id
		}
	}
	return uuid.NewString()
}

// Append adds e as a child of the leaf and makes it the new leaf. It sets
// e's ID, ParentID and Timestamp (Raw is ignored) and writes it as one whole
// line with O_APPEND; turn_start and turn_end entries are fsynced. The first
// append of a created session creates the file (see [Create]). A file whose
// last line was torn gets a newline first, so the entry starts a fresh line.
//
// Errors: ErrClosed; ErrOwnershipLost when the path no longer names the
// owned file (the session must stop writing); *LockedError or filesystem
// errors while creating the file. A failed write leaves the in-memory
// session unchanged.
func (s *Session) Append(e Entry) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Entry{}, ErrClosed
	}
	e.Raw = nil
	e.ID = s.newID()
	e.ParentID = s.leaf
	e.Timestamp = isoTime(time.Now())
	line, err := json.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("session: encode %s entry: %w", e.Type, err)
	}
	sync := e.Type == TypeTurnStart || e.Type == TypeTurnEnd || e.Type == TypeWorkspace
	if !s.saved {
		if err := s.materialize(line); err != nil {
			return Entry{}, err
		}
	} else if err := s.write(line, sync); err != nil {
		return Entry{}, err
	}
	s.index[e.ID] = len(s.entries)
	s.entries = append(s.entries, e)
	s.leaf = e.ID
	return e, nil
}

// write appends one line to the owned file.
func (s *Session) write(line []byte, sync bool) error {
	if err := s.verifyLocked(); err != nil {
		return err
	}
	buf := make([]byte, 0, len(line)+2)
	if s.needNewline {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	if _, err := s.w.Write(buf); err != nil {
		// Part of the line may be on disk: start the next one fresh.
		s.needNewline = true
		return fmt.Errorf("session: append to %s: %w", s.path, err)
	}
	s.needNewline = false
	if sync {
		if err := s.w.Sync(); err != nil {
			return fmt.Errorf("session: sync %s: %w", s.path, err)
		}
	}
	return nil
}

// verifyLocked checks that the path still names the file being written.
func (s *Session) verifyLocked() error {
	held, err1 := s.w.Stat()
	cur, err2 := os.Stat(s.path)
	if err1 != nil || err2 != nil || !os.SameFile(held, cur) {
		return fmt.Errorf("%s: %w", s.path, ErrOwnershipLost)
	}
	return nil
}

// materialize creates the file of a new session with its header and first
// entry line, locks it and registers the owner.
func (s *Session) materialize(first []byte) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	dir, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.Base(s.path))
	head, err := json.Marshal(s.header)
	if err != nil {
		return err
	}
	owners.Lock()
	defer owners.Unlock()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		w.Close()
		os.Remove(path)
		return err
	}
	fl, err := lockFile(path)
	if err != nil {
		return fail(err)
	}
	buf := make([]byte, 0, len(head)+len(first)+2)
	buf = append(append(buf, head...), '\n')
	buf = append(append(buf, first...), '\n')
	if _, err := w.Write(buf); err != nil {
		_ = fl.Unlock()
		return fail(err)
	}
	if err := w.Sync(); err != nil {
		_ = fl.Unlock()
		return fail(err)
	}
	atomicfile.SyncDir(dir)
	s.path, s.w, s.lock, s.saved = path, w, fl, true
	owners.m[path] = s
	return nil
}

// Sync flushes the file to stable storage. It is a no-op for a session not
// saved yet.
func (s *Session) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if !s.saved {
		return nil
	}
	return s.w.Sync()
}

// Close releases the lock and the writer and forgets the owner. It is safe
// to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.saved {
		return nil
	}
	var errs []error
	if err := s.w.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
		errs = append(errs, err)
	}
	if err := s.lock.Unlock(); err != nil {
		errs = append(errs, err)
	}
	owners.Lock()
	if owners.m[s.path] == s {
		delete(owners.m, s.path)
	}
	owners.Unlock()
	return errors.Join(errs...)
}
