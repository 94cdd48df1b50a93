package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/knightcode/knightcode/internal/safefile"
	"github.com/knightcode/knightcode/rpc/protocol"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

// Listing limits (spec: "History, listings, and large values").
const (
	// IndexFileName is the per-directory listing cache.
	IndexFileName = ".thread-index.json"
	// MaxIndexBytes: a larger index is ignored and rebuilt.
	MaxIndexBytes = 16 << 20
	// MaxTitleChars bounds a listed title, in code points.
	MaxTitleChars = 100
	// indexVersion is the version of the index format below (2 added
	// workspaceMode, 3 projectCwd; older indexes are rebuilt).
	indexVersion = 4
)

// Lister lists session directories, keeping a .thread-index.json metadata
// cache in each and counting the transcript work done (for
// server/diagnostics). The zero value is ready; one Lister serves the whole
// server and is safe for concurrent use.
type Lister struct {
	filesOpened  atomic.Int64
	bytesScanned atomic.Int64
}

// ListCounters are a Lister's cumulative work counters (spec:
// server/diagnostics listingFilesOpened and listingBytesScanned):
// FilesOpened counts transcripts scanned and parent headers read;
// BytesScanned adds the bytes of the scanned transcripts (parent header
// lookups add none). Index reads and stat calls are not counted.
type ListCounters struct {
	FilesOpened  int64
	BytesScanned int64
}

// Counters returns the cumulative counters.
func (l *Lister) Counters() ListCounters {
	return ListCounters{FilesOpened: l.filesOpened.Load(), BytesScanned: l.bytesScanned.Load()}
}

// indexFile is the JSON shape of .thread-index.json.
type indexFile struct {
	Version int                   `json:"version"`
	Files   map[string]indexEntry `json:"files"`
}

