//go:build !linux

package gitcli

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// a git child may outlive a killed server there. Writes of the user's
// files and index go through gitstate's journal, whose git children only
// write temporary files, so such a child cannot change the user's state.
func setDeathSignal(a *syscall.SysProcAttr) {}
