package agent

import (
	"path/filepath"
	"testing"
)

func TestDir(t *testing.T) {
	home := t.TempDir()
	work := t.TempDir()
	tests := []struct{ name, env, want string }{
		{"default", "", filepath.Join(home, ".knightcode", "agent")},
		{"absolute", "/srv/agent/", "/srv/agent"},
		{"tilde", "~/agents/k", filepath.Join(home, "agents", "k")},
		{"tildeAlone", "~", home},
		{"relative", "rel/dir", filepath.Join(work, "rel", "dir")},
	}
	t.Setenv("HOME", home)
	t.Chdir(work)
	for _, tc := range tests {
		t.Setenv(EnvDir, tc.env)
		got, err := Dir()
		if err != nil {
			t.Fatalf("%s: Dir: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: Dir() with %s=%q = %q, want %q", tc.name, EnvDir, tc.env, got, tc.want)
		}
	}
}
