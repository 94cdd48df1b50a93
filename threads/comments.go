package threads

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Review comments (spec: "Workspaces, diffs and git": "Review comments are
// drafts the client keeps. They travel with the next turn/start or
// turn/queue/add as comments; the server quotes the commented lines from the
// diff the user reviewed, and the user item shows the comments next to the
// typed text").

// maxQuotedLines bounds the lines quoted for one comment; a longer range
// is quoted up to it with a note.
const maxQuotedLines = 200

// quoteComments quotes each review comment's lines from the side of the
// diff it was made on (diffscope.Differ.FileSides of its trees in the
// checkout cwd) and returns the block the model gets after the typed text
// ("" for none). The comments' fields were checked by the caller (see
// Input).
//
// Errors: invalidParams (*coreerr.ParamError) naming comments[i].<field>:
// a tree that is not a tree of the repository; a file that is not on that
// side, or is binary or too large; lines past the end of the file.
func quoteComments(ctx context.Context, differ *diffscope.Differ, cwd string, comments []agent.ReviewComment) (string, error) {
	if len(comments) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("Review comments on the diff (the commented lines are quoted):")
	for i, c := range comments {
		field := fmt.Sprintf("comments[%d]", i)
		sides, err := differ.FileSides(ctx, cwd, c.FromTree, c.ToTree, c.Path, "")
		if err != nil {
			if pe, ok := errors.AsType[*coreerr.ParamError](err); ok {
				return "", coreerr.Param(field+"."+pe.Field, "%s", pe.Message)
			}
			return "", err
		}
		lines, err := quoteSide(field, c, sides)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "\n\n%s, %s side, %s:\n", c.Path, c.Side, lineRange(c.StartLine, c.EndLine))
		for k, l := range lines {
			fmt.Fprintf(&b, "%6d | %s\n", c.StartLine+k, l)
		}
		if n := c.EndLine - c.StartLine + 1; n > len(lines) {
			fmt.Fprintf(&b, "       (%d more lines not quoted)\n", n-len(lines))
		}
		fmt.Fprintf(&b, "Comment: %s", strings.TrimSpace(c.Body))
	}
	return b.String(), nil
}

// quoteSide returns lines startLine..endLine of the comment's side (at most
// maxQuotedLines of them).
func quoteSide(field string, c agent.ReviewComment, s *diffscope.Sides) ([]string, error) {
	switch {
	case c.StartLine < 1 || c.EndLine < c.StartLine:
		return nil, coreerr.Param(field+".startLine", "lines %d to %d are no range of lines", c.StartLine, c.EndLine)
	case s.Binary:
		return nil, coreerr.Param(field+".path", "%s is binary: there are no lines to quote", c.Path)
	case s.TooLarge:
		return nil, coreerr.Param(field+".path", "%s is too large to quote", c.Path)
	}
	text := s.New
	if c.Side == protocol.ReviewSideOld {
		text = s.Old
	}
	if text == nil {
		return nil, coreerr.Param(field+".side", "%s is not on the %s side of the diff", c.Path, c.Side)
	}
	lines := strings.SplitAfter(*text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if c.EndLine > len(lines) {
		return nil, coreerr.Param(field+".endLine", "%s has %d lines on the %s side, not %d", c.Path, len(lines), c.Side, c.EndLine)
	}
	end := min(c.EndLine, c.StartLine+maxQuotedLines-1)
	out := make([]string, 0, end-c.StartLine+1)
	for _, l := range lines[c.StartLine-1 : end] {
		out = append(out, strings.TrimRight(l, "\r\n"))
	}
	return out, nil
}

// lineRange says "line N" or "lines N-M".
func lineRange(start, end int) string {
	if start == end {
		return fmt.Sprintf("line %d", start)
	}
	return fmt.Sprintf("lines %d-%d", start, end)
}

// wireComments converts a message's review comments for its item.
func wireComments(cs []agent.ReviewComment) []protocol.ReviewComment {
	if len(cs) == 0 {
		return nil
	}
	out := make([]protocol.ReviewComment, len(cs))
	for i, c := range cs {
		out[i] = protocol.ReviewComment(c)
	}
	return out
}
