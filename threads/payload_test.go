package threads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// payloadManager is a Manager with only its spool, made in a temporary
// directory and removed when the test ends; clock, when set, is the
// spool's clock.
func payloadManager(t *testing.T, clock func() time.Time) *Manager {
	t.Helper()
	m := &Manager{log: slog.New(slog.DiscardHandler), spool: newSpool(t.TempDir(), 0, slog.New(slog.DiscardHandler))}
	if clock != nil {
		m.spool.now = clock
	}
	t.Cleanup(func() {
		if err := m.spool.close(); err != nil {
			t.Error(err)
		}
	})
	return m
}

// readAll reads payload id through ReadPayload chunk by chunk, checking
// each chunk's size and the payload's (rpc's payload/read turns them into
// base64 data, eof and nextOffset).
func readAll(t *testing.T, m *Manager, id string) []byte {
	t.Helper()
	var out []byte
	var off int64
	for {
		b, size, err := m.ReadPayload(id, off)
		if err != nil {
			t.Fatalf("payload/read %s at %d: %v", id, off, err)
		}
		if len(b) > protocol.MaxPayloadChunk {
			t.Fatalf("chunk of %d bytes, over %d", len(b), protocol.MaxPayloadChunk)
		}
		out = append(out, b...)
		off += int64(len(b))
		if off >= size {
			if off != size {
				t.Errorf("read %d bytes of a payload of %d", off, size)
			}
			return out
		}
		if len(b) == 0 {
			t.Fatalf("empty chunk at %d of %d", off, size)
		}
	}
}

// TestInlineItem checks that every item fits in 64 KiB of JSON as sent,
// that nothing is cut (the referenced bytes are the values exactly), and
// that small items are untouched.
func TestInlineItem(t *testing.T) {
	t.Parallel()
	m := payloadManager(t, nil)
	big := strings.Repeat("<é>\n", 40<<10) // escapes and multi-byte runes
	bigArgs, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("x", 70_000)})
	nul := strings.Repeat("\x00", 40_000) // 40,000 bytes, 240,000 as JSON
	small := "ok"
	idx := 3
	for _, c := range []struct {
		name                  string
		in                    protocol.Item
		whole, args, output   bool
		wantArgs, wantOutputs string
	}{
		{name: "small", in: protocol.Item{ID: "item-0", Type: protocol.ItemAgentMessage, Text: "hello"}},
		{name: "long text", in: protocol.Item{ID: "item-1", Type: protocol.ItemAgentMessage, Text: big}, whole: true},
		{name: "NUL output", in: protocol.Item{ID: "c0", Type: protocol.ItemToolCall, Index: &idx, Name: "bash", Arguments: json.RawMessage(`{"command":"x"}`),
			Status: protocol.ToolCompleted, Output: &nul}, output: true},
		{name: "70 KB write in progress", in: protocol.Item{ID: "c1", Type: protocol.ItemToolCall, Index: &idx, Name: "write", Arguments: bigArgs,
			Status: protocol.ToolInProgress}, args: true},
		{name: "70 KB write completed with its diff", in: protocol.Item{ID: "c2", Type: protocol.ItemToolCall, Index: &idx, Name: "write", Arguments: bigArgs,
			Status: protocol.ToolCompleted, Output: &small, FileChanges: []protocol.FileChange{{Path: "big.txt", Kind: protocol.FileAdd, Diff: big}}}, whole: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := m.spool.inlineItem(c.in)
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > MaxInlineItemBytes {
				t.Errorf("%d bytes as JSON, over %d", len(b), MaxInlineItemBytes)
			}
			if got.ID != c.in.ID || got.Type != c.in.Type || got.Status != c.in.Status || got.Name != c.in.Name {
				t.Errorf("identity changed: %+v", got)
			}
			if (got.Ref != nil) != c.whole || (got.ArgumentsRef != nil) != c.args || (got.OutputRef != nil) != c.output {
				t.Fatalf("refs: whole %v args %v output %v, want %v %v %v", got.Ref, got.ArgumentsRef, got.OutputRef, c.whole, c.args, c.output)
			}
			switch {
			case c.whole:
				var back protocol.Item
				if err := json.Unmarshal(readAll(t, m, got.Ref.ID), &back); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(back, c.in); diff != "" {
					t.Errorf("item payload (-got +want):\n%s", diff)
				}
				if got.Text != "" || got.Arguments != nil || got.Output != nil || got.FileChanges != nil {
					t.Errorf("a referenced item keeps content: %.200s", b)
				}
			case c.args || c.output:
				if c.args {
					if p := readAll(t, m, got.ArgumentsRef.ID); !bytes.Equal(p, c.in.Arguments) || got.ArgumentsRef.Bytes != int64(len(p)) {
						t.Errorf("arguments payload: %d bytes, want %d", len(p), len(c.in.Arguments))
					}
					if got.Arguments != nil {
						t.Errorf("arguments sent with their reference")
					}
				}
				if c.output {
					if p := readAll(t, m, got.OutputRef.ID); string(p) != *c.in.Output || got.OutputRef.Bytes != int64(len(p)) {
						t.Errorf("output payload: %d bytes, want %d", len(p), len(*c.in.Output))
					}
					if got.Output != nil {
						t.Errorf("output sent with its reference")
					}
				}
			default:
				if string(b) != string(mustMarshal(t, c.in)) {
					t.Errorf("a small item changed: %s", b)
				}
			}
		})
	}
}

