package client_test

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// BenchmarkNotificationsToReadingClient measures notifications written by
// the server (Broadcast: encode, queue, writer goroutine) through an OS pipe
// to a client that decodes and delivers each one; it reports notes/s.
func BenchmarkNotificationsToReadingClient(b *testing.B) {
	const window = 20000
	srv := jsonrpc.NewServer(jsonrpc.Config{})
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	toClientR, toClientW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeConn(context.Background(), toServerR, toClientW) }()
	c := client.Dial(toClientR, toServerW)
	var got atomic.Int64
	done := make(chan struct{})
	var want int64
	c.OnNotification(func(method string, params json.RawMessage) {
		if got.Add(1) == atomic.LoadInt64(&want) {
			close(done)
		}
	})
	if _, err := c.Initialize(context.Background(), protocol.InitializeParams{}); err != nil {
		b.Fatal(err)
	}
	// A round trip after initialized: the server has read it, so the
	// connection is ready for broadcasts.
	if err := c.Request(context.Background(), protocol.ServerDiagnostics.Name, nil, nil); err != nil {
		b.Fatal(err)
	}
	params := protocol.ErrorParams{Code: protocol.CodeInternal, Message: "a notification of typical size: item delta text of about one line", ThreadID: "0198a3c2-7f55-7a1e-9c3e-3a2b1c0d9e8f"}
	atomic.StoreInt64(&want, int64(b.N))
	b.ResetTimer()
	for i := range b.N {
		// Keep at most window notes unread so the queue stays far below its
		// 64 MiB bound (past it the connection would abort).
		for int64(i)-got.Load() > window {
			time.Sleep(20 * time.Microsecond)
		}
		if err := jsonrpc.Broadcast(srv, protocol.ErrorNotification, params); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-c.Done():
		b.Fatal("connection ended")
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notes/s")
	if err := c.Close(); err != nil {
		b.Fatal(err)
	}
	if err := <-served; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkInProcessRoundTrip measures a request and its response over the
// in-memory transport, without processes or OS pipes.
func BenchmarkInProcessRoundTrip(b *testing.B) {
	for _, method := range []string{"a/b", protocol.ServerDiagnostics.Name} {
		b.Run(method, func(b *testing.B) {
			c := client.NewInProcess(jsonrpc.NewServer(jsonrpc.Config{}))
			ctx := context.Background()
			if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				var res json.RawMessage
				err := c.Request(ctx, method, struct{}{}, &res)
				if err != nil && method != "a/b" {
					b.Fatal(err)
				}
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
