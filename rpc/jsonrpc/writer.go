package jsonrpc

import (
	"bufio"
	"io"
	"sync"
)

// DefaultMaxPendingOutput is the most bytes that may wait to be written to a
// peer before its connection is aborted (spec: Limits, "64 MiB of pending
// unread output").
const DefaultMaxPendingOutput = 64 << 20

// outQueue is a connection's bounded output queue and the state of its one
// writer goroutine. Lines are complete NDJSON lines. pending counts the bytes
// queued plus those being written: output the peer has not read yet.
type outQueue struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	cond    *sync.Cond
	lines   [][]byte
	pending int
	closed  bool  // no more lines; the writer exits once the queue is empty
	err     error // overflow or write error; the writer exits at once

	onFail func(error) // called once, without locks, when err is set
	done   chan struct{}
}

func newOutQueue(w io.Writer, max int, onFail func(error)) *outQueue {
	q := &outQueue{w: w, max: max, onFail: onFail, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// put queues one line. It returns ErrConnClosed after close or failure, and
// ErrOutputOverflow (failing the queue) when the line would take pending
// output past max.
func (q *outQueue) put(line []byte) error {
	q.mu.Lock()
	if q.closed || q.err != nil {
		q.mu.Unlock()
		return ErrConnClosed
	}
	if q.pending+len(line) > q.max {
		q.mu.Unlock()
		q.fail(ErrOutputOverflow)
		return ErrOutputOverflow
	}
	q.lines = append(q.lines, line)
	q.pending += len(line)
	q.mu.Unlock()
	q.cond.Signal()
	return nil
}

// close stops accepting lines; the writer flushes what is queued, then exits.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// fail records err (first one wins), drops the queue and wakes the writer.
func (q *outQueue) fail(err error) {
	q.mu.Lock()
	first := q.err == nil
	if first {
		q.err = err
		q.lines = nil
	}
	q.mu.Unlock()
	q.cond.Broadcast()
	if first && q.onFail != nil {
		q.onFail(err)
	}
}

// run is the connection's writer goroutine. The connection starts it; it
// exits after close once the queue is written, or at the first failure (a
// write error fails the queue). A write blocked on a peer that does not read
// keeps it running until the transport is closed or the process exits.
func (q *outQueue) run() {
	defer close(q.done)
	bw := bufio.NewWriterSize(q.w, 64<<10)
	for {
		q.mu.Lock()
		for len(q.lines) == 0 && !q.closed && q.err == nil {
			q.cond.Wait()
		}
		if q.err != nil || len(q.lines) == 0 {
			q.mu.Unlock()
			return
		}
		batch := q.lines
		q.lines = nil
		q.mu.Unlock()

		n := 0
		for _, l := range batch {
			n += len(l)
			if _, err := bw.Write(l); err != nil {
				q.fail(err)
				return
			}
		}
		if err := bw.Flush(); err != nil {
			q.fail(err)
			return
		}
		q.mu.Lock()
		q.pending -= n
		q.mu.Unlock()
	}
}
