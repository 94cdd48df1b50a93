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
		{&Capture{UntrackedSkipped: 3}, "3 untracked files were not recorded"},
		{&Capture{UntrackedSkipped: 600, UntrackedDropped: true}, "none of the 600 untracked files"},
	} {
		got := tc.c.LeftOut()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("LeftOut(%+v) = %q, want it to contain %q", tc.c, got, tc.want)
		}
	}
}
