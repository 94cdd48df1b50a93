package config

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestWriteRefusesWhatTheReaderIgnores: every value config/write refuses
// for a known key is one the reader ignores with a warning naming the key
// (one table, knownSettings), and the refusal names the key and the
// values it takes; nothing is written.
func TestWriteRefusesWhatTheReaderIgnores(t *testing.T) {
	e := newSettingsEnv(t)
	e.setTrust(t, true)
	tests := []struct {
		name      string
		scope     Scope
		key       string
		value     string
		wantField string
		wantIn    []string // words of the message
	}{
		{"keep not a number", ScopeGlobal, "worktrees.keep", `"abc"`, "value", []string{"worktrees.keep", "an integer from 0 to 1000", `"abc"`}},
		{"keep negative", ScopeGlobal, "worktrees.keep", `-1`, "value", []string{"worktrees.keep", "from 0 to 1000"}},
		{"keep huge", ScopeGlobal, "worktrees.keep", `1e308`, "value", []string{"worktrees.keep", "1e308"}},
		{"keep fraction", ScopeGlobal, "worktrees.keep", `2.5`, "value", []string{"worktrees.keep"}},
		{"recovery keep 0", ScopeGlobal, "recovery.keep", `0`, "value", []string{"recovery.keep", "an integer from 1 to 100000"}},
		{"maxAgeDays", ScopeGlobal, "recovery.maxAgeDays", `3651`, "value", []string{"recovery.maxAgeDays", "from 1 to 3650"}},
		{"retries", ScopeGlobal, "retry.provider.maxRetries", `101`, "value", []string{"retry.provider.maxRetries", "from 0 to 100"}},
		{"enabled", ScopeGlobal, "compaction.enabled", `"yes"`, "value", []string{"compaction.enabled", "true or false"}},
		{"empty root", ScopeGlobal, "worktrees.root", `"  "`, "value", []string{"worktrees.root", "directory"}},
		{"tools not a list", ScopeGlobal, "defaultTools", `"read"`, "value", []string{"defaultTools", "an array of strings"}},
		{"skills list of numbers", ScopeGlobal, "skills", `[1]`, "value", []string{"skills", "an array of strings"}},
		{"prefix not a string", ScopeProject, "worktrees.branchPrefix", `7`, "value", []string{"worktrees.branchPrefix", "a string"}},
		{"inside an object", ScopeGlobal, "worktrees", `{"keep": "abc", "root": "/x"}`, "value", []string{"worktrees.keep", "from 0 to 1000"}},
		{"deep inside an object", ScopeGlobal, "retry", `{"provider": {"maxRetryDelayMs": -5}}`, "value", []string{"retry.provider.maxRetryDelayMs"}},
		{"parent not an object", ScopeGlobal, "recovery", `5`, "value", []string{"recovery must be an object"}},
		{"key below a setting", ScopeGlobal, "worktrees.keep.max", `5`, "key", []string{"worktrees.keep", "no keys"}},
		{"global-only in the project", ScopeProject, "worktrees.keep", `4`, "scope", []string{"worktrees.keep", "global settings only"}},
		{"relative root in the project", ScopeProject, "worktrees.root", `"trees"`, "scope", []string{"worktrees.root", "global settings only"}},
		{"global-only inside a project object", ScopeProject, "recovery", `{"keep": 3}`, "scope", []string{"recovery.keep"}},
		{"legacy key inside an object", ScopeGlobal, "retry", `{"maxRetries": -2}`, "value", []string{"retry.provider.maxRetries", "retry.maxRetries", "from 0 to 100"}},
		// Issue 22 QA L7: NUL bytes in the settings that name files, and
		// numbers that only look integral.
		{"root with a NUL", ScopeGlobal, "worktrees.root", `"/tmp/a\u0000b"`, "value", []string{"worktrees.root", "NUL"}},
		{"sessionDir with a NUL", ScopeGlobal, "sessionDir", `"/tmp/s\u0000x"`, "value", []string{"sessionDir", "NUL"}},
		{"skills with a NUL", ScopeGlobal, "skills", `["ok", "a\u0000b"]`, "value", []string{"skills", "NUL"}},
		{"keep fraction in an exponent", ScopeGlobal, "worktrees.keep", `2.05e1`, "value", []string{"worktrees.keep"}},
		{"keep a hair above 20", ScopeGlobal, "worktrees.keep", `20.000000000000001`, "value", []string{"worktrees.keep"}},
		{"keep tiny", ScopeGlobal, "worktrees.keep", `1e-400`, "value", []string{"worktrees.keep"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.Write(ctx, WriteRequest{Scope: tt.scope, Cwd: e.project, Key: tt.key, Value: json.RawMessage(tt.value)})
			pe, ok := errors.AsType[*ParamError](err)
			if !ok || pe.Field != tt.wantField {
				t.Fatalf("err = %v, want ParamError field %q", err, tt.wantField)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(pe.Message, w) {
					t.Errorf("message %q lacks %q", pe.Message, w)
				}
			}
			if tt.wantField == "key" || tt.wantField == "scope" {
				return
			}
			// The reader ignores the same value with a warning naming the key.
			file := e.store.GlobalPath()
			if tt.scope == ScopeProject {
				file = ProjectPath(e.project)
			}
			segs := strings.Split(tt.key, ".")
			raw := nest(segs, tt.value)
			writeFile(t, file, raw)
			defer os.Remove(file)
			snap, err := e.store.Read(ctx, e.project)
			if err != nil {
				t.Fatal(err)
			}
			if tt.key == ResourceSkills {
				set, err := e.store.Resources(ctx, e.project)
				if err != nil {
					t.Fatal(err)
				}
				if !warned(set.Warnings, tt.wantIn[0]) {
					t.Errorf("resources of %s: no warning naming %s: %v", raw, tt.wantIn[0], set.Warnings)
				}
				return
			}
			_, warnings := snap.Values()
			if !warned(warnings, tt.wantIn[0]) {
				t.Errorf("Values of %s: no warning naming %s: %v", raw, tt.wantIn[0], warnings)
			}
		})
	}
	for _, p := range []string{e.store.GlobalPath(), ProjectPath(e.project)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is left behind", p)
		}
	}
}

