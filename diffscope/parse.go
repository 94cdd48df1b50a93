package diffscope

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// This file parses the output of
//
//	git diff-tree -r --raw -z -p -M <DiffFlags> <from> <to>
//
// as it streams: first the -z raw records (exact paths, full blob ids,
// modes, status letters), then git's patch text, cut into one section per
// "diff --git" line. Sections are matched to raw records by the header line
// git prints for them (quoted as git quotes), so no path is ever taken from
// patch text. Lines are read with bufio.Reader.ReadSlice, so a line of any
// length (a 29 MB minified file, shared/cases C40) is read in pieces; hunk
// bytes past the per-file limit are counted but not kept.

// rawEntry is one raw record: ":<old mode> <new mode> <old oid> <new oid>
// <status>" then one path, or two (source, destination) for R and C.
type rawEntry struct {
	oldMode, newMode string // "000000" for an absent side
	oldOID, newOID   string // all zeros for an absent side
	status           byte   // A, D, M, R, C, T (U and X do not occur between trees)
	score            string // similarity of R and C, e.g. "087"
	oldPath, newPath string // equal unless renamed or copied
}

// section is one "diff --git" section of the patch.
type section struct {
	header    []byte   // from the "diff --git" line to the line before the first hunk
	hunks     [][]byte // each hunk from its "@@" line through its last line, exactly as printed
	binary    bool     // "Binary files ... differ"
	adds      int      // "+" lines of all hunks, kept or not
	dels      int      // "-" lines of all hunks, kept or not
	hunkBytes int      // bytes of all hunks, kept or not
	dropped   bool     // hunks not kept: hunkBytes passed the limit
}

// parsedEntry is a raw record with its sections: none (a whitespace-only
// change hidden by -w), one, or two (a type change, which git prints as a
// deletion then a creation).
type parsedEntry struct {
	rawEntry
	parts []*section
}

type diffParser struct {
	br      *bufio.Reader
	limit   int // hunk bytes of one file past which its hunks are dropped
	scratch []byte
	entries []*parsedEntry
	last    int // index of the entry the latest section went to
	done    func(*parsedEntry) error
}

// parseTreeDiff parses the stream r and hands each entry with at least one
// section to done, in order, as soon as its last section is read (so the
// caller's work overlaps git's). Hunks of a file whose hunk bytes pass
// limit are dropped while reading (their lines still counted); limit <= 0
// means no limit. An error from done stops the parse.
func parseTreeDiff(r io.Reader, limit int, done func(*parsedEntry) error) error {
	p := &diffParser{br: bufio.NewReaderSize(r, 64<<10), limit: limit, last: -1, done: done}
	if err := p.readRaw(); err != nil {
		return err
	}
	if err := p.readPatch(); err != nil {
		return err
	}
	return p.finish()
}

// finish hands the latest entry to done and forgets it.
func (p *diffParser) finish() error {
	if p.last < 0 || p.entries[p.last] == nil {
		return nil
	}
	e := p.entries[p.last]
	p.entries[p.last] = nil
	return p.done(e)
}

func (p *diffParser) token() (string, error) {
	s, err := p.br.ReadString(0)
	if err != nil {
		if err == io.EOF && s != "" {
			return "", fmt.Errorf("diffscope: truncated raw diff record %q", s)
		}
		return "", err
	}
	return s[:len(s)-1], nil
}

func (p *diffParser) readRaw() error {
	for {
		b, err := p.br.Peek(1)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch b[0] {
		case 0: // the separator before the patch
			_, err := p.br.ReadByte()
			return err
		case ':':
		default:
			return nil // patch text without raw records
		}
		meta, err := p.token()
		if err != nil {
			return err
		}
		f := strings.Fields(meta[1:])
		if len(f) != 5 || f[4] == "" {
			return fmt.Errorf("diffscope: unexpected raw diff record %q", meta)
		}
		e := &parsedEntry{rawEntry: rawEntry{oldMode: f[0], newMode: f[1], oldOID: f[2], newOID: f[3], status: f[4][0], score: f[4][1:]}}
		if e.oldPath, err = p.token(); err != nil {
			return err
		}
		e.newPath = e.oldPath
		if e.status == 'R' || e.status == 'C' {
			if e.newPath, err = p.token(); err != nil {
				return err
			}
		}
		p.entries = append(p.entries, e)
	}
}

