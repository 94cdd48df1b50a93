package jsonrpc

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
)

const (
	// heapObjectsMetric is the Go heap in use (runtime.MemStats.HeapAlloc).
	heapObjectsMetric = "/memory/classes/heap/objects:bytes"
	// totalMemoryMetric is all memory the Go runtime mapped (MemStats.Sys).
	totalMemoryMetric = "/memory/classes/total:bytes"
)

// diagnostics answers server/diagnostics: process memory from the operating
// system and the Go runtime, uptime since NewServer, and the threads layer's
// counters from the DiagnosticsSource (zero until one is set). Spec: Method
// reference, server/diagnostics.
func (s *Server) diagnostics(context.Context, *Conn, protocol.ServerDiagnosticsParams) (protocol.ServerDiagnosticsResult, error) {
	// runtime/metrics, unlike runtime.ReadMemStats, does not stop the world.
	samples := []metrics.Sample{{Name: heapObjectsMetric}, {Name: totalMemoryMetric}}
	metrics.Read(samples)
	res := protocol.ServerDiagnosticsResult{
		RSSBytes:  rssBytes(int64(samples[1].Value.Uint64())),
		HeapBytes: int64(samples[0].Value.Uint64()),
		UptimeMs:  time.Since(s.started).Milliseconds(),
	}
	if src := s.diag.Load(); src != nil {
		res.ThreadCounters = (*src).ThreadCounters()
	}
	return res, nil
}
