package threads

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// The payload spool (spec: "History, listings, and large values"): values
// too large to travel inline are written once to files of a directory the
// server process owns, and sent as immutable protocol.PayloadRef. Ids are
// random and map to spool entries in memory only: an id is never a path, so
// payload/read cannot reach anything but the spool. The directory is made
// on first use and removed by Manager.Shutdown (a killed process leaves it
// in the temporary directory, named knightcode-payload-*).

// DefaultPayloadTTL is a payload reference's sliding expiry (spec:
// "References expire after 30 minutes without access").
const DefaultPayloadTTL = 30 * time.Minute

// maxExpiredIDs bounds how many expired ids the spool remembers to answer
// reason "expired" (beyond it the oldest answer "unknown").
const maxExpiredIDs = 4096

// spool holds the payloads of one server process. Its methods are safe for
// concurrent use; it starts no goroutine (expiry is swept on use).
type spool struct {
	parent     string // where the spool directory is made ("": os.TempDir)
	ttl        time.Duration
	now        func() time.Time
	log        *slog.Logger
	handleIdle time.Duration // how long an unused open file stays open (spool_handles.go)
	maxHandles int           // the most files kept open between reads

	mu      sync.Mutex
	dir     string // "" until the first payload
	closed  bool
	byID    map[string]*payloadFile
	byHash  map[[sha256.Size]byte]*payloadFile
	expired map[string]struct{}
	expOrd  []string // expired ids, oldest first
	bytes   int64

	open      map[*payloadFile]struct{} // the payloads whose file is open (handle set)
	idleTimer *time.Timer               // runs closeIdle; nil until the first file is kept open
	idleArmed bool                      // idleTimer is set to fire
}

// payloadFile is one spool file.
type payloadFile struct {
	id      string
	path    string
	size    int64
	hash    [sha256.Size]byte
	info    os.FileInfo // the file as written: an open checks it is still this file
	expires time.Time
	handle  *payloadHandle // the file kept open across reads, or nil (guarded by the spool's mu)
}

func newSpool(parent string, ttl time.Duration, log *slog.Logger) *spool {
	if ttl <= 0 {
		ttl = DefaultPayloadTTL
	}
	return &spool{parent: parent, ttl: ttl, now: time.Now, log: log,
		handleIdle: DefaultPayloadHandleIdle, maxHandles: DefaultMaxPayloadHandles,
		byID: map[string]*payloadFile{}, byHash: map[[sha256.Size]byte]*payloadFile{}, expired: map[string]struct{}{},
		open: map[*payloadFile]struct{}{}}
}

// errSpoolClosed: the spool was removed (the server is shutting down).
var errSpoolClosed = fmt.Errorf("%w: the payload spool is closed", ErrShuttingDown)

// put stores b and returns its reference. Equal contents share one file
// and one id while it lives (a value is written once however often it is
// sent); putting it again extends its expiry.
func (s *spool) put(b []byte) (protocol.PayloadRef, error) {
	h := sha256.Sum256(b)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return protocol.PayloadRef{}, errSpoolClosed
	}
	s.sweepLocked()
	if f := s.byHash[h]; f != nil {
		f.expires = s.now().Add(s.ttl)
		s.mu.Unlock()
		return protocol.PayloadRef{ID: f.id, Bytes: f.size}, nil
	}
	dir, err := s.dirLocked()
	s.mu.Unlock()
	if err != nil {
		return protocol.PayloadRef{}, err
	}
	id, err := newPayloadID()
	if err != nil {
		return protocol.PayloadRef{}, err
	}
	path := filepath.Join(dir, id)
	info, err := writeNew(path, b)
	if err != nil {
		return protocol.PayloadRef{}, fmt.Errorf("threads: write payload: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		os.Remove(path)
		return protocol.PayloadRef{}, errSpoolClosed
	}
	if f := s.byHash[h]; f != nil { // put concurrently by another caller
		os.Remove(path)
		f.expires = s.now().Add(s.ttl)
		return protocol.PayloadRef{ID: f.id, Bytes: f.size}, nil
	}
	f := &payloadFile{id: id, path: path, size: int64(len(b)), hash: h, info: info, expires: s.now().Add(s.ttl)}
	s.byID[id], s.byHash[h] = f, f
	s.bytes += f.size
	return protocol.PayloadRef{ID: id, Bytes: f.size}, nil
}

// newPayloadID returns 128 random bits as 32 hex digits.
func newPayloadID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// writeNew writes b to a new file at path (0600) and returns the file's
// information (its identity, for os.SameFile).
func writeNew(path string, b []byte) (os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(b)
	var info os.FileInfo
	if err == nil {
		info, err = f.Stat()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return nil, err
	}
	return info, nil
}

