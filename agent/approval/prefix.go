package approval

import (
	"slices"
	"strings"
)

// Shell is the language a shell tool runs its command in. Prefix grants are
// shell-specific (SHELL-PREFIX.md R8): a bash grant never matches a PowerShell
// command, and the reverse.
type Shell string

// The shells a prefix can be derived for.
const (
	ShellBash       Shell = "bash"
	ShellPowerShell Shell = "powershell"
)

// Prefix is a shell command prefix: the program plus its known subcommand
// path (SHELL-PREFIX.md R7), e.g. {bash, [git stash drop]}. Derive is the only
// source of prefixes; every word is a plain literal without blanks, quotes or
// backslashes, so String joins them unambiguously.
type Prefix struct {
	Shell Shell
	Words []string
}

// String returns the words joined by single spaces ("git stash drop"): the
// form the approval request offers as prefix.
func (p Prefix) String() string { return strings.Join(p.Words, " ") }

// Equal reports whether p and q are the same prefix: same shell, the same
// words in the same order, compared byte for byte (names are case-sensitive).
func (p Prefix) Equal(q Prefix) bool {
	return p.Shell == q.Shell && len(p.Words) > 0 && slices.Equal(p.Words, q.Words)
}

// Derive returns the prefix of command in shell, and false when the command
// gets none (SHELL-PREFIX.md: offer(command) = derive(command)). The command
// is taken byte for byte: nothing is normalised, and only one trailing LF and
// the space and TAB blanks around the command are trimmed.
//
// bash: the command must parse (mvdan.cc/sh/v3/syntax, LangBash) as one plain
// call with no list, redirection, assignment, expansion, comment or
// backslash; control characters (other than TAB), DEL and invalid UTF-8 are
// refused before parsing. PowerShell: a strict tokenizer accepts only bare
// words of [A-Za-z0-9._:/\=+-] and quoted strings without $ or backtick. Then
// the program must be one the table knows, with a known subcommand path, and
// no argument that makes a granted command run other programs (R10). An
// unknown shell derives nothing.
func Derive(shell Shell, command string) (Prefix, bool) {
	p, _, ok := derive(shell, command)
	return p, ok
}

// derive is Derive, also returning the command's words.
func derive(shell Shell, command string) (Prefix, []word, bool) {
	var words []word
	var ok bool
	switch shell {
	case ShellBash:
		words, ok = bashWords(command)
	case ShellPowerShell:
		words, ok = powerShellWords(command)
	}
	if !ok {
		return Prefix{}, nil, false
	}
	n, ok := prefixLen(shell, words)
	if !ok {
		return Prefix{}, nil, false
	}
	p := Prefix{Shell: shell, Words: make([]string, n)}
	for i, w := range words[:n] {
		if !w.plain || strings.Contains(w.text, "\\") { // R5; a bare PowerShell word may hold one
			return Prefix{}, nil, false
		}
		p.Words[i] = w.text
	}
	return p, words, true
}

// Match reports whether the granted prefix covers command run in shell: the
// shells are equal and deriving the command's own prefix gives exactly the
// granted words (SHELL-PREFIX.md, Semantics). A textual prefix does not count,
// nor does a grant shorter or longer than the derived prefix.
func Match(grant Prefix, shell Shell, command string) bool {
	if grant.Shell != shell {
		return false
	}
	p, ok := Derive(shell, command)
	return ok && p.Equal(grant)
}

// word is one word of a command as the shell passes it to the program: text
// is its value with quotes removed; plain says it was written as a bare
// literal whose source is exactly text (no quotes, no escapes), which prefix
// words must be (SHELL-PREFIX.md R5).
type word struct {
	text  string
	plain bool
}

// blank reports whether b separates words: space and TAB only (R9).
func blank(b byte) bool { return b == ' ' || b == '\t' }
