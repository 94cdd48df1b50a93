package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Transcript is a parsed session file: its header and its entries in file
// order. It is an immutable snapshot; reading one takes no lock and never
// writes the file (spec: thread/read "reads saved history without loading or
// locking the thread and never writes the source").
type Transcript struct {
	// Path is the file the transcript was read from ("" for a session not
	// yet saved).
	Path   string
	Header Header
	// Entries are the entries in file order. Lines that are not JSON
	// objects are skipped and counted in Skipped.
	Entries []Entry
	// Skipped counts malformed lines other than a torn last line.
	Skipped int
	// TornTail is true when the last line was cut short (a crash while it
	// was written) and was ignored.
	TornTail bool
	// Migrated is true when the file had an older format version and was
	// migrated in memory to CurrentVersion.
	Migrated bool

	leaf    string         // a loaded Session's leaf, when leafSet
	leafSet bool           // false: the leaf is the last entry in the file
	index   map[string]int // entry id -> position in Entries (last occurrence)

	// Only used while opening: whether the file ends with "\n", and the
	// migrated lines to write back when Migrated.
	endsWithNewline bool
	migratedLines   [][]byte
}

// Read parses the session file at path without locking or writing it.
// Files of an older version are migrated in memory (pi's v1 -> v2 ids and
// parentIds, derived deterministically so cursors stay valid, and v2 -> v3
// role renames). Errors: a missing file wraps fs.ErrNotExist; a file without
// a valid header line wraps ErrNotSession.
func Read(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := parse(f, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	t.Path = path
	return t, nil
}

// eachLine calls fn for every line of r (without its "\n"); terminated is
// false only for a last line that does not end with "\n". It returns the
// number of bytes read.
func eachLine(r io.Reader, fn func(line []byte, terminated bool) error) (int64, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var n int64
	for {
		line, err := br.ReadBytes('\n')
		n += int64(len(line))
		if len(line) > 0 {
			terminated := line[len(line)-1] == '\n'
			if terminated {
				line = line[:len(line)-1]
			}
			if ferr := fn(line, terminated); ferr != nil {
				return n, ferr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// ReadHeader reads only the header of the session file at path, its first
// non-blank line, without locking or migrating the file (Version is as
// stored). Errors: os.Open's and read errors; ErrNotSession (wrapped with
// path) when that line is not a session header (type "session" with a
// non-empty id, as Open requires) or the file has none.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	return readHeader(f, path)
}

// readHeader is ReadHeader of an open file; path names it in errors.
func readHeader(r io.Reader, path string) (Header, error) {
	var (
		h     Header
		found bool
	)
	_, err := eachLine(r, func(line []byte, _ bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		h, found = parseHeader(line)
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	if !found {
		return Header{}, fmt.Errorf("%s: %w", path, ErrNotSession)
	}
	return h, nil
}

// parseHeader reads a header line; ok is false when it is not one.
func parseHeader(line []byte) (Header, bool) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil || h.Type != "session" || h.ID == "" {
		return Header{}, false
	}
	return h, true
}

// parse reads a whole session file. keepMigrated asks for the migrated lines
// (header first) when the file had an older version.
func parse(r io.Reader, keepMigrated bool) (*Transcript, error) {
	t := &Transcript{index: map[string]int{}}
	haveHeader := false
	var (
		fileVersion int
		lastTerm    = true
		prevID      string // v1 migration: id of the previous entry
	)
	_, err := eachLine(r, func(line []byte, terminated bool) error {
		lastTerm = terminated
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if !haveHeader {
			h, ok := parseHeader(line)
			if !ok {
				return ErrNotSession
			}
			haveHeader = true
			fileVersion = h.Version
			if fileVersion < CurrentVersion {
				t.Migrated = true
				h.Version = CurrentVersion
				if keepMigrated {
					b, err := json.Marshal(h)
					if err != nil {
						return err
					}
					t.migratedLines = append(t.migratedLines, b)
				}
			}
			t.Header = h
			return nil
		}
		if fileVersion < CurrentVersion {
			m, err := migrateLine(line, fileVersion, len(t.Entries)+1, &prevID)
			if err != nil {
				if !terminated {
					t.TornTail = true
				} else {
					t.Skipped++
				}
				return nil
			}
			line = m
			if keepMigrated {
				t.migratedLines = append(t.migratedLines, line)
			}
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
			if !terminated {
				t.TornTail = true
			} else {
				t.Skipped++
			}
			return nil
		}
		t.index[e.ID] = len(t.Entries)
		t.Entries = append(t.Entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !haveHeader {
		return nil, ErrNotSession
	}
	t.endsWithNewline = lastTerm
	return t, nil
}

// legacyID is the id a migrated v1 entry gets: its 1-based position among
// the file's entries as 8 hex digits, so repeated reads agree.
func legacyID(n int) string { return fmt.Sprintf("%08x", n) }

// migrateLine brings one entry line of a version < 3 file to version 3 (pi's
// migrateV1ToV2 and migrateV2ToV3): v1 entries get id and parentId (the
// previous entry) and compaction's firstKeptEntryIndex becomes
// firstKeptEntryId; v2 message entries with role hookMessage become custom.
func migrateLine(line []byte, version, n int, prevID *string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("entry is not an object")
	}
	changed := false
	if version < 2 {
		id := legacyID(n)
		m["id"], _ = json.Marshal(id)
		if *prevID == "" {
			m["parentId"] = json.RawMessage("null")
		} else {
			m["parentId"], _ = json.Marshal(*prevID)
		}
		*prevID = id
		var typ string
		_ = json.Unmarshal(m["type"], &typ)
		if typ == "compaction" {
			var idx *int
			if raw, ok := m["firstKeptEntryIndex"]; ok && json.Unmarshal(raw, &idx) == nil && idx != nil {
				if *idx >= 1 {
					m["firstKeptEntryId"], _ = json.Marshal(legacyID(*idx))
				}
				delete(m, "firstKeptEntryIndex")
			}
		}
		changed = true
	}
	var typ string
	_ = json.Unmarshal(m["type"], &typ)
	if typ == TypeMessage {
		var msg map[string]json.RawMessage
		if json.Unmarshal(m["message"], &msg) == nil && msg != nil {
			var role string
			_ = json.Unmarshal(msg["role"], &role)
			if role == "hookMessage" {
				msg["role"] = json.RawMessage(`"custom"`)
				b, err := json.Marshal(msg)
				if err != nil {
					return nil, err
				}
				m["message"] = b
				changed = true
			}
		}
	}
	if !changed {
		return line, nil
	}
	return json.Marshal(m)
}

// Branch returns the current branch, root first: the chain of parentIds from
// the leaf (the last entry in the file, or a loaded session's leaf) back to
// the root. With two children of one entry, the leaf decides which is on
// the branch.
func (t *Transcript) Branch() []Entry {
	if len(t.Entries) == 0 {
		return nil
	}
	pos := len(t.Entries) - 1
	if t.leafSet {
		if t.leaf == "" {
			return nil
		}
		p, ok := t.index[t.leaf]
		if !ok {
			return nil
		}
		pos = p
	}
	var rev []Entry
	for steps := 0; steps <= len(t.Entries); steps++ {
		e := t.Entries[pos]
		rev = append(rev, e)
		if e.ParentID == "" {
			break
		}
		p, ok := t.index[e.ParentID]
		if !ok {
			break
		}
		pos = p
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// Entry returns the entry with the given id (the last one in the file with
// that id) and whether it exists.
func (t *Transcript) Entry(id string) (Entry, bool) {
	p, ok := t.index[id]
	if !ok {
		return Entry{}, false
	}
	return t.Entries[p], true
}

// Title is the latest session_info name in the file (pi's getSessionName),
// or "" when none is set.
func (t *Transcript) Title() string {
	for i := len(t.Entries) - 1; i >= 0; i-- {
		if e := t.Entries[i]; e.Type == TypeSessionInfo && e.Name != "" {
			return e.Name
		}
	}
	return ""
}

// UpdatedAt is the latest entry time as an ISO-8601 string, falling back to
// the header's timestamp (spec: loaded threads "use the latest entry time,
// falling back to the header").
func (t *Transcript) UpdatedAt() string {
	var latest time.Time
	for _, e := range t.Entries {
		if et := e.Time(); et.After(latest) {
			latest = et
		}
	}
	if latest.IsZero() {
		return t.Header.Timestamp
	}
	return isoTime(latest)
}
