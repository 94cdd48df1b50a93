package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/internal/safefile"
)

// Write is the write tool: {path, content}. It creates the file (and missing
// parent directories) or replaces an existing one atomically, keeping its mode;
// a symlink writes its target. A completed write reports details.fileChanges
// [{path, kind: "add" or "modify", diff}], path naming the file that changed
// (a symlink's target, not the link; issue 15); writing a file's own content back
// reports no change.
type Write struct {
	cwd string
}

// NewWrite returns the write tool working in cwd.
func NewWrite(cwd string) *Write { return &Write{cwd: cwd} }

var writeSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to write, relative to the working directory or absolute"},
    "content": {"type": "string", "description": "The whole new content of the file"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)

// Definition describes write to the model.
func (t *Write) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{
		Name: WriteName,
		Description: "Write a file with the given content, creating it and its parent directories if " +
			"needed or replacing it entirely. Prefer edit for changes to an existing file.",
		Parameters: writeSchema,
	}
}

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// Execute writes the file (see Write).
func (t *Write) Execute(ctx context.Context, raw json.RawMessage) agent.ToolResult {
	var args writeArgs
	if err := decodeArgs(WriteName, raw, &args); err != nil {
		return agent.ErrorResult(err.Error())
	}
	if args.Content == nil {
		return agent.ErrorResult(`write: "content" is missing`)
	}
	path, err := ResolvePath(t.cwd, args.Path)
	if err != nil {
		return agent.ErrorResult("write: " + err.Error())
	}
	if err := ctx.Err(); err != nil {
		return agent.ErrorResult("write: interrupted before writing " + args.Path)
	}
	content := *args.Content
	tgt, err := statTarget(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return agent.ErrorResult(fmt.Sprintf("write: %s is a dangling symlink", args.Path))
		}
		if _, err := safefile.Resolve(path); err != nil {
			return agent.ErrorResult("write: " + err.Error())
		}
		if err := createFile(path, []byte(content)); err != nil {
			return agent.ErrorResult("write: " + err.Error())
		}
		real := path // a missing parent folder may sit behind a symlink
		if r, err := filepath.EvalSymlinks(path); err == nil {
			real = r
		}
		shown := changedPath(t.cwd, path, real)
		res := textResult(fmt.Sprintf("Created %s (%d bytes).", args.Path, len(content)))
		res.Details.FileChanges = []agent.FileChange{{
			Path: shown, Kind: agent.FileAdd, Diff: unifiedDiff(shown, "", content, true),
		}}
		return res
	case err != nil:
		return agent.ErrorResult("write: " + err.Error())
	}
	old, err := readTarget(ctx, tgt)
	if err != nil {
		return agent.ErrorResult("write: " + err.Error())
	}
	if string(old) == content {
		return textResult(fmt.Sprintf("%s already has this content; nothing changed.", args.Path))
	}
	if err := replaceFile(tgt, []byte(content)); err != nil {
		return agent.ErrorResult("write: " + err.Error())
	}
	shown := changedPath(t.cwd, path, tgt.path)
	res := textResult(fmt.Sprintf("Wrote %s (%d bytes).", args.Path, len(content)))
	res.Details.FileChanges = []agent.FileChange{{
		Path: shown, Kind: agent.FileModify, Diff: unifiedDiff(shown, string(old), content, false),
	}}
	return res
}
