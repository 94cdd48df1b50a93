package protocol

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
	// PayloadExpired: the payload expired (30 minutes without use); read the
	// thread again for a new reference.
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
type PayloadReadResult struct {
	Data       string `json:"data"`
	NextOffset *int64 `json:"nextOffset,omitempty"`
	EOF        bool   `json:"eof"`
}

// PayloadRead ("payload/read") reads one chunk of a payload reference.
// Errors: invalidParams with data {field: "id", reason: "unknown" |
// "expired"}; invalidParams "offset" for an offset outside the payload.
// Spec: History, listings, and large values.
var PayloadRead = clientRequest[PayloadReadParams, PayloadReadResult]("payload/read", Concurrent)
