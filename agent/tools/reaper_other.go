//go:build !linux

package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// reaperSupported reports that commands cannot run under a reaper here:
// only Linux has child subreapers.
const reaperSupported = false

// RunReaper prints that reapers are Linux-only and returns 2: ProcessGroups
// never starts one on this system.
func RunReaper([]string) int {
	fmt.Fprintf(os.Stderr, "knightcode: %s is supported on Linux only\n", ReaperArg)
	return 2
}

// errNoReaper is what startReaped returns here.
var errNoReaper = errors.New("reapers are supported on Linux only")

// startReaped returns errNoReaper: start does not call it here
// (reaperSupported is false).
func (g *ProcessGroups) startReaped(*exec.Cmd) (started, error) {
	return started{}, errNoReaper
}

// resumeReapersLocked does nothing: there are no reapers here.
func (g *ProcessGroups) resumeReapersLocked() {}

// descendants finds nothing: without reapers there is no tree to walk.
func descendants([]int) []*proc { return nil }
