// Package proctest finds the processes a test started, by a sleep argument
// unique to the test, in /proc (Linux), and kills them when the test ends,
// so a failing test leaves nothing running. Only tests import it.
package proctest
