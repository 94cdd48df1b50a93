package config

import (
	"encoding/json"
	"fmt"
	"math"
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
// warning, and config/write refuses it in the project file).
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
}

// knownSettings are the settings the server understands (README
// "Settings"). Keys not listed here are kept as they are written (pi's and
// extensions' settings share the files) and never checked.
var knownSettings = []Setting{
	{Key: "defaultProvider", kind: kindString, Default: ""},
	{Key: "defaultModel", kind: kindString, Default: ""},
	{Key: "defaultThinkingLevel", kind: kindString, Default: DefaultThinkingLevel},
	{Key: "defaultTools", kind: kindStringList, GlobalOnly: true, Default: BuiltinTools},
	{Key: "sessionDir", kind: kindString, GlobalOnly: true, Default: ""},
	// Worktrees are created and pruned with the global settings alone
	// (threads reads them without a project).
	{Key: "worktrees.root", kind: kindDir, GlobalOnly: true, Default: "worktrees"},
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
	{Key: ResourceExtensions, kind: kindStringList, Default: []string{}},
	{Key: ResourceSkills, kind: kindStringList, Default: []string{}},
	{Key: ResourcePrompts, kind: kindStringList, Default: []string{}},
	{Key: ResourceThemes, kind: kindStringList, Default: []string{}},
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
	if ok {
		return nil
	}
	return fmt.Errorf("%s must be %s, got %s", s.Key, s.Accepts(), shortJSON(v))
}

// asInt is v as an integer: a json.Number or float64 with no fraction that
// fits in an int64 (and an int).
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil && int64(int(i)) == i
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
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
// value does not fit its canonical key ("value"). Unknown keys pass.
func checkWrite(scope Scope, key string, value any) error {
	for _, m := range migrations {
		// The reader renames a legacy key inside the object written, so
		// its value must fit the canonical key.
		if rest, ok := strings.CutPrefix(m.legacy, key+"."); ok && value != nil {
			if v, found := lookup(asMap(value), rest); found {
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