// readLine reads one line (with its "\n", if any) and returns at most max
// bytes of it, in a buffer valid until the next call, and its full length.
func (p *diffParser) readLine(max int) ([]byte, int, error) {
	p.scratch = p.scratch[:0]
	n := 0
	for {
		chunk, err := p.br.ReadSlice('\n')
		n += len(chunk)
		if room := max - len(p.scratch); room > 0 {
			p.scratch = append(p.scratch, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && n > 0:
			return p.scratch, n, nil
		default:
			return p.scratch, n, err
		}
	}
}

// maxHeaderLine bounds a header line kept whole (paths are at most PATH_MAX
// in practice; "Binary files" lines hold two).
const maxHeaderLine = 1 << 20

func (p *diffParser) readPatch() error {
	var cur *section
	inHunk := false
	for {
		keepMax := maxHeaderLine
		peek, _ := p.br.Peek(len("diff --git "))
		switch {
		case bytes.HasPrefix(peek, []byte("diff --git ")) || bytes.HasPrefix(peek, []byte("@@")):
			// a section or hunk header: always whole
		case inHunk && cur.dropped:
			keepMax = 0
		case inHunk && p.limit > 0:
			keepMax = p.limit - cur.hunkBytes
		case inHunk:
			keepMax = math.MaxInt
		}
		// 16 bytes are always kept: enough to tell the kind of line.
		line, n, err := p.readLine(max(keepMax, 16))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")):
			if n != len(line) {
				return fmt.Errorf("diffscope: diff header line too long")
			}
			cur = &section{header: append([]byte(nil), line...)}
			inHunk = false
			if err := p.attach(cur); err != nil {
				return err
			}
		case cur == nil:
			return fmt.Errorf("diffscope: unexpected diff output %q", line)
		case bytes.HasPrefix(line, []byte("@@")):
			if n != len(line) {
				return fmt.Errorf("diffscope: hunk header line too long")
			}
			inHunk = true
			cur.hunkBytes += n
			p.keep(cur, line, n, true)
		case !inHunk:
			if n != len(line) {
				return fmt.Errorf("diffscope: diff header line too long")
			}
			cur.header = append(cur.header, line...)
			if bytes.HasPrefix(line, []byte("Binary files ")) {
				cur.binary = true
			}
		default:
			switch line[0] {
			case '+':
				cur.adds++
			case '-':
				cur.dels++
			}
			cur.hunkBytes += n
			p.keep(cur, line, n, false)
		}
	}
}

// keep appends a hunk line of length n (line holds its first bytes) to cur,
// or drops cur's hunks once they pass the limit.
func (p *diffParser) keep(cur *section, line []byte, n int, startsHunk bool) {
	if cur.dropped {
		return
	}
	if p.limit > 0 && cur.hunkBytes > p.limit {
		cur.dropped = true
		cur.hunks = nil
		return
	}
	if startsHunk {
		cur.hunks = append(cur.hunks, append(make([]byte, 0, max(256, 2*n)), line...))
		return
	}
	last := len(cur.hunks) - 1
	cur.hunks[last] = append(cur.hunks[last], line...)
}

// attach gives section s to its raw entry.
func (p *diffParser) attach(s *section) error {
	if p.last >= 0 {
		e := p.entries[p.last]
		if e.status == 'T' && len(e.parts) == 1 && bytes.Equal(s.header, e.headerLine()) {
			e.parts = append(e.parts, s)
			return nil
		}
	}
	for i := p.last + 1; i < len(p.entries); i++ {
		if e := p.entries[i]; bytes.Equal(s.header, e.headerLine()) {
			if err := p.finish(); err != nil {
				return err
			}
			e.parts = append(e.parts, s)
			p.last = i
			return nil
		}
	}
	return fmt.Errorf("diffscope: diff section %q matches no raw record", bytes.TrimSuffix(s.header, []byte("\n")))
}

// headerLine is the "diff --git" line git prints for the entry.
func (e *rawEntry) headerLine() []byte {
	var b []byte
	b = append(b, "diff --git "...)
	b = appendQuoted(b, "a/"+e.oldPath)
	b = append(b, ' ')
	b = appendQuoted(b, "b/"+e.newPath)
	return append(b, '\n')
}

// appendQuoted appends name as git prints it in a diff header with
// core.quotePath=false (git's quote_c_style): in double quotes, with C
// escapes, when it holds a control character, a double quote or a
// backslash; bytes of 0x80 and above are printed as they are.
func appendQuoted(b []byte, name string) []byte {
	needs := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c == 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return append(b, name...)
	}
	b = append(b, '"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\v':
			b = append(b, `\v`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		default:
			if c < 0x20 || c == 0x7f {
				b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// hunkHeader parses a hunk header line "@@ -a[,b] +c[,d] @@[ section]"
// without its line ending (a missing count is 1). It is the one parser of
// hunk headers: reads (buildHunk) and patches (parseFragHeader) use it. A
// header that is not of this form or has a negative number is an error.
func hunkHeader(line string) (oldStart, oldLines, newStart, newLines int, err error) {
	rest, ok := strings.CutPrefix(line, "@@ -")
	end := strings.Index(rest, " @@")
	if !ok || end < 0 {
		return 0, 0, 0, 0, fmt.Errorf("diffscope: bad hunk header %q", line)
	}
	oldR, newR, ok := strings.Cut(rest[:end], " +")
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("diffscope: bad hunk header %q", line)
	}
	rng := func(s string) (int, int, bool) {
		a, b, has := strings.Cut(s, ",")
		start, err := strconv.Atoi(a)
		if err != nil || start < 0 {
			return 0, 0, false
		}
		if !has {
			return start, 1, true
		}
		n, err := strconv.Atoi(b)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		return start, n, true
	}
	if oldStart, oldLines, ok = rng(oldR); ok {
		newStart, newLines, ok = rng(newR)
	}
	if !ok {
		return 0, 0, 0, 0, fmt.Errorf("diffscope: bad hunk header %q", line)
	}
	return oldStart, oldLines, newStart, newLines, nil
}
