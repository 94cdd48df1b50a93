package session

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestTurnEndLineShape checks how a turn_end entry stores the index trees
// and the file totals: the index trees by name when set, files as [] for a
// turn with totals and no changed file (so it reads back [] rather than
// absent), and no files member for a turn without totals.
func TestTurnEndLineShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  TurnEnd
		want string
	}{
		{"index trees and no changed file",
			TurnEnd{TurnID: "t1", Status: "completed", BeforeTree: "b", AfterTree: "a", BeforeIndexTree: "bi", AfterIndexTree: "ai",
				Files: []protocol.FileTotal{}, CompletedAt: 5},
			`{"type":"turn_end","id":"","parentId":null,"timestamp":"","turnId":"t1","status":"completed","beforeTree":"b","afterTree":"a",` +
				`"beforeIndexTree":"bi","afterIndexTree":"ai","files":[],"completedAt":5}`},
		{"no totals",
			TurnEnd{TurnID: "t2", Status: "interrupted", CompletedAt: 6},
			`{"type":"turn_end","id":"","parentId":null,"timestamp":"","turnId":"t2","status":"interrupted","completedAt":6}`},
	}
	for _, tt := range tests {
		e := NewTurnEnd(tt.end)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != tt.want {
			t.Errorf("%s: line\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		var back Entry
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(back, e); diff != "" {
			t.Errorf("%s: read back (-got +want):\n%s", tt.name, diff)
		}
	}
}
