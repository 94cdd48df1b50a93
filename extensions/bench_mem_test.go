package extensions

import (
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/threads/ext"
)

// loadedRuntimes is how many thread loads BenchmarkLoadedRuntimeMemory
// keeps at once (issue 25: "200 threads with one extension").
const loadedRuntimes = 200

// BenchmarkLoadedRuntimeMemory loads loadedRuntimes thread loads of one
// extension from the factory cache, as a thread load does, keeps them all
// loaded, and reports what each costs once the garbage is collected:
// heap-B/runtime (runtime.MemStats HeapInuse), sys-B/runtime (Sys, what
// the Go runtime took from the system) and, on Linux, rss-B/runtime
// (/proc/self/statm). EXTENSIBILITY.md §7 budgets 2 MiB of RSS per loaded
// thread.
func BenchmarkLoadedRuntimeMemory(b *testing.B) {
	e := New(Options{})
	entry := fixture(b, "tool.ts")
	h := newFakeHost(b.TempDir())
	load := func() *ext.Runner {
		r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{e.Extension(entry)}})
		if w := r.Load(); len(w) > 0 {
			b.Fatal(w)
		}
		return r
	}
	load().Dispose() // the program is compiled and cached
	var heap, sys, rss float64
	for b.Loop() {
		b.StopTimer()
		before, beforeRSS := settledMem()
		b.StartTimer()
		runners := make([]*ext.Runner, loadedRuntimes)
		for i := range runners {
			runners[i] = load()
		}
		b.StopTimer()
		after, afterRSS := settledMem()
		heap += float64(after.HeapInuse) - float64(before.HeapInuse)
		sys += float64(after.Sys) - float64(before.Sys)
		rss += float64(afterRSS) - float64(beforeRSS)
		for _, r := range runners {
			r.Dispose()
		}
		b.StartTimer()
	}
	n := float64(b.N * loadedRuntimes)
	b.ReportMetric(heap/n, "heap-B/runtime")
	b.ReportMetric(sys/n, "sys-B/runtime")
	if rss != 0 {
		b.ReportMetric(rss/n, "rss-B/runtime")
	}
	b.ReportMetric(0, "ns/op") // the time is BenchmarkLoadFromCache's
}

// settledMem collects the garbage, returns the freed memory to the system
// (so the next load's pages count again in the resident set), and returns
// the memory statistics and the resident set size in bytes (0 where
// /proc/self/statm is missing).
func settledMem() (goruntime.MemStats, int64) {
	debug.FreeOSMemory()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m, residentBytes()
}

// residentBytes is the process's resident set size from /proc/self/statm
// (its second field, in pages), or 0.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
