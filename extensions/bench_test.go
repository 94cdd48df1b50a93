package extensions

import (
	"testing"

	"github.com/knightcode/knightcode/threads/ext"
)

// BenchmarkLoadFromCache is one thread load of one extension whose
// program is cached: a new runtime (prelude included), the module and its
// factory, then the disposal (EXTENSIBILITY.md §7 budgets 5 ms).
func BenchmarkLoadFromCache(b *testing.B) {
	e := New(Options{})
	entry := fixture(b, "tool.ts")
	h := newFakeHost(b.TempDir())
	warm := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{e.Extension(entry)}})
	if w := warm.Load(); len(w) > 0 {
		b.Fatal(w)
	}
	warm.Dispose()
	b.ResetTimer()
	for b.Loop() {
		r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{e.Extension(entry)}})
		if w := r.Load(); len(w) > 0 {
			b.Fatal(w)
		}
		r.Dispose()
	}
}
