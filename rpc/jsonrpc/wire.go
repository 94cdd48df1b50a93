package jsonrpc

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Outgoing lines are assembled from already-encoded parts so an id is echoed
// byte for byte and a payload is encoded once, also when broadcast. No
// "jsonrpc" member is written (spec: app-server transport).

// encodeJSON encodes v without HTML escaping and without a trailing newline.
// encoding/json never writes a raw newline inside a value, so the result fits
// on one NDJSON line.
func encodeJSON(v any) (json.RawMessage, error) {
	buf := encBufPool.Get().(*bytes.Buffer)
	defer encBufPool.Put(buf)
	buf.Reset()
	if raw, ok := v.(json.RawMessage); ok && raw != nil {
		// Compact validates and drops whitespace, newlines included.
		if err := json.Compact(buf, raw); err != nil {
			return nil, err
		}
		return bytes.Clone(buf.Bytes()), nil
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

var encBufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// responseLine is {"id":<id>,"result":<result>}\n.
func responseLine(id, result json.RawMessage) []byte {
	return appendedResponseLine(id, encodedJSON(result))
}

// encodedJSON is a JSON value already encoded: it appends itself.
type encodedJSON json.RawMessage

func (e encodedJSON) AppendJSON(dst []byte) []byte { return append(dst, e...) }
func (e encodedJSON) JSONLen() int                 { return len(e) }

// JSONAppender is a result that writes its own JSON, for a large result
// that would otherwise be built as Go values and then copied by
// encoding/json (payload/read's chunk, base64-encoded straight into the
// response line; issue 24). AppendJSON appends the result's JSON to dst: one
// valid, compact JSON value without a newline, as encoding/json would write
// it; writeResponse does not check it. JSONLen is an upper bound of its
// length in bytes, so the line is made at its size at once.
type JSONAppender interface {
	AppendJSON(dst []byte) []byte
	JSONLen() int
}

// appendedResponseLine is {"id":<id>,"result":<a's JSON>}\n, a written
// into the line without an intermediate copy.
func appendedResponseLine(id json.RawMessage, a JSONAppender) []byte {
	b := make([]byte, 0, len(id)+a.JSONLen()+24)
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = a.AppendJSON(b)
	return append(b, "}\n"...)
}

// errorLine is {"id":<id>,"error":<err>}\n.
func errorLine(id json.RawMessage, e *Error) []byte {
	raw, err := encodeJSON(e)
	if err != nil { // unencodable data: keep code and message
		raw, _ = encodeJSON(&Error{Code: e.Code, Message: e.Message})
	}
	b := make([]byte, 0, len(id)+len(raw)+24)
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"error":`...)
	b = append(b, raw...)
	return append(b, "}\n"...)
}

// requestLine is {"id":<id>,"method":"<method>","params":<params>}\n, or a
// notification line when id is nil. Params are left out when nil.
func requestLine(id json.RawMessage, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, len(id)+len(method)+len(params)+40)
	b = append(b, '{')
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...)
}
