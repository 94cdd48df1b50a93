package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func setMtime(t *testing.T, path string, tm time.Time) {
	t.Helper()
	if err := os.Chtimes(path, tm, tm); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, paths ...string) int64 {
	t.Helper()
	var n int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

func TestListSummariesAndIndexCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

	named := newSaved(t, dir, userMsg(t, "ignored because named", 1), NewSessionInfo("old name"), NewSessionInfo("Fix the build"))
	longText := "  Please\nlook at   " + strings.Repeat("the code ", 20)
	plain := newSaved(t, dir, assistantMsg(t, "no user yet", 1), userMsg(t, longText, 2), userMsg(t, "second", 3))
	fork, err := Create(dir, CreateOptions{Cwd: "/other/project", ParentSession: plain.File()})
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close()
	mustAppend(t, fork, userMsg(t, "forked", 1))
	unsaved, _ := Create(dir, CreateOptions{Cwd: "/x"}) // no file: not listed
	defer unsaved.Close()
	junk := filepath.Join(dir, "junk.jsonl")
	os.WriteFile(junk, []byte("not a session\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("ignored"), 0o600)
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700)

	setMtime(t, named.File(), base.Add(1*time.Hour))
	setMtime(t, plain.File(), base.Add(3*time.Hour))
	setMtime(t, fork.File(), base.Add(2*time.Hour))

	var l Lister
	got, err := l.List(dir, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	wantTitle := "Please look at " + strings.Repeat("the code ", 20)
	want := []protocol.ThreadSummary{
		{ID: plain.ID(), Cwd: "/work/project", CreatedAt: plain.Header().Timestamp, UpdatedAt: "2025-03-01T15:00:00.000Z",
			Title: wantTitle[:MaxTitleChars], SessionFile: plain.File()},
		{ID: fork.ID(), Cwd: "/other/project", CreatedAt: fork.Header().Timestamp, UpdatedAt: "2025-03-01T14:00:00.000Z",
			Title: "forked", SessionFile: fork.File(), ForkedFromID: plain.ID()},
		{ID: named.ID(), Cwd: "/work/project", CreatedAt: named.Header().Timestamp, UpdatedAt: "2025-03-01T13:00:00.000Z",
			Title: "Fix the build", SessionFile: named.File()},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("cold listing (-got +want):\n%s", diff)
	}
	cold := l.Counters()
	wantCold := ListCounters{
		FilesOpened:  4 + 1, // three sessions and the junk file, plus the fork's parent header
		BytesScanned: fileSize(t, plain.File(), fork.File(), named.File(), junk),
	}
	if diff := cmp.Diff(cold, wantCold); diff != "" {
		t.Errorf("cold counters (-got +want):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, IndexFileName)); err != nil {
		t.Fatalf("no index written: %v", err)
	}

	// Warm: nothing is opened again, the result is the same.
	got, _ = l.List(dir)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("warm listing (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(l.Counters(), cold); diff != "" {
		t.Errorf("warm listing opened files (-got +want):\n%s", diff)
	}

	// A changed file alone is rescanned; its fork origin comes from its header.
	mustAppend(t, fork, NewSessionInfo("Renamed fork"))
	setMtime(t, fork.File(), base.Add(4*time.Hour))
	got, _ = l.List(dir)
	if got[0].ID != fork.ID() || got[0].Title != "Renamed fork" || got[0].ForkedFromID != plain.ID() {
		t.Errorf("after a change: first row = %+v", got[0])
	}
	if diff := cmp.Diff(l.Counters(), ListCounters{
		FilesOpened:  cold.FilesOpened + 2,
		BytesScanned: cold.BytesScanned + fileSize(t, fork.File()),
	}); diff != "" {
		t.Errorf("counters after one change (-got +want):\n%s", diff)
	}

	// Corrupt, wrong-version and oversized indexes are rebuilt.
	for name, write := range map[string]func(string) error{
		"corrupt":   func(p string) error { return os.WriteFile(p, []byte("{nope"), 0o600) },
		"version":   func(p string) error { return os.WriteFile(p, []byte(`{"version":99,"files":{}}`), 0o600) },
		"no ids":    func(p string) error { return os.WriteFile(p, []byte(`{"version":1,"files":{"junk.jsonl":{}}}`), 0o600) },
		"oversized": func(p string) error { return os.Truncate(p, MaxIndexBytes+1) },
	} {
		before := l.Counters()
		if err := write(filepath.Join(dir, IndexFileName)); err != nil {
			t.Fatal(err)
		}
		again, err := l.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(again, got); diff != "" {
			t.Errorf("%s index: listing (-got +want):\n%s", name, diff)
		}
		if l.Counters() == before {
			t.Errorf("%s index: nothing was rescanned", name)
		}
		warm := l.Counters()
		l.List(dir)
		if l.Counters() != warm {
			t.Errorf("%s index: the rebuilt index was not used on the next listing", name)
		}
	}

	// A deleted transcript leaves the listing and the index.
	named.Close()
	os.Remove(named.File())
	got, _ = l.List(dir)
	if len(got) != 2 {
		t.Errorf("after deleting one: %d rows, want 2", len(got))
	}
	idx := readIndex(filepath.Join(dir, IndexFileName))
	if _, ok := idx.Files[filepath.Base(named.File())]; ok {
		t.Errorf("the index still holds the deleted transcript")
	}
}

func TestListAcrossProjectDirs(t *testing.T) {
	agent := isolate(t)
	d, _, err := ResolveDirs("")
	if err != nil {
		t.Fatal(err)
	}
	a := newSaved(t, d.ForCwd("/p/a"), userMsg(t, "in a", 1))
	b := newSaved(t, d.ForCwd("/p/b"), userMsg(t, "in b", 1))
	setMtime(t, a.File(), time.Unix(2000, 0))
	setMtime(t, b.File(), time.Unix(1000, 0))
	roots, err := d.Roots()
	if err != nil {
		t.Fatal(err)
	}
	var l Lister
	got, err := l.List(roots...)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range got {
		files = append(files, s.SessionFile)
	}
	if diff := cmp.Diff(files, []string{a.File(), b.File()}); diff != "" {
		t.Errorf("listing (-got +want):\n%s", diff)
	}
	if !strings.HasPrefix(a.File(), filepath.Join(agent, "sessions", "--p-a--")+string(filepath.Separator)) {
		t.Errorf("session file %s is not in the per-project layout", a.File())
	}
}
