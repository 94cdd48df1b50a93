package threads

import (
	"encoding/json"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestDecodeStrictExactNames checks that an answer whose member names
// differ from the fields' only in case is the wrong shape (QA found
// {"DECISION":"accept"} approved a write: encoding/json matches names
// ignoring case), at the top and nested, while exact answers decode.
func TestDecodeStrictExactNames(t *testing.T) {
	tests := []struct {
		raw string
		ok  bool
	}{
		{`{"decision":"accept"}`, true},
		{`{"decision":"decline","message":"no"}`, true},
		{`{"DECISION":"accept"}`, false},
		{`{"Decision":"accept"}`, false},
		{`{"decision":"decline","Message":"no"}`, false},
		{`{"decision":"accept","extra":1}`, false},
	}
	for _, tt := range tests {
		var r protocol.ItemToolCallRequestApprovalResult
		if err := decodeStrict(json.RawMessage(tt.raw), &r); (err == nil) != tt.ok {
			t.Errorf("decodeStrict(%s) = %v, want ok %v", tt.raw, err, tt.ok)
		}
	}
	var u protocol.ItemToolCallRequestUserInputResult
	if err := decodeStrict(json.RawMessage(`{"answers":{"color":{"label":"Blue"}}}`), &u); err != nil {
		t.Errorf("exact nested answer refused: %v", err)
	}
	if err := decodeStrict(json.RawMessage(`{"answers":{"color":{"Label":"Blue"}}}`), &u); err == nil {
		t.Errorf("nested member differing in case accepted")
	}
}
