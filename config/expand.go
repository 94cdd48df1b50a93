package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Expand expands a turn's text when it starts with "/name" naming one of
// the set's prompt templates, or "/skill:name" naming one of its skills
// (issue 13: the user item shows what the user typed, the model gets the
// expanded text). The rest of the first line and the following lines are
// the arguments. ok is false, and text is returned as it is, when the text
// names no template or skill.
//
// A template's body gets its arguments by [ExpandTemplate]. A skill becomes
//
//	<skill name="NAME" location="PATH">
//	References are relative to DIR.
//
//	BODY
//	</skill>
//
// followed by a blank line and the arguments, when there are any.
func (set *ResourceSet) Expand(text string) (expanded string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return text, false
	}
	name, args := text[1:], ""
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name, args = name[:i], name[i+1:]
	}
	if skill, found := strings.CutPrefix(name, "skill:"); found {
		for _, s := range set.Skills {
			if s.Name == skill {
				out := fmt.Sprintf("<skill name=%q location=%q>\nReferences are relative to %s.\n\n%s\n</skill>",
					s.Name, s.Path, s.BaseDir, strings.TrimRight(s.Body, "\n"))
				if a := strings.TrimSpace(args); a != "" {
					out += "\n\n" + a
				}
				return out, true
			}
		}
		return text, false
	}
	for _, p := range set.Prompts {
		if p.Name == name {
			return ExpandTemplate(p.Body, SplitArgs(args)), true
		}
	}
	return text, false
}

// SplitArgs splits a command's argument text at white space; a single- or
// double-quoted part is one argument (quotes removed, no escapes).
func SplitArgs(s string) []string {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case unicode.IsSpace(r):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

// placeholder matches a template's argument placeholders.
var placeholder = regexp.MustCompile(`\$\{@:(\d+)(?::(\d+))?\}|\$(\d+)|\$ARGUMENTS|\$@`)

// ExpandTemplate substitutes a prompt template's placeholders in one pass
// (an argument's own "$1" is never expanded again): $1, $2, ... the
// positional arguments ("" past the last); $@ and $ARGUMENTS all of them
// joined by spaces; ${@:N} the arguments from the Nth on and ${@:N:L} L of
// them (pi's prompt template syntax).
func ExpandTemplate(body string, args []string) string {
	return placeholder.ReplaceAllStringFunc(body, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		switch {
		case sub[3] != "":
			n, _ := strconv.Atoi(sub[3])
			if n >= 1 && n <= len(args) {
				return args[n-1]
			}
			return ""
		case sub[1] != "":
			start, _ := strconv.Atoi(sub[1])
			start = max(start-1, 0)
			if start >= len(args) {
				return ""
			}
			end := len(args)
			if sub[2] != "" {
				l, _ := strconv.Atoi(sub[2])
				end = min(start+l, len(args))
			}
			return strings.Join(args[start:end], " ")
		}
		return strings.Join(args, " ")
	})
}
