package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 60) + "_long_tail"
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return hex.EncodeToString(sum[:])[:8]
	}
	edge := strings.Repeat("t", MaxToolName-len("mcp__fs__")) // exactly 64 in all
	cases := []struct {
		server, tool, want string
	}{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"fs", "read.file", "mcp__fs__read_file"},
		{"fs", "get weather/now", "mcp__fs__get_weather_now"},
		{"fs", "créer", "mcp__fs__cr_er"}, // one _ per character, not per byte
		{"fs", edge, "mcp__fs__" + edge},
		// Too long: the prefix, "_", 8 hex digits of the full name's hash, "_",
		// and as much of the tool name's tail as fits in 64.
		{"fs", edge + "u", "mcp__fs___" + hash("mcp__fs__"+edge+"u") + "_" + strings.Repeat("t", 44) + "u"},
		{"docs", long, "mcp__docs___" + hash("mcp__docs__"+long) + "_" + strings.Repeat("x", 33) + "_long_tail"},
	}
	for _, c := range cases {
		got := ToolName(c.server, c.tool)
		if got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
		if len(got) > MaxToolName {
			t.Errorf("ToolName(%q, %q) has %d characters", c.server, c.tool, len(got))
		}
	}
	// Two long names differing only in the middle stay distinct, and a long
	// server name leaves the tool's tail readable.
	a := ToolName("s", strings.Repeat("a", 40)+"1"+strings.Repeat("b", 40))
	b := ToolName("s", strings.Repeat("a", 40)+"2"+strings.Repeat("b", 40))
	if a == b || len(a) != MaxToolName {
		t.Errorf("long names collide or have the wrong length: %q %q", a, b)
	}
	srv := strings.Repeat("S", 64)
	if got := ToolName(srv, "read_file"); !strings.HasSuffix(got, "_read_file") || !strings.HasPrefix(got, "mcp__SSS") || len(got) != MaxToolName {
		t.Errorf("ToolName(64-char server, read_file) = %q", got)
	}
}

func TestVisible(t *testing.T) {
	t.Parallel()
	app := map[string]any{"ui": map[string]any{"visibility": []any{"app"}}}
	both := map[string]any{"ui": map[string]any{"visibility": []any{"app", "model"}}}
	cases := []struct {
		name              string
		meta              map[string]any
		enabled, disabled []string
		want              bool
	}{
		{"a", nil, nil, nil, true},
		{"a", nil, nil, []string{"a"}, false},
		{"a", nil, []string{"a"}, []string{"a"}, true}, // the allowlist wins
		{"b", nil, []string{"a"}, nil, false},
		{"a", nil, []string{}, nil, false}, // an empty allowlist hides all
		{"a", app, nil, nil, false},
		{"a", app, []string{"a"}, nil, false},
		{"a", both, nil, nil, true},
	}
	for _, c := range cases {
		if got := visible(c.name, c.meta, c.enabled, c.disabled); got != c.want {
			t.Errorf("visible(%q, %v, %v, %v) = %v", c.name, c.meta, c.enabled, c.disabled, got)
		}
	}
}

func TestBaseEnv(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=sk-1", "LANG=C.UTF-8", "LC_ALL=C", "TMPDIR=/t",
		"KNIGHTCODE_CODING_AGENT_DIR=/a", "ANTHROPIC_API_KEY=x", "LCX=1"}
	got := withEnv(baseEnv(environ), map[string]string{"TOKEN": "t", "HOME": "/other"})
	want := []string{"PATH=/bin", "LANG=C.UTF-8", "LC_ALL=C", "TMPDIR=/t", "HOME=/other", "TOKEN=t"}
	if !slices.Equal(got, want) {
		t.Errorf("env = %q, want %q", got, want)
	}
}