// TestSpoolWritesOnce checks that equal values share one spool file.
func TestSpoolWritesOnce(t *testing.T) {
	t.Parallel()
	m := payloadManager(t, nil)
	v := bytes.Repeat([]byte("v"), 100_000)
	a, err := m.spool.put(v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.spool.put(bytes.Clone(v))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("the same value got two references: %+v, %+v", a, b)
	}
	if files, n := m.spool.counters(); files != 1 || n != int64(len(v)) {
		t.Errorf("counters: %d files, %d bytes; want 1, %d", files, n, len(v))
	}
}

// TestReadPayloadErrors checks the refusals of payload/read: unknown,
// path-like and expired ids, offsets outside the payload, and that reading
// slides the expiry.
func TestReadPayloadErrors(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	m := payloadManager(t, func() time.Time { return now })
	kept, err := m.spool.put([]byte("kept alive by reads"))
	if err != nil {
		t.Fatal(err)
	}
	left, err := m.spool.put([]byte("left alone"))
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := func(id string, off int64) error {
		_, _, err := m.ReadPayload(id, off)
		return err
	}
	// 20 minutes, a read, 20 minutes more: kept is alive, left expired.
	now = now.Add(20 * time.Minute)
	if err := read(kept.ID, 0); err != nil {
		t.Fatal(err)
	}
	now = now.Add(20 * time.Minute)
	if got := readAll(t, m, kept.ID); string(got) != "kept alive by reads" {
		t.Errorf("kept = %q", got)
	}
	for _, c := range []struct {
		name, id      string
		off           int64
		field, reason string
	}{
		{"expired", left.ID, 0, "id", protocol.PayloadExpired},
		{"unknown", strings.Repeat("0", 32), 0, "id", protocol.PayloadUnknown},
		{"empty", "", 0, "id", protocol.PayloadUnknown},
		{"absolute path", secret, 0, "id", protocol.PayloadUnknown},
		{"relative path", "../" + filepath.Base(secret), 0, "id", protocol.PayloadUnknown},
		{"negative offset", kept.ID, -1, "offset", ""},
		{"offset past the end", kept.ID, kept.Bytes + 1, "offset", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := read(c.id, c.off)
			var pe *coreerr.ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want invalidParams", err)
			}
			if diff := cmp.Diff(protocol.InvalidParamsData{Field: pe.Field, Reason: pe.Reason}, protocol.InvalidParamsData{Field: c.field, Reason: c.reason}); diff != "" {
				t.Errorf("data (-got +want):\n%s", diff)
			}
		})
	}
	// The end itself is a valid offset: an empty last chunk.
	b, size, err := m.ReadPayload(kept.ID, kept.Bytes)
	if err != nil || len(b) != 0 || size != kept.Bytes {
		t.Errorf("read at the end = %q of %d, %v", b, size, err)
	}
	if files, _ := m.spool.counters(); files != 1 {
		t.Errorf("%d spool files after expiry, want 1", files)
	}
}

