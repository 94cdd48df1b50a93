package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ijsonFast are lines decodeIJSON must read (the common, valid lines).
var ijsonFast = []string{
	`{"id":1,"method":"payload/read","params":{"id":"x","offset":0}}`,
	`{"id":"a","result":{"data":"AAEC","nextOffset":3,"eof":false}}`,
	` {"jsonrpc":"2.0", "id" : 7 , "error":{"code":"internal","message":"m"}} ` + "\t",
	`{"method":"initialized"}`, `{"id":null,"result":1}`, `{"id":1,"result":null,"error":null}`,
	`{"id":1,"method":""}`, `{"id":1,"method":null}`, `{"id":1,"other":{"deep":[1,2]},"method":"m"}`,
	`{"id":1,"method":"a\/b\u00e9\ud834\udd1e\n"}`, `{"id":1,"method":"é"}`, `{"id":-0.5e+3,"result":1e400}`,
	`{"id":1,"result":{"a":{"b":1},"c":{"b":1}},"x":[{"a":1},{"a":1}]}`, `{"id":1,"result":{"é":1,"e":2}}`,
	`{"id":1,"ids":2,"Methods":3,"result":4}`, `{}`, `{"id":[1],"method":"m"}`, `{"id":true,"result":1}`,
	`{"id":1,"result":"` + strings.Repeat("QUJD", 16<<10) + `"}`,
	`{"id":1,"result":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`,
	`{"id":1,"result":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
}

// ijsonOther are lines decodeIJSON leaves to encoding/json: refused by the
// old checks (a member given twice, bytes that are not UTF-8, not JSON, not
// a message) or read by encoding/json in a way decodeIJSON does not copy.
var ijsonOther = []string{
	// a member given twice, at any depth, spelled alike or not
	`{"id":1,"id":2,"method":"m"}`, `{"id":1,"result":{"a":{"b":1,"b":2}}}`,
	`{"id":1,"result":[{"a":1},{"a":1,"b":{"c":1,"c":2}}]}`, `{"id":1,"result":{"a":1,"\u0061":2}}`,
	`{"id":1,"result":{"decision":"decline","decision":"accept"}}`, `{"id":1,"result":{"":1,"":2}}`,
	`{"id":1,"method":"m","params":{"x":{"y":[{"z":1,"\u007a":2}]}}}`, `{"id":1,"result":{"é":1,"\u00e9":2}}`,
	`{"id":1,"result":{"\u00E9":1,"\u00e9":2}}`, `{"\u0069d":1,"id":2,"result":3}`,
	// lone surrogates escaped (encoding/json reads each as U+FFFD, so two
	// different ones are the same name to it)
	`{"id":1,"result":{"\ud800":1,"\udbff":2}}`, `{"id":1,"result":{"\ud800":1,"\ufffd":2}}`,
	`{"id":1,"method":"\udc00"}`, `{"id":1,"result":"\ud800x"}`, `{"id":1,"result":"\udd1e\ud834"}`,
	// not UTF-8, in a value, a name or the method
	"{\"id\":1,\"result\":\"\xff\"}", "{\"id\":1,\"result\":{\"\xff\":1,\"\xfe\":2}}",
	"{\"id\":1,\"result\":\"\xc0\xaf\"}", "{\"id\":1,\"result\":\"\xed\xa0\x80\"}", "{\"id\":1,\"result\":\"\xe2\x82\"}",
	"{\"id\":1,\"method\":\"caf\xe9\"}", "{\"id\":\"\xff\",\"method\":\"m\"}",
	// names encoding/json matches case-insensitively
	`{"ID":1,"method":"m"}`, `{"Method":"m","id":1}`, `{"id":1,"method":"m","paramſ":{"a":1}}`,
	`{"id":1,"RESULT":2}`, `{"id":1,"Error":{"code":"x"}}`,
	// not a message: a method of another type, not an object
	`{"id":1,"method":5}`, `{"id":1,"method":{}}`, `{"id":1,"method":["m"]}`, `[1]`, `"s"`, `null`, `1`,
	// not JSON
	`{"id":1,"method":"m",}`, `{"id":1,"method":"m"} x`, `{"id":1,"method":"m"}{}`, `{`, ``, ` `,
	`{"id":01}`, "\xef\xbb\xbf{\"id\":1,\"result\":2}", "{\"id\":1,\"result\":\"a\tb\"}",
	`{"id":1,"result":[1,]}`, `{"id":1,"result":tru}`, `{"id":1,"result":"\x"}`, `{id:1}`,
	`{"id":1,"result":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"id":1,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// TestDecodeIJSON checks decodeIJSON against the path it skips: a line it
// reads decodes with encoding/json to the same message, is UTF-8 and gives
// no member twice (the fast path never takes a line the old path refuses),
// and the lines of ijsonFast do take the fast path.
func TestDecodeIJSON(t *testing.T) {
	t.Parallel()
	for _, c := range ijsonFast {
		if _, ok := decodeIJSON([]byte(c)); !ok {
			t.Errorf("decodeIJSON(%.80q) left a plain valid line to encoding/json", c)
		}
		checkIJSON(t, []byte(c))
	}
	for _, c := range ijsonOther {
		if _, ok := decodeIJSON([]byte(c)); ok {
			t.Errorf("decodeIJSON(%.80q) read a line it must leave to encoding/json", c)
		}
		checkIJSON(t, []byte(c))
	}
}

// checkIJSON fails t when decodeIJSON reads line and the old path (encoding/json,
// firstInvalidUTF8, duplicateMemberDeep) refuses it or reads another message.
func checkIJSON(t *testing.T, line []byte) {
	t.Helper()
	got, ok := decodeIJSON(line)
	if !ok {
		if diff := cmp.Diff(got, message{}); diff != "" {
			t.Errorf("decodeIJSON(%.80q) left the line with a message (-got +want):\n%s", line, diff)
		}
		return
	}
	var want message
	if err := json.Unmarshal(line, &want); err != nil {
		t.Errorf("decodeIJSON(%.80q) read a line encoding/json refuses: %v", line, err)
		return
	}
	want.IJSON = true
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("decodeIJSON(%.80q) (-fast +encoding/json):\n%s", line, diff)
	}
	if bad := firstInvalidUTF8(line); bad >= 0 {
		t.Errorf("decodeIJSON(%.80q) read a line that is not UTF-8 at byte %d", line, bad)
	}
	if path, dup := duplicateMemberDeep(line); dup {
		t.Errorf("decodeIJSON(%.80q) read a line that gives %q twice", line, path)
	}
}

// FuzzDecodeIJSON holds decodeIJSON to checkIJSON on any line.
func FuzzDecodeIJSON(f *testing.F) {
	for _, c := range append(ijsonFast[:len(ijsonFast)-3], ijsonOther[:len(ijsonOther)-2]...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkIJSON(t, line) })
}
