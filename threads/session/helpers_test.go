package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// isolate points HOME, XDG_CONFIG_HOME and the agent directory at temp
// directories so no test touches the real home, and returns the agent dir.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	agent := filepath.Join(t.TempDir(), "agent")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv(EnvAgentDir, agent)
	t.Setenv(EnvSessionDir, "")
	return agent
}

// msg builds a message entry from LLM message JSON.
func msg(t *testing.T, js string) Entry {
	t.Helper()
	e, err := NewMessage(json.RawMessage(js))
	if err != nil {
		t.Fatalf("NewMessage(%s): %v", js, err)
	}
	return e
}

func userMsg(t *testing.T, text string, ts int64) Entry {
	t.Helper()
	b, _ := json.Marshal(text)
	return msg(t, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}`, b, ts))
}

func assistantMsg(t *testing.T, text string, ts int64) Entry {
	t.Helper()
	b, _ := json.Marshal(text)
	return msg(t, fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"provider":"scripted","model":"demo","stopReason":"stop","timestamp":%d,"durationMs":10}`, b, ts))
}

// mustAppend appends entries and returns them as stored.
func mustAppend(t *testing.T, s *Session, es ...Entry) []Entry {
	t.Helper()
	var out []Entry
	for _, e := range es {
		got, err := s.Append(e)
		if err != nil {
			t.Fatalf("Append(%s): %v", e.Type, err)
		}
		out = append(out, got)
	}
	return out
}

// appendTurn appends one completed turn: marker, user text, reply, end.
func appendTurn(t *testing.T, s *Session, id string, ts int64) {
	t.Helper()
	mustAppend(t, s,
		NewTurnStart(id, ts),
		userMsg(t, "question "+id, ts+1),
		assistantMsg(t, "answer "+id, ts+2),
		NewTurnEnd(TurnEnd{TurnID: id, Status: protocol.TurnCompleted, CompletedAt: ts + 20}),
	)
}

// newSaved creates a session in dir, appends es, and registers Close.
func newSaved(t *testing.T, dir string, es ...Entry) *Session {
	t.Helper()
	s, err := Create(dir, CreateOptions{Cwd: "/work/project"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mustAppend(t, s, es...)
	return s
}

func mustRead(t *testing.T, path string) *Transcript {
	t.Helper()
	tr, err := Read(path)
	if err != nil {
		t.Fatalf("Read(%s): %v", path, err)
	}
	return tr
}

func appendRaw(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func ids(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}
