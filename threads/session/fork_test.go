package session

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestForkPrefixAndFork checks which entries a fork copies (through a
// turn's end, the whole branch without a running turn) and that Fork saves
// them with their ids, under a title, with the parent in its header.
func TestForkPrefixAndFork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newSaved(t, dir)
	appendTurn(t, s, "t0", 100)
	mustAppend(t, s, NewModelChange("scripted", "demo")) // between turns
	appendTurn(t, s, "t1", 200)
	mustAppend(t, s, NewTurnStart("run", 300), userMsg(t, "still running", 301))
	branch := s.Transcript().Branch()

	ids := func(es []Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, c := range []struct {
		name, turn, running string
		want                []Entry
	}{
		{"through t0", "t0", "", branch[:4]},
		{"through t1", "t1", "", branch[:9]},
		{"whole, with a running turn", "", "run", branch[:9]},
		{"whole, the last turn unterminated", "", "", branch},
		{"through the unterminated turn", "run", "", branch},
	} {
		got, err := s.Transcript().ForkPrefix(c.turn, c.running)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(ids(got), ids(c.want)); diff != "" {
			t.Errorf("%s (-got +want):\n%s", c.name, diff)
		}
	}
	if _, err := s.Transcript().ForkPrefix("nope", ""); !errors.Is(err, ErrUnknownTurn) {
		t.Errorf("unknown turn: %v", err)
	}

	prefix, _ := s.Transcript().ForkPrefix("t1", "")
	f, err := Fork(filepath.Join(dir, "forks"), CreateOptions{Cwd: "/work/project", ParentSession: s.File()}, prefix, "Mine (fork)")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back := mustRead(t, f.File())
	if back.Header.ParentSession != s.File() || back.Header.ID == s.ID() || back.Title() != "Mine (fork)" {
		t.Errorf("fork header %+v, title %q", back.Header, back.Title())
	}
	if diff := cmp.Diff(ids(back.Branch()[:len(prefix)]), ids(prefix)); diff != "" {
		t.Errorf("fork entries (-got +want):\n%s", diff)
	}
	want := s.Transcript().Turns("")[:2]
	if diff := cmp.Diff(back.Turns(""), want); diff != "" {
		t.Errorf("fork turns (-got +want):\n%s", diff)
	}
	if got := back.Turns(""); len(got) != 2 || got[1].Status != protocol.TurnCompleted {
		t.Errorf("fork turns: %+v", got)
	}
}

// TestForkPoint: pi's fork(entryId) before a turn's user message keeps the
// turns before it (none before the first); at a turn's end it keeps that
// turn; any other entry is refused.
func TestForkPoint(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	appendTurn(t, s, "t0", 100)
	mustAppend(t, s, NewModelChange("scripted", "demo"))
	appendTurn(t, s, "t1", 200)
	b := s.Transcript().Branch()
	for _, c := range []struct {
		name, entry string
		at          bool
		turn        string
		none        bool
		err         error
	}{
		{"before the first turn", b[1].ID, false, "", true, nil},
		{"before t1", b[6].ID, false, "t0", false, nil},
		{"at t0's end", b[3].ID, true, "t0", false, nil},
		{"at t1's last message", b[7].ID, true, "t1", false, nil},
		{"before an assistant message", b[2].ID, false, "", false, ErrNotTurnBoundary},
		{"at a user message", b[1].ID, true, "", false, ErrNotTurnBoundary},
		{"at a model change", b[4].ID, true, "", false, ErrNotTurnBoundary},
		{"unknown", "nope", false, "", false, ErrUnknownEntry},
	} {
		turn, none, err := s.Transcript().ForkPoint(c.entry, c.at)
		if turn != c.turn || none != c.none || !errors.Is(err, c.err) {
			t.Errorf("%s: ForkPoint = %q, %v, %v; want %q, %v, %v", c.name, turn, none, err, c.turn, c.none, c.err)
		}
	}
}
