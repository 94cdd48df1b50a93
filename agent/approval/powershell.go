package approval

import "strings"

// powerShellWords splits a PowerShell command with the strict tokenizer of
// SHELL-PREFIX.md R11, not a parser. Words are separated by spaces and TABs
// and are one of: a bare word of [A-Za-z0-9._:/\=+-]; '...' (single-quoted,
// no quote character inside); "..." (no '$', backtick or quote character
// inside). A quoted word must stand alone (no bare text glued to it).
// Everything else fails closed: ';', '&&', '||', '|', redirections, '$(...)',
// '(...)', '@(...)', $var, @splat, script blocks, the '&' and '.' invocation
// operators (as a program they are unknown), the backtick escape, '--%',
// comments, any newline or CR, and the curly quotes PowerShell treats as
// quotes (U+2018-U+201E).
func powerShellWords(command string) ([]word, bool) {
	src, ok := cleanCommand(command, false)
	if !ok || strings.ContainsAny(src, "\u2018\u2019\u201a\u201b\u201c\u201d\u201e") {
		return nil, false
	}
	var words []word
	for i := 0; i < len(src); {
		if blank(src[i]) {
			i++
			continue
		}
		var w word
		switch q := src[i]; q {
		case '\'', '"':
			end := strings.IndexByte(src[i+1:], q)
			if end < 0 {
				return nil, false
			}
			body := src[i+1 : i+1+end]
			if q == '"' && strings.ContainsAny(body, "$`") {
				return nil, false
			}
			w = word{text: body}
			i += end + 2
		default:
			j := i
			for j < len(src) && bareChar(src[j]) {
				j++
			}
			if j == i {
				return nil, false
			}
			w = word{text: src[i:j], plain: true}
			i = j
		}
		if i < len(src) && !blank(src[i]) {
			return nil, false
		}
		words = append(words, w)
	}
	return words, len(words) > 0
}

// bareChar reports whether b may appear in a bare PowerShell word (R11).
func bareChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("._:/\\=+-", b) >= 0
}
