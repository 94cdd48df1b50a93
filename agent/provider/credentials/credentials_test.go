package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newStore(t *testing.T, env map[string]string) *Store {
	t.Helper()
	s := New(t.TempDir(), map[string]string{"local": "LOCAL_KEY"})
	s.getenv = func(k string) string { return env[k] }
	return s
}

func TestSetGetDeleteList(t *testing.T) {
	env := map[string]string{}
	s := newStore(t, env)
	if k, src, err := s.Get("openai"); k != "" || src != SourceNone || err != nil {
		t.Fatalf("Get on an empty store = %q %q %v", k, src, err)
	}
	if err := s.Set("openai", "sk-file"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("local", "sk-local"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("auth.json mode = %v, want 0600", st.Mode().Perm())
	}
	if k, src, _ := s.Get("openai"); k != "sk-file" || src != SourceFile {
		t.Errorf("Get = %q %q, want the file's key", k, src)
	}
	env["OPENAI_API_KEY"] = "sk-env"
	env["ANTHROPIC_API_KEY"] = "sk-ant-env"
	if k, src, _ := s.Get("openai"); k != "sk-env" || src != SourceEnv {
		t.Errorf("Get = %q %q, want the environment's key to win", k, src)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Provider: "anthropic", Source: SourceEnv, EnvVar: "ANTHROPIC_API_KEY"},
		{Provider: "local", Source: SourceFile},
		{Provider: "openai", Source: SourceEnv, EnvVar: "OPENAI_API_KEY"},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := s.Delete("local"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("local"); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
	if k, _, _ := s.Get("local"); k != "" {
		t.Errorf("deleted key still read: %q", k)
	}
	data, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(data), `"sk-file"`) || strings.Contains(string(data), "sk-local") {
		t.Errorf("auth.json = %s", data)
	}
	if err := s.Set("", "k"); err == nil {
		t.Error("Set with an empty provider: no error")
	}
	if err := s.Set("openai", ""); err == nil {
		t.Error("Set with an empty key: no error")
	}
}

func TestSetTightensMode(t *testing.T) {
	s := newStore(t, nil)
	if err := os.WriteFile(s.Path(), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("openai", "sk"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(s.Path()); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestBrokenFileErrorsHoldNoSecret(t *testing.T) {
	s := newStore(t, nil)
	const secret = "sk-VERY-SECRET"
	for _, content := range []string{`{"openai": {"key": "` + secret + `"`, `{"openai": "` + secret + `"}`} {
		if err := os.WriteFile(s.Path(), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.Get("openai")
		if err == nil {
			t.Fatalf("Get on %s: no error", content)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error holds the secret: %v", err)
		}
		if !strings.Contains(err.Error(), filepath.Base(s.Path())) {
			t.Errorf("error does not name the file: %v", err)
		}
		if err := s.Set("openai", "x"); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Set over a broken file = %v", err)
		}
	}
}
