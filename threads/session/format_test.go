package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func TestCreateIsLazyAndRoundTrips(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions", "p")
	s, err := Create(dir, CreateOptions{Cwd: "/work/project", ParentSession: "/x/parent.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.File(); got != "" {
		t.Fatalf("File() before the first append = %q, want empty", got)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory exists before the first append: %v", err)
	}

	in := []Entry{
		userMsg(t, "hello", 1000),
		NewModelChange("scripted", "demo"),
		NewThinkingLevelChange("high"),
		NewApprovalMode(ApprovalFullAccess),
		NewSessionInfo("My thread"),
		NewTurnStart("turn-1", 5000),
		assistantMsg(t, "hi", 5001),
		NewTurnEnd(TurnEnd{
			TurnID: "turn-1", Status: protocol.TurnFailed,
			Error:      &protocol.TurnError{Message: "boom", Kind: protocol.ErrorKindProvider},
			Usage:      &protocol.TurnUsage{Input: 10, Output: 5, CacheRead: 1, CacheWrite: 2, Cost: 0.25},
			BeforeTree: "4b825dc642cb6eb9a060e54bf8d69288fbad4b78", AfterTree: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			Files:       []protocol.FileTotal{{Path: "a.txt", Additions: 2, Deletions: 1}},
			CompletedAt: 6000,
		}),
	}
	stored := mustAppend(t, s, in...)

	file := s.File()
	if file == "" {
		t.Fatal("File() after the first append is empty")
	}
	name := filepath.Base(file)
	h := s.Header()
	if want := FileName(h.Timestamp, h.ID); name != want {
		t.Errorf("file name = %q, want %q", name, want)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$`).MatchString(name) {
		t.Errorf("file name %q is not <ISO with : and . as ->_<uuid>.jsonl", name)
	}

	// The header line, exactly as pi writes it.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 1+len(in) {
		t.Fatalf("file has %d lines, want %d", len(lines), 1+len(in))
	}
	var gotHeader map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &gotHeader); err != nil {
		t.Fatal(err)
	}
	wantHeader := map[string]any{"type": "session", "version": float64(3), "id": h.ID, "timestamp": h.Timestamp, "cwd": "/work/project", "parentSession": "/x/parent.jsonl"}
	if diff := cmp.Diff(gotHeader, wantHeader); diff != "" {
		t.Errorf("header (-got +want):\n%s", diff)
	}
	// Every entry line: 8-hex id, parentId chain (null first), ISO timestamp.
	prev := any(nil)
	for i, l := range lines[1:] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(m["id"].(string)) {
			t.Errorf("line %d id = %v", i+2, m["id"])
		}
		if m["parentId"] != prev {
			t.Errorf("line %d parentId = %v, want %v", i+2, m["parentId"], prev)
		}
		if _, ok := m["parentId"]; !ok {
			t.Errorf("line %d has no parentId key", i+2)
		}
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(m["timestamp"].(string)) {
			t.Errorf("line %d timestamp = %v", i+2, m["timestamp"])
		}
		prev = m["id"]
	}
	var me map[string]any
	_ = json.Unmarshal([]byte(lines[2]), &me)
	if me["provider"] != "scripted" || me["modelId"] != "demo" {
		t.Errorf("model_change line = %s", lines[2])
	}

	tr := mustRead(t, file)
	if diff := cmp.Diff(tr.Header, h); diff != "" {
		t.Errorf("read header (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(tr.Entries, stored, cmpopts.IgnoreUnexported(Transcript{})); diff != "" {
		t.Errorf("read entries (-got +want):\n%s", diff)
	}
	if tr.Skipped != 0 || tr.TornTail || tr.Migrated {
		t.Errorf("Skipped=%d TornTail=%v Migrated=%v, want 0 false false", tr.Skipped, tr.TornTail, tr.Migrated)
	}
	if got, want := tr.Title(), "My thread"; got != want {
		t.Errorf("Title() = %q, want %q", got, want)
	}
	if got := tr.Entries[0].Role(); got != RoleUser {
		t.Errorf("Role() = %q, want user", got)
	}
	if got := tr.Entries[0].MessageTimestamp(); got != 1000 {
		t.Errorf("MessageTimestamp() = %d, want 1000", got)
	}
}

func TestNewMessageRejectsNonMessages(t *testing.T) {
	t.Parallel()
	for _, js := range []string{`[]`, `{"content":[]}`, `{"role":""}`, `not json`} {
		if _, err := NewMessage(json.RawMessage(js)); err == nil {
			t.Errorf("NewMessage(%s) succeeded, want an error", js)
		}
	}
}

func TestTornLastLineIsIgnoredAndNextAppendStartsFresh(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "one", 1), assistantMsg(t, "two", 2))
	file := s.File()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, file, `{"type":"message","id":"deadbeef","parentId":null,"mess`)

	tr := mustRead(t, file)
	if !tr.TornTail || len(tr.Entries) != 2 || tr.Skipped != 0 {
		t.Fatalf("TornTail=%v entries=%d skipped=%d, want true 2 0", tr.TornTail, len(tr.Entries), tr.Skipped)
	}

	s2, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	added := mustAppend(t, s2, userMsg(t, "three", 3))[0]
	if added.ParentID != tr.Entries[1].ID {
		t.Errorf("appended parentId = %q, want the last whole entry %q", added.ParentID, tr.Entries[1].ID)
	}
	raw, _ := os.ReadFile(file)
	if !bytes.Contains(raw, []byte("\"mess\n{\"type\":\"message\"")) {
		t.Errorf("the append did not start on a fresh line:\n%s", raw)
	}
	tr = mustRead(t, file)
	if tr.TornTail || tr.Skipped != 1 || len(tr.Entries) != 3 {
		t.Errorf("after append: TornTail=%v skipped=%d entries=%d, want false 1 3", tr.TornTail, tr.Skipped, len(tr.Entries))
	}
	if got, want := ids(tr.Branch()), []string{tr.Entries[0].ID, tr.Entries[1].ID, added.ID}; !cmp.Equal(got, want) {
		t.Errorf("branch = %v, want %v", got, want)
	}
}

func TestCompleteLastLineWithoutNewlineIsKept(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "one", 1))
	file := s.File()
	leaf := s.Leaf()
	s.Close()
	appendRaw(t, file, `{"type":"session_info","id":"0000abcd","parentId":"`+leaf+`","timestamp":"2025-01-01T00:00:00.000Z","name":"kept"}`)
	tr := mustRead(t, file)
	if tr.TornTail || len(tr.Entries) != 2 || tr.Title() != "kept" {
		t.Fatalf("TornTail=%v entries=%d title=%q, want false 2 kept", tr.TornTail, len(tr.Entries), tr.Title())
	}
	s2, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	mustAppend(t, s2, userMsg(t, "two", 2))
	if tr := mustRead(t, file); len(tr.Entries) != 3 || tr.Skipped != 0 {
		t.Errorf("entries=%d skipped=%d, want 3 0", len(tr.Entries), tr.Skipped)
	}
}

// TestCustomEntryRoundTrip: a custom entry written with NewCustom reads
// back with its customType and data (pi's CustomEntry shape), belongs to no
// turn and produces no item.
func TestCustomEntryRoundTrip(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "one", 1))
	file := s.File()
	c := mustAppend(t, s, NewCustom("ext", json.RawMessage(`{"k": [1, 2]}`)), assistantMsg(t, "two", 2))[0]
	s.Close()
	raw, _ := os.ReadFile(file)
	want := `{"type":"custom","id":"` + c.ID + `","parentId":"` + c.ParentID + `","timestamp":"` + c.Timestamp + `","customType":"ext","data":{"k":[1,2]}}` + "\n"
	if !bytes.Contains(raw, []byte(want)) {
		t.Errorf("custom entry stored as\n%s\nwant the line %s", raw, want)
	}
	tr := mustRead(t, file)
	got, ok := tr.Entry(c.ID)
	if !ok || got.Type != TypeCustom || got.CustomType != "ext" || string(got.Data) != `{"k":[1,2]}` {
		t.Fatalf("Entry(%s) = %+v, %v", c.ID, got, ok)
	}
	if turns := tr.Turns(""); len(turns) != 1 || len(turns[0].Items) != 2 {
		t.Errorf("turns = %+v, want one legacy turn of 2 items (the custom entry skipped)", turns)
	}
}

