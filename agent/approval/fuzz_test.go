package approval

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// FuzzPrefix checks Derive against the invariants of SHELL-PREFIX.md with an
// oracle that does not use the parser: whatever Derive offers, Match accepts
// (and the other shell refuses, R8), the offered prefix re-derives to itself
// and is the command's leading blank-separated tokens, no prefix is derived
// for a command R12 names (r12Reason), and none for a command holding a control character other
// than TAB and (bash) one trailing LF, or, outside quotes, ';', '&', '|', a
// backtick, '$' or a redirection ('<', '>'), or, inside double quotes, '$' or
// a backtick; in bash also a backslash outside single quotes (R1, R2, R4, R9,
// R11; a PowerShell backslash is a path character, not an escape).
//
// The seed corpus is the shared cases (testdata/shell-prefix.json), the
// commands of offerTests and testdata/fuzz/FuzzPrefix, so plain `go test`
// runs it. CI (.ci/run) runs it bounded by a count of executions:
//
//	go test -run '^$' -fuzz '^FuzzPrefix$' -fuzztime 500000x ./agent/approval
func FuzzPrefix(f *testing.F) {
	c := loadPrefixCases(f)
	for _, tc := range c.Cases {
		f.Add(tc.Shell == ShellPowerShell, tc.Command)
		f.Add(tc.Shell == ShellPowerShell, tc.Grant)
	}
	for _, tc := range c.Offer {
		f.Add(tc.Shell == ShellPowerShell, tc.Command)
	}
	for _, tc := range offerTests {
		f.Add(tc.shell == ShellPowerShell, tc.command)
	}
	f.Fuzz(func(t *testing.T, powershell bool, command string) {
		shell, other := ShellBash, ShellPowerShell
		if powershell {
			shell, other = other, shell
		}
		p, ok := Derive(shell, command)
		if !ok {
			return
		}
		if p.Shell != shell || len(p.Words) == 0 {
			t.Fatalf("%s %q: derived %#v", shell, command, p)
		}
		if !Match(p, shell, command) {
			t.Errorf("%s %q: derived %q, which Match refuses", shell, command, p)
		}
		if Match(Prefix{Shell: other, Words: p.Words}, shell, command) {
			t.Errorf("%s %q: a %s grant of %q matches", shell, command, other, p)
		}
		if q, ok := Derive(shell, p.String()); !ok || !q.Equal(p) {
			t.Errorf("%s %q: derived %q, whose own text derives %q, %v", shell, command, p, q, ok)
		}
		for _, w := range p.Words {
			if w == "" || strings.ContainsAny(w, " \t'\"\\") {
				t.Errorf("%s %q: derived %q: prefix word %q is not a plain literal", shell, command, p, w)
			}
		}
		// Prefix words are plain literals, so they are the command's leading
		// space- or TAB-separated tokens, whatever the parser thinks.
		tokens := strings.FieldsFunc(strings.TrimSuffix(command, "\n"), func(r rune) bool { return r == ' ' || r == '\t' })
		if len(tokens) < len(p.Words) || !slices.Equal(tokens[:len(p.Words)], p.Words) {
			t.Errorf("%s %q: derived %q, but the command's leading tokens are %q", shell, command, p, tokens)
		}
		if why := forbidden(shell, command); why != "" {
			t.Errorf("%s %q: derived %q for a command with %s", shell, command, p, why)
		}
		if why := r12Reason(shellWords(command)); why != "" {
			t.Errorf("%s %q: derived %q for a command that %s (R12)", shell, command, p, why)
		}
	})
}

// r12Never are the commands SHELL-PREFIX.md R12 names as deriving no prefix:
// they reconfigure what later commands run.
var r12Never = []string{
	"git config", "git remote", "git submodule", "git filter-branch", "git bisect",
	"git difftool", "git mergetool", "git hook", "npm config", "npm set", "npm pkg",
	"pnpm config", "pnpm pkg", "yarn config", "go env", "kubectl config",
	"docker context", "cargo config",
}

