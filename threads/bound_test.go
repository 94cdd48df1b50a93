package threads

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestBoundItem checks that items stay within the 64 KiB inline limit,
// truncated with a marker, and that small items are untouched.
func TestBoundItem(t *testing.T) {
	big := strings.Repeat("<é>\n", 40<<10) // escapes and multi-byte runes
	bigArgs, _ := json.Marshal(map[string]string{"content": big})
	out := big
	idx := 3
	for _, c := range []struct {
		name string
		in   protocol.Item
		cut  bool
	}{
		{"small", protocol.Item{ID: "item-0", Type: protocol.ItemAgentMessage, Text: "hello"}, false},
		{"long text", protocol.Item{ID: "item-1", Type: protocol.ItemAgentMessage, Text: big}, true},
		{"long output, args and diffs", protocol.Item{ID: "c", Type: protocol.ItemToolCall, Index: &idx, Name: "write", Arguments: bigArgs, Status: protocol.ToolCompleted, Output: &out,
			FileChanges: []protocol.FileChange{{Path: "a", Kind: protocol.FileAdd, Diff: big}}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := boundItem(c.in)
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > MaxInlineItemBytes {
				t.Errorf("%d bytes, over %d", len(b), MaxInlineItemBytes)
			}
			if !c.cut {
				if string(b) != string(mustMarshal(t, c.in)) {
					t.Errorf("a small item changed: %s", b)
				}
				return
			}
			if !strings.Contains(string(b), "truncated") {
				t.Errorf("no truncation marker in %.200s", b)
			}
			if !json.Valid(got.Arguments) && got.Arguments != nil {
				t.Errorf("arguments are not JSON: %.200s", got.Arguments)
			}
			if got.ID != c.in.ID || got.Type != c.in.Type || got.Status != c.in.Status {
				t.Errorf("identity changed: %+v", got)
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
