package builtin

import (
	"encoding/json"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// TestPendingNotices: the notices a branch still holds are those of its
// background_shell_notice entries that no later background_shell message
// names, in order; a message naming a shell before its notice entry does
// not count, and a malformed entry is skipped.
func TestPendingNotices(t *testing.T) {
	notice := func(steer bool, ids ...string) session.Entry {
		var d NoticeData
		for _, id := range ids {
			d.BackgroundShells = append(d.BackgroundShells, protocol.BackgroundShellNotice{ID: id, Command: "c" + id, Status: protocol.BackgroundShellCompleted})
		}
		d.Steer = steer
		b, _ := json.Marshal(d)
		return session.NewCustom(NoticeEntryType, b)
	}
	told := func(ids ...string) session.Entry {
		var shells []protocol.BackgroundShellNotice
		for _, id := range ids {
			shells = append(shells, protocol.BackgroundShellNotice{ID: id, Status: protocol.BackgroundShellCompleted})
		}
		b, _ := json.Marshal(NoticeMessage(shells).AgentMessage())
		e, err := session.NewMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	other := session.NewCustom("ext", json.RawMessage(`{"k":1}`))
	bad := session.NewCustom(NoticeEntryType, json.RawMessage(`"nope"`))
	type want struct {
		ID    string
		Steer bool
	}
	for _, tc := range []struct {
		name   string
		branch []session.Entry
		want   []want
	}{
		{"none", nil, nil},
		{"one pending", []session.Entry{notice(true, "a")}, []want{{"a", true}}},
		{"told", []session.Entry{notice(true, "a"), told("a")}, nil},
		{"told before", []session.Entry{told("a"), notice(false, "a")}, []want{{"a", false}}},
		{"partly told", []session.Entry{notice(true, "a"), notice(false, "b"), told("a"), notice(true, "c")}, []want{{"b", false}, {"c", true}}},
		{"other entries", []session.Entry{other, bad, notice(true, "a")}, []want{{"a", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, n := range PendingNotices(tc.branch) {
				got = append(got, want{n.Shell.ID, n.Steer})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("pending %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("pending %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}
