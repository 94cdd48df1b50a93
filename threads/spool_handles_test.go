package threads

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// handleSpool is a spool in a temporary directory with the given idle
// timeout and handle bound, closed when the test ends.
func handleSpool(t *testing.T, idle time.Duration, maxHandles int) *spool {
	t.Helper()
	s := newSpool(t.TempDir(), 0, slog.New(slog.DiscardHandler))
	s.handleIdle, s.maxHandles = idle, maxHandles
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// randomBytes returns n bytes of a fixed pseudo-random sequence.
func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// checkChunk reads payload id at off and compares the chunk with want's
// bytes there.
func checkChunk(t *testing.T, s *spool, id string, off int64, want []byte) {
	t.Helper()
	got, size, err := s.read(id, off)
	if err != nil {
		t.Fatalf("read at %d: %v", off, err)
	}
	end := min(off+protocol.MaxPayloadChunk, int64(len(want)))
	if size != int64(len(want)) || !bytes.Equal(got, want[off:end]) {
		t.Fatalf("read at %d: %d bytes of a payload of %d, want bytes %d..%d of %d", off, len(got), size, off, end, len(want))
	}
}

// openHandle returns the cached handle of payload id (nil when none).
func openHandle(s *spool, id string) *payloadHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.byID[id]; f != nil {
		return f.handle
	}
	return nil
}

// putAndRead puts n pseudo-random bytes (seed), reads the first chunk
// and returns the reference, the bytes and the file the read left open.
func putAndRead(t *testing.T, s *spool, n int, seed uint64) (protocol.PayloadRef, []byte, *payloadHandle) {
	t.Helper()
	want := randomBytes(n, seed)
	ref, err := s.put(want)
	if err != nil {
		t.Fatal(err)
	}
	checkChunk(t, s, ref.ID, 0, want)
	h := openHandle(s, ref.ID)
	if h == nil {
		t.Fatal("no open file after a read")
	}
	return ref, want, h
}

func isClosed(h *payloadHandle) bool {
	_, err := h.f.Stat()
	return errors.Is(err, os.ErrClosed)
}

// TestPayloadHandleKeptOpen checks that reads at any offset share one open
// file and return the payload's bytes there.
func TestPayloadHandleKeptOpen(t *testing.T) {
	t.Parallel()
	s := handleSpool(t, time.Hour, DefaultMaxPayloadHandles)
	ref, want, h := putAndRead(t, s, 3*protocol.MaxPayloadChunk+1000, 1)
	for _, off := range []int64{7, protocol.MaxPayloadChunk - 1, 100_000, 2 * protocol.MaxPayloadChunk, ref.Bytes - 1, ref.Bytes, 0} {
		checkChunk(t, s, ref.ID, off, want)
	}
	if got := openHandle(s, ref.ID); got != h {
		t.Error("the file was opened again between reads")
	}
	if h.readers != 0 {
		t.Errorf("%d readers after the reads ended", h.readers)
	}
}

// TestPayloadHandleIdleClose checks that an unused file is closed after
// the idle timeout, and that a later read opens it again.
func TestPayloadHandleIdleClose(t *testing.T) {
	t.Parallel()
	s := handleSpool(t, 20*time.Millisecond, DefaultMaxPayloadHandles)
	ref, want, h := putAndRead(t, s, 100_000, 2)
	deadline := time.Now().Add(5 * time.Second)
	for openHandle(s, ref.ID) != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if openHandle(s, ref.ID) != nil || !isClosed(h) {
		t.Fatal("the file is still open after the idle timeout")
	}
	checkChunk(t, s, ref.ID, 50_000, want)
	if openHandle(s, ref.ID) == nil {
		t.Error("the file was not kept open after a read following the idle close")
	}
}

// TestPayloadHandleRemovedWhileOpen checks that an expiring payload's file
// is closed at once when idle, and by the last read when one uses it.
func TestPayloadHandleRemovedWhileOpen(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	s := handleSpool(t, time.Hour, DefaultMaxPayloadHandles)
	s.now = func() time.Time { return now }
	idle, err := s.put(randomBytes(70_000, 3))
	if err != nil {
		t.Fatal(err)
	}
	busy, err := s.put(randomBytes(70_000, 4))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{idle.ID, busy.ID} {
		if _, _, err := s.read(id, 0); err != nil {
			t.Fatal(err)
		}
	}
	hIdle, hBusy := openHandle(s, idle.ID), openHandle(s, busy.ID)
	s.mu.Lock()
	s.acquireLocked(s.byID[busy.ID]) // a read in progress
	s.mu.Unlock()

	now = now.Add(DefaultPayloadTTL + time.Second)
	if files, _ := s.counters(); files != 0 {
		t.Fatalf("%d payloads after expiry", files)
	}
	if !isClosed(hIdle) {
		t.Error("the idle payload's file is open after it was removed")
	}
	if isClosed(hBusy) {
		t.Fatal("the file was closed under a read in progress")
	}
	buf := make([]byte, 10)
	if _, err := hBusy.f.ReadAt(buf, 0); err != nil {
		t.Errorf("the read in progress cannot go on: %v", err)
	}
	s.release(hBusy)
	if !isClosed(hBusy) {
		t.Error("the removed payload's file is open after its last read ended")
	}
	if len(s.open) != 0 {
		t.Errorf("%d files held open after removal", len(s.open))
	}
}

