package rpctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// DefaultTimeout bounds every wait for a line. It is a guard against a hung
// server, not a speed goal.
const DefaultTimeout = 20 * time.Second

// Peer is the client end of a raw connection.
type Peer struct {
	t       testing.TB
	w       io.WriteCloser
	lines   chan []byte
	readErr error // set before lines is closed
	done    chan struct{}
	// Timeout bounds each wait for a line (DefaultTimeout).
	Timeout time.Duration
}

// NewPeer starts reading lines from r (the server's output) and writes to w
// (its input). Its reader goroutine ends when r ends; a cleanup closes w and
// waits for that, consuming unread lines, so it never outlives the test.
func NewPeer(t testing.TB, w io.WriteCloser, r io.Reader) *Peer {
	t.Helper()
	p := &Peer{t: t, w: w, lines: make(chan []byte, 4096), done: make(chan struct{}), Timeout: DefaultTimeout}
	go p.read(r)
	t.Cleanup(func() {
		w.Close()
		timer := time.NewTimer(DefaultTimeout)
		defer timer.Stop()
		for {
			select {
			case _, ok := <-p.lines:
				if !ok {
					<-p.done
					return
				}
			case <-timer.C:
				t.Errorf("rpctest: server output did not end within %v of closing its input", DefaultTimeout)
				return
			}
		}
	})
	return p
}

// read is the reader goroutine: it exits when r ends.
func (p *Peer) read(r io.Reader) {
	defer close(p.done)
	defer close(p.lines)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			p.lines <- line[:len(line)-1]
			continue
		}
		if err != nil {
			if len(line) > 0 {
				p.lines <- line
			}
			if !errors.Is(err, io.EOF) {
				p.readErr = err
			}
			return
		}
	}
}

// Send writes line and a newline.
func (p *Peer) Send(line string) {
	p.t.Helper()
	p.SendBytes([]byte(line + "\n"))
}

// SendBytes writes b as is.
func (p *Peer) SendBytes(b []byte) {
	p.t.Helper()
	if _, err := p.w.Write(b); err != nil {
		p.t.Fatalf("rpctest: write to server: %v", err)
	}
}

// CloseInput closes the server's input (stdin EOF).
func (p *Peer) CloseInput() {
	p.t.Helper()
	if err := p.w.Close(); err != nil {
		p.t.Fatalf("rpctest: close server input: %v", err)
	}
}

// Next returns the next line the server wrote, failing the test if none
// comes within Timeout or the output ended.
func (p *Peer) Next() []byte {
	p.t.Helper()
	line, ok := p.next()
	if !ok {
		p.t.Fatalf("rpctest: expected a line, got end of output (read error: %v)", p.readErr)
	}
	return line
}

func (p *Peer) next() ([]byte, bool) {
	p.t.Helper()
	timer := time.NewTimer(p.Timeout)
	defer timer.Stop()
	select {
	case line, ok := <-p.lines:
		return line, ok
	case <-timer.C:
		p.t.Fatalf("rpctest: no line from the server within %v", p.Timeout)
		return nil, false
	}
}

// Expect reads the next line and compares it with want as JSON values.
func (p *Peer) Expect(want string) {
	p.t.Helper()
	got := p.Next()
	if diff := JSONDiff(got, []byte(want)); diff != "" {
		p.t.Errorf("rpctest: unexpected line (-got +want):\n%s\ngot:  %s", diff, got)
	}
}

// ExpectRaw reads the next line and compares its bytes with want.
func (p *Peer) ExpectRaw(want string) {
	p.t.Helper()
	if got := p.Next(); string(got) != want {
		p.t.Errorf("rpctest: unexpected line\ngot:  %s\nwant: %s", got, want)
	}
}

// ExpectEOF waits for the end of the server's output and fails on any line
// before it.
func (p *Peer) ExpectEOF() {
	p.t.Helper()
	for {
		line, ok := p.next()
		if !ok {
			return
		}
		p.t.Errorf("rpctest: expected end of output, got %s", line)
	}
}

// Step is one step of a script; exactly one field is set.
type Step struct {
	// Send writes this line.
	Send string
	// Expect reads a line and compares it with this JSON value.
	Expect string
	// ExpectRaw reads a line and compares its exact bytes.
	ExpectRaw string
	// CloseInput closes the server's input.
	CloseInput bool
	// ExpectEOF waits for the end of the server's output.
	ExpectEOF bool
}

// Run plays steps in order.
func Run(t testing.TB, p *Peer, steps []Step) {
	t.Helper()
	for _, s := range steps {
		switch {
		case s.Send != "":
			p.Send(s.Send)
		case s.Expect != "":
			p.Expect(s.Expect)
		case s.ExpectRaw != "":
			p.ExpectRaw(s.ExpectRaw)
		case s.CloseInput:
			p.CloseInput()
		case s.ExpectEOF:
			p.ExpectEOF()
		default:
			t.Fatalf("rpctest: empty step")
		}
	}
}

// Handshake is the script of a handshake with request id 0 and no opt-outs;
// ServerInfo and platform fields are not checked.
func Handshake(t testing.TB, p *Peer) {
	t.Helper()
	p.Send(`{"id":0,"method":"initialize","params":{"clientInfo":{"name":"rpctest","version":"1"}}}`)
	var res struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		} `json:"result"`
	}
	line := p.Next()
	if err := json.Unmarshal(line, &res); err != nil || string(res.ID) != "0" || res.Result == nil {
		t.Fatalf("rpctest: bad initialize response: %s", line)
	}
	p.Send(`{"method":"initialized","params":{}}`)
}

// JSONDiff compares two JSON texts as values and returns a cmp.Diff (-got
// +want), "" when equal. Text that is not JSON compares as a string.
func JSONDiff(got, want []byte) string {
	return cmp.Diff(decode(got), decode(want))
}

func decode(b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "not JSON: " + strings.TrimSpace(string(b))
	}
	return v
}
