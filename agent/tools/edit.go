package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/agent"
)

// Edit is the edit tool: {path, edits: [{oldText, newText}]}. Every oldText must
// occur exactly once in the file's ORIGINAL content (not in the result of
// earlier edits), and no two edits may overlap; then all edits are applied at
// once, or none is (any failure leaves the file untouched). The file's bytes
// outside the replaced ranges are kept exactly — lines are never split and
// joined — so CRLF endings, a missing final newline and invalid UTF-8 survive.
// When an oldText written with LF endings is not found in a file that has CRLF
// endings, the edit is retried with both its texts' LF turned into CRLF. The
// file is replaced atomically keeping its mode; a symlink edits its target. A
// completed edit reports details.fileChanges [{path, kind: "modify", diff}],
// path naming the file that changed: a symlink's target, not the link (issue
// 15).
type Edit struct {
	cwd string
}

// NewEdit returns the edit tool working in cwd.
func NewEdit(cwd string) *Edit { return &Edit{cwd: cwd} }

var editSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to edit, relative to the working directory or absolute"},
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements, each matched against the original file content",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {"type": "string", "description": "Exact text to replace; must occur exactly once in the file"},
          "newText": {"type": "string", "description": "Text to put in its place"}
        },
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`)

// Definition describes edit to the model.
func (t *Edit) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{
		Name: EditName,
		Description: "Edit a file by replacing exact text. Each oldText must match exactly once in the " +
			"original file (include enough surrounding lines to make it unique), edits must not overlap, " +
			"and either all edits apply or none does. Whitespace and line endings must match the file.",
		Parameters: editSchema,
	}
}

type editArgs struct {
	Path  string `json:"path"`
	Edits []struct {
		OldText *string `json:"oldText"`
		NewText *string `json:"newText"`
	} `json:"edits"`
}

// span is one edit placed in the original content.
type span struct {
	index   int // the edit's position in the call
	start   int // byte offset of oldText in the original
	end     int
	newText string
}

// Execute applies the edits (see Edit).
func (t *Edit) Execute(ctx context.Context, raw json.RawMessage) agent.ToolResult {
	var args editArgs
	if err := decodeArgs(EditName, raw, &args); err != nil {
		return agent.ErrorResult(err.Error())
	}
	if len(args.Edits) == 0 {
		return agent.ErrorResult(`edit: "edits" must hold at least one {oldText, newText}`)
	}
	path, err := ResolvePath(t.cwd, args.Path)
	if err != nil {
		return agent.ErrorResult("edit: " + err.Error())
	}
	tgt, err := statTarget(path)
	if err != nil {
		return agent.ErrorResult("edit: " + err.Error())
	}
	data, err := readTarget(ctx, tgt)
	if err != nil {
		return agent.ErrorResult("edit: " + err.Error())
	}
	original := string(data)
	crlf := strings.Contains(original, "\r\n")

	spans := make([]span, 0, len(args.Edits))
	for i, e := range args.Edits {
		if e.OldText == nil || e.NewText == nil {
			return agent.ErrorResult(fmt.Sprintf("edit: edits[%d] needs both oldText and newText", i))
		}
		oldText, newText := *e.OldText, *e.NewText
		if oldText == "" {
			return agent.ErrorResult(fmt.Sprintf("edit: edits[%d].oldText is empty", i))
		}
		at, n := find(original, oldText)
		if n == 0 && crlf && strings.Contains(oldText, "\n") && !strings.Contains(oldText, "\r\n") {
			oldText, newText = toCRLF(oldText), toCRLF(newText)
			at, n = find(original, oldText)
		}
		switch {
		case n == 0:
			return agent.ErrorResult(fmt.Sprintf("edit: edits[%d].oldText was not found in %s; it must match the file exactly, including whitespace and line endings", i, args.Path))
		case n > 1:
			return agent.ErrorResult(fmt.Sprintf("edit: edits[%d].oldText occurs %d times in %s; it must occur exactly once, so include more surrounding lines", i, n, args.Path))
		}
		spans = append(spans, span{index: i, start: at, end: at + len(oldText), newText: newText})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			a, b := min(spans[i-1].index, spans[i].index), max(spans[i-1].index, spans[i].index)
			return agent.ErrorResult(fmt.Sprintf("edit: edits[%d] and edits[%d] overlap in %s; merge them into one edit", a, b, args.Path))
		}
	}
	var sb strings.Builder
	sb.Grow(len(original))
	prev := 0
	for _, s := range spans {
		sb.WriteString(original[prev:s.start])
		sb.WriteString(s.newText)
		prev = s.end
	}
	sb.WriteString(original[prev:])
	updated := sb.String()
	if updated == original {
		return agent.ErrorResult(fmt.Sprintf("edit: the edits leave %s unchanged (each newText equals its oldText)", args.Path))
	}
	if err := ctx.Err(); err != nil {
		return agent.ErrorResult("edit: interrupted before writing " + args.Path)
	}
	if err := replaceFile(tgt, []byte(updated)); err != nil {
		return agent.ErrorResult("edit: " + err.Error())
	}
	shown := changedPath(t.cwd, path, tgt.path)
	res := textResult(fmt.Sprintf("Applied %d edit(s) to %s.", len(spans), args.Path))
	res.Details.FileChanges = []agent.FileChange{{
		Path: shown, Kind: agent.FileModify, Diff: unifiedDiff(shown, original, updated, false),
	}}
	return res
}

// find returns the offset of the first occurrence of sub in s and how many
// times sub occurs, overlapping occurrences included.
func find(s, sub string) (first, n int) {
	first = -1
	for from := 0; ; {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return first, n
		}
		if n == 0 {
			first = from + i
		}
		n++
		from += i + 1
	}
}

// toCRLF turns every LF not already preceded by CR into CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}
