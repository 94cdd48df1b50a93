package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// kind is the type of value a known setting takes.
type kind int

const (
	kindString     kind = iota // any string
	kindBool                   // true or false
	kindInt                    // an integer within [Setting.Min, Setting.Max]
	kindDir                    // a non-empty string naming a directory
	kindStringList             // an array of strings
)

// Setting is one settings key the server understands: its dotted Key, the
// values it takes (kind, and Min..Max for an integer), its Default (what
// an unset or malformed value means; a directory's default is relative to
// the agent directory) and GlobalOnly, set for the keys the server reads
// from <agentDir>/settings.json alone (a project's value is ignored with a
// warning, and config/write refuses it in the project file). A setting
// whose strings name files (path: a directory, a session folder, resource
// paths) takes none holding a NUL byte, which no path can hold and which
// would cut the name short where the system reads it.
//
// [knownSettings] is the one table both sides use: the reader
// ([Snapshot.Values], [Store.Resources]) ignores a value that does not fit
// with a "settings" warning and uses the default; [Store.Write] refuses it
// ([*ParamError] naming the key and the values it takes).
type Setting struct {
	Key        string
	kind       kind
	Min, Max   int64
	GlobalOnly bool
	Default    any
	path       bool
}

// knownSettings are the settings the server understands (README
// "Settings"). Keys not listed here are kept as they are written (pi's and
// extensions' settings share the files) and never checked.
var knownSettings = []Setting{
	{Key: "defaultProvider", kind: kindString, Default: ""},
	{Key: "defaultModel", kind: kindString, Default: ""},
	{Key: "defaultThinkingLevel", kind: kindString, Default: DefaultThinkingLevel},
	{Key: "defaultTools", kind: kindStringList, GlobalOnly: true, Default: BuiltinTools},
	{Key: "sessionDir", kind: kindString, GlobalOnly: true, Default: "", path: true},
	// Worktrees are created and pruned with the global settings alone
	// (threads reads them without a project).
	{Key: "worktrees.root", kind: kindDir, GlobalOnly: true, Default: "worktrees", path: true},
	{Key: "worktrees.keep", kind: kindInt, Min: 0, Max: 1000, GlobalOnly: true, Default: DefaultWorktreesKeep},
	{Key: "worktrees.branchPrefix", kind: kindString, Default: DefaultBranchPrefix},
	{Key: "retry.provider.maxRetries", kind: kindInt, Min: 0, Max: 100, Default: DefaultMaxRetries},
	{Key: "retry.provider.maxRetryDelayMs", kind: kindInt, Min: 0, Max: 3_600_000, Default: DefaultMaxRetryDelayMs},
	{Key: "compaction.enabled", kind: kindBool, Default: true},
	{Key: "compaction.reserveTokens", kind: kindInt, Min: 0, Max: 10_000_000, Default: DefaultCompactionReserveTokens},
	{Key: "compaction.keepRecentTokens", kind: kindInt, Min: 0, Max: 10_000_000, Default: DefaultCompactionKeepRecentTokens},
	// Recovery points are pruned by the server's one differ, made at
	// startup from the global settings. At least 1: 0 would drop a
	// recovery point as soon as its action finished (issue 15).
	{Key: "recovery.keep", kind: kindInt, Min: 1, Max: 100_000, GlobalOnly: true, Default: DefaultRecoveryKeep},
	{Key: "recovery.maxAgeDays", kind: kindInt, Min: 1, Max: 3650, GlobalOnly: true, Default: DefaultRecoveryMaxAgeDays},
	// The deadlines of the git/* methods' children, read per checkout (a
	// trusted project may set them). At least 1: 0 would stop every hook at
	// once; at most a day.
	{Key: "git.hookTimeoutSeconds", kind: kindInt, Min: 1, Max: 86_400, Default: DefaultHookTimeoutSeconds},
	{Key: "git.ghTimeoutSeconds", kind: kindInt, Min: 1, Max: 86_400, Default: DefaultGhTimeoutSeconds},
	{Key: ResourceExtensions, kind: kindStringList, Default: []string{}, path: true},
	{Key: ResourceSkills, kind: kindStringList, Default: []string{}, path: true},
	{Key: ResourcePrompts, kind: kindStringList, Default: []string{}, path: true},
	{Key: ResourceThemes, kind: kindStringList, Default: []string{}, path: true},
}

