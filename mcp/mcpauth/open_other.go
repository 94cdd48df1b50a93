//go:build !darwin && !windows

package mcpauth

// openerArgv is the argv that opens url on Linux and the other Unix
// systems: xdg-open with the URL as its one argument.
func openerArgv(url string) []string { return []string{"xdg-open", url} }
