package session

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// MaxPageTurns is the most turns one history page holds (spec: "History
// pages contain at most 50 turns"). The 1 MiB response limit is the thread
// manager's: it sends a page's largest turns as payload references until
// the page fits, so the page's turns, and its cursor, never depend on their
// size.
const MaxPageTurns = 50

// MaxSummaryErrorChars bounds error.message in a turn summary
// (turn/completed, and a turn a history page sends as a reference), in
// characters; full payloads retain it (spec: "Threads and turns").
const MaxSummaryErrorChars = 2000

// HistoryOptions tunes [Transcript.History]. Zero values take the defaults.
type HistoryOptions struct {
	// MaxTurns caps the turns per page (default and maximum MaxPageTurns).
	MaxTurns int
	// RunningTurnID names a loaded thread's running turn, read as
	// inProgress instead of interrupted (see [Transcript.Turns]).
	RunningTurnID string
}

// Page is one page of history: Turns in chronological order, and
// NextCursor, the opaque cursor of the page of older turns ("" when there
// are none).
type Page struct {
	Turns      []protocol.Turn
	NextCursor string
}

// cursor is what NextCursor encodes: the session's header id, the entry id
// that starts the oldest turn already returned, and a hash of the branch
// prefix before that entry. The next page holds the turns before the anchor,
// so turns appended since cannot shift it.
type cursor struct {
	V      int    `json:"v"`
	Thread string `json:"t"`
	Anchor string `json:"a"`
	Prefix string `json:"h"`
}

func prefixHash(branch []Entry) string {
	h := sha256.New()
	for _, e := range branch {
		h.Write([]byte(e.ID))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, fmt.Errorf("%w: not base64", ErrInvalidCursor)
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.V != 1 || c.Anchor == "" {
		return cursor{}, fmt.Errorf("%w: malformed", ErrInvalidCursor)
	}
	return c, nil
}

// History returns one page of the current branch's turns, whole (every
// item with every value). With cursor "" it is the newest page; otherwise
// cursor is a NextCursor from an earlier page of this session and the page
// holds the turns before that page. A page holds MaxTurns turns (fewer
// only at the start of the history). Errors: ErrInvalidCursor (wrapped) for
// a malformed cursor, one of another session (foreign), or one whose anchor
// entry is no longer on the current branch or whose branch prefix changed
// (diverged).
func (t *Transcript) History(cur string, opts HistoryOptions) (Page, error) {
	maxTurns := opts.MaxTurns
	if maxTurns <= 0 || maxTurns > MaxPageTurns {
		maxTurns = MaxPageTurns
	}
	branch := t.Branch()
	turns := buildTurns(branch, opts.RunningTurnID)

	end := len(turns)
	if cur != "" {
		c, err := decodeCursor(cur)
		if err != nil {
			return Page{}, err
		}
		if c.Thread != t.Header.ID {
			return Page{}, fmt.Errorf("%w: cursor belongs to another thread", ErrInvalidCursor)
		}
		pos := -1
		for i, e := range branch {
			if e.ID == c.Anchor {
				pos = i
				break
			}
		}
		if pos < 0 || prefixHash(branch[:pos]) != c.Prefix {
			return Page{}, fmt.Errorf("%w: the branch diverged from the cursor", ErrInvalidCursor)
		}
		end = -1
		for i, bt := range turns {
			if bt.start == pos {
				end = i
				break
			}
		}
		if end < 0 {
			return Page{}, fmt.Errorf("%w: cursor anchor starts no turn", ErrInvalidCursor)
		}
	}

	first := max(end-maxTurns, 0)
	page := make([]protocol.Turn, 0, end-first) // "turns": [] rather than null when empty
	for _, bt := range turns[first:end] {
		page = append(page, bt.turn)
	}
	p := Page{Turns: page}
	if first > 0 {
		anchor := turns[first].start
		p.NextCursor = encodeCursor(cursor{V: 1, Thread: t.Header.ID, Anchor: branch[anchor].ID, Prefix: prefixHash(branch[:anchor])})
	}
	return p, nil
}

// TruncateRunes cuts s to at most n code points: the unit of the
// character bounds of session summaries and titles (MaxTitleChars,
// MaxSummaryErrorChars) and of the wire's (protocol's Max*Chars).
func TruncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
