//go:build windows

package tools

import "os"

// copyOwner does nothing on Windows: a new file gets the directory's
// inherited ACL, and there is no uid/gid to copy.
func copyOwner(f *os.File, info os.FileInfo) error { return nil }
