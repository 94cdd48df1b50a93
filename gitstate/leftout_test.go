package gitstate

import (
	"strings"
	"testing"
)

func TestLeftOut(t *testing.T) {
	for _, tc := range []struct {
		c    *Capture
		want string
	}{
		{nil, ""},
		{&Capture{}, ""},
		{&Capture{UntrackedSkipped: 3}, "3 untracked files were not recorded for this turn: files over"},
		{&Capture{UntrackedSkipped: 1, UntrackedLeftOut: []string{"big.bin"}}, "1 untracked file was not recorded for this turn (big.bin): "},
		{&Capture{UntrackedSkipped: 301, UntrackedLeftOut: []string{"big.bin", "gen/"}}, "301 untracked files were not recorded for this turn (big.bin, gen/): "},
		{&Capture{UntrackedSkipped: 5, UntrackedLeftOut: []string{"a", "b", "c", "d", "e"}}, "(a, b, c, d, e): "},
		{&Capture{UntrackedSkipped: 900, UntrackedLeftOut: []string{"a/", "b/", "c/", "d/", "e/", "f/"}}, "(a/, b/, c/, d/, e/, ...): "},
		{&Capture{UntrackedSkipped: 600, UntrackedDropped: true}, "none of the 600 untracked files"},
	} {
		got := tc.c.LeftOut()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("LeftOut(%+v) = %q, want it to contain %q", tc.c, got, tc.want)
		}
	}
}