// KnownSettings returns a copy of the table of settings the server
// understands, in its order.
func KnownSettings() []Setting { return append([]Setting(nil), knownSettings...) }

// knownSetting returns the row of key; a key missing from the table is a
// programming error (every decoder names a row).
func knownSetting(key string) Setting {
	for _, s := range knownSettings {
		if s.Key == key {
			return s
		}
	}
	panic("config: " + key + " is not in knownSettings")
}

// Accepts says what values s takes, for people: "an integer from 0 to
// 1000", "true or false", ...
func (s Setting) Accepts() string {
	switch s.kind {
	case kindBool:
		return "true or false"
	case kindInt:
		return fmt.Sprintf("an integer from %d to %d", s.Min, s.Max)
	case kindDir:
		return `a non-empty string naming a directory (absolute, "~/...", or relative to the settings file's folder)`
	case kindStringList:
		return "an array of strings"
	}
	return "a string"
}

// check reports whether v (a decoded JSON value, numbers as json.Number or
// float64; nil is unset and always fits) is a value s takes: nil, or an
// error saying "<key> must be <Accepts>, got <v>".
func (s Setting) check(v any) error {
	if v == nil {
		return nil
	}
	ok := false
	switch s.kind {
	case kindString:
		_, ok = v.(string)
	case kindBool:
		_, ok = v.(bool)
	case kindInt:
		i, isInt := asInt(v)
		ok = isInt && i >= s.Min && i <= s.Max
	case kindDir:
		str, isStr := v.(string)
		ok = isStr && strings.TrimSpace(str) != ""
	case kindStringList:
		_, err := stringList(v)
		ok = err == nil
	}
	if !ok {
		return fmt.Errorf("%s must be %s, got %s", s.Key, s.Accepts(), shortJSON(v))
	}
	if s.path && holdsNUL(v) {
		return fmt.Errorf("%s names files, and no file name holds a NUL byte: got %s", s.Key, shortJSON(v))
	}
	return nil
}

// holdsNUL reports whether v, a string or an array of them, holds a NUL
// byte.
func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, x := range v {
			if holdsNUL(x) {
				return true
			}
		}
	}
	return false
}

// asInt is v as an integer: a json.Number or float64 whose value is an
// integer that fits in an int64 (and an int). JSON has one number type, so
// every spelling of an integer is one: 30, 30.0, 3e1, 300e-1 (-0 is 0),
// as JavaScript's JSON.parse reads them; 30.5 and 30.000000000000001 are
// not (the latter is not rounded as a float64 would be).
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, ok := integral(string(n))
		return i, ok && int64(int(i)) == i
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// integral is the JSON number literal lit's value when it is an integer
// that fits in an int64, exactly (decimal digits, never through a float):
// the digits of its integer and fraction parts with the point moved by
// its exponent must leave no non-zero digit after the point.
func integral(lit string) (int64, bool) {
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return i, true
	}
	mant, exp := lit, 0
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+"))
		if err != nil {
			return 0, false // past any int: far out of range, or no number
		}
		mant, exp = lit[:i], e
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	point := len(whole) + exp - (len(whole+frac) - len(digits)) // digits before the point, counted in digits
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return 0, true
	}
	if point < len(digits) || point > 19 {
		return 0, false // a fraction, or more digits than an int64 has
	}
	s := digits + strings.Repeat("0", point-len(digits))
	if neg {
		s = "-" + s
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// shortJSON is v as JSON for a message, cut at 64 bytes.
func shortJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 64 {
		return string(b[:61]) + "..."
	}
	return string(b)
}

