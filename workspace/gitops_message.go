package workspace

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// CommitPromptBudget is the most bytes of diff text (file headers and
// hunk lines) [CommitPrompt] puts in a prompt. The list of changed paths
// is not counted: every path is always named.
const CommitPromptBudget = 24 << 10

// commitInstructions opens every commit-message prompt.
const commitInstructions = `Write a git commit message for the staged changes below.
Answer with the message only: a summary line of at most 72 characters in the imperative mood, then, when the change needs it, a blank line and a short body wrapped at 72 characters. No preamble, no quotes, no code fences, no Markdown headings.
`

// CommitPrompt builds the prompt a model writes a commit message from:
// the instructions, every changed path (with its kind and line counts),
// then the staged diff file by file until budget bytes of diff text are
// used; a hunk that does not fit is cut at a line and the rest of the
// diff is left out, with a note saying so. It depends on diff and budget
// only, so identical diffs give identical prompts. It never holds
// anything but the diff (no conversation). A diff go-gitdiff cannot
// parse is cut at budget bytes as text, after the same instructions.
func CommitPrompt(diff string, budget int) string {
	var b strings.Builder
	b.WriteString(commitInstructions)
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil || (len(files) == 0 && strings.TrimSpace(diff) != "") {
		b.WriteString("\nStaged diff:\n")
		text, cut := cutBytes(diff, budget)
		b.WriteString(text)
		if cut > 0 {
			fmt.Fprintf(&b, "\n[... %d more bytes of diff left out]\n", cut)
		}
		return b.String()
	}
	b.WriteString("\nChanged files:\n")
	for _, f := range files {
		b.WriteString(fileLine(f))
	}
	b.WriteString("\nStaged diff:\n")
	left := budget
	cutFiles := 0
	for i, f := range files {
		if left <= 0 {
			cutFiles = len(files) - i
			break
		}
		head := fmt.Sprintf("--- %s\n", displayName(f))
		if f.IsBinary {
			head = fmt.Sprintf("--- %s (binary)\n", displayName(f))
		}
		b.WriteString(head)
		left -= len(head)
		for j, frag := range f.TextFragments {
			var fb strings.Builder
			fb.WriteString(frag.Header() + "\n")
			for _, l := range frag.Lines {
				fb.WriteString(l.Op.String() + l.Line)
				if !strings.HasSuffix(l.Line, "\n") {
					fb.WriteString("\n")
				}
			}
			text := fb.String()
			if len(text) <= left {
				b.WriteString(text)
				left -= len(text)
				continue
			}
			kept, _ := cutLines(text, left)
			b.WriteString(kept)
			fmt.Fprintf(&b, "[... %d more hunks of this file cut]\n", len(f.TextFragments)-j)
			left = 0
			break
		}
	}
	if cutFiles > 0 {
		fmt.Fprintf(&b, "[... the diffs of %d more files are left out; every changed file is named above]\n", cutFiles)
	}
	return b.String()
}

// fileLine is one line of the changed-files list: kind, path, counts.
func fileLine(f *gitdiff.File) string {
	kind := "modified"
	switch {
	case f.IsNew:
		kind = "added"
	case f.IsDelete:
		kind = "deleted"
	case f.IsRename:
		kind = "renamed"
	case f.IsCopy:
		kind = "copied"
	case f.OldMode != f.NewMode && len(f.TextFragments) == 0:
		kind = "mode changed"
	}
	var add, del int64
	for _, frag := range f.TextFragments {
		add += frag.LinesAdded
		del += frag.LinesDeleted
	}
	if f.IsBinary {
		return fmt.Sprintf("- %s %s (binary)\n", kind, displayName(f))
	}
	return fmt.Sprintf("- %s %s (+%d -%d)\n", kind, displayName(f), add, del)
}

func displayName(f *gitdiff.File) string {
	switch {
	case f.IsDelete:
		return f.OldName
	case (f.IsRename || f.IsCopy) && f.OldName != f.NewName:
		return f.OldName + " -> " + f.NewName
	}
	return f.NewName
}