// TestSpoolClose checks that closing removes the spool directory and that
// reads then answer shuttingDown.
func TestSpoolClose(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	s := newSpool(parent, 0, slog.New(slog.DiscardHandler))
	ref, err := s.put([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("left in the spool's parent: %v", ents)
	}
	if _, _, err := s.read(ref.ID, 0); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("read after close: %v, want ErrShuttingDown", err)
	}
}

// TestBoundPage checks that a history page over 1 MiB sends its largest
// turns as references, largest first, until it fits, keeping its turns.
func TestBoundPage(t *testing.T) {
	t.Parallel()
	m := payloadManager(t, nil)
	text := func(n int) string { return strings.Repeat("t", n) }
	var turns []protocol.Turn
	for i, n := range []int{1000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 60_000, 1000} {
		var items []protocol.Item
		for j := range 3 { // three items of n bytes each, every one inline
			items = append(items, protocol.Item{ID: "item", Type: protocol.ItemAgentMessage, Text: text(n - j)})
		}
		turns = append(turns, protocol.Turn{ID: string(rune('a' + i)), Status: protocol.TurnFailed, StartedAt: int64(i),
			Error: &protocol.TurnError{Message: strings.Repeat("é", 2500), Kind: protocol.ErrorKindOther}, Items: items})
	}
	got := m.spool.boundPage(turns, 1000)
	b, _ := json.Marshal(got)
	if len(b)+1000 > protocol.MaxHistoryResponseBytes {
		t.Errorf("page of %d bytes", len(b))
	}
	refs := 0
	for i, tr := range got {
		if tr.ID != turns[i].ID {
			t.Fatalf("turn %d is %s, want %s", i, tr.ID, turns[i].ID)
		}
		if tr.Ref == nil {
			if diff := cmp.Diff(tr, turns[i]); diff != "" {
				t.Errorf("inline turn %s changed:\n%s", tr.ID, diff)
			}
			continue
		}
		refs++
		if i == 0 || i == len(turns)-1 {
			t.Errorf("small turn %s sent as a reference", tr.ID)
		}
		if tr.Items != nil || len([]rune(tr.Error.Message)) != 2000 {
			t.Errorf("stub %s: %d items, error of %d runes", tr.ID, len(tr.Items), len([]rune(tr.Error.Message)))
		}
		var back protocol.Turn
		if err := json.Unmarshal(readAll(t, m, tr.Ref.ID), &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(back, turns[i]); diff != "" {
			t.Errorf("turn payload %s (-got +want):\n%s", tr.ID, diff)
		}
	}
	if refs == 0 || refs == len(turns)-2 {
		t.Errorf("%d turns sent as references; want some, not all", refs)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestListWithinResponseLimit lists 200 threads whose rows are about 8 KB
// each (cwds of 6,000 bytes): a page of limit 200 stops before 1 MiB and its cursor
// continues after the last row sent, so every thread is listed once.
func TestListWithinResponseLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, time.Hour)
	cwd := "/" + strings.Repeat("long-directory-name/", 300)
	for i := range 200 {
		s, err := session.Create(e.dirs.Override, session.CreateOptions{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(session.NewSessionInfo(fmt.Sprintf("thread %d", i))); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	limit := MaxListLimit
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		res, err := e.m.List(ListOptions{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if n := jsonSize(res) + responseEnvelopeReserve; n > protocol.MaxHistoryResponseBytes {
			t.Errorf("page %d: %d bytes", pages, n)
		}
		for _, r := range res.Threads {
			if seen[r.ID] {
				t.Errorf("%s listed twice", r.ID)
			}
			seen[r.ID] = true
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if len(seen) != 200 || pages < 2 {
		t.Errorf("%d threads in %d pages; want 200 in at least 2", len(seen), pages)
	}
}
