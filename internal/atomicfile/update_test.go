package atomicfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/safefile"
)

// increment is an Update fn that adds one to the decimal number in old.
func increment(old []byte) ([]byte, error) {
	n := 0
	if len(old) > 0 {
		var err error
		if n, err = strconv.Atoi(string(old)); err != nil {
			return nil, err
		}
	}
	return []byte(strconv.Itoa(n + 1)), nil
}

// TestUpdateLosesNoUpdate runs concurrent updates through a lock file and
// through a locked directory: every increment survives.
func TestUpdateLosesNoUpdate(t *testing.T) {
	t.Parallel()
	for _, lockDir := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "sub", "n.txt")
		lock := path + ".lock"
		if lockDir {
			lock = filepath.Dir(path)
			if err := os.MkdirAll(lock, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		const n = 40
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- Update(context.Background(), lock, path, 0o640, increment)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("lock dir %v: Update: %v", lockDir, err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != strconv.Itoa(n) {
			t.Errorf("lock dir %v: content %q, %v; want %d", lockDir, got, err, n)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
			t.Errorf("lock dir %v: mode %v, %v; want 0640", lockDir, st.Mode().Perm(), err)
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		want := 2 // n.txt and its lock file
		if lockDir {
			want = 1 // nothing but n.txt
		}
		if len(entries) != want {
			t.Errorf("lock dir %v: files left %v, want %d", lockDir, entries, want)
		}
	}
}

// TestUpdateFailures checks that an fn error and a lock held elsewhere leave
// the file as it was.
func TestUpdateFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Update(context.Background(), path+".lock", path, 0o600, func(old []byte) ([]byte, error) {
		if string(old) != "keep" {
			t.Errorf("fn got %q, want the current content", old)
		}
		return []byte("lost"), boom
	})
	if err != boom {
		t.Errorf("Update with a failing fn: err = %v, want fn's error as it is", err)
	}

	held := flock.New(path + ".lock")
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Update(ctx, path+".lock", path, 0o600, func([]byte) ([]byte, error) {
		t.Error("fn ran without the lock")
		return []byte("lost"), nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update while the lock is held: err = %v, want context.Canceled", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "keep" {
		t.Errorf("content = %q, want it unchanged", got)
	}
}

// TestUpdateRefusesFIFO updates a file that is a FIFO: Update fails at once
// naming it, fn is not called and the FIFO is left in place.
func TestUpdateRefusesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "settings.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	called := false
	done := make(chan error, 1)
	go func() {
		done <- Update(context.Background(), path+".lock", path, 0o600, func(old []byte) ([]byte, error) {
			called = true
			return []byte("{}"), nil
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) || called {
			t.Errorf("Update of a FIFO = %v (fn called %v); want safefile.ErrNotRegular, fn not called", err, called)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Update of a FIFO did not return within 10 s")
	}
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
}
