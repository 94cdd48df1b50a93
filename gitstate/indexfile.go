package gitstate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// This file reads git's index file (gitformat-index(5)) far enough to
// compare two indexes' entries without their stat data, so that a
// rollback can put the user's index file back byte for byte when its
// entries are what the rollback would write (issue 22 QA, L1: a partly
// staged entry's stat data came back zeroed, since update-index
// --index-info writes none and a refresh cannot fill it in for a file that
// differs from its entry).

// indexEntry is an index entry without its stat data: mode, object id,
// flags (assume-valid, stage, name length) and extended flags
// (skip-worktree, intent-to-add), and path.
type indexEntry struct {
	mode          uint32
	oid           string
	flags, xflags uint16
	path          string
}

// readIndexEntries reads the entries of the index file at path, for
// object ids of hashLen bytes (20 for SHA-1, 32 for SHA-256). Errors: the
// file's, or a format it does not read (a version other than 2, 3 or 4,
// a split index: the "link" extension, whose entries are in another
// file).
func readIndexEntries(path string, hashLen int) ([]indexEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("gitstate: index %s: %s", path, what) }
	if len(data) < 12+hashLen || !bytes.Equal(data[:4], []byte("DIRC")) {
		return nil, bad("not an index file")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, bad(fmt.Sprintf("version %d", version))
	}
	count := binary.BigEndian.Uint32(data[8:12])
	end := len(data) - hashLen // the trailing checksum
	off := 12
	entries := make([]indexEntry, 0, min(int(count), 1<<20))
	prev := ""
	for range count {
		fixed := 40 + hashLen + 2
		if off+fixed > end {
			return nil, bad("truncated entry")
		}
		e := indexEntry{
			mode:  binary.BigEndian.Uint32(data[off+24 : off+28]),
			oid:   string(data[off+40 : off+40+hashLen]),
			flags: binary.BigEndian.Uint16(data[off+40+hashLen : off+fixed]),
		}
		start := off
		off += fixed
		if e.flags&0x4000 != 0 { // extended
			if version < 3 || off+2 > end {
				return nil, bad("extended flags")
			}
			e.xflags = binary.BigEndian.Uint16(data[off : off+2])
			off += 2
		}
		if version == 4 {
			strip, n := binary.Uvarint(data[off:end])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, bad("path prefix")
			}
			off += n
			nul := bytes.IndexByte(data[off:end], 0)
			if nul < 0 {
				return nil, bad("path")
			}
			e.path = prev[:len(prev)-int(strip)] + string(data[off:off+nul])
			off += nul + 1
		} else {
			nul := bytes.IndexByte(data[off:end], 0)
			if nul < 0 {
				return nil, bad("path")
			}
			e.path = string(data[off : off+nul])
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (off+nul-start+8)&^7
		}
		prev = e.path
		entries = append(entries, e)
	}
	for off+8 <= end {
		sig := string(data[off : off+4])
		size := int(binary.BigEndian.Uint32(data[off+4 : off+8]))
		if sig == "link" {
			return nil, bad("a split index")
		}
		if size < 0 || off+8+size > end {
			return nil, bad("truncated extension")
		}
		off += 8 + size
	}
	return entries, nil
}

// sameIndexEntries reports whether the index files a and b hold the same
// entries, in the same order, but for their stat data. false when either
// cannot be read ([readIndexEntries]).
func sameIndexEntries(a, b string, hashLen int) bool {
	ea, err := readIndexEntries(a, hashLen)
	if err != nil {
		return false
	}
	eb, err := readIndexEntries(b, hashLen)
	if err != nil || len(ea) != len(eb) {
		return false
	}
	for i := range ea {
		if ea[i] != eb[i] {
			return false
		}
	}
	return true
}
