package diffscope

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// Hunk and file ids (ARCHITECTURE.md, "Hunk ids"): lowercase hex sha256 of
//
//	tag \x00 old path \x00 new path \x00 old blob id \x00 new blob id \x00
//	old mode \x00 new mode \x00 context \x00 whitespace flag \x00 [hunk]
//
// where tag is "knightcode-hunk-v1" for a hunk (followed by the hunk's bytes
// exactly as git printed them: its "@@" header line and every line after it
// with their prefixes, "\ No newline at end of file" markers and CR bytes,
// each with its "\n") and "knightcode-file-v1" for a whole file (nothing
// follows). Paths are repository-relative, blob ids full (absent side: all
// zeros), modes as git prints them ("000000" for an absent side).
//
// context is the read's number of context lines in decimal and the
// whitespace flag is "w" for an ignoreWhitespace read, "-" otherwise, so ids
// of a context-0 read or an ignoreWhitespace read never equal the ids of a
// read an action accepts: actions re-read at their own context (never 0,
// never ignoring whitespace) and look the id up there (spec,
// thread/diff/read: "a context: 0 id matches no action"; "A hunk id from an
// ignoreWhitespace read matches no action").
const (
	hunkIDTag = "knightcode-hunk-v1"
	fileIDTag = "knightcode-file-v1"
)

// idHasher hashes ids of one file of one read.
type idHasher struct {
	prefix []byte // everything after the tag
}

func newIDHasher(e *rawEntry, context int, ignoreWhitespace bool) idHasher {
	ws := "-"
	if ignoreWhitespace {
		ws = "w"
	}
	var b []byte
	for _, f := range []string{e.oldPath, e.newPath, e.oldOID, e.newOID, e.oldMode, e.newMode, strconv.Itoa(context), ws} {
		b = append(b, f...)
		b = append(b, 0)
	}
	return idHasher{prefix: b}
}

func (h idHasher) sum(tag string, body []byte) string {
	var s hash.Hash = sha256.New()
	s.Write([]byte(tag))
	s.Write([]byte{0})
	s.Write(h.prefix)
	s.Write(body)
	return hex.EncodeToString(s.Sum(nil))
}

// fileID is the id of the whole-file change.
func (h idHasher) fileID() string { return h.sum(fileIDTag, nil) }

// hunkID is the id of one hunk given its exact bytes.
func (h idHasher) hunkID(hunk []byte) string { return h.sum(hunkIDTag, hunk) }

// checkID refuses an id that no read can have given (ids are 64
// lowercase hex digits): invalidParams naming field "hunkId", rather than
// the diffChanged of a well-formed id that is no longer in the diff. ""
// passes (no id).
func checkID(id string) error {
	if id == "" {
		return nil
	}
	if len(id) != 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return paramErr("hunkId", "%.80q is not a hunk or file id (ids are 64 lowercase hex digits, as thread/diff/read gives them)", id)
	}
	return nil
}