// checkWrite refuses a config/write of value (decoded with json.Number;
// nil deletes) at the dotted key in scope when it does not fit the known
// settings: a known key's value of the wrong type or range ("value"); an
// object written above known keys holding one that does not fit
// ("value"), or that is not an object at all ("value"); a key below a
// known one, which takes no keys ("key"); a global-only key written to
// the project file ("scope"); a legacy key inside an object value whose
// value does not fit its canonical key, or given beside its canonical key
// in that object ("value": the reader would keep one and drop the other
// without a word). Unknown keys pass.
func checkWrite(scope Scope, key string, value any) error {
	for _, m := range migrations {
		// The reader renames a legacy key inside the object written, so
		// its value must fit the canonical key.
		if rest, ok := strings.CutPrefix(m.legacy, key+"."); ok && value != nil {
			if v, found := lookup(asMap(value), rest); found {
				if crest, ok := strings.CutPrefix(m.canonical, key+"."); ok {
					if _, both := lookup(asMap(value), crest); both {
						return &ParamError{Field: "value", Message: fmt.Sprintf("gives both %s and %s, its old name: give %s only", m.canonical, m.legacy, m.canonical)}
					}
				}
				if err := knownSetting(m.canonical).check(v); err != nil {
					return &ParamError{Field: "value", Message: fmt.Sprintf("%s (the old name of %s): %v", m.legacy, m.canonical, err)}
				}
			}
		}
		if strings.HasPrefix(key, m.legacy+".") {
			return &ParamError{Field: "key", Message: fmt.Sprintf("%s is the old name of %s, which takes no keys", m.legacy, m.canonical)}
		}
	}
	for _, s := range knownSettings {
		switch {
		case s.Key == key:
			if value != nil && scope == ScopeProject && s.GlobalOnly {
				return globalOnlyErr(s)
			}
			if err := s.check(value); err != nil {
				return &ParamError{Field: "value", Message: err.Error()}
			}
		case strings.HasPrefix(key, s.Key+"."):
			return &ParamError{Field: "key", Message: fmt.Sprintf("%s is inside %s, which takes %s and no keys", key, s.Key, s.Accepts())}
		case strings.HasPrefix(s.Key, key+".") && value != nil:
			m, ok := value.(map[string]any)
			if !ok {
				return &ParamError{Field: "value", Message: fmt.Sprintf("%s must be an object: it holds the setting %s", key, s.Key)}
			}
			v, found := lookup(m, strings.TrimPrefix(s.Key, key+"."))
			if !found || v == nil {
				continue
			}
			if scope == ScopeProject && s.GlobalOnly {
				return globalOnlyErr(s)
			}
			if err := s.check(v); err != nil {
				return &ParamError{Field: "value", Message: err.Error()}
			}
		}
	}
	return nil
}

// integerLiterals rewrites, in value (a config/write's value as it is
// stored: a json.RawMessage, or an *object of them) written at the dotted
// key, each integer setting's number to its plain integer literal (30.0,
// 3e1 and 30 are all stored as 30, -0 as 0), so that what is stored and
// read back is the integer [checkWrite] accepted. Legacy keys inside an
// object are rewritten as their canonical keys' values. It returns value
// as rewritten; call it once checkWrite accepted value.
func integerLiterals(key string, value any) any {
	canon := func(raw json.RawMessage) json.RawMessage {
		if i, ok := asInt(json.Number(bytes.TrimSpace(raw))); ok {
			return json.RawMessage(strconv.FormatInt(i, 10))
		}
		return raw
	}
	paths := map[string]bool{} // setting's key: takes an integer
	for _, s := range knownSettings {
		paths[s.Key] = s.kind == kindInt
	}
	for _, m := range migrations {
		paths[m.legacy] = paths[m.canonical]
	}
	for k, isInt := range paths {
		if !isInt {
			continue
		}
		if k == key {
			if raw, ok := value.(json.RawMessage); ok {
				return canon(raw)
			}
			continue
		}
		rest, ok := strings.CutPrefix(k, key+".")
		obj, isObj := value.(*object)
		if !ok || !isObj {
			continue
		}
		segs := strings.Split(rest, ".")
		if raw, ok := obj.at(segs); ok {
			if raw, ok := raw.(json.RawMessage); ok {
				_ = obj.setAt(segs, canon(raw)) // the path exists: it cannot fail
			}
		}
	}
	return value
}

// asMap is v as an object, nil when it is not one.
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func globalOnlyErr(s Setting) error {
	return &ParamError{Field: "scope", Message: fmt.Sprintf("%s is read from the global settings only: write it with scope global", s.Key)}
}

// canonicalKey is key with a legacy name ([migrations]) replaced by its
// canonical one, so a write of retry.maxRetries lands where the reader
// looks (the read migration would otherwise drop it beside an existing
// canonical value).
func canonicalKey(key string) string {
	for _, m := range migrations {
		if key == m.legacy {
			return m.canonical
		}
	}
	return key
}