// indexEntry caches one transcript's summary, valid while the file's size
// and modification time (Unix ns) are unchanged. Invalid marks a file that
// is not a session, so warm listings do not open it again.
type indexEntry struct {
	Size          int64  `json:"size"`
	MtimeNs       int64  `json:"mtimeNs"`
	Invalid       bool   `json:"invalid,omitempty"`
	ID            string `json:"id,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	Title         string `json:"title,omitempty"`
	ParentSession string `json:"parentSession,omitempty"`
	ForkedFromID  string `json:"forkedFromId,omitempty"`
	WorkspaceMode string `json:"workspaceMode,omitempty"`
	ProjectCwd    string `json:"projectCwd,omitempty"`
}

// List summarizes the session files (*.jsonl) of dirs, newest first by file
// modification time (ties by path). Each summary has id, cwd, createdAt (the
// header's timestamp; cwd and workspaceMode from the latest workspace entry a
// handoff appended, when there is one), updatedAt (the file's mtime, ISO-8601), title (the
// latest session_info name, else the first user message's text with runs of
// white space collapsed; either cut to MaxTitleChars), sessionFile and
// forkedFromId (the parent session's header id, read from the file the
// header's parentSession names) and workspaceMode (the header workspace's
// mode, "worktree" for a thread in a managed worktree, else empty). Files
// that are not sessions are skipped.
//
// Each directory's .thread-index.json caches these per file name with the
// file's size and mtime: unchanged files and their parents are not opened
// again; new or changed files are rescanned in full. A missing, corrupt,
// invalid or oversized (over MaxIndexBytes) index is rebuilt; writing it is
// best effort (temp file and rename). Directories are scanned one after
// another and transcripts one at a time, so at most two files (a transcript
// and its parent's header) are open at once, within the spec's 64. A
// missing directory lists nothing; other directory read errors are
// returned.
func (l *Lister) List(dirs ...string) ([]protocol.ThreadSummary, error) {
	return l.list(true, dirs)
}

// ListReadOnly is [Lister.List] that never writes an index: for a caller
// that must write nothing (a handoff's dry run). Unchanged files are
// still read from an index that is there.
func (l *Lister) ListReadOnly(dirs ...string) ([]protocol.ThreadSummary, error) {
	return l.list(false, dirs)
}

func (l *Lister) list(writeIdx bool, dirs []string) ([]protocol.ThreadSummary, error) {
	type row struct {
		s     protocol.ThreadSummary
		mtime time.Time
	}
	var rows []row
	parents := map[string]string{} // parent path -> header id ("" unresolved)
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real // session files are named by their resolved paths
		}
		des, err := os.ReadDir(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		old := readIndex(filepath.Join(abs, IndexFileName))
		idx := indexFile{Version: indexVersion, Files: map[string]indexEntry{}}
		changed := false
		for _, de := range des {
			name := de.Name()
			if !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(abs, name)
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			ie, ok := old.Files[name]
			if !ok || ie.Size != fi.Size() || ie.MtimeNs != fi.ModTime().UnixNano() {
				ie = l.scan(path, fi, parents)
				changed = true
			}
			idx.Files[name] = ie
			if ie.Invalid {
				continue
			}
			rows = append(rows, row{mtime: fi.ModTime(), s: protocol.ThreadSummary{
				ID: ie.ID, Cwd: ie.Cwd, CreatedAt: ie.CreatedAt, UpdatedAt: isoTime(fi.ModTime()),
				Title: ie.Title, SessionFile: path, ForkedFromID: ie.ForkedFromID,
				WorkspaceMode: ie.WorkspaceMode, ProjectCwd: ie.ProjectCwd,
			}})
		}
		if writeIdx && (changed || len(idx.Files) != len(old.Files)) {
			writeIndex(filepath.Join(abs, IndexFileName), idx)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].mtime.Equal(rows[j].mtime) {
			return rows[i].mtime.After(rows[j].mtime)
		}
		return rows[i].s.SessionFile < rows[j].s.SessionFile
	})
	out := make([]protocol.ThreadSummary, len(rows))
	for i, r := range rows {
		out[i] = r.s
	}
	return out, nil
}

// readIndex loads an index, or an empty one when it is missing, unreadable,
// oversized, corrupt or of another version. Entries that are neither
// invalid markers nor carry an id are dropped (rescanned).
func readIndex(path string) indexFile {
	empty := indexFile{Files: map[string]indexEntry{}}
	// safefile.ReadFile: only a regular file, at most MaxIndexBytes.
	b, err := safefile.ReadFile(path, MaxIndexBytes)
	if err != nil {
		return empty
	}
	var idx indexFile
	if json.Unmarshal(b, &idx) != nil || idx.Version != indexVersion || idx.Files == nil {
		return empty
	}
	for name, e := range idx.Files {
		if !e.Invalid && e.ID == "" {
			delete(idx.Files, name)
		}
	}
	return idx
}

// writeIndex replaces the index atomically; failures are ignored (the cache
// is best effort).
func writeIndex(path string, idx indexFile) {
	b, err := json.Marshal(idx)
	if err != nil || len(b) > MaxIndexBytes {
		return
	}
	_ = atomicfile.WriteFile(path, b, 0o644)
}

// listLine is the part of an entry line a listing reads.
type listLine struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Message   json.RawMessage `json:"message"`
	Cwd       string          `json:"cwd"`
	Workspace *Workspace      `json:"workspace"`
}

// scan reads one transcript in full for its summary.
func (l *Lister) scan(path string, fi fs.FileInfo, parents map[string]string) indexEntry {
	ie := indexEntry{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano(), Invalid: true}
	f, err := os.Open(path)
	if err != nil {
		return ie
	}
	l.filesOpened.Add(1)
	var (
		header    Header
		haveHead  bool
		name      string
		firstUser string
		haveUser  bool
		placed    *listLine // the latest workspace entry (a handoff)
	)
	n, err := eachLine(f, func(line []byte, _ bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if !haveHead {
			h, ok := parseHeader(line)
			if !ok {
				return ErrNotSession
			}
			header, haveHead = h, true
			return nil
		}
		var ll listLine
		if json.Unmarshal(line, &ll) != nil {
			return nil
		}
		switch {
		case ll.Type == TypeWorkspace && ll.Cwd != "":
			placed = &ll
		case ll.Type == TypeSessionInfo && strings.TrimSpace(ll.Name) != "":
			name = ll.Name
		case ll.Type == TypeMessage && !haveUser:
			var m llmMessage
			if json.Unmarshal(ll.Message, &m) == nil && m.Role == RoleUser {
				if t := strings.Join(strings.Fields(m.userText(m.blocks())), " "); t != "" {
					firstUser, haveUser = t, true
				}
			}
		}
		return nil
	})
	f.Close()
	l.bytesScanned.Add(n)
	if err != nil || !haveHead {
		return ie
	}
	title := strings.TrimSpace(name)
	if title == "" {
		title = firstUser
	}
	ie.Invalid = false
	ie.ID, ie.Cwd, ie.CreatedAt, ie.ParentSession = header.ID, header.Cwd, header.Timestamp, header.ParentSession
	ie.Title = TruncateRunes(title, MaxTitleChars)
	ws := header.Workspace
	if placed != nil {
		// Where the last handoff moved the thread wins over the header, as
		// Transcript.Placement says for a loaded thread.
		ie.Cwd, ws = placed.Cwd, placed.Workspace
	}
	if ws != nil {
		ie.WorkspaceMode = ws.Mode
		ie.ProjectCwd = ws.ProjectCwd
	}
	if header.ParentSession != "" {
		ie.ForkedFromID = l.parentID(filepath.Dir(path), header.ParentSession, parents)
	}
	return ie
}

// parentID reads the header id of the parent session file (a path relative
// to dir when not absolute); "" when it cannot be read.
func (l *Lister) parentID(dir, parent string, cache map[string]string) string {
	if !filepath.IsAbs(parent) {
		parent = filepath.Join(dir, parent)
	}
	if id, ok := cache[parent]; ok {
		return id
	}
	id := ""
	if f, err := os.Open(parent); err == nil {
		l.filesOpened.Add(1)
		if h, err := readHeader(f, parent); err == nil {
			id = h.ID
		}
		f.Close()
	}
	cache[parent] = id
	return id
}

// errStop ends a line scan early.
var errStop = errors.New("stop")
