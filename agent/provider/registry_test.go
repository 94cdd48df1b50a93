package provider

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/protocol"
)

var (
	offOnly = []agent.ThinkingLevel{"off"}
	allFive = []agent.ThinkingLevel{"off", "minimal", "low", "medium", "high"}
	demo    = agent.Model{Provider: "scripted", ID: "demo", Name: "Scripted demo", ThinkingLevels: allFive, ContextWindow: scripted.DefaultContextWindow}
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadWithoutModelsFile(t *testing.T) {
	t.Parallel()
	r, warnings := Load(filepath.Join(t.TempDir(), "does-not-exist"))
	if warnings != nil {
		t.Errorf("warnings = %+v, want none", warnings)
	}
	if diff := cmp.Diff(scriptedList(r), []agent.Model{demo}); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}
}

func TestLoadScriptedModels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "scripts", "one.json")
	write(t, script, `{"responses": [{"text": "hello from one"}]}`)
	write(t, filepath.Join(dir, "rel.json"), `{"responses": [{"text": "relative"}]}`)
	write(t, filepath.Join(dir, "models.json"), `{"providers": {"scripted": {"models": [
		{"id": "one", "script": "`+script+`"},
		{"id": "two", "script": "rel.json", "name": "Two", "reasoning": true, "contextWindow": 32000}
	]}}}`)
	r, warnings := Load(dir)
	if warnings != nil {
		t.Errorf("warnings = %+v, want none", warnings)
	}
	want := []agent.Model{
		demo,
		{Provider: "scripted", ID: "one", Name: "one", ThinkingLevels: offOnly, ContextWindow: scripted.DefaultContextWindow},
		{Provider: "scripted", ID: "two", Name: "Two", ThinkingLevels: allFive, ContextWindow: 32000},
	}
	if diff := cmp.Diff(scriptedList(r), want); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}

	p, m, ok := r.Lookup("scripted", "one")
	if !ok || m.ID != "one" {
		t.Fatalf("Lookup(scripted, one) = %v, %+v, %v", p, m, ok)
	}
	seq, err := p.Stream(context.Background(), agent.Request{Model: "one"})
	if err != nil {
		t.Fatal(err)
	}
	var last agent.StreamEvent
	for ev := range seq {
		last = ev
	}
	if got := last.Message.Text(); got != "hello from one" {
		t.Errorf("model one replied %q", got)
	}
	for _, q := range [][2]string{{"scripted", "nope"}, {"openai", "one"}} {
		if _, _, ok := r.Lookup(q[0], q[1]); ok {
			t.Errorf("Lookup(%s, %s) found a model", q[0], q[1])
		}
	}
}

func TestLoadOverridesDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.json"), `{"responses": []}`)
	write(t, filepath.Join(dir, "models.json"), `{"providers": {"scripted": {"models": [{"id": "demo", "script": "mine.json", "name": "My demo"}]}}}`)
	r, warnings := Load(dir)
	if warnings != nil {
		t.Errorf("warnings = %+v", warnings)
	}
	want := []agent.Model{{Provider: "scripted", ID: "demo", Name: "My demo", ThinkingLevels: offOnly, ContextWindow: scripted.DefaultContextWindow}}
	if diff := cmp.Diff(scriptedList(r), want); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}
}

func TestLoadWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		models string
		files  map[string]string // more files in the agent dir
		want   func(dir string) []protocol.Warning
		listed []string // model ids listed besides demo
	}{
		{
			name:   "syntaxError",
			models: "{\n  \"providers\": {\n    \"scripted\": {\"models\": [}\n  }\n}\n",
			want: func(dir string) []protocol.Warning {
				return []protocol.Warning{{Message: "models.json is not valid (its models are ignored): invalid character '}' looking for beginning of value",
					Source: "settings", Path: filepath.Join(dir, "models.json"), Line: 3, Column: 29}}
			},
		},
		{
			name:   "typeError",
			models: "{\"providers\": {\"scripted\": {\"models\": [\n {\"id\": 7}]}}}",
			want: func(dir string) []protocol.Warning {
				return []protocol.Warning{{Message: "models.json: providers.scripted is not valid (its models are ignored): json: cannot unmarshal number into Go struct field modelConfig.providers.scripted.models.id of type string",
					Source: "settings", Path: filepath.Join(dir, "models.json"), Line: 2, Column: 9}}
			},
		},
		{
			name:   "unsupportedProviderAndBadModels",
			models: `{"providers": {"mystery": {"models": [{"id": "gpt"}]}, "scripted": {"models": [{"script": "a.json"}, {"id": "noscript"}, {"id": "ok", "script": "a.json"}, {"id": "ok", "script": "a.json"}, {"id": "neg", "script": "a.json", "contextWindow": -5}]}}}`,
			files:  map[string]string{"a.json": `{"responses": []}`},
			want: func(dir string) []protocol.Warning {
				p := filepath.Join(dir, "models.json")
				return []protocol.Warning{
					{Message: `models.json: providers.scripted.models[0]: "id" is missing; the model is ignored`, Source: "settings", Path: p},
					{Message: `models.json: providers.scripted.models[1]: model "noscript" has no "script"; it is ignored`, Source: "settings", Path: p},
					{Message: `models.json: providers.scripted.models[3]: model "ok" is declared twice; this one is ignored`, Source: "settings", Path: p},
					{Message: `models.json: providers.scripted.models[4]: model "neg" has a negative contextWindow; the default is used`, Source: "settings", Path: p},
					{Message: `models.json: providers.mystery: "api" must be "openai-responses", "openai-completions" or "anthropic-messages", not ""; the provider is ignored`, Source: "settings", Path: p},
				}
			},
			listed: []string{"ok", "neg"},
		},
		{
			name:   "badScripts",
			models: `{"providers": {"scripted": {"models": [{"id": "missing", "script": "nope.json"}, {"id": "broken", "script": "broken.json"}, {"id": "invalid", "script": "invalid.json"}]}}}`,
			files: map[string]string{
				"broken.json":  "{\"responses\": [\n  {\"text\": \"a\"},\n  {\"text\": }\n]}",
				"invalid.json": `{"responses": [{"toolCalls": [{"arguments": {}}]}]}`,
			},
			want: func(dir string) []protocol.Warning {
				return []protocol.Warning{
					{Message: `models.json: providers.scripted.models[0]: cannot read the script of model "missing": open ` + filepath.Join(dir, "nope.json") + `: no such file or directory`,
						Source: "settings", Path: filepath.Join(dir, "nope.json")},
					{Message: `models.json: providers.scripted.models[1]: the script of model "broken" is invalid; the model is ignored: script: invalid character '}' looking for beginning of value`,
						Source: "settings", Path: filepath.Join(dir, "broken.json"), Line: 3, Column: 12},
					{Message: `models.json: providers.scripted.models[2]: the script of model "invalid" is invalid; the model is ignored: script: responses[0].toolCalls[0]: name is missing`,
						Source: "settings", Path: filepath.Join(dir, "invalid.json")},
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, "models.json"), tc.models)
			for name, content := range tc.files {
				write(t, filepath.Join(dir, name), content)
			}
			r, warnings := Load(dir)
			if diff := cmp.Diff(warnings, tc.want(dir)); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			var listed []string
			for _, m := range scriptedList(r)[1:] {
				listed = append(listed, m.ID)
			}
			if diff := cmp.Diff(listed, tc.listed); diff != "" {
				t.Errorf("listed models (-got +want):\n%s", diff)
			}
			if scriptedList(r)[0].ID != "demo" {
				t.Errorf("the built-in demo is missing")
			}
		})
	}
}

func TestLoadUnreadableModelsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "models.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, warnings := Load(dir)
	if len(warnings) != 1 || warnings[0].Source != "settings" || warnings[0].Path != filepath.Join(dir, "models.json") {
		t.Errorf("warnings = %+v, want one settings warning for models.json", warnings)
	}
	if len(scriptedList(r)) != 1 {
		t.Errorf("List = %+v, want only the built-in demo", scriptedList(r))
	}
}

func TestNewRegistryOrdersAndReplaces(t *testing.T) {
	t.Parallel()
	a := named{"zeta", scripted.New(scripted.Model{ID: "z"})}
	b := named{"alpha", scripted.New(scripted.Model{ID: "a1"})}
	b2 := named{"alpha", scripted.New(scripted.Model{ID: "a2"})}
	r := NewRegistry(a, b, b2)
	var got []string
	for _, m := range r.List() {
		got = append(got, m.ID)
	}
	if diff := cmp.Diff(got, []string{"a2", "z"}); diff != "" {
		t.Errorf("model order (-got +want):\n%s", diff)
	}
	if p, _, ok := r.Lookup("alpha", "a2"); !ok || p != Provider(b2) {
		t.Errorf("Lookup(alpha, a2) = %v, %v", p, ok)
	}
}

// named renames a provider for registry tests.
type named struct {
	name string
	*scripted.Provider
}

func (n named) Name() string { return n.name }

// scriptedList returns the scripted models of r's list.
func scriptedList(r *Registry) []agent.Model {
	var out []agent.Model
	for _, m := range r.List() {
		if m.Provider == scripted.Name {
			out = append(out, m)
		}
	}
	return out
}