func TestUnknownEntryTypesArePreserved(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "one", 1))
	file, leaf := s.File(), s.Leaf()
	s.Close()
	custom := `{"type":"custom","id":"c0ffee00","parentId":"` + leaf + `","timestamp":"2025-01-01T00:00:00.000Z","customType":"ext","data":{"k":[1,2]}}`
	appendRaw(t, file, custom+"\n")

	s2, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	added := mustAppend(t, s2, assistantMsg(t, "two", 2))[0]
	if added.ParentID != "c0ffee00" {
		t.Errorf("parentId after the unknown entry = %q, want c0ffee00", added.ParentID)
	}
	raw, _ := os.ReadFile(file)
	if !bytes.Contains(raw, []byte(custom+"\n")) {
		t.Errorf("unknown entry line was not kept byte for byte:\n%s", raw)
	}
	tr := mustRead(t, file)
	got, ok := tr.Entry("c0ffee00")
	if !ok || string(got.Raw) != custom || got.Type != "custom" {
		t.Fatalf("Entry(c0ffee00) = %+v, %v", got, ok)
	}
	b, _ := json.Marshal(got)
	if string(b) != custom {
		t.Errorf("re-marshalled unknown entry = %s, want %s", b, custom)
	}
	if turns := tr.Turns(""); len(turns) != 1 || len(turns[0].Items) != 2 {
		t.Errorf("turns = %+v, want one legacy turn of 2 items (the unknown entry skipped)", turns)
	}
}

