package plugins

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestContentHashSkipsFIFO hashes a plugin folder holding a FIFO: the hash
// answers (the FIFO by its kind, never read) instead of blocking forever.
func TestContentHashSkipsFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"p"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := contentHash(dir)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("contentHash = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("contentHash of a folder with a FIFO did not return within 10 s")
	}
}
