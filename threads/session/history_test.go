package session

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func turnIDs(p Page) []string {
	var out []string
	for _, t := range p.Turns {
		out = append(out, t.ID)
	}
	return out
}

func turnRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("t%03d", i))
	}
	return out
}

func TestHistoryPages(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	var leafBefore50 string
	for i := range 120 {
		if i == 50 {
			leafBefore50 = s.Leaf()
		}
		appendTurn(t, s, fmt.Sprintf("t%03d", i), int64(1000*i))
	}
	tr, err := Read(s.File())
	if err != nil {
		t.Fatal(err)
	}

	p1, err := tr.History("", HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := tr.History(p1.NextCursor, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p3, err := tr.History(p2.NextCursor, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		page       Page
		want       []string
		wantCursor bool
	}{
		{"newest", p1, turnRange(70, 120), true},
		{"second", p2, turnRange(20, 70), true},
		{"oldest", p3, turnRange(0, 20), false},
	} {
		if diff := cmp.Diff(turnIDs(tc.page), tc.want); diff != "" {
			t.Errorf("%s page (-got +want):\n%s", tc.name, diff)
		}
		if (tc.page.NextCursor != "") != tc.wantCursor {
			t.Errorf("%s page cursor = %q, want present=%v", tc.name, tc.page.NextCursor, tc.wantCursor)
		}
	}
	// Item ordinals are positions on the whole branch, not in the page.
	if got, want := p2.Turns[0].Items[0].ID, "item-40"; got != want {
		t.Errorf("first item of turn 20 = %s, want %s", got, want)
	}

	// Appending turns shifts the newest page but not a cursor's page.
	for i := 120; i < 125; i++ {
		appendTurn(t, s, fmt.Sprintf("t%03d", i), int64(1000*i))
	}
	tr2 := mustRead(t, s.File())
	again, err := tr2.History(p1.NextCursor, HistoryOptions{})
	if err != nil {
		t.Fatalf("cursor after appends: %v", err)
	}
	if diff := cmp.Diff(again, p2); diff != "" {
		t.Errorf("page from the same cursor after appends (-got +want):\n%s", diff)
	}
	newest, _ := tr2.History("", HistoryOptions{})
	if diff := cmp.Diff(turnIDs(newest), turnRange(75, 125)); diff != "" {
		t.Errorf("newest page after appends (-got +want):\n%s", diff)
	}

	// The loaded session's own snapshot pages the same way.
	fromSession, err := s.Transcript().History(p1.NextCursor, HistoryOptions{})
	if err != nil || !cmp.Equal(fromSession, p2) {
		t.Errorf("History on Session.Transcript() differs: %v", err)
	}

	// Invalid cursors.
	other := newSaved(t, t.TempDir())
	for i := range 60 {
		appendTurn(t, other, fmt.Sprintf("t%03d", i), int64(i))
	}
	foreign, _ := other.Transcript().History("", HistoryOptions{})
	good, _ := json.Marshal(cursor{V: 1, Thread: tr.Header.ID, Anchor: "zzzzzzzz", Prefix: "00"})
	for name, cur := range map[string]string{
		"garbage":        "!!not a cursor!!",
		"base64 garbage": base64.RawURLEncoding.EncodeToString([]byte("hello")),
		"no anchor":      base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"t":"` + tr.Header.ID + `"}`)),
		"unknown anchor": base64.RawURLEncoding.EncodeToString(good),
		"foreign":        foreign.NextCursor,
	} {
		if _, err := tr2.History(cur, HistoryOptions{}); err == nil {
			t.Errorf("%s cursor accepted", name)
		} else {
			wantErr(t, err, ErrInvalidCursor)
		}
	}

	// Diverged: the branch now forks off before the cursor's anchor (t070).
	if err := s.SetLeaf(leafBefore50); err != nil {
		t.Fatal(err)
	}
	appendTurn(t, s, "fork", 999999)
	diverged := mustRead(t, s.File())
	if _, err := diverged.History(p1.NextCursor, HistoryOptions{}); err == nil {
		t.Errorf("diverged cursor accepted")
	} else {
		wantErr(t, err, ErrInvalidCursor)
	}
	// A cursor whose anchor is still on the new branch keeps working.
	forkPage, err := diverged.History(p2.NextCursor, HistoryOptions{})
	if err != nil {
		t.Fatalf("cursor anchored before the fork point: %v", err)
	}
	if diff := cmp.Diff(forkPage, p3); diff != "" {
		t.Errorf("page before the fork point (-got +want):\n%s", diff)
	}
}

// TestHistoryPagesIgnoreSize checks that a page's turns, and so its
// cursor, depend on the turn count only: a turn far over 1 MiB stays whole
// in its page (the thread manager sends it as a payload reference).
func TestHistoryPagesIgnoreSize(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	appendTurn(t, s, "small", 1)
	huge := strings.Repeat("x", 2<<20)
	mustAppend(t, s,
		NewTurnStart("huge", 100),
		userMsg(t, huge, 101),
		NewTurnEnd(TurnEnd{TurnID: "huge", Status: protocol.TurnCompleted, CompletedAt: 200}),
	)
	appendTurn(t, s, "after", 300)

	p, err := s.Transcript().History("", HistoryOptions{MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(turnIDs(p), []string{"huge", "after"}); diff != "" {
		t.Fatalf("page (-got +want):\n%s", diff)
	}
	if got := p.Turns[0].Items[0].Text; got != huge {
		t.Errorf("the huge turn's user text has %d bytes, want %d", len(got), len(huge))
	}
	older, err := s.Transcript().History(p.NextCursor, HistoryOptions{MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(turnIDs(older), []string{"small"}); diff != "" || older.NextCursor != "" {
		t.Errorf("older page (-got +want):\n%s (cursor %q)", diff, older.NextCursor)
	}
}