// shellWords splits command into the words a program gets, as far as the
// oracle needs them: blanks (space, TAB) outside quotes separate words, and
// quotes (single or double) are removed. Escapes and substitutions are not
// read: forbidden refuses a derived prefix for a command holding them
// outside single quotes. Splitting at every blank instead read
// "git rebase ' -x'" (the word " -x", no option to git) as holding -x.
func shellWords(command string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(command); i++ {
		b := command[i]
		switch {
		case quote != 0 && b == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(b)
		case b == '\'' || b == '"':
			quote, in = b, true
		case b == ' ' || b == '\t' || b == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(b)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// r12Reason returns why R12 forbids a prefix for a command whose words
// (shellWords) are words, or "" when the oracle finds no reason:
// one of r12Never's commands, or after a git subcommand an option that runs
// a command the line does not name (rebase -x/--exec, --ext-diff,
// --textconv) or sets configuration (--config; -c of git clone).
func r12Reason(words []string) string {
	if len(words) >= 2 && slices.Contains(r12Never, words[0]+" "+words[1]) {
		return "is " + words[0] + " " + words[1]
	}
	if len(words) < 2 || words[0] != "git" {
		return ""
	}
	sub := words[1]
	for _, w := range words[2:] {
		name, _, _ := strings.Cut(w, "=")
		short := strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--")
		switch {
		case name == "--ext-diff" || name == "--textconv" || name == "--config":
			return "holds " + name
		case sub == "rebase" && (name == "--exec" || short && strings.Contains(w, "x")):
			return "holds rebase's " + w
		case sub == "clone" && short && strings.Contains(w, "c"):
			return "holds clone's " + w
		}
	}
	return ""
}

// forbidden returns why command must never get a prefix, or "" when the
// oracle finds no reason. It scans bytes with the quoting rules only: in
// single quotes everything is data up to the next quote; in double quotes '$',
// a backtick and (bash) a backslash are refused; outside quotes the list
// operators, redirections, substitutions and (bash) escapes are. PowerShell also refuses every
// newline, its curly quotes and, outside quotes, every character no bare word
// holds.
func forbidden(shell Shell, command string) string {
	s := command
	if shell == ShellBash {
		s = strings.TrimSuffix(s, "\n")
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return fmt.Sprintf("control character %#x at byte %d", b, i)
		}
	}
	if shell == ShellPowerShell && strings.ContainsAny(s, "\u2018\u2019\u201a\u201b\u201c\u201d\u201e") {
		return "a curly quote"
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case quote == '\'':
			if b == '\'' {
				quote = 0
			}
		case quote == '"':
			switch {
			case b == '"':
				quote = 0
			case b == '$' || b == '`' || b == '\\' && shell == ShellBash:
				return fmt.Sprintf("%q inside double quotes at byte %d", b, i)
			}
		case b == '\'' || b == '"':
			quote = b
		case strings.IndexByte(";&|`<>$", b) >= 0 || b == '\\' && shell == ShellBash:
			return fmt.Sprintf("%q outside quotes at byte %d", b, i)
		case shell == ShellPowerShell && !blank(b) && !bareChar(b):
			return fmt.Sprintf("%q outside quotes at byte %d (PowerShell)", b, i)
		}
	}
	if quote != 0 {
		return "an unterminated quote"
	}
	return ""
}

// TestR12Reason makes sure the R12 fuzz oracle can fail.
func TestR12Reason(t *testing.T) {
	tests := []struct {
		command string
		want    bool
	}{
		{"git config user.name", true},
		{"go env GOPATH", true},
		{"npm config get registry", true},
		{"kubectl config view", true},
		{"git rebase -ix 'sh x' HEAD~3", true},
		{"git rebase --exec=x main", true},
		{"git log '--ext-diff'", true},
		{"git show --textconv=x", true},
		{"git clone -c core.fsmonitor=x url", true},
		{"git fetch --config=x", true},
		{"git status", false},
		{"git log -c", false},
		{"git rebase -i HEAD~3", false},
		{"go test ./...", false},
		{"git rebase '-x' y main", true},
		{`git log "--ext-diff"`, true},
		{"git rebase ' -x'", false}, // one word " -x": no option to git
		{`git rebase "main -x"`, false},
	}
	for _, tt := range tests {
		if got := r12Reason(shellWords(tt.command)) != ""; got != tt.want {
			t.Errorf("r12Reason(%q) = %v, want %v", tt.command, got, tt.want)
		}
	}
}

// TestForbidden makes sure the fuzz oracle can fail.
func TestForbidden(t *testing.T) {
	tests := []struct {
		shell   Shell
		command string
		want    bool
	}{
		{ShellBash, "git status\n", false},
		{ShellBash, "git status\n\n", true},
		{ShellBash, "git\tstatus", false},
		{ShellBash, "git status\r", true},
		{ShellBash, "git log 'a;b|c$(d)`e`\\'", false},
		{ShellBash, `git log "a > b"`, false},
		{ShellBash, `git log "a $b"`, true},
		{ShellBash, `git log "a\b"`, true},
		{ShellBash, "git log a;b", true},
		{ShellBash, "git log a&", true},
		{ShellBash, "git log a|b", true},
		{ShellBash, "git log `a`", true},
		{ShellBash, "git log $(a)", true},
		{ShellBash, "git log >a", true},
		{ShellBash, "git log <a", true},
		{ShellBash, "git log \\a", true},
		{ShellBash, "git log 'a", true},
		{ShellPowerShell, "git status\n", true},
		{ShellPowerShell, "git log (a)", true},
		{ShellPowerShell, "git log '(a)'", false},
		{ShellPowerShell, "git log “a”", true},
		{ShellPowerShell, `git log C:\src "C:\src"`, false},
		{ShellPowerShell, `git log "$a"`, true},
		{ShellPowerShell, "git log 'a$b'", false},
	}
	for _, tt := range tests {
		if got := forbidden(tt.shell, tt.command) != ""; got != tt.want {
			t.Errorf("forbidden(%s, %q) = %v, want %v", tt.shell, tt.command, got, tt.want)
		}
	}
}
