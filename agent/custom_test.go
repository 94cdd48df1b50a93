package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCustomMessage: a custom message keeps its shape through JSON and the
// model reads it as a user message.
func TestCustomMessage(t *testing.T) {
	m := Message{Role: RoleCustom, CustomType: "background_shell", Display: true,
		Content: []ContentBlock{TextBlock("ended")}, Details: json.RawMessage(`{"a":1}`), Timestamp: 5}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"custom","customType":"background_shell","content":[{"type":"text","text":"ended"}],"display":true,"details":{"a":1},"timestamp":5}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(back, m); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
	in := []Message{UserText("hi", 1), m}
	got := ForModel(in)
	if diff := cmp.Diff(got, []Message{UserText("hi", 1), {Role: RoleUser, Content: m.Content, Timestamp: 5}}); diff != "" {
		t.Errorf("ForModel (-got +want):\n%s", diff)
	}
	if in[1].Role != RoleCustom {
		t.Error("ForModel changed its input")
	}
}
