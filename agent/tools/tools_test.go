package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent"
)

// TestMain makes the test binary a child subreaper, as main makes the
// server (BecomeSubreaper), so orphans of bash commands become its children,
// and runs it as a command's reaper when started as one (RunReaper), as
// main runs the server's executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ReaperArg {
		os.Exit(RunReaper(os.Args[2:]))
	}
	if runtime.GOOS == "linux" {
		if err := BecomeSubreaper(); err != nil {
			panic(err)
		}
	}
	goleak.VerifyTestMain(m)
}

// execute runs tool with args (marshalled to JSON) and returns the result and
// its text.
func execute(t *testing.T, ctx context.Context, tool agent.Tool, args any) (agent.ToolResult, string) {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	res := tool.Execute(ctx, json.RawMessage(raw))
	var sb strings.Builder
	for _, c := range res.Content {
		if c.Type != agent.ContentText {
			t.Fatalf("result block of type %q", c.Type)
		}
		sb.WriteString(c.Text)
	}
	return res, sb.String()
}

// writeFile creates dir/name with content and mode.
func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDefinitions checks every tool's name and that its schema is a JSON
// object schema whose required fields are properties.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range All(t.TempDir()) {
		d := tool.Definition()
		names = append(names, d.Name)
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil {
			t.Errorf("%s schema: %v", d.Name, err)
			continue
		}
		if schema.Type != "object" {
			t.Errorf("%s schema type = %q", d.Name, schema.Type)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s schema requires %q, which is not a property", d.Name, r)
			}
		}
	}
	if diff := cmp.Diff(names, []string{"read", "bash", "edit", "write"}); diff != "" {
		t.Errorf("tool names (-got +want):\n%s", diff)
	}
}

func TestResolveAndDisplayPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	cwd := "/work/repo"
	tests := []struct{ in, abs, shown string }{
		{"a.txt", "/work/repo/a.txt", "a.txt"},
		{"./sub/../b.txt", "/work/repo/b.txt", "b.txt"},
		{"/work/repo/c/d.txt", "/work/repo/c/d.txt", "c/d.txt"},
		{"/etc/hosts", "/etc/hosts", "/etc/hosts"},
		{"../other/x", "/work/other/x", "/work/other/x"},
		{"..file", "/work/repo/..file", "..file"},
		{"~/notes.md", filepath.Join(home, "notes.md"), filepath.Join(home, "notes.md")},
	}
	for _, tc := range tests {
		abs, err := ResolvePath(cwd, tc.in)
		if err != nil {
			t.Fatalf("ResolvePath(%q): %v", tc.in, err)
		}
		if abs != tc.abs {
			t.Errorf("ResolvePath(%q) = %q, want %q", tc.in, abs, tc.abs)
		}
		if got := displayPath(cwd, abs); got != tc.shown {
			t.Errorf("displayPath(%q) = %q, want %q", abs, got, tc.shown)
		}
	}
	if _, err := ResolvePath(cwd, ""); err == nil {
		t.Errorf("resolvePath of an empty path succeeded")
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		tool agent.Tool
		args string
		want string
	}{
		{NewRead(dir), `{"path": 3}`, "read: invalid arguments"},
		{NewRead(dir), `{}`, `"path" is empty`},
		{NewBash(dir), `{"command": ""}`, `"command" is empty`},
		{NewBash(dir), `{"command": "true", "timeout": -1}`, "timeout must be a positive number"},
		{NewEdit(dir), `{"path": "a", "edits": []}`, "at least one"},
		{NewEdit(dir), `{"path": "a", "edits": "x"}`, "edit: invalid arguments"},
		{NewWrite(dir), `{"path": "a"}`, `"content" is missing`},
		{NewWrite(dir), `[1]`, "write: invalid arguments"},
	}
	for _, tc := range tests {
		res, text := execute(t, context.Background(), tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %s: isError=%v text=%q, want an error containing %q", tc.tool.Definition().Name, tc.args, res.IsError, text, tc.want)
		}
	}
}
