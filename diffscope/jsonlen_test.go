package diffscope

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONStringLen checks the budget's size of a string against what the
// rpc writer's encoder (no HTML escaping) writes.
func TestJSONStringLen(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "plain", `"quoted" \ back`, "tab\tnl\ncr\rbs\bff\f", strings.Repeat("\x00", 40), "\x01\x1f\x7f",
		"<html> & é 日本 🎉", "sep\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", "+" + strings.Repeat("x", 1000),
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := jsonStringLen(s), buf.Len()-1; got != want {
			t.Errorf("jsonStringLen(%q) = %d, want %d (%s)", s, got, want, buf.Bytes())
		}
	}
}
