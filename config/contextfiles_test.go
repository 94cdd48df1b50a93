package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContextFiles(t *testing.T) {
	agent := tempDir(t)
	root := tempDir(t)
	cwd := filepath.Join(root, "a", "b")
	writeFile(t, filepath.Join(agent, "AGENTS.md"), "global")
	writeFile(t, filepath.Join(root, "AGENTS.md"), "root agents")
	writeFile(t, filepath.Join(root, "CLAUDE.md"), "root claude (shadowed)")
	writeFile(t, filepath.Join(root, "a", "CLAUDE.md"), "a claude")
	writeFile(t, filepath.Join(cwd, "AGENTS.md"), "b agents")
	got, warnings := ContextFiles(agent, cwd)
	want := []ContextFile{
		{Path: filepath.Join(agent, "AGENTS.md"), Content: "global"},
		{Path: filepath.Join(root, "AGENTS.md"), Content: "root agents"},
		{Path: filepath.Join(root, "a", "CLAUDE.md"), Content: "a claude"},
		{Path: filepath.Join(cwd, "AGENTS.md"), Content: "b agents"},
	}
	if diff := cmp.Diff(got, want); diff != "" || warnings != nil {
		t.Errorf("(-got +want):\n%s\nwarnings %v", diff, warnings)
	}
}
