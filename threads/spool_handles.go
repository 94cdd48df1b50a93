package threads

import (
	"errors"
	"os"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// Open spool files (issue 24): a client reads a payload in 48 KiB chunks,
// one after another or several at once, and each payload/read used to open
// and close the payload's file. The spool keeps a payload's file open
// across its reads instead, one handle per payload shared by concurrent
// reads. A handle is closed once no read used it for handleIdle (a timer,
// not a goroutine, closes it), when the payload is removed (expiry), when
// more than maxHandles are open (the least recently used idle one), and
// when the spool closes; a handle a read is using is closed by the last
// read that ends after that.
//
// A spool file is immutable, so an open handle serves the payload's bytes
// even when the file was removed or replaced (renamed over) behind the
// server's back. A file is checked to be the one the spool wrote (same
// device, inode, size and modification time) when it is opened and after
// every read from it, the way git trusts its index's stat data; one that
// is not, or is gone, means the payload is gone: it is removed from the
// spool as if it had expired, and the read answers reason "expired", so the
// client reads the thread again and gets a new reference with a new file.
// A read never returns bytes the spool did not write, short of a change
// that keeps the file's size and modification time.

const (
	// DefaultPayloadHandleIdle is how long a payload's file stays open
	// after its last read.
	DefaultPayloadHandleIdle = 30 * time.Second
	// DefaultMaxPayloadHandles bounds the payload files kept open between
	// reads.
	DefaultMaxPayloadHandles = 16
)

// payloadHandle is a payload's open spool file, shared by its reads. Its
// fields are guarded by the spool's mu.
type payloadHandle struct {
	f       *os.File
	readers int       // reads using f now
	lastUse time.Time // when a read last ended (wall clock, not the spool's clock)
	cached  bool      // held by its payloadFile; once false, the last reader closes f
}

// acquireLocked returns f's cached handle with one more reader, or nil when
// f has none (openHandle opens one).
func (s *spool) acquireLocked(f *payloadFile) *payloadHandle {
	h := f.handle
	if h != nil {
		h.readers++
	}
	return h
}

// openHandle opens f's spool file for a read (one reader) and caches the
// handle unless the payload was removed or the spool closed meanwhile.
// Errors: errSpoolClosed; invalidParams "id" reason "expired" when the file
// is gone or is not the one the spool wrote (the payload is removed);
// another open or stat error as readError's.
func (s *spool) openHandle(f *payloadFile) (*payloadHandle, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, s.gone(f)
		}
		return nil, s.readError(err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, s.readError(err)
	}
	if !f.unchanged(fi) {
		fh.Close()
		return nil, s.gone(f)
	}
	h := &payloadHandle{f: fh, readers: 1}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.byID[f.id] != f {
		return h, nil // read once, closed by release
	}
	if other := f.handle; other != nil { // opened by a concurrent read
		other.readers++
		fh.Close()
		return other, nil
	}
	h.cached = true
	f.handle = h
	s.open[f] = struct{}{}
	s.evictLocked()
	if !s.idleArmed {
		s.idleArmed = true
		if s.idleTimer == nil {
			s.idleTimer = time.AfterFunc(s.handleIdle, s.closeIdle)
		} else {
			s.idleTimer.Reset(s.handleIdle)
		}
	}
	return h, nil
}

// unchanged reports whether fi, the spool file's information now, is the
// file as the spool wrote it: the same file (device and inode), size and
// modification time.
func (f *payloadFile) unchanged(fi os.FileInfo) bool {
	return os.SameFile(fi, f.info) && fi.Size() == f.size && fi.ModTime().Equal(f.info.ModTime())
}

// gone removes f, whose spool file is missing or was replaced, as if it
// had expired, and returns the read's error: errSpoolClosed when the spool
// closed meanwhile (it removed the file), else invalidParams "id" reason
// "expired".
func (s *spool) gone(f *payloadFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errSpoolClosed
	}
	if s.byID[f.id] == f {
		s.log.Warn("a payload's spool file was removed or replaced outside the server; the payload is dropped", "path", f.path)
		s.removeLocked(f)
	}
	return payloadError(protocol.PayloadExpired, "payload %s is gone: its spool file was removed or replaced outside the server; read the thread again for a new reference", f.id)
}

// release ends a read of h: the last reader of a dropped handle closes it.
func (s *spool) release(h *payloadHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.readers--
	h.lastUse = time.Now()
	if !h.cached && h.readers == 0 {
		h.f.Close()
		return
	}
	s.evictLocked()
}

// dropLocked takes f's handle out of the cache; it is closed now when no
// read uses it, else by the last reader's release.
func (s *spool) dropLocked(f *payloadFile) {
	h := f.handle
	if h == nil {
		return
	}
	f.handle = nil
	delete(s.open, f)
	h.cached = false
	if h.readers == 0 {
		h.f.Close()
	}
}

// evictLocked closes the least recently used idle handles while more than
// maxHandles are open. Handles in use are not closed: while every one is,
// the cache may hold more (as many as reads run at once).
func (s *spool) evictLocked() {
	for len(s.open) > s.maxHandles {
		var oldest *payloadFile
		for f := range s.open {
			if f.handle.readers == 0 && (oldest == nil || f.handle.lastUse.Before(oldest.handle.lastUse)) {
				oldest = f
			}
		}
		if oldest == nil {
			return
		}
		s.dropLocked(oldest)
	}
}

// closeIdle runs on the idle timer: it closes the handles no read used for
// handleIdle and arms the timer again for the next one while any is open.
func (s *spool) closeIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idleArmed = false
	if s.closed {
		return
	}
	now := time.Now()
	next := s.handleIdle
	for f := range s.open {
		h := f.handle
		if h.readers > 0 {
			continue
		}
		if left := s.handleIdle - now.Sub(h.lastUse); left > 0 {
			next = min(next, left)
			continue
		}
		s.dropLocked(f)
	}
	if len(s.open) > 0 {
		s.idleArmed = true
		s.idleTimer.Reset(next)
	}
}

// closeHandlesLocked drops every handle and stops the idle timer (the
// spool is closing).
func (s *spool) closeHandlesLocked() {
	for f := range s.open {
		s.dropLocked(f)
	}
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	s.idleArmed = false
}
