package session

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// Page limits (spec: "History pages contain at most 50 turns" and "1 MiB per
// history/list response, including envelope reserve").
const (
	// MaxPageTurns is the most turns one history page holds.
	MaxPageTurns = 50
	// DefaultPageBytes is the default budget for a page's turns as JSON:
	// 1 MiB less a 64 KiB reserve for the response envelope (the thread
	// object, ids, cursor).
	DefaultPageBytes = 1<<20 - 64<<10
	// MaxSummaryErrorChars bounds error.message in a turn summary (a turn
	// whose items were omitted), in characters.
	MaxSummaryErrorChars = 2000
)

// HistoryOptions tunes [Transcript.History]. Zero values take the defaults.
type HistoryOptions struct {
	// MaxTurns caps the turns per page (default and maximum MaxPageTurns).
	MaxTurns int
	// MaxBytes caps the JSON size of a page's turns (default
	// DefaultPageBytes).
	MaxBytes int
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

// History returns one page of the current branch's turns. With cursor ""
// it is the newest page; otherwise cursor is a NextCursor from an earlier
// page of this session and the page holds the turns before that page.
//
// A page holds at most MaxTurns turns and at most MaxBytes of turn JSON:
// it takes turns newest first while they fit, so a page can hold fewer than
// MaxTurns. A turn that alone exceeds MaxBytes keeps its summary (status,
// times, error bounded to MaxSummaryErrorChars, usage, files) with no items
// and ItemsOmitted set (payload references for such turns belong to the
// thread manager). Errors: ErrInvalidCursor (wrapped) for a malformed cursor,
// one of another session (foreign), or one whose anchor entry is no longer
// on the current branch or whose branch prefix changed (diverged).
func (t *Transcript) History(cur string, opts HistoryOptions) (Page, error) {
	maxTurns := opts.MaxTurns
	if maxTurns <= 0 || maxTurns > MaxPageTurns {
		maxTurns = MaxPageTurns
	}
	maxBytes := opts.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultPageBytes
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

	// Take turns newest first while they fit, then restore chronological
	// order.
	used := 2 // the array brackets
	first := end
	page := []protocol.Turn{} // "turns": [] rather than null when empty
	for i := end - 1; i >= 0 && len(page) < maxTurns; i-- {
		turn := turns[i].turn
		size := jsonSize(turn)
		if size > maxBytes {
			turn = summarize(turn)
			size = jsonSize(turn)
		}
		if len(page) > 0 && used+size+1 > maxBytes {
			break
		}
		used += size + 1
		page = append(page, turn)
		first = i
	}
	for i, j := 0, len(page)-1; i < j; i, j = i+1, j-1 {
		page[i], page[j] = page[j], page[i]
	}
	p := Page{Turns: page}
	if first > 0 {
		anchor := turns[first].start
		p.NextCursor = encodeCursor(cursor{V: 1, Thread: t.Header.ID, Anchor: branch[anchor].ID, Prefix: prefixHash(branch[:anchor])})
	}
	return p, nil
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// summarize drops a turn's items and bounds its error message.
func summarize(t protocol.Turn) protocol.Turn {
	t.Items = nil
	t.ItemsOmitted = true
	if t.Error != nil && utf8.RuneCountInString(t.Error.Message) > MaxSummaryErrorChars {
		e := *t.Error
		e.Message = truncateRunes(e.Message, MaxSummaryErrorChars)
		t.Error = &e
	}
	return t
}

// truncateRunes cuts s to at most n code points.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
