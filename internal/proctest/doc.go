// Package proctest finds the processes a test started, by a sleep argument
// unique to the test, in /proc (Linux), and kills them when the test ends,
// so a failing test leaves nothing running; on any Unix it reads the
// process (group) ids commands write and lists a group's live members.
// Only tests import it.
package proctest
