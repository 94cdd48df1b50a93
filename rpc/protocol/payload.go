package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// Payload references (spec: "History, listings, and large values" and
// "Limits and client reference"): a value too large to travel inline (over
// 64 KiB as JSON) is written once to a server-owned spool file and sent as
// a PayloadRef; payload/read returns its bytes in chunks.

// PayloadRef is an immutable reference to a value held in the server's
// payload spool: ID (random, opaque; never a path) and Bytes, the value's
// length in bytes. What the bytes are depends on where the reference
// stands: an item's or a turn's ref holds the whole item or turn as JSON
// (with every field inline, nothing referenced), a tool call's argumentsRef
// its arguments as JSON, its outputRef its output as UTF-8 text, an
// approval request's inputRef the call's input as JSON. A reference expires 30 minutes after its last use (a payload/read,
// or a read of the thread that sent it again); read the thread again to get
// a fresh one.
type PayloadRef struct {
	ID    string `json:"id"`
	Bytes int64  `json:"bytes"`
}

// MaxPayloadChunk is the most bytes one payload/read returns, before base64
// encoding (spec: "48 KiB per payload chunk before base64 encoding").
const MaxPayloadChunk = 48 << 10

// MaxInlineBytes is the most bytes one turn or item takes as JSON inline
// (spec: "64 KiB per inline turn/item; larger values use references").
const MaxInlineBytes = 64 << 10

// MaxHistoryResponseBytes is the most bytes a thread/read, thread/resume or
// thread/list response takes, envelope included (spec: "1 MiB per
// history/list response, including envelope reserve").
const MaxHistoryResponseBytes = 1 << 20

// Values of InvalidParamsData.Reason for a payload/read id.
const (
	// PayloadUnknown: the id names no payload of this server process (a
	// malformed id, one of another process, or a path).
	PayloadUnknown = "unknown"
	// PayloadExpired: the payload expired (30 minutes without use), or its
	// spool file was removed or changed outside the server; read the thread
	// again for a new reference.
	PayloadExpired = "expired"
)

// PayloadReadParams are the params of payload/read: a PayloadRef's id and
// the byte offset to read from (0 to the payload's length; a nextOffset of
// an earlier chunk).
type PayloadReadParams struct {
	ID     string `json:"id"`
	Offset int64  `json:"offset"`
}

// PayloadReadResult is one chunk of a payload: Data is base64 (standard
// encoding, padded) of at most 48 KiB (49,152 bytes) starting at the
// requested offset; NextOffset, present unless EOF, is the byte offset of
// the next chunk (a byte count, never a character count); EOF is true when
// the chunk ends the payload. Concatenating the decoded chunks from offset
// 0 until EOF gives the payload's bytes.
//
// Go: Data holds the chunk's bytes, which encoding/json writes and reads as
// that base64 string; AppendJSON writes the same JSON without encoding/json.
type PayloadReadResult struct {
	Data       []byte `json:"data"`
	NextOffset *int64 `json:"nextOffset,omitempty"`
	EOF        bool   `json:"eof"`
}

// payloadReadJSONReserve bounds the bytes of a PayloadReadResult's JSON
// other than its base64: the member names, braces, a nextOffset of up to
// 19 digits and "false".
const payloadReadJSONReserve = len(`{"data":"","nextOffset":,"eof":false}`) + 20

// JSONLen returns an upper bound of the length of r's JSON (AppendJSON), in
// bytes, so a response line can be made at its size at once.
func (r PayloadReadResult) JSONLen() int {
	return base64.StdEncoding.EncodedLen(len(r.Data)) + payloadReadJSONReserve
}

// AppendJSON appends r's JSON to dst and returns the extended slice: the
// bytes encoding/json writes for r ({"data":"<base64>","nextOffset":N,"eof":
// false}, nextOffset left out when nil), with Data base64-encoded straight
// into dst (payload/read writes a 48 KiB chunk without a copy of it as a
// string; issue 24). A nil Data is written as "" (data is always a string).
func (r PayloadReadResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"data":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, r.Data)
	dst = append(dst, '"')
	if r.NextOffset != nil {
		dst = append(dst, `,"nextOffset":`...)
		dst = strconv.AppendInt(dst, *r.NextOffset, 10)
	}
	dst = append(dst, `,"eof":`...)
	dst = strconv.AppendBool(dst, r.EOF)
	return append(dst, '}')
}

// UnmarshalJSON reads r from b as encoding/json would, with a fast path
// for the JSON AppendJSON writes (the base64 decoded straight into Data,
// without encoding/json's byte-by-byte scan of 64 KiB; issue 24); other
// forms (spaces, another order, escapes, unknown members) go through
// encoding/json.
func (r *PayloadReadResult) UnmarshalJSON(b []byte) error {
	if r.unmarshalCanonical(b) {
		return nil
	}
	type plain PayloadReadResult // without this method
	return json.Unmarshal(b, (*plain)(r))
}

// unmarshalCanonical reads b when it is exactly as AppendJSON writes it
// and reports whether it was; r is left alone when not.
func (r *PayloadReadResult) unmarshalCanonical(b []byte) bool {
	rest, ok := bytes.CutPrefix(b, []byte(`{"data":"`))
	if !ok {
		return false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return false
	}
	encoded := rest[:q]
	rest = rest[q+1:]
	var next *int64
	if tail, ok := bytes.CutPrefix(rest, []byte(`,"nextOffset":`)); ok {
		end := 0
		for end < len(tail) && '0' <= tail[end] && tail[end] <= '9' {
			end++
		}
		if end == 0 || (tail[0] == '0' && end > 1) {
			return false
		}
		n, err := strconv.ParseInt(string(tail[:end]), 10, 64)
		if err != nil {
			return false
		}
		next, rest = &n, tail[end:]
	}
	var eof bool
	switch string(rest) {
	case `,"eof":true}`:
		eof = true
	case `,"eof":false}`:
	default:
		return false
	}
	data := make([]byte, base64.StdEncoding.DecodedLen(len(encoded)))
	n, err := base64.StdEncoding.Decode(data, encoded)
	if err != nil {
		return false
	}
	r.Data, r.EOF = data[:n], eof
	if next != nil {
		r.NextOffset = next
	}
	return true
}

// MarshalJSON returns AppendJSON's bytes, so encoding/json writes a
// PayloadReadResult as the server's responses do.
func (r PayloadReadResult) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(make([]byte, 0, r.JSONLen())), nil
}

// PayloadRead ("payload/read") reads one chunk of a payload reference.
// Errors: invalidParams with data {field: "id", reason: "unknown" |
// "expired"}; invalidParams "offset" for an offset outside the payload.
// Spec: History, listings, and large values.
var PayloadRead = clientRequest[PayloadReadParams, PayloadReadResult]("payload/read", Concurrent)
