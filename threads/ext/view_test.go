package ext

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// nest returns n stacks nested around a text view.
func nest(kind string, n int) string {
	v := `{"type":"text","text":"x"}`
	for range n {
		if kind == "list" {
			v = `{"type":"list","items":[` + v + `]}`
		} else {
			v = `{"type":"stack","children":[` + v + `]}`
		}
	}
	return v
}

// inputOfSize is an input view whose checked JSON is exactly n bytes.
func inputOfSize(n int) string {
	frame := len(`{"id":"q","type":"input","value":""}`)
	return `{"type":"input","id":"q","value":"` + strings.Repeat("a", n-frame) + `"}`
}

// TestCheckView is the view validator's table (EXTENSIBILITY.md §6 "View
// schema"): every element valid, each invalidity of the list, depth 8
// against 9, duplicate ids and the size boundaries.
func TestCheckView(t *testing.T) {
	for _, tc := range []struct {
		name, view string
		max        int
		wantErr    string // "" valid
	}{
		{"text", `{"type":"text","text":"hi"}`, 0, ""},
		{"text style", `{"type":"text","text":"hi","style":"success"}`, 0, ""},
		{"text every style", `{"type":"stack","children":[{"type":"text","text":"a","style":"normal"},{"type":"text","text":"a","style":"muted"},{"type":"text","text":"a","style":"bold"},{"type":"text","text":"a","style":"code"},{"type":"text","text":"a","style":"warning"},{"type":"text","text":"a","style":"error"}]}`, 0, ""},
		{"text empty", `{"type":"text","text":""}`, 0, ""},
		{"stack", `{"type":"stack","direction":"horizontal","gap":2,"children":[]}`, 0, ""},
		{"list", `{"type":"list","items":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, 0, ""},
		{"button", `{"type":"button","id":"run","label":"Run","style":"danger","disabled":true}`, 0, ""},
		{"input", `{"type":"input","id":"q","value":"","placeholder":"Search","label":"Query"}`, 0, ""},
		{"input without value", `{"type":"input","id":"q"}`, 0, ""},
		{"select", `{"type":"select","id":"level","value":"info","options":[{"value":"info","label":"Info"},{"value":"debug"}],"label":"Level"}`, 0, ""},
		{"select without value", `{"type":"select","id":"level","options":[{"value":"info"}]}`, 0, ""},
		{"toggle", `{"type":"toggle","id":"v","value":true,"label":"Verbose"}`, 0, ""},
		{"progress 0", `{"type":"progress","value":0}`, 0, ""},
		{"progress 1", `{"type":"progress","value":1,"label":"done"}`, 0, ""},
		{"link https", `{"type":"link","url":"https://example.com/login","label":"Sign in"}`, 0, ""},
		{"link http", `{"type":"link","url":"http://localhost:8080/"}`, 0, ""},
		{"depth 8 stacks", nest("stack", 8), 0, ""},
		{"depth 8 lists", nest("list", 8), 0, ""},
		{"widget size at 16 KiB", inputOfSize(16 << 10), 0, ""},
		{"item view of 50 KB", `{"type":"list","items":[` + strings.Repeat(`{"type":"text","text":"a"},`, 2000) + `{"type":"text","text":"a"}]}`, 64 << 10, ""},
		{"size at the limit", inputOfSize(1024), 1024, ""},

		{"depth 9 stacks", nest("stack", 9), 0, "nest more than 8 deep"},
		{"depth 9 lists", nest("list", 9), 0, "nest more than 8 deep"},
		{"size over the limit", inputOfSize(1025), 1024, "over the 1 KiB limit"},
		{"widget size over 16 KiB", `{"type":"list","items":[` + strings.Repeat(`{"type":"text","text":"a"},`, 700) + `{"type":"text","text":"a"}]}`, 0, "over the 16 KiB limit"},
		{"item size over 64 KiB", `{"type":"list","items":[` + strings.Repeat(`{"type":"text","text":"a"},`, 2600) + `{"type":"text","text":"a"}]}`, 64 << 10, "over the 64 KiB limit"},
		{"not an object", `[1]`, 0, "a view is an object"},
		{"not JSON", `{"type":`, 0, "not JSON"},
		{"trailing JSON", `{"type":"text","text":"a"} {}`, 0, "followed by more JSON"},
		{"unknown type", `{"type":"iframe","src":"x"}`, 0, "unknown view type"},
		{"no type", `{"text":"a"}`, 0, "unknown view type"},
		{"html is not a type", `{"type":"html","html":"<b>x</b>"}`, 0, "unknown view type"},
		{"unknown member", `{"type":"text","text":"a","onclick":"x"}`, 0, `unknown member "onclick"`},
		{"member of another type", `{"type":"text","text":"a","id":"x"}`, 0, `unknown member "id"`},
		{"duplicate ids", `{"type":"stack","children":[{"type":"button","id":"a","label":"A"},{"type":"toggle","id":"a"}]}`, 0, `"a" is used twice`},
		{"duplicate ids in nested lists", `{"type":"list","items":[{"type":"list","items":[{"type":"input","id":"q"}]},{"type":"input","id":"q"}]}`, 0, "used twice"},
		{"select value outside options", `{"type":"select","id":"s","value":"x","options":[{"value":"a"}]}`, 0, "one of the select's option values"},
		{"select without options", `{"type":"select","id":"s","options":[]}`, 0, "at least one"},
		{"select duplicate option", `{"type":"select","id":"s","options":[{"value":"a"},{"value":"a"}]}`, 0, "offered twice"},
		{"select option unknown member", `{"type":"select","id":"s","options":[{"value":"a","icon":"x"}]}`, 0, `unknown member "icon"`},
		{"link javascript", `{"type":"link","url":"javascript:alert(1)"}`, 0, "http or https"},
		{"link file", `{"type":"link","url":"file:///etc/passwd"}`, 0, "http or https"},
		{"link relative", `{"type":"link","url":"/login"}`, 0, "http or https"},
		{"button without label", `{"type":"button","id":"b"}`, 0, "needs label"},
		{"button without id", `{"type":"button","label":"B"}`, 0, "needs id"},
		{"empty id", `{"type":"toggle","id":""}`, 0, "1 to 128 characters"},
		{"long id", `{"type":"toggle","id":"` + strings.Repeat("i", 129) + `"}`, 0, "1 to 128 characters"},
		{"bad style", `{"type":"text","text":"a","style":"blink"}`, 0, "one of normal"},
		{"bad button style", `{"type":"button","id":"b","label":"B","style":"success"}`, 0, "one of primary"},
		{"bad direction", `{"type":"stack","direction":"diagonal","children":[]}`, 0, "one of vertical"},
		{"negative gap", `{"type":"stack","gap":-1,"children":[]}`, 0, "integer from 0"},
		{"fractional gap", `{"type":"stack","gap":1.5,"children":[]}`, 0, "integer from 0"},
		{"progress over 1", `{"type":"progress","value":1.01}`, 0, "number from 0 to 1"},
		{"progress string", `{"type":"progress","value":"50%"}`, 0, "number from 0 to 1"},
		{"toggle string value", `{"type":"toggle","id":"v","value":"yes"}`, 0, "a boolean"},
		{"input number value", `{"type":"input","id":"q","value":3}`, 0, "a string"},
		{"input value over 16 KiB", `{"type":"input","id":"q","value":"` + strings.Repeat("a", 16<<10+1) + `"}`, 64 << 10, "at most 16 KiB"},
		{"text not a string", `{"type":"text","text":["a"]}`, 0, "a string"},
		{"children not an array", `{"type":"stack","children":{"type":"text","text":"a"}}`, 0, "an array of views"},
		{"child not a view", `{"type":"list","items":["a"]}`, 0, "a view is an object"},
		{"disabled not a boolean", `{"type":"button","id":"b","label":"B","disabled":"no"}`, 0, "a boolean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = MaxWidgetBytes
			}
			v, err := CheckView(json.RawMessage(tc.view), max)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("accepted %s, want an error holding %q", v.JSON, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q, want one holding %q", err, tc.wantErr)
			case err == nil && len(v.JSON) > max:
				t.Fatalf("accepted %d bytes over %d", len(v.JSON), max)
			}
		})
	}
}

// TestCheckViewCleansAndListsControls: text in a view is stripped of ANSI
// escapes and kept on one line, not refused; the controls are listed by
// id with a select's option values.
func TestCheckViewCleansAndListsControls(t *testing.T) {
	v, err := CheckView(json.RawMessage(`{"type":"stack","children":[
		{"type":"text","text":"\u001b[31mred\u001b[0m\r\nline"},
		{"type":"button","id":"run","label":"Run"},
		{"type":"input","id":"q","value":"a\nb"},
		{"type":"select","id":"s","value":"b","options":[{"value":"a"},{"value":"b","label":"\u001b[1mB"}]},
		{"type":"toggle","id":"t"}]}`), MaxWidgetBytes)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"children":[{"text":"red line","type":"text"},{"id":"run","label":"Run","type":"button"},{"id":"q","type":"input","value":"a b"},` +
		`{"id":"s","options":[{"value":"a"},{"label":"B","value":"b"}],"type":"select","value":"b"},{"id":"t","type":"toggle"}],"type":"stack"}`
	if string(v.JSON) != want {
		t.Errorf("checked view\n got %s\nwant %s", v.JSON, want)
	}
	got := fmt.Sprint(v.Controls)
	if w := "map[q:{input []} run:{button []} s:{select [a b]} t:{toggle []}]"; got != w {
		t.Errorf("controls %s, want %s", got, w)
	}
}

// TestCleanText: ANSI stripped, CR/LF runs and tabs one space, other
// controls dropped, cut to 200 code points (not bytes) without leaving a
// base character apart from its combining marks; widget lines keep their
// spacing, the other text is trimmed.
func TestCleanText(t *testing.T) {
	e := "e\u0301" // e + combining acute: two code points
	for _, tc := range []struct {
		name, in    string
		keepSpacing bool
		want        string
	}{
		{"ansi colour", "\x1b[1;31mred\x1b[0m text", false, "red text"},
		{"osc hyperlink", "\x1b]8;;https://x\x07link\x1b]8;;\x07", false, "link"},
		{"crlf", "one\r\ntwo\rthree\nfour", false, "one two three four"},
		{"blank lines", "a\n\n\nb", false, "a b"},
		{"tab", "a\tb", true, "a b"},
		{"controls", "a\x00b\x7fc\u0085d", false, "abcd"},
		{"trimmed", "  Indexing…  \n", false, "Indexing…"},
		{"spacing kept", "  ✓ lint   ok  ", true, "  ✓ lint   ok  "},
		{"200 ascii", strings.Repeat("a", 250), false, strings.Repeat("a", 200)},
		{"200 code points not bytes", strings.Repeat("é", 250), false, strings.Repeat("é", 200)},
		{"emoji", strings.Repeat("🙂", 201), false, strings.Repeat("🙂", 200)},
		{"combining mark at the cut", strings.Repeat("a", 199) + e + "z", false, strings.Repeat("a", 199)},
		{"combining mark inside", strings.Repeat("a", 198) + e + "z", false, strings.Repeat("a", 198) + e},
		{"ansi does not count", "\x1b[31m" + strings.Repeat("b", 200) + "\x1b[0m", false, strings.Repeat("b", 200)},
		{"empty", "", false, ""},
		{"only blanks", " \n\t ", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CleanText(tc.in, tc.keepSpacing)
			if got != tc.want {
				t.Errorf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > MaxTextRunes {
				t.Errorf("%d code points", n)
			}
		})
	}
}
