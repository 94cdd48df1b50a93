package plugins

import (
	"os"
	"path/filepath"
	"strings"
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

// TestClaudeMarketplacesBadEntry: one entry of known_marketplaces.json that
// is not an object is skipped with a diagnostic naming it in plain words;
// the other entries are still known.
func TestClaudeMarketplacesBadEntry(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	known := `{"good": {"source": {"source": "github", "repo": "acme/good"}}, "y": 5, "z": {"source": {"source": "github", "repo": 7}}}`
	if err := os.WriteFile(filepath.Join(dir, "known_marketplaces.json"), []byte(known), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Manager{home: home}
	markets, diags := m.claudeMarketplaces()
	if len(markets) != 1 || markets[0].Name != "good" {
		t.Errorf("markets = %+v; want good only", markets)
	}
	if len(diags) != 2 || !strings.Contains(diags[0], "marketplace y (") || !strings.Contains(diags[0], "it is a JSON number where an object is expected; it is skipped") ||
		!strings.Contains(diags[1], "marketplace z (") || !strings.Contains(diags[1], `"source.repo" is a JSON number where a string is expected`) {
		t.Errorf("diagnostics = %q", diags)
	}
	for _, d := range diags {
		if strings.Contains(d, "struct") || strings.Contains(d, "Go value") {
			t.Errorf("a diagnostic names a Go type: %q", d)
		}
	}
}
