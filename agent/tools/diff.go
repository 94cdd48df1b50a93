package tools

import (
	"fmt"
	"strings"
	"time"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is the number of unchanged lines around each hunk (git's default).
const diffContext = 3

// diffTimeout bounds the line diff; past it the diff is still correct, only
// possibly not minimal (ARCHITECTURE.md: raise go-diff's DiffTimeout).
const diffTimeout = 5 * time.Second

// unifiedDiff returns the unified diff (3 lines of context, git's hunk header
// form, "\ No newline at end of file" markers) that turns oldText into newText,
// with "--- a/<path>" / "+++ b/<path>" headers ("--- /dev/null" when added). It
// returns "" when the texts are equal. Lines keep their terminators, so CR bytes
// show as they are.
func unifiedDiff(path, oldText, newText string, added bool) string {
	if oldText == newText {
		return ""
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = diffTimeout
	a, b, lines := dmp.DiffLinesToRunes(oldText, newText)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(a, b, false), lines)

	type op struct {
		kind byte // ' ', '-' or '+'
		line string
	}
	var ops []op
	for _, d := range diffs {
		kind := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			kind = '-'
		case diffmatchpatch.DiffInsert:
			kind = '+'
		}
		for _, l := range splitLines(d.Text) {
			ops = append(ops, op{kind, l})
		}
	}

	var sb strings.Builder
	if added {
		sb.WriteString("--- /dev/null\n")
	} else {
		fmt.Fprintf(&sb, "--- a/%s\n", path)
	}
	fmt.Fprintf(&sb, "+++ b/%s\n", path)

	// oldLine[i] and newLine[i] count the old and new lines before ops[i].
	oldLine := make([]int, len(ops)+1)
	newLine := make([]int, len(ops)+1)
	for i, o := range ops {
		oldLine[i+1], newLine[i+1] = oldLine[i], newLine[i]
		if o.kind != '+' {
			oldLine[i+1]++
		}
		if o.kind != '-' {
			newLine[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk starts diffContext lines before this change and runs until a
		// stretch of more than 2*diffContext unchanged lines or the end.
		start := max(i-diffContext, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		stop := min(end+diffContext, len(ops))
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n",
			hunkRange(oldLine[start], oldLine[stop]-oldLine[start]),
			hunkRange(newLine[start], newLine[stop]-newLine[start]))
		for _, o := range ops[start:stop] {
			sb.WriteByte(o.kind)
			sb.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return sb.String()
}

// hunkRange renders one side of a hunk header as git does: "start,count", with
// ",1" left out and start being the line before the hunk when count is 0.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}

// splitLines splits s after each "\n"; a last line without one is kept.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