// nest is value (raw JSON) at the dotted path segs, as a settings file.
func nest(segs []string, value string) string {
	out := value
	for i := len(segs) - 1; i >= 0; i-- {
		k, _ := json.Marshal(segs[i])
		out = "{" + string(k) + ": " + out + "}"
	}
	return out
}

// warned reports whether a warning's message contains key.
func warned(ws []Warning, key string) bool {
	for _, w := range ws {
		if strings.Contains(w.Message, key) {
			return true
		}
	}
	return false
}

// TestWriteLegacyKeyLandsOnCanonical: a write of a key the read migration
// renames (retry.maxRetries) is written to its canonical key, over an
// existing canonical value, and read back; deleting it deletes the
// canonical key.
func TestWriteLegacyKeyLandsOnCanonical(t *testing.T) {
	e := newSettingsEnv(t)
	writeFile(t, e.store.GlobalPath(), `{"retry": {"provider": {"maxRetries": 1}}}`)
	if _, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: "retry.maxRetries", Value: json.RawMessage(`7`)}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(e.store.GlobalPath())
	if got, want := compactJSON(t, b), `{"retry":{"provider":{"maxRetries":7}}}`; got != want {
		t.Errorf("file = %s, want %s", got, want)
	}
	snap, err := e.store.Read(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := snap.Values(); v.Retry.MaxRetries != 7 {
		t.Errorf("maxRetries = %d, want 7", v.Retry.MaxRetries)
	}
	// The legacy key's value is checked against the canonical key's range.
	_, err = e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: "retry.maxDelayMs", Value: json.RawMessage(`-1`)})
	if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Field != "value" || !strings.Contains(pe.Message, "retry.provider.maxRetryDelayMs") {
		t.Errorf("legacy out of range: %v", err)
	}
	if _, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: "retry.maxRetries"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(e.store.GlobalPath())
	if got := compactJSON(t, b); got != `{}` {
		t.Errorf("after deleting the legacy key: %s", got)
	}
}

// TestWriteLegacyBesideCanonicalRefused: an object value giving a legacy
// key and its canonical key at once is refused naming both (issue 22 QA
// L7: the reader kept the canonical value and the legacy one was lost
// without a word); nothing is written.
func TestWriteLegacyBesideCanonicalRefused(t *testing.T) {
	e := newSettingsEnv(t)
	for _, tt := range []struct{ key, value string }{
		{"retry", `{"maxRetries": 7, "provider": {"maxRetries": 8}}`},
		{"retry", `{"maxDelayMs": 10, "provider": {"maxRetryDelayMs": null}}`},
	} {
		_, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: tt.key, Value: json.RawMessage(tt.value)})
		pe, ok := errors.AsType[*ParamError](err)
		if !ok || pe.Field != "value" {
			t.Errorf("%s = %s: err %v, want ParamError value", tt.key, tt.value, err)
			continue
		}
		for _, w := range []string{"retry.provider.", "retry.max"} {
			if !strings.Contains(pe.Message, w) {
				t.Errorf("message %q lacks %q", pe.Message, w)
			}
		}
	}
	if _, err := os.Stat(e.store.GlobalPath()); err == nil {
		t.Errorf("%s was written", e.store.GlobalPath())
	}
}

