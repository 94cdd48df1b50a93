package gitstate

import (
	"fmt"
	"strings"
)

// LeftOut describes the untracked files a capture left out, for the
// warning on a turn whose capture could not include them (issue 9: a turn
// cannot undo files its capture did not record; spec's `warning`
// notification {threadId, source: "server", message}), naming the
// folders and big files left out ([Capture.UntrackedLeftOut]). It returns
// "" when the capture left nothing out.
func (c *Capture) LeftOut() string {
	switch {
	case c == nil || (c.UntrackedSkipped == 0 && !c.UntrackedDropped):
		return ""
	case c.UntrackedDropped:
		return fmt.Sprintf("More than %d untracked files: none of the %d untracked files was recorded for this turn, so undoing the turn cannot restore or remove them.",
			MaxUntracked, c.UntrackedSkipped)
	}
	names := ""
	if n := len(c.UntrackedLeftOut); n > 0 {
		names = " (" + strings.Join(c.UntrackedLeftOut[:min(n, MaxLeftOutNames)], ", ")
		if n > MaxLeftOutNames {
			names += ", ..."
		}
		names += ")"
	}
	what := fmt.Sprintf("%d untracked files were", c.UntrackedSkipped)
	if c.UntrackedSkipped == 1 {
		what = "1 untracked file was"
	}
	return fmt.Sprintf("%s not recorded for this turn%s: files over %d MiB, or folders of %d+ untracked files past the %d-file limit. Undoing the turn cannot restore or remove them.",
		what, names, MaxUntrackedSize>>20, BigFolder, MaxUntracked)
}
