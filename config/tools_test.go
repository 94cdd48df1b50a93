package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var knownTools = []KnownTool{{Name: "read", DefaultEnabled: true}, {Name: "websearch", DefaultEnabled: false}}

func TestToolsReadWrite(t *testing.T) {
	agent := tempDir(t)
	tools := NewTools(agent)
	got, err := tools.Read(knownTools)
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolState{{Name: "read", Enabled: true, Settings: map[string]string{}}, {Name: "websearch", Settings: map[string]string{}}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("defaults (-got +want):\n%s", diff)
	}
	writes := []struct{ name, key, value string }{
		{"websearch", "enabled", "true"},
		{"websearch", "provider", `"brave"`},
		{"websearch", "braveApiKey", `"sk-secret-1234"`},
		{"read", "enabled", "false"},
		{"websearch", "shortKey", `"abc"`},
		{"websearch", "provider", "null"},
	}
	for _, w := range writes {
		if err := tools.Write(ctx, knownTools, w.name, w.key, json.RawMessage(w.value)); err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
	}
	got, err = tools.Read(knownTools)
	if err != nil {
		t.Fatal(err)
	}
	want = []ToolState{
		{Name: "read", Enabled: false, Settings: map[string]string{}},
		{Name: "websearch", Enabled: true, Settings: map[string]string{"braveApiKey": "****1234", "shortKey": "****"}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("after writes (-got +want):\n%s", diff)
	}
	raw, _ := os.ReadFile(tools.Path())
	if want := `{"tools":{"websearch":{"enabled":true,"braveApiKey":"sk-secret-1234","shortKey":"abc"},"read":{"enabled":false}}}`; compactJSON(t, raw) != want {
		t.Errorf("tools.json = %s, want %s", compactJSON(t, raw), want)
	}
	if st, _ := os.Stat(tools.Path()); st.Mode().Perm() != 0o600 {
		t.Errorf("tools.json mode %v, want 0600", st.Mode().Perm())
	}
	off, warnings := tools.Disabled()
	if diff := cmp.Diff(off, map[string]bool{"read": true}); diff != "" || warnings != nil {
		t.Errorf("Disabled = %v, %v", off, warnings)
	}
	if diff := cmp.Diff(ResolveTools([]string{"read", "bash", "edit"}, off), []string{"bash", "edit"}); diff != "" {
		t.Errorf("ResolveTools: %s", diff)
	}
}

func TestToolsWriteRefusals(t *testing.T) {
	tools := NewTools(tempDir(t))
	tests := []struct {
		name, tool, key, value, field string
	}{
		{"unknown tool", "nope", "enabled", "true", "name"},
		{"empty key", "read", "", "true", "key"},
		{"dotted key", "read", "a.b", `"x"`, "key"},
		{"__proto__", "read", "__proto__", `"x"`, "key"},
		{"constructor", "read", "constructor", `"x"`, "key"},
		{"enabled string", "read", "enabled", `"yes"`, "value"},
		{"setting boolean", "read", "provider", `true`, "value"},
		{"setting number", "read", "provider", `1`, "value"},
		{"setting object", "read", "provider", `{}`, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tools.Write(ctx, knownTools, tt.tool, tt.key, json.RawMessage(tt.value))
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != tt.field {
				t.Errorf("err = %v, want ParamError %s", err, tt.field)
			}
		})
	}
	if _, err := os.Stat(tools.Path()); err == nil {
		t.Errorf("a refused write created tools.json")
	}
}

func TestToolsCorruptFile(t *testing.T) {
	agent := tempDir(t)
	tools := NewTools(agent)
	for _, content := range []string{"{\"tools\": [1,}", `{"tools": []}`, `{"tools": {"read": 1}}`} {
		writeFile(t, filepath.Join(agent, ToolsFile), content)
		var ce *CorruptError
		if _, err := tools.Read(knownTools); !errors.As(err, &ce) {
			t.Errorf("%s: Read err = %v, want CorruptError", content, err)
		}
		if err := tools.Write(ctx, knownTools, "read", "enabled", json.RawMessage("false")); !errors.As(err, &ce) {
			t.Errorf("%s: Write err = %v, want CorruptError", content, err)
		}
		if b, _ := os.ReadFile(tools.Path()); string(b) != content {
			t.Errorf("corrupt tools.json overwritten: %s", b)
		}
		if off, w := tools.Disabled(); off != nil || len(w) != 1 || w[0].Path != tools.Path() {
			t.Errorf("%s: Disabled = %v, %v; want a warning", content, off, w)
		}
	}
}
