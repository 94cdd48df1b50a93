//go:build !linux

package session

// renameNoReplace renames src to dst unless dst exists (then an error
// matching fs.ErrExist), with a hard link and an unlink.
func renameNoReplace(src, dst string) error { return linkRename(src, dst) }
