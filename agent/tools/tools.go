package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/agent"
)

// The built-in tool names.
const (
	ReadName  = "read"
	BashName  = "bash"
	EditName  = "edit"
	WriteName = "write"
)

// Output limits shared by read and bash: at most this many lines and bytes of
// text go back to the model.
const (
	MaxLines = 2000
	MaxBytes = 50 * 1024
)

// All returns the built-in tools working in cwd (an absolute directory, the
// thread's cwd), in the order read, bash, edit, write, configured by opts.
func All(cwd string, opts ...Option) []agent.Tool {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bash := NewBash(cwd)
	bash.Groups = o.groups
	return []agent.Tool{NewRead(cwd), bash, NewEdit(cwd), NewWrite(cwd)}
}

// Option configures the tools All returns.
type Option func(*options)

type options struct {
	groups *ProcessGroups
}

// WithProcessGroups makes bash record in g the process groups its commands
// leave running in the background (Bash.Groups), so g.StopAll can stop them.
func WithProcessGroups(g *ProcessGroups) Option {
	return func(o *options) { o.groups = g }
}

// ResolvePath makes a path argument absolute the way every tool (and the
// file/* methods) reads it: "~" and "~/..." expand to the home directory
// (os.UserHomeDir), an absolute path is cleaned, anything else is joined to
// cwd (an absolute directory) and cleaned; "~user" forms are not expanded.
// Errors: an empty path, or an unknown home directory for a "~" path
// (wrapping os.UserHomeDir's error).
func ResolvePath(cwd, p string) (string, error) {
	if p == "" {
		return "", errors.New(`"path" is empty`)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot expand %q: %w", p, err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(cwd, p), nil
}

// displayPath is how fileChanges name abs: slash-separated relative to cwd when
// inside it, else abs itself.
func displayPath(cwd, abs string) string {
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(rel)
}

// changedPath is how fileChanges name a file that was asked for as asked
// (an absolute path) and written at real (asked with its symlinks resolved):
// displayPath of asked when both are the same, else real as seen from cwd
// with its symlinks resolved too (so an in-repository link to a file outside
// names the outside file, the one that changed, and a link to another file
// of the project names that file).
func changedPath(cwd, asked, real string) string {
	if real == asked {
		return displayPath(cwd, asked)
	}
	if rc, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = rc
	}
	return displayPath(cwd, real)
}

// decodeArgs decodes a call's arguments object into v (unknown fields are
// ignored) and returns an error result text on failure.
func decodeArgs(tool string, args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: invalid arguments: %v", tool, err)
	}
	return nil
}

// textResult is a successful result holding one text block.
func textResult(text string) agent.ToolResult {
	return agent.ToolResult{Content: []agent.ContentBlock{agent.TextBlock(text)}}
}

// withNote appends a bracketed note to text, after a blank line.
func withNote(text, note string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return note
	}
	return text + "\n\n" + note
}

// formatKB renders a byte count as KB with one decimal.
func formatKB(n int64) string { return fmt.Sprintf("%.1fKB", float64(n)/1024) }
