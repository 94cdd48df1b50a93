package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the most bytes one input line may hold, newline not
// counted (spec: Limits, "64 MiB per stdin line").
const DefaultMaxLineBytes = 64 << 20

// idPrefixBytes is how much of an oversized line is kept to recover its id.
const idPrefixBytes = 4 << 10

// lineTooLongError reports an input line over the limit. The line was read
// to its end and dropped; reading goes on with the next line.
type lineTooLongError struct {
	size   int64  // bytes in the line, newline not counted
	limit  int    // the limit it exceeded
	prefix []byte // its first idPrefixBytes bytes, to recover an id
}

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes exceeds the %d-byte limit; dropped", e.size, e.limit)
}

// lineReader reads newline-delimited lines of at most max bytes. It is used by
// one goroutine only (the connection's reader).
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
	err error // sticky read error, returned after a final unterminated line
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" (and a "\r" before it). The
// slice is valid until the next call. A line longer than max is consumed to
// its end and reported as *lineTooLongError. A final line without a newline
// is returned before the read error (io.EOF at the end of input).
func (lr *lineReader) next() ([]byte, error) {
	if lr.err != nil {
		return nil, lr.err
	}
	if cap(lr.buf) > 1<<20 {
		lr.buf = nil // do not keep a big line's buffer alive
	}
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.br.ReadSlice('\n')
		content := chunk
		if err == nil {
			content = chunk[:len(chunk)-1]
		}
		if len(lr.buf)+len(content) > lr.max {
			return nil, lr.skip(content, err)
		}
		lr.buf = append(lr.buf, content...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(lr.buf, []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(lr.buf) > 0:
			lr.err = err
			return lr.buf, nil
		default:
			lr.err = err
			return nil, err
		}
	}
}

// skip consumes the rest of an oversized line whose first bytes are lr.buf
// followed by content (ReadSlice returned err with it).
func (lr *lineReader) skip(content []byte, err error) error {
	tl := &lineTooLongError{size: int64(len(lr.buf) + len(content)), limit: lr.max}
	tl.prefix = append(tl.prefix, lr.buf[:min(len(lr.buf), idPrefixBytes)]...)
	if n := idPrefixBytes - len(tl.prefix); n > 0 {
		tl.prefix = append(tl.prefix, content[:min(len(content), n)]...)
	}
	lr.buf = nil
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = lr.br.ReadSlice('\n')
		tl.size += int64(len(chunk))
		if err == nil {
			tl.size-- // the newline
		}
	}
	if err != nil {
		lr.err = err // input ended inside the oversized line
	}
	return tl
}

// msgKind says what a decoded line is.
type msgKind int

const (
	kindRequest msgKind = iota + 1
	kindNotification
	kindResponse
)

// message is one decoded JSON-RPC message. A "jsonrpc" member is tolerated
// and ignored, as are other unknown members.
type message struct {
	ID json.RawMessage `json:"id"`
	// RawMethod is the "method" member as decoded: a pointer, so a present
	// but empty method (a request for an unknown method) is told from an
	// absent one (a response). Method is its value.
	RawMethod *string         `json:"method"`
	Method    string          `json:"-"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *Error          `json:"error"`
}

// badLineError is a line that is not a JSON-RPC message. id is the request id
// recovered from it, if any.
type badLineError struct {
	id     json.RawMessage
	reason string
}

func (e *badLineError) Error() string { return e.reason }

// decodeLine decodes one line into a message and classifies it by the
// members present (JSON-RPC 2.0, section 4 and 5):
//
//   - a string or numeric "id" and a "method" member (even "") is a request
//     (an unknown or empty method is answered methodNotFound by dispatch);
//   - a "method" without an "id" member is a notification;
//   - an "id" (possibly null) with "result" or "error" and no "method" is a
//     response;
//   - anything else is a *badLineError: an id that is not a string or number,
//     a request whose id is null (a request must carry an id it can be
//     answered by; a notification has no "id" member at all), and an id with
//     neither method, result nor error. A bad line's id is kept when it is a
//     usable one, so it is answered parseError instead of being dropped.
//
// The message's slices do not alias line.
func decodeLine(line []byte) (*message, msgKind, error) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		reason := "not a JSON-RPC message: " + err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			reason = "invalid JSON: " + err.Error()
		}
		return nil, 0, &badLineError{id: recoverID(line), reason: reason}
	}
	hasMethod := m.RawMethod != nil
	if hasMethod {
		m.Method = *m.RawMethod
	}
	hasID := m.ID != nil // the member is present, possibly null
	nullID := isNull(m.ID)
	if nullID {
		m.ID = nil
	}
	if m.ID != nil && !validID(m.ID) {
		return nil, 0, &badLineError{reason: "id must be a JSON string or number, got " + truncate(string(m.ID), 64)}
	}
	isReply := m.Result != nil || m.Error != nil
	switch {
	case hasMethod && nullID:
		return nil, 0, &badLineError{reason: "a request's id must be a JSON string or number, got null (a notification has no id member)"}
	case hasMethod && hasID:
		return &m, kindRequest, nil
	case hasMethod:
		return &m, kindNotification, nil
	case hasID && isReply:
		return &m, kindResponse, nil
	case m.ID != nil:
		return nil, 0, &badLineError{id: m.ID, reason: "message has an id but neither method, result nor error"}
	}
	return nil, 0, &badLineError{reason: "message has neither method nor id"}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// validID reports whether raw is a JSON string or number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// recoverID returns the raw id of a line that does not decode as a message,
// when its top-level object has an "id" member holding a string or number
// before the point where the line goes wrong; nil otherwise. The bytes are
// exactly those of the line, so the id echoes unchanged.
func recoverID(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "id" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch tok.(type) {
		case string, float64:
		default:
			return nil
		}
		raw := bytes.TrimLeft(line[start:dec.InputOffset()], " \t\r\n:")
		if !validID(raw) {
			return nil
		}
		return bytes.Clone(raw)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