// TestPayloadFileReplaced checks that a spool file removed, replaced or
// written to behind the server's back never makes a read return other
// bytes: an open file that was removed or renamed over keeps serving the
// payload; once it is closed, or at once when the file itself was written
// to, the payload is gone (reason expired) and putting the value again
// makes a new one.
func TestPayloadFileReplaced(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(path string) error
	}{
		{"replaced", func(path string) error {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, randomBytes(200_000, 99), 0o600); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}},
		{"overwritten in place", func(path string) error {
			return os.WriteFile(path, randomBytes(200_000, 98), 0o600)
		}},
		{"removed", os.Remove},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := handleSpool(t, time.Hour, DefaultMaxPayloadHandles)
			ref, want, _ := putAndRead(t, s, 200_000, 5)
			path := filepath.Join(s.dir, ref.ID)
			if err := c.change(path); err != nil {
				t.Fatal(err)
			}
			var pe *coreerr.ParamError
			if c.name == "overwritten in place" {
				// The open file itself changed: the next read sees it.
				time.Sleep(10 * time.Millisecond)
			} else {
				for _, off := range []int64{protocol.MaxPayloadChunk, 123_456, ref.Bytes - 10} {
					checkChunk(t, s, ref.ID, off, want)
				}
				// The file closes (idle); the next read opens another.
				s.mu.Lock()
				s.dropLocked(s.byID[ref.ID])
				s.mu.Unlock()
			}
			_, _, err := s.read(ref.ID, 0)
			if !errors.As(err, &pe) || pe.Field != "id" || pe.Reason != protocol.PayloadExpired {
				t.Fatalf("read after the file was %s: %v, want invalidParams id expired", c.name, err)
			}
			if files, _ := s.counters(); files != 0 {
				t.Errorf("%d payloads after the file was %s", files, c.name)
			}
			again, err := s.put(want)
			if err != nil {
				t.Fatal(err)
			}
			if again.ID == ref.ID {
				t.Fatal("putting the value again gave the gone reference")
			}
			for off := int64(0); off < again.Bytes; off += protocol.MaxPayloadChunk {
				checkChunk(t, s, again.ID, off, want)
			}
		})
	}
}

// TestPayloadHandlesBounded checks that at most maxHandles files stay open,
// the least recently read closed first, and that reads stay correct.
func TestPayloadHandlesBounded(t *testing.T) {
	t.Parallel()
	s := handleSpool(t, time.Hour, 2)
	var refs []protocol.PayloadRef
	var values [][]byte
	for i := range 5 {
		v := randomBytes(70_000, uint64(10+i))
		ref, err := s.put(v)
		if err != nil {
			t.Fatal(err)
		}
		refs, values = append(refs, ref), append(values, v)
	}
	for round := range 2 {
		for i, ref := range refs {
			checkChunk(t, s, ref.ID, int64(round*1000+i), values[i])
			if n := len(s.open); n > 2 {
				t.Fatalf("%d files open, bound 2", n)
			}
		}
	}
	if openHandle(s, refs[4].ID) == nil || openHandle(s, refs[3].ID) == nil {
		t.Error("the most recently read files were closed")
	}
}

// TestPayloadHandlesConcurrent reads one payload from many goroutines at
// random offsets while files close and reopen (run it with -race).
func TestPayloadHandlesConcurrent(t *testing.T) {
	t.Parallel()
	s := handleSpool(t, time.Millisecond, 1)
	a, b := randomBytes(300_000, 20), randomBytes(90_000, 21)
	refA, err := s.put(a)
	if err != nil {
		t.Fatal(err)
	}
	refB, err := s.put(b)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 0))
			for range 200 {
				ref, want := refA, a
				if r.IntN(2) == 0 {
					ref, want = refB, b
				}
				off := r.Int64N(ref.Bytes + 1)
				got, _, err := s.read(ref.ID, off)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, want[off:min(off+protocol.MaxPayloadChunk, ref.Bytes)]) {
					errs <- errors.New("wrong bytes")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSpoolCloseClosesFiles checks that closing the spool closes its open
// files.
func TestSpoolCloseClosesFiles(t *testing.T) {
	t.Parallel()
	s := newSpool(t.TempDir(), 0, slog.New(slog.DiscardHandler))
	ref, err := s.put(randomBytes(1000, 30))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.read(ref.ID, 0); err != nil {
		t.Fatal(err)
	}
	h := openHandle(s, ref.ID)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if h == nil || !isClosed(h) {
		t.Error("a payload file is open after the spool closed")
	}
}
