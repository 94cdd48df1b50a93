package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/knightcode/knightcode/rpc/protocol"
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
	// RawError is the "error" member as sent (JSON null when it was null);
	// Error is what decodeLine read from it (replyError).
	RawError json.RawMessage `json:"error"`
	Error    *Error          `json:"-"`
	// IJSON is true when decodeIJSON read the line: it is then I-JSON (RFC
	// 7493), valid UTF-8 with every escape a Unicode code point and no
	// member name given twice in any object, so the UTF-8 check
	// (firstInvalidUTF8) and the duplicate-member check of a reply
	// (duplicateMemberDeep) have nothing to find and are skipped.
	IJSON bool `json:"-"`
}

// badLineError is a line that is not a JSON-RPC message. id is the request id
// recovered from it, if any. reply reports a line with an id and no
// "method" member that carries no result or error ({"id":7}, or an error
// of null): it answers a request of ours when the id is one we sent, and is
// then a reply of the wrong shape, not a bad request.
type badLineError struct {
	id     json.RawMessage
	reason string
	reply  bool
}

func (e *badLineError) Error() string { return e.reason }

// decodeLine decodes one line into a message and classifies it by the
// members present (JSON-RPC 2.0, section 4 and 5):
//
//   - a string or numeric "id" and a "method" member (even "") is a request
//     (an unknown or empty method is answered methodNotFound by dispatch);
//   - a "method" without an "id" member is a notification;
//   - an "id" (possibly null) with "result" or an "error" that is not null
//     and no "method" is a response; its error is read by replyError, so an
//     error object of another shape (JSON-RPC 2.0's numeric codes) is still
//     an error reply, never a bad line (issue 22);
//   - anything else is a *badLineError: an id that is not a string or number,
//     a request whose id is null (a request must carry an id it can be
//     answered by; a notification has no "id" member at all), and an id with
//     neither method, result nor error (marked reply: the caller settles a
//     pending call of that id with it). A bad line's id is kept when it is a
//     usable one, so it is answered parseError instead of being dropped.
//
// The line is read by decodeIJSON when it is an I-JSON object (the common
// case, in one pass of jsontext's scanner), else by encoding/json, whose
// errors word the reason; both give the same message. The message's slices
// do not alias line.
func decodeLine(line []byte) (*message, msgKind, error) {
	m, ok := decodeIJSON(line)
	if !ok {
		if err := json.Unmarshal(line, &m); err != nil {
			reason := "not a JSON-RPC message: " + err.Error()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				reason = "invalid JSON: " + err.Error()
			}
			return nil, 0, &badLineError{id: recoverID(line), reason: reason}
		}
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
	// A member given twice has no one meaning (encoding/json keeps the
	// last: a second "method" would run another method than the first
	// names, a second "result" would consent after a decline), so the line
	// is malformed; it keeps its id unless the id is what is given twice,
	// and a reply's settles the call as an error (issue 22 L6, final QA).
	if name, dup := duplicateMember(line); dup {
		bl := &badLineError{reason: fmt.Sprintf("the message gives %q more than once", truncate(name, 64)), reply: !hasMethod}
		if name != "id" {
			bl.id = m.ID
		}
		return nil, 0, bl
	}
	if isNull(m.RawError) {
		m.RawError = nil // {"result": ..., "error": null} is a result
	}
	isReply := m.Result != nil || m.RawError != nil
	if m.RawError != nil {
		m.Error = replyError(m.RawError)
	}
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
		return nil, 0, &badLineError{id: m.ID, reason: "message has an id but neither method, result nor error", reply: true}
	}
	return nil, 0, &badLineError{reason: "message has neither method nor id"}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

// envelopeNames are the members of message, by their JSON names.
var envelopeNames = []string{"id", "method", "params", "result", "error"}

// decodeIJSON reads line into a message as json.Unmarshal does, in one pass
// of jsontext's scanner (go-json-experiment, the json/v2 engine; it skips a
// string's plain bytes many times faster than encoding/json's scanner, which
// a 64 KiB payload/read reply otherwise crossed three times: issue 24), when
// line is an I-JSON object (RFC 7493: valid syntax and UTF-8, every escape a
// Unicode code point, no member name given twice in any object, nesting of
// at most 10,000 levels as encoding/json allows) whose members are plain:
// the envelope's names spelled exactly (encoding/json would also take "ID"
// or "Id" for "id") and a method that is a string or null. It reports false,
// with a zero message, for any other line: encoding/json reads it and words
// the error, and the UTF-8 and duplicate checks walk it, as before.
func decodeIJSON(line []byte) (message, bool) {
	var m message
	dec := jsontext.NewDecoder(bytes.NewBuffer(line))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return message{}, false
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return message{}, false
		}
		name := tok.String()
		if name == "method" {
			v, err := dec.ReadToken()
			if err != nil || (v.Kind() != '"' && v.Kind() != 'n') {
				return message{}, false
			}
			if v.Kind() == '"' {
				s := v.String()
				m.RawMethod = &s
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return message{}, false
		}
		switch name {
		case "id":
			m.ID = bytes.Clone(v)
		case "params":
			m.Params = bytes.Clone(v)
		case "result":
			m.Result = bytes.Clone(v)
		case "error":
			m.RawError = bytes.Clone(v)
		default:
			for _, e := range envelopeNames {
				if strings.EqualFold(name, e) {
					return message{}, false // encoding/json matches names case-insensitively
				}
			}
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return message{}, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return message{}, false
	}
	m.IJSON = true
	return m, true
}

// maxErrorText bounds the code and message read from an error reply of
// another shape than the protocol's, in bytes.
const maxErrorText = 4 << 10

// replyError reads the error member of a reply: the protocol's {code,
// message, data?} with a string code as it is; any other shape still as an
// error, so a reply carrying one always settles its call as a failure (a
// decline or a cancel upstream, never consent; issue 22). A code that is
// not a string (JSON-RPC 2.0's numeric -32000) keeps its JSON text as the
// code ("-32000"); a message that is not a string keeps its JSON text; an
// error that is not an object, or has no code, is parseError naming what
// came. Code and message are cut to maxErrorText bytes.
func replyError(raw json.RawMessage) *Error {
	var e Error
	if json.Unmarshal(raw, &e) == nil && e.Code != "" {
		return &e
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return Errorf(protocol.CodeParseError, "the reply's error is not an error object: %s", truncate(string(raw), 200))
	}
	text := func(v json.RawMessage) string {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return truncate(s, maxErrorText)
		}
		return truncate(string(v), maxErrorText)
	}
	e = Error{Code: text(obj["code"]), Message: text(obj["message"])}
	if obj["code"] == nil || isNull(obj["code"]) || e.Code == "" {
		e.Code = protocol.CodeParseError
		e.Message = "the reply's error has no code: " + truncate(string(raw), 200)
	}
	if d := obj["data"]; d != nil && !isNull(d) {
		e.Data = d
	}
	return &e
}

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
	// Cut at a character boundary so the message stays UTF-8.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
