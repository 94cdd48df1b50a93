package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrUnknownTurn: a fork named a turn that is not on the current branch.
var ErrUnknownTurn = errors.New("unknown turn")

// ForkPrefix returns the entries of the current branch a fork through turn
// turnID copies: from the branch's root up to and including the turn's end
// (its turn_end entry; for a turn without one, its last message), in
// branch order. With turnID "" it is the whole branch, except that a
// running turn (runningTurnID, a loaded thread's; "" for none) and what
// follows it are left out: a fork copies finished turns only. Errors:
// ErrUnknownTurn (wrapped) when no turn of the branch has id turnID.
func (t *Transcript) ForkPrefix(turnID, runningTurnID string) ([]Entry, error) {
	branch := t.Branch()
	spans := groupTurns(branch)
	if turnID == "" {
		end := len(branch)
		for _, sp := range spans {
			if sp.marked && sp.id == runningTurnID && sp.end == nil {
				end = sp.start
				break
			}
		}
		return branch[:end], nil
	}
	for _, sp := range spans {
		if sp.id != turnID {
			continue
		}
		last := sp.start
		for i := sp.start; i < len(branch); i++ {
			e := branch[i]
			if sp.end != nil && e.Type == TypeTurnEnd && e.TurnID == sp.id {
				last = i
				break
			}
			if len(sp.msgs) > 0 && e.ID == sp.msgs[len(sp.msgs)-1].ID {
				last = i
				if sp.end == nil {
					break
				}
			}
		}
		return branch[:last+1], nil
	}
	return nil, fmt.Errorf("%w: no turn %q on the thread's branch", ErrUnknownTurn, turnID)
}

// ErrNotTurnBoundary: a fork at an entry named one a thread cannot be
// forked at: it forks at turn boundaries only.
var ErrNotTurnBoundary = errors.New("not a turn boundary")

// ForkPoint maps pi's ctx.fork(entryId, {position}) of a command context
// onto a fork through a turn ([Transcript.ForkPrefix]). With at false
// (pi's position "before", its default) entryID must be the user message
// opening a turn of the branch: the fork keeps the turns before it, so
// turnID is the previous turn's, and none is true when it opens the first
// turn (the fork is empty). With at true entryID must end a turn (its
// turn_end entry, or its last message): turnID is that turn's. Errors:
// ErrUnknownEntry (wrapped) when no entry of the branch has id entryID;
// ErrNotTurnBoundary (wrapped) for another entry.
func (t *Transcript) ForkPoint(entryID string, at bool) (turnID string, none bool, err error) {
	branch := t.Branch()
	if !slices.ContainsFunc(branch, func(e Entry) bool { return e.ID == entryID }) {
		return "", false, fmt.Errorf("%w: no entry %q on the thread's branch", ErrUnknownEntry, entryID)
	}
	spans := groupTurns(branch)
	for k, sp := range spans {
		if len(sp.msgs) == 0 {
			continue
		}
		if !at && sp.msgs[0].ID == entryID && sp.msgs[0].Type == TypeMessage && sp.msgs[0].Role() == RoleUser {
			if k == 0 {
				return "", true, nil
			}
			return spans[k-1].id, false, nil
		}
		if at && (sp.end != nil && sp.end.ID == entryID || sp.msgs[len(sp.msgs)-1].ID == entryID) {
			return sp.id, false, nil
		}
	}
	if at {
		return "", false, fmt.Errorf("%w: entry %q does not end a turn; fork at a turn's last entry", ErrNotTurnBoundary, entryID)
	}
	return "", false, fmt.Errorf("%w: entry %q is not the user message opening a turn; fork before one of those", ErrNotTurnBoundary, entryID)
}

// Fork creates and saves a new session in dir holding entries (a
// ForkPrefix of another session: ids, parents and timestamps kept, so
// turn and item ids read back the same) followed by a session_info entry
// naming it name, written with the header in one write and fsynced; the
// file is owned (locked) as Open's are. opts.ParentSession should name the
// source's session file (pi's fork header). Errors: as Create and Append.
func Fork(dir string, opts CreateOptions, entries []Entry, name string) (*Session, error) {
	s, err := Create(dir, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	for _, e := range entries {
		if _, dup := s.index[e.ID]; dup || e.ID == "" {
			return nil, fmt.Errorf("session: fork: entry id %q is empty or repeated", e.ID)
		}
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("session: fork: encode %s entry: %w", e.Type, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
		s.index[e.ID] = len(s.entries)
		s.entries = append(s.entries, e)
		s.leaf = e.ID
	}
	info := NewSessionInfo(name)
	info.ID, info.ParentID, info.Timestamp = s.newID(), s.leaf, isoTime(time.Now())
	line, err := json.Marshal(info)
	if err != nil {
		return nil, err
	}
	buf.Write(line)
	if err := s.materialize(buf.Bytes()); err != nil {
		return nil, err
	}
	s.index[info.ID] = len(s.entries)
	s.entries = append(s.entries, info)
	s.leaf = info.ID
	return s, nil
}

// ListTitle is the title thread/list shows for the transcript: the latest
// session_info name, else the first user message's text with white space
// collapsed, cut to MaxTitleChars code points.
func (t *Transcript) ListTitle() string {
	title := strings.TrimSpace(t.Title())
	if title == "" {
		for _, e := range t.Entries {
			if e.Type != TypeMessage || e.Role() != RoleUser {
				continue
			}
			var m llmMessage
			if json.Unmarshal(e.Message, &m) == nil {
				if s := strings.Join(strings.Fields(textOf(m.blocks())), " "); s != "" {
					title = s
					break
				}
			}
		}
	}
	return TruncateRunes(title, MaxTitleChars)
}
