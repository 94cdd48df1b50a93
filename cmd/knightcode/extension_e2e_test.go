package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EExtensionWarnings: every -e path gives a warning of source
// "extension" in thread/start's result (issue 8's decisions): "not found"
// for a missing path, "not supported yet" for an existing one. Nothing is
// dropped silently.
func TestE2EExtensionWarnings(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "ext.ts")
	if err := os.WriteFile(existing, []byte("export default {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.ts")
	s := startDiffServer(t, nil, "-e", missing, "--extension", existing)
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo}, &started)
	var got []protocol.Warning
	for _, w := range started.Warnings {
		if w.Source == protocol.WarningSourceExtension {
			got = append(got, w)
		}
	}
	want := []protocol.Warning{
		{Message: "extension not found: " + missing, Source: protocol.WarningSourceExtension, Path: missing},
		{Message: "extensions are not supported yet: " + existing + " is not loaded", Source: protocol.WarningSourceExtension, Path: existing},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("extension warnings (-got +want):\n%s", diff)
	}
}
