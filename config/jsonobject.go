package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// object is a JSON object that keeps its keys in file order, so that a
// config/write edits one leaf and writes every other key back where it was
// (spec config/write: "atomic write keeping unknown keys"). Values are
// *object for nested objects and json.RawMessage for everything else
// (arrays and scalars are replaced whole, never edited inside). A key that
// appears twice keeps its first position and its last value, as
// encoding/json does.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// get returns the value of key.
func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set puts key last when it is new, else replaces its value in place.
func (o *object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// del removes key; it reports whether key was there.
func (o *object) del(key string) bool {
	if _, ok := o.vals[key]; !ok {
		return false
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// parseObject decodes data, which must hold one JSON object (blank data is
// an empty object). Errors are *SyntaxError values carrying the offset.
func parseObject(data []byte) (*object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return newObject(), nil
	}
	if !json.Valid(data) {
		// json.Unmarshal reports the offset of the first syntax error.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &syntaxError{msg: se.Error(), offset: se.Offset}
		}
		return nil, &syntaxError{msg: "invalid JSON", offset: int64(len(data))}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &syntaxError{msg: "the file must hold a JSON object", offset: int64(len(data) - len(trimmed) + 1)}
	}
	return decodeObject(json.RawMessage(trimmed))
}

// syntaxError is a parse failure at a byte offset (just past the offending
// byte, as encoding/json reports it).
type syntaxError struct {
	msg    string
	offset int64
}

func (e *syntaxError) Error() string { return e.msg }

// decodeObject decodes a valid JSON object's bytes.
func decodeObject(raw json.RawMessage) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	o := newObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if len(val) > 0 && val[0] == '{' {
			sub, err := decodeObject(val)
			if err != nil {
				return nil, err
			}
			o.set(key, sub)
		} else {
			o.set(key, val)
		}
	}
	return o, nil
}

// marshal encodes o with two-space indentation and a final newline, keys in
// their order.
func (o *object) marshal() ([]byte, error) {
	var buf bytes.Buffer
	if err := o.writeCompact(&buf); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (o *object) writeCompact(buf *bytes.Buffer) error {
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		switch v := o.vals[k].(type) {
		case *object:
			if err := v.writeCompact(buf); err != nil {
				return err
			}
		case json.RawMessage:
			if err := json.Compact(buf, v); err != nil {
				return err
			}
		default:
			return fmt.Errorf("config: unexpected value %T", v)
		}
	}
	buf.WriteByte('}')
	return nil
}

// plain converts o to map[string]any with numbers as json.Number, the shape
// config/read reports.
func (o *object) plain() map[string]any {
	m := make(map[string]any, len(o.keys))
	for _, k := range o.keys {
		switch v := o.vals[k].(type) {
		case *object:
			m[k] = v.plain()
		case json.RawMessage:
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			var x any
			if err := dec.Decode(&x); err == nil {
				m[k] = x
			}
		}
	}
	return m
}

// lineColumn turns the offset encoding/json reports (just past the
// offending byte) into a one-based line and column, the column counted in
// characters.
func lineColumn(data []byte, offset int64) (line, col int) {
	off := min(max(offset-1, 0), int64(len(data)))
	prefix := data[:off]
	line = bytes.Count(prefix, []byte("\n")) + 1
	col = utf8.RuneCount(prefix[bytes.LastIndexByte(prefix, '\n')+1:]) + 1
	return line, col
}
