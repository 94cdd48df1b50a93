package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// memThreads is how many threads BenchmarkE2EThreadsWithExtension starts
// (issue 25: "200 threads with one extension").
const memThreads = 200

// BenchmarkE2EThreadsWithExtension starts the binary, loads one thread,
// then starts memThreads more threads in the same folder and keeps them
// loaded; in "extension" the binary runs with -e tool.ts (the first
// thread bundles it and caches its program, each later one loads it from
// the cache), in "none" without, as the baseline of a thread alone. It
// reports the server process's resident set growth per thread
// (rss-B/thread: VmRSS of /proc/<pid>/status before and after, the
// garbage not forced out) and the time of one thread/start (ms/thread).
// EXTENSIBILITY.md §7 budgets under 2 MiB and 5 ms for the extension's
// load: the difference between the two.
func BenchmarkE2EThreadsWithExtension(b *testing.B) {
	if goruntime.GOOS != "linux" {
		b.Skip("VmRSS is read from /proc/<pid>/status")
	}
	abs, err := filepath.Abs(filepath.Join("..", "..", "testdata", "extensions", "tool.ts"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("extension", func(b *testing.B) { benchThreadStarts(b, "-e", abs) })
	b.Run("none", func(b *testing.B) { benchThreadStarts(b) })
}

// benchThreadStarts is BenchmarkE2EThreadsWithExtension's run of the
// binary with args; one iteration takes seconds, so b.Loop runs it once.
func benchThreadStarts(b *testing.B, args ...string) {
	var rss, elapsed float64
	for b.Loop() {
		cwd := b.TempDir()
		cmd := exec.Command(binary, append([]string{"app-server"}, args...)...)
		cmd.Env = serverEnv(b.TempDir())
		c, stderr := launch(b, cmd)
		initialize(b, c)
		start := func() {
			ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
			defer cancel()
			res, err := client.Call(ctx, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: cwd, ApprovalMode: protocol.ApprovalFullAccess})
			if err != nil {
				b.Fatalf("thread/start: %v\nserver stderr:\n%s", err, stderr.String())
			}
			for _, w := range res.Warnings {
				if w.Source == protocol.WarningSourceExtension {
					b.Fatalf("extension warning %+v", w)
				}
			}
		}
		start()
		before := vmRSS(b, cmd.Process.Pid)
		begin := time.Now()
		for range memThreads {
			start()
		}
		elapsed += float64(time.Since(begin))
		rss += float64(vmRSS(b, cmd.Process.Pid) - before)
		if err := c.Close(); err != nil {
			b.Fatalf("server exit: %v\nserver stderr:\n%s", err, stderr.String())
		}
	}
	n := float64(b.N * memThreads)
	b.ReportMetric(rss/n, "rss-B/thread")
	b.ReportMetric(elapsed/n/1e6, "ms/thread")
}

// vmRSS is the resident set size of process pid in bytes, from the VmRSS
// line of /proc/<pid>/status (in kB).
func vmRSS(tb testing.TB, pid int) int64 {
	tb.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
