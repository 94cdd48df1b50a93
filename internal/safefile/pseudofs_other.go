//go:build !linux

package safefile

import "os"

// pseudoFS returns "": only Linux is checked by file system type; elsewhere
// SystemRoots and the regular-file check are what refuse (a BSD procfs
// mounted outside /proc is not recognised).
func pseudoFS(*os.File) string { return "" }
