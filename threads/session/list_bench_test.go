package session

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkListWarm lists 5,000 saved sessions with a warm index (issue 14:
// "thread/list warm over 5,000 sessions (files opened: 0)"): after the
// first listing, every later one answers from .thread-index.json and
// stat calls alone. It reports the transcripts opened per listing
// (files/op), which must stay 0.
func BenchmarkListWarm(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	dir := filepath.Join(b.TempDir(), "sessions")
	for i := range 5000 {
		s, err := Create(dir, CreateOptions{Cwd: fmt.Sprintf("/projects/p%04d", i)})
		if err != nil {
			b.Fatal(err)
		}
		e, err := NewMessage([]byte(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"task %d"}],"timestamp":%d}`, i, i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Append(e); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	var l Lister
	got, err := l.List(dir)
	if err != nil || len(got) != 5000 {
		b.Fatalf("cold listing: %d sessions, %v", len(got), err)
	}
	before := l.Counters()
	b.ResetTimer()
	for b.Loop() {
		if got, err := l.List(dir); err != nil || len(got) != 5000 {
			b.Fatalf("warm listing: %d sessions, %v", len(got), err)
		}
	}
	b.StopTimer()
	opened := l.Counters().FilesOpened - before.FilesOpened
	b.ReportMetric(float64(opened)/float64(b.N), "files/op")
	if opened != 0 {
		b.Errorf("a warm listing opened %d transcripts, want 0", opened)
	}
}