// dirLocked returns the spool directory, making it on first use.
func (s *spool) dirLocked() (string, error) {
	if s.dir != "" {
		return s.dir, nil
	}
	dir, err := os.MkdirTemp(s.parent, "knightcode-payload-")
	if err != nil {
		return "", fmt.Errorf("threads: make the payload spool: %w", err)
	}
	s.dir = dir
	return dir, nil
}

// read returns the chunk of payload id starting at offset: at most
// protocol.MaxPayloadChunk bytes, and the payload's size. Reading extends
// the payload's expiry; the payload's file stays open for the next read
// (spool_handles.go). Errors: invalidParams "id" with reason unknown or
// expired (also when its file was removed or replaced outside the server);
// invalidParams "offset" outside 0..size; errSpoolClosed.
func (s *spool) read(id string, offset int64) ([]byte, int64, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, 0, errSpoolClosed
	}
	s.sweepLocked()
	f := s.byID[id]
	if f == nil {
		_, gone := s.expired[id]
		s.mu.Unlock()
		if gone {
			return nil, 0, payloadError(protocol.PayloadExpired, "payload %s expired after %v without use; read the thread again for a new reference", id, s.ttl)
		}
		return nil, 0, payloadError(protocol.PayloadUnknown, "no payload %q in this server process", id)
	}
	f.expires = s.now().Add(s.ttl)
	size := f.size
	if offset < 0 || offset > size {
		s.mu.Unlock()
		return nil, 0, coreerr.Param("offset", "must be 0 to %d (the payload's length in bytes), got %d", size, offset)
	}
	h := s.acquireLocked(f)
	s.mu.Unlock()
	if h == nil {
		var err error
		if h, err = s.openHandle(f); err != nil {
			return nil, 0, err
		}
	}
	defer s.release(h)
	n := min(size-offset, protocol.MaxPayloadChunk)
	buf := make([]byte, n)
	if _, err := h.f.ReadAt(buf, offset); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return nil, 0, s.readError(err)
	}
	// Written to after the spool wrote it: what was read may not be the
	// payload (spool_handles.go).
	if fi, err := h.f.Stat(); err != nil {
		return nil, 0, s.readError(err)
	} else if !f.unchanged(fi) {
		return nil, 0, s.gone(f)
	}
	return buf, size, nil
}

// readError is the error of a spool file that cannot be read: the spool
// was closed meanwhile, or the file itself failed.
func (s *spool) readError(err error) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errSpoolClosed
	}
	return fmt.Errorf("threads: read payload: %w", err)
}

// payloadError is payload/read's invalidParams for the id, with data
// {field: "id", reason}.
func payloadError(reason, format string, args ...any) error {
	return coreerr.ParamReason("id", reason, format, args...)
}

// sweepLocked removes the payloads whose expiry passed, remembering their
// ids as expired.
func (s *spool) sweepLocked() {
	now := s.now()
	for _, f := range s.byID {
		if now.After(f.expires) {
			s.removeLocked(f)
		}
	}
}

// removeLocked removes payload f: its open file is closed (after the reads
// using it), its spool file removed, and its id remembered as expired.
func (s *spool) removeLocked(f *payloadFile) {
	s.dropLocked(f)
	if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("removing a payload's spool file failed", "path", f.path, "err", err)
	}
	delete(s.byID, f.id)
	delete(s.byHash, f.hash)
	s.bytes -= f.size
	s.expired[f.id] = struct{}{}
	s.expOrd = append(s.expOrd, f.id)
	for len(s.expOrd) > maxExpiredIDs {
		delete(s.expired, s.expOrd[0])
		s.expOrd = s.expOrd[1:]
	}
}

// counters returns the live spool files and their bytes
// (server/diagnostics payloadFiles, payloadBytes).
func (s *spool) counters() (files, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.sweepLocked()
	}
	return int64(len(s.byID)), s.bytes
}

// close removes the spool directory; later puts and reads fail with
// errSpoolClosed.
func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.closeHandlesLocked()
	s.byID, s.byHash = map[string]*payloadFile{}, map[[sha256.Size]byte]*payloadFile{}
	s.bytes = 0
	if s.dir == "" {
		return nil
	}
	return os.RemoveAll(s.dir)
}

// ReadPayload reads the chunk of payload id at offset (payload/read): at
// most protocol.MaxPayloadChunk bytes, and the payload's size in bytes (the
// chunk ends the payload when offset+len(chunk) reaches it). Errors:
// *coreerr.ParamError "id" with reason "unknown" or "expired";
// *coreerr.ParamError "offset" outside 0..size; ErrShuttingDown once the
// spool was removed.
func (m *Manager) ReadPayload(id string, offset int64) (chunk []byte, size int64, err error) {
	return m.spool.read(id, offset)
}
