//go:build !unix

package gitstate

import "os"

// sameDevice cannot tell on this system: the stage folder goes into the
// work tree, where a rename always stays on one file system.
func sameDevice(a, b os.FileInfo) bool { return false }