func TestReadRejectsNonSessions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"empty":     "",
		"garbage":   "hello\n",
		"no-id":     `{"type":"session","version":3}` + "\n",
		"not-first": `{"type":"message","id":"a","parentId":null}` + "\n",
	} {
		p := filepath.Join(dir, name+".jsonl")
		os.WriteFile(p, []byte(text), 0o600)
		if _, err := Read(p); err == nil {
			t.Errorf("Read(%s) succeeded, want ErrNotSession", name)
		} else {
			wantErr(t, err, ErrNotSession)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.jsonl")); !os.IsNotExist(err) {
		t.Errorf("Read(missing) = %v, want not-exist", err)
	}
}

const v1File = `{"type":"session","id":"11111111-2222-3333-4444-555555555555","timestamp":"2024-05-01T10:00:00.000Z","cwd":"/old"}
{"type":"message","timestamp":"2024-05-01T10:00:01.000Z","message":{"role":"user","content":"old question","timestamp":1}}
{"type":"message","timestamp":"2024-05-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"old answer"}],"timestamp":2}}
{"type":"compaction","timestamp":"2024-05-01T10:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}
{"type":"message","timestamp":"2024-05-01T10:00:04.000Z","message":{"role":"hookMessage","content":"x","timestamp":3}}
{"type":"message","timestamp":"2024-05-01T10:00:05.000Z","message":{"role":"user","content":"second question","timestamp":4}}
`

func TestOlderVersionsAreMigrated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(file, []byte(v1File), 0o600); err != nil {
		t.Fatal(err)
	}

	tr := mustRead(t, file)
	if !tr.Migrated || tr.Header.Version != CurrentVersion {
		t.Fatalf("Migrated=%v version=%d", tr.Migrated, tr.Header.Version)
	}
	if got, want := ids(tr.Branch()), []string{"00000001", "00000002", "00000003", "00000004", "00000005"}; !cmp.Equal(got, want) {
		t.Errorf("migrated branch = %v, want %v", got, want)
	}
	if got := tr.Entries[3].Role(); got != "custom" {
		t.Errorf("hookMessage role migrated to %q, want custom", got)
	}
	var comp map[string]any
	_ = json.Unmarshal(tr.Entries[2].Raw, &comp)
	if comp["firstKeptEntryId"] != "00000002" || comp["firstKeptEntryIndex"] != nil {
		t.Errorf("compaction migrated to %s", tr.Entries[2].Raw)
	}
	if raw, _ := os.ReadFile(file); string(raw) != v1File {
		t.Errorf("Read wrote the file")
	}
	first, err := tr.History("", HistoryOptions{MaxTurns: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := tr.History(first.NextCursor, HistoryOptions{MaxTurns: 1})
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAppend(t, s, userMsg(t, "new question", 10))
	after := mustRead(t, file)
	if after.Migrated || after.Header.Version != CurrentVersion || len(after.Entries) != 6 {
		t.Errorf("after Open: Migrated=%v version=%d entries=%d", after.Migrated, after.Header.Version, len(after.Entries))
	}
	if got, want := ids(after.Entries[:5]), ids(tr.Entries); !cmp.Equal(got, want) {
		t.Errorf("ids after rewriting = %v, want the ids Read derived %v", got, want)
	}
	// The migrated file is the one locked: another lock attempt fails.
	if ok := tryLockOther(t, file); ok {
		t.Errorf("the rewritten file is not locked")
	}
	// A cursor taken before the rewrite still pages the same history.
	got, err := after.History(first.NextCursor, HistoryOptions{MaxTurns: 1})
	if err != nil {
		t.Fatalf("History(cursor from before the migration): %v", err)
	}
	if diff := cmp.Diff(got, second); diff != "" {
		t.Errorf("page after migration (-got +want):\n%s", diff)
	}
}