// TestWriteIntegralNumbers: an integer setting takes every JSON spelling
// of an integer (30.0, 3e1, -0), as the reader does, and the file holds the
// plain integer, at the key, inside an object, and under a legacy key
// (issue 22 QA L7: JSON has one number type, and a client that sends
// 30.0 means 30; -0 was stored as -0). One rule on both sides, and what is
// read back is what was checked.
func TestWriteIntegralNumbers(t *testing.T) {
	e := newSettingsEnv(t)
	write := func(key, value string) {
		t.Helper()
		if _, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: key, Value: json.RawMessage(value)}); err != nil {
			t.Fatalf("%s = %s: %v", key, value, err)
		}
	}
	wantFile := func(want string) {
		t.Helper()
		b, _ := os.ReadFile(e.store.GlobalPath())
		if got := compactJSON(t, b); got != want {
			t.Errorf("file = %s, want %s", got, want)
		}
	}
	for _, lit := range []string{`30.0`, `3e1`, `3.0E+1`, `300e-1`, `0.3e2`, `30.000`} {
		write("worktrees.keep", lit)
		wantFile(`{"worktrees":{"keep":30}}`)
	}
	write("worktrees.keep", `-0`)
	wantFile(`{"worktrees":{"keep":0}}`)
	write("worktrees", `{"keep": 20.0, "root": "/x"}`)
	wantFile(`{"worktrees":{"keep":20,"root":"/x"}}`)
	write("retry", `{"maxRetries": 5.0}`)
	wantFile(`{"worktrees":{"keep":20,"root":"/x"},"retry":{"maxRetries":5}}`) // the reader renames it
	snap, err := e.store.Read(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if v, w := snap.Values(); v.Worktrees.Keep != 20 || v.Retry.MaxRetries != 5 || len(w) != 0 {
		t.Errorf("read back keep %d, maxRetries %d, warnings %v; want 20, 5, none", v.Worktrees.Keep, v.Retry.MaxRetries, w)
	}
	// The reader takes a hand-written 12.0 as config/write would.
	writeFile(t, e.store.GlobalPath(), `{"worktrees": {"keep": 12.0}}`)
	if snap, err = e.store.Read(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if v, w := snap.Values(); v.Worktrees.Keep != 12 || len(w) != 0 {
		t.Errorf("hand-written 12.0: keep %d, warnings %v; want 12, none", v.Worktrees.Keep, w)
	}
}

// TestIntegral checks the exact reading of JSON number literals.
func TestIntegral(t *testing.T) {
	for lit, want := range map[string]int64{"0": 0, "-0": 0, "0.0": 0, "0e5": 0, "7": 7, "-12": -12, "1e3": 1000, "1E+3": 1000,
		"2.50e1": 25, "-2.5e1": -25, "1200e-2": 12, "9223372036854775807": 9223372036854775807} {
		if got, ok := integral(lit); !ok || got != want {
			t.Errorf("integral(%s) = %d, %v; want %d", lit, got, ok, want)
		}
	}
	for _, lit := range []string{"0.5", "2.5", "1e-1", "1201e-2", "1e19", "9223372036854775808", "1e308", "1e-400", "1e99999999999999999999"} {
		if got, ok := integral(lit); ok {
			t.Errorf("integral(%s) = %d, want not an integer in range", lit, got)
		}
	}
}

// TestKnownSettingsDefaultsFit: each row's default is a value the row
// takes, and each integer range is sane.
func TestKnownSettingsDefaultsFit(t *testing.T) {
	for _, s := range knownSettings {
		def := jsonOf(t, s.Default)
		if err := s.check(def); err != nil {
			t.Errorf("%s: default %v: %v", s.Key, s.Default, err)
		}
		if s.kind == kindInt && (s.Min > s.Max || s.Max <= 0) {
			t.Errorf("%s: range %d..%d", s.Key, s.Min, s.Max)
		}
	}
}
