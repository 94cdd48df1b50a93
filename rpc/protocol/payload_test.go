package protocol

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plainPayloadReadResult is PayloadReadResult without its JSON methods:
// what encoding/json makes of the struct.
type plainPayloadReadResult PayloadReadResult

// TestPayloadReadResultJSON checks that AppendJSON writes what
// encoding/json writes for the struct, within JSONLen, and that
// UnmarshalJSON reads what encoding/json reads, on the fast path and off
// it.
func TestPayloadReadResultJSON(t *testing.T) {
	t.Parallel()
	next, zero, big := int64(49152), int64(0), int64(1<<62)
	chunk := make([]byte, MaxPayloadChunk)
	for i := range chunk {
		chunk[i] = byte(i * 31)
	}
	for _, r := range []PayloadReadResult{
		{Data: []byte{}, EOF: true},
		{Data: []byte("a"), NextOffset: &next},
		{Data: []byte("ab"), NextOffset: &zero},
		{Data: []byte("abc"), NextOffset: &big},
		{Data: chunk, NextOffset: &next},
		{Data: chunk[:MaxPayloadChunk-1], EOF: true},
	} {
		want, err := json.Marshal(plainPayloadReadResult(r))
		if err != nil {
			t.Fatal(err)
		}
		got := r.AppendJSON([]byte("prefix"))
		if string(got[:6]) != "prefix" || string(got[6:]) != string(want) {
			t.Errorf("AppendJSON = %.80s, encoding/json %.80s", got[6:], want)
		}
		if len(got)-6 > r.JSONLen() {
			t.Errorf("AppendJSON wrote %d bytes, JSONLen says at most %d", len(got)-6, r.JSONLen())
		}
		if m, err := json.Marshal(r); err != nil || string(m) != string(want) {
			t.Errorf("json.Marshal = %.80s, %v; want %.80s", m, err, want)
		}
		var back PayloadReadResult
		if err := back.UnmarshalJSON(got[6:]); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(back, r); diff != "" {
			t.Errorf("read back (-got +want):\n%s", diff)
		}
	}
	// Off the fast path: encoding/json's reading, errors included.
	for _, in := range []string{
		`{"eof":true,"data":"YWJj"}`,
		`{ "data" : "YWJj", "eof" : false }`,
		`{"data":"YW\/j","eof":false}`,
		`{"data":"YWJj","nextOffset":-1,"eof":false}`,
		`{"data":"YWJj","nextOffset":01,"eof":false}`,
		`{"data":"YWJj","nextOffset":99999999999999999999,"eof":false}`,
		`{"data":"YWJj!","eof":false}`,
		`{"data":"YWJj","eof":false,"extra":1}`,
		`{"data":null,"eof":true}`,
		`null`,
	} {
		var got PayloadReadResult
		gotErr := json.Unmarshal([]byte(in), &got)
		var want plainPayloadReadResult
		wantErr := json.Unmarshal([]byte(in), &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v, encoding/json's %v", in, gotErr, wantErr)
		}
		if diff := cmp.Diff(plainPayloadReadResult(got), want); diff != "" {
			t.Errorf("%s (-got +encoding/json):\n%s", in, diff)
		}
	}
}
