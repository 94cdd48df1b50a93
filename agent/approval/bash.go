package approval

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// cleanCommand checks and trims a command before it is split into words
// (SHELL-PREFIX.md R1, R9): one trailing LF is dropped when trailingLF allows
// it; invalid UTF-8, a C0 control character other than TAB, and DEL refuse the
// command (so does NUL, which mvdan's lexer would drop, and CR, which it
// would take for a blank); then blanks around the command are trimmed. An
// empty result is refused.
func cleanCommand(cmd string, trailingLF bool) (string, bool) {
	if trailingLF {
		cmd = strings.TrimSuffix(cmd, "\n")
	}
	if !utf8.ValidString(cmd) {
		return "", false
	}
	for i := 0; i < len(cmd); i++ {
		if b := cmd[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return "", false
		}
	}
	cmd = strings.Trim(cmd, " \t")
	return cmd, cmd != ""
}

// bashWords returns the words of command when it is exactly one plain bash
// call whose every word is inert (SHELL-PREFIX.md R1-R5, R9), and false for
// anything else, including a parse error. Shapes refused by the parse tree:
// lists and pipelines, background and coprocesses, negation, a trailing ';',
// comments, redirections and heredocs, assignments, and every command that is
// not a *syntax.CallExpr (compound commands, functions, declarations, test
// and arithmetic commands, time).
func bashWords(command string) ([]word, bool) {
	src, ok := cleanCommand(command, true)
	if !ok {
		return nil, false
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
	f, err := parser.Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 || len(f.Last) != 0 {
		return nil, false
	}
	st := f.Stmts[0]
	if len(st.Comments) != 0 || st.Negated || st.Background || st.Coprocess || st.Disown ||
		st.Semicolon.IsValid() || len(st.Redirs) != 0 {
		return nil, false
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 0 || len(call.Args) == 0 {
		return nil, false
	}
	words := make([]word, 0, len(call.Args))
	for _, w := range call.Args {
		bw, ok := bashWord(w)
		if !ok {
			return nil, false
		}
		words = append(words, bw)
	}
	return words, true
}

// bashWord returns the value of one word when bash would pass it to the
// program unchanged apart from quote removal (R4): unquoted literals with no
// backslash, glob character, '$', leading '~' or brace expansion;
// single-quoted strings (anything inside is data); double-quoted strings of
// literal text with no '$', backtick or backslash. Everything else ($'...',
// $"...", substitutions, parameter and arithmetic expansion, extglob) is
// refused. plain is set for a word that is one unquoted literal whose source
// span is exactly its value (R5: mvdan drops a backslash-newline from
// Lit.Value, so the span is checked, not only the value).
func bashWord(w *syntax.Word) (word, bool) {
	var text, shape strings.Builder // shape: unquoted text, each quoted part as '_'
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if !literalSpan(p) || !inertLiteral(p.Value) {
				return word{}, false
			}
			text.WriteString(p.Value)
			shape.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return word{}, false
			}
			text.WriteString(p.Value)
			shape.WriteByte('_')
		case *syntax.DblQuoted:
			if p.Dollar {
				return word{}, false
			}
			for _, in := range p.Parts {
				lit, ok := in.(*syntax.Lit)
				if !ok || !literalSpan(lit) || strings.ContainsAny(lit.Value, "$`\\") {
					return word{}, false
				}
				text.WriteString(lit.Value)
			}
			shape.WriteByte('_')
		default:
			return word{}, false
		}
	}
	if braceExpansion(shape.String()) {
		return word{}, false
	}
	_, single := w.Parts[0].(*syntax.Lit)
	return word{text: text.String(), plain: len(w.Parts) == 1 && single}, true
}

// literalSpan reports whether a literal's source is exactly its value, so
// nothing (a backslash-newline, a NUL) was dropped between them.
func literalSpan(l *syntax.Lit) bool {
	return l.ValueEnd.Offset()-l.ValuePos.Offset() == uint(len(l.Value))
}

// inertLiteral reports whether an unquoted literal part expands to itself in
// bash: no backslash (R4), no glob character '*', '?' or '[', no '$' or
// backtick, no '~' starting the part or following '=' or ':' (bash expands
// "a=~" and "a=b:~"; "HEAD~1" stays literal), and none of the operator
// characters the parser should never leave in a literal (a second guard
// against a parser that splits differently from bash).
func inertLiteral(v string) bool {
	if strings.ContainsAny(v, "\\*?[$`;&|<>()") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '~' && (i == 0 || v[i-1] == '=' || v[i-1] == ':') {
			return false
		}
	}
	return true
}

// braceExpansion reports whether shape (a word's unquoted text, each quoted
// part replaced by '_') may brace-expand: an unquoted '{' followed, before the
// next '}' (or the end), by ',' or "..". "stash@{0}" and "@{u}..HEAD" stay
// literal, as they do in bash; "{a,b}", "{1..3}" and "{a,'b c'}" do not.
func braceExpansion(shape string) bool {
	for i := 0; i < len(shape); i++ {
		if shape[i] != '{' {
			continue
		}
		seg := shape[i+1:]
		if j := strings.IndexByte(seg, '}'); j >= 0 {
			seg = seg[:j]
		}
		if strings.Contains(seg, ",") || strings.Contains(seg, "..") {
			return true
		}
	}
	return false
}
