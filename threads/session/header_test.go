package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadHeader(t *testing.T) {
	t.Parallel()
	const hdr = `{"type":"session","version":1,"id":"abc","timestamp":"2025-01-02T03:04:05.000Z","cwd":"/p","parentSession":"/s/parent.jsonl"}`
	want := Header{Type: "session", Version: 1, ID: "abc", Timestamp: "2025-01-02T03:04:05.000Z", Cwd: "/p", ParentSession: "/s/parent.jsonl"}
	tests := []struct {
		name    string
		content string
		want    Header
		notSess bool
	}{
		{"header and entries", hdr + "\n" + `{"type":"message","id":"e1"}` + "\n", want, false},
		{"header only, no newline", hdr, want, false},
		{"blank lines first", "\n  \n" + hdr + "\n", want, false},
		{"only the header line is read", hdr + "\nnot json at all\n", want, false},
		{"empty file", "", Header{}, true},
		{"blank file", "\n\n", Header{}, true},
		{"not JSON", "hello\n" + hdr + "\n", Header{}, true},
		{"another entry first", `{"type":"message","id":"e1"}` + "\n" + hdr + "\n", Header{}, true},
		{"header without id", `{"type":"session","version":3,"cwd":"/p"}` + "\n", Header{}, true},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		path := filepath.Join(dir, string(rune('a'+i))+".jsonl")
		if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadHeader(path)
		if tt.notSess {
			if !errors.Is(err, ErrNotSession) {
				t.Errorf("%s: err = %v, want ErrNotSession", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
	if _, err := ReadHeader(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
}
