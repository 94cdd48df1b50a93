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
