package gitstate

import "fmt"

// LeftOut describes the untracked files a capture left out, for the
// warning on a turn whose capture could not include them (issue 9: a turn
// cannot undo files its capture did not record; spec's `warning`
// notification {threadId, source: "server", message}). It returns "" when
// the capture left nothing out.
func (c *Capture) LeftOut() string {
	switch {
	case c == nil || (c.UntrackedSkipped == 0 && !c.UntrackedDropped):
		return ""
	case c.UntrackedDropped:
		return fmt.Sprintf("More than %d untracked files: none of the %d untracked files was recorded for this turn, so undoing the turn cannot restore or remove them.",
			MaxUntracked, c.UntrackedSkipped)
	}
	return fmt.Sprintf("%d untracked files were not recorded for this turn (files over %d MiB, or folders of %d+ untracked files past the %d-file limit), so undoing the turn cannot restore or remove them.",
		c.UntrackedSkipped, MaxUntrackedSize>>20, BigFolder, MaxUntracked)
}