// cutLines keeps the whole lines of text that fit in n bytes and reports
// how many lines were cut.
func cutLines(text string, n int) (string, int) {
	if len(text) <= n {
		return text, 0
	}
	kept := text[:n]
	if i := strings.LastIndexByte(kept, '\n'); i >= 0 {
		kept = kept[:i+1]
	} else {
		kept = ""
	}
	return kept, strings.Count(text[len(kept):], "\n")
}

// cutBytes keeps at most n bytes of text, at a line end when there is
// one, and reports how many bytes were left out.
func cutBytes(text string, n int) (string, int) {
	kept, _ := cutLines(text, n)
	return kept, len(text) - len(kept)
}

// ModelFunc asks a model for one answer to prompt, outside any
// conversation.
type ModelFunc func(ctx context.Context, prompt string) (string, error)

// CommitMessage writes a commit message for the staged diff with model:
// one call with [CommitPrompt](diff, [CommitPromptBudget]), its answer
// cleaned by [CleanCommitMessage]. Errors: model's error as it is;
// [*ParamError] emptyMessage when the cleaned answer is empty (no
// commit must be made then).
func CommitMessage(ctx context.Context, diff string, model ModelFunc) (string, error) {
	answer, err := model(ctx, CommitPrompt(diff, CommitPromptBudget))
	if err != nil {
		return "", err
	}
	msg := CleanCommitMessage(answer)
	if msg == "" {
		return "", emptyMessage("the model wrote an empty commit message: give a message")
	}
	return msg, nil
}

var (
	fenceRe = regexp.MustCompile("(?s)^```[^\n]*\n(.*?)\n?```\\s*$")
	// preambleRe matches a first line that introduces the message rather
	// than being it ("Here is a commit message:", "Sure! ...:", "Commit
	// message:").
	preambleRe = regexp.MustCompile(`(?i)^(here('s| is| are)\b|sure\b|certainly\b|okay\b|ok\b|of course\b|below\b|suggested\b|proposed\b|commit message\b|git commit message\b)[^\n]*:\s*$`)
	labelRe    = regexp.MustCompile(`(?i)^(commit message|subject|summary|title)\s*:\s*`)
)

// CleanCommitMessage strips what a model wraps a commit message in:
// surrounding whitespace, a preamble line ("Here is the commit
// message:"), a code fence around the message (the fence's content is
// the message, also after a preamble), a "Subject:"-style label on the
// summary line, matching quotes around the whole message, trailing
// spaces on every line and runs of blank lines. "" means the answer held
// no message.
func CleanCommitMessage(answer string) string {
	s := strings.TrimSpace(strings.ReplaceAll(answer, "\r\n", "\n"))
	for range 3 {
		before := s
		if first, rest, ok := strings.Cut(s, "\n"); ok && preambleRe.MatchString(strings.TrimSpace(first)) {
			s = strings.TrimSpace(rest)
		} else if !ok && preambleRe.MatchString(s) {
			s = ""
		}
		if m := fenceRe.FindStringSubmatch(s); m != nil {
			s = strings.TrimSpace(m[1])
		} else if strings.HasPrefix(s, "```") {
			// An opening fence whose close is missing or followed by prose.
			if _, rest, ok := strings.Cut(s, "\n"); ok {
				body, _, _ := strings.Cut(rest, "```")
				s = strings.TrimSpace(body)
			} else {
				s = ""
			}
		}
		s = labelRe.ReplaceAllString(s, "")
		for _, q := range []string{`"""`, `"`, `'`, "`", "“"} {
			closeQ := q
			if q == "“" {
				closeQ = "”"
			}
			if len(s) >= len(q)+len(closeQ) && strings.HasPrefix(s, q) && strings.HasSuffix(s, closeQ) {
				s = strings.TrimSpace(s[len(q) : len(s)-len(closeQ)])
				break
			}
		}
		if s == before {
			break
		}
	}
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
