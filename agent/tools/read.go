package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/internal/safefile"
)

// Read is the read tool: {path, offset?, limit?}. It returns the file's text as
// plain text, exactly as stored (no line numbers, CR bytes kept), so the model
// can copy oldText for edit from it. offset is the 1-based first line (default
// 1), limit the number of lines (default and maximum MaxLines); at most MaxBytes
// are shown, cut at a line end. When the text shown stops before the end of the
// file a note says which lines were shown and which offset continues; a single
// line over MaxBytes is cut with a note. Missing files, directories, binary
// files (a NUL byte in the first 8 KiB) and an offset past the end are error
// results. Images are not supported.
//
// Only regular files are read (internal/safefile, issue 15): a FIFO, a
// device, a socket, and anything under /proc, /sys or /dev (symlinks
// resolved) or on a kernel pseudo file system is an error result at once,
// never a wait; the read gives up when the call's ctx ends or after
// safefile.ReadTimeout.
type Read struct {
	cwd string
}

// NewRead returns the read tool working in cwd.
func NewRead(cwd string) *Read { return &Read{cwd: cwd} }

var readSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to read, relative to the working directory or absolute"},
    "offset": {"type": "integer", "minimum": 1, "description": "Line number to start reading from (1-based)"},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read"}
  },
  "required": ["path"],
  "additionalProperties": false
}`)

// Definition describes read to the model.
func (t *Read) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{
		Name: ReadName,
		Description: fmt.Sprintf("Read a text file. Returns its content as plain text, exactly as stored. "+
			"Output is limited to %d lines or %dKB, whichever comes first; use offset and limit to read "+
			"long files in parts.", MaxLines, MaxBytes/1024),
		Parameters: readSchema,
	}
}

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

// Execute reads the file (see Read).
func (t *Read) Execute(ctx context.Context, raw json.RawMessage) agent.ToolResult {
	var args readArgs
	if err := decodeArgs(ReadName, raw, &args); err != nil {
		return agent.ErrorResult(err.Error())
	}
	offset, limit := 1, MaxLines
	if args.Offset != nil {
		if *args.Offset < 1 {
			return agent.ErrorResult(fmt.Sprintf("read: offset must be at least 1, got %d", *args.Offset))
		}
		offset = *args.Offset
	}
	if args.Limit != nil {
		if *args.Limit < 1 {
			return agent.ErrorResult(fmt.Sprintf("read: limit must be at least 1, got %d", *args.Limit))
		}
		limit = min(*args.Limit, MaxLines)
	}
	path, err := ResolvePath(t.cwd, args.Path)
	if err != nil {
		return agent.ErrorResult("read: " + err.Error())
	}
	f, fi, err := safefile.Open(path)
	if err != nil {
		var refused *safefile.Error
		if errors.As(err, &refused) && refused.Mode.IsDir() {
			return agent.ErrorResult(fmt.Sprintf("read: %s is a directory", args.Path))
		}
		return agent.ErrorResult("read: " + err.Error())
	}
	defer f.Close()
	readCtx, cancel := context.WithTimeout(ctx, safefile.ReadTimeout)
	defer cancel()
	w, err := readWindow(readCtx, safefile.NewReader(readCtx, f), offset, limit)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return agent.ErrorResult(fmt.Sprintf("read: %s: gave up after %s without finishing the read", args.Path, safefile.ReadTimeout))
		}
		return agent.ErrorResult(fmt.Sprintf("read: %s: %v", args.Path, err))
	}
	if w.binary {
		return agent.ErrorResult(fmt.Sprintf("read: %s looks like a binary file (%d bytes); read shows text only", args.Path, fi.Size()))
	}
	if w.totalLines == 0 {
		return textResult("[The file is empty.]")
	}
	if offset > w.totalLines {
		return agent.ErrorResult(fmt.Sprintf("read: offset %d is beyond the end of %s (%d lines)", offset, args.Path, w.totalLines))
	}
	text := string(w.text)
	switch {
	case w.lineCut:
		text = withNote(text, fmt.Sprintf("[Line %d is longer than %dKB; only its first %s are shown. "+
			"Use bash (for example cut or head -c) to see the rest.]", offset, MaxBytes/1024, formatKB(int64(len(w.text)))))
	case w.lastShown < w.totalLines:
		text = withNote(text, fmt.Sprintf("[Showing lines %d-%d of %d. Use offset=%d to continue.]",
			offset, w.lastShown, w.totalLines, w.lastShown+1))
	}
	res := textResult(text)
	res.Details.Truncated = w.lineCut || w.lastShown < w.totalLines
	return res
}

// window is what readWindow saw: the text of the lines shown, the last line
// shown in full, the file's line count, whether the first line shown was cut at
// MaxBytes, and whether the file looks binary.
type window struct {
	text       []byte
	lastShown  int
	totalLines int
	lineCut    bool
	binary     bool
}

// readWindow streams r once, keeping lines [offset, offset+limit) up to
// MaxBytes (whole lines only, unless the first line alone is longer) and
// counting every line. Memory stays bounded whatever the file's size.
func readWindow(ctx context.Context, r io.Reader, offset, limit int) (window, error) {
	var w window
	buf := make([]byte, 64*1024)
	line := 1 // the line the next byte belongs to
	var cur []byte
	full := false
	first := true
	var last byte
	keep := func() {
		// cur holds line-1 completely (with its newline).
		if full || line-1 < offset || line-1 >= offset+limit {
			return
		}
		if len(w.text)+len(cur) > MaxBytes {
			full = true
			if len(w.text) == 0 {
				cut := MaxBytes
				for cut > 0 && !utf8.RuneStart(cur[cut]) {
					cut--
				}
				w.text = append(w.text, cur[:cut]...)
				w.lineCut = true
			}
			return
		}
		w.text = append(w.text, cur...)
		w.lastShown = line - 1
	}
	for {
		if err := ctx.Err(); err != nil {
			return w, err
		}
		n, err := r.Read(buf)
		chunk := buf[:n]
		if first && n > 0 {
			first = false
			if bytes.IndexByte(chunk[:min(n, 8192)], 0) >= 0 {
				w.binary = true
				return w, nil
			}
		}
		if n > 0 {
			last = chunk[n-1]
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			seg := chunk
			if i >= 0 {
				seg = chunk[:i+1]
			}
			inWindow := !full && line >= offset && line < offset+limit
			if inWindow && len(cur) <= MaxBytes {
				cur = append(cur, seg[:min(len(seg), MaxBytes+1-len(cur))]...)
			}
			chunk = chunk[len(seg):]
			if i >= 0 {
				line++
				keep()
				cur = cur[:0]
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return w, err
		}
	}
	if !first && last != '\n' {
		// The last line has no newline.
		line++
		keep()
	}
	w.totalLines = line - 1
	return w, nil
}
