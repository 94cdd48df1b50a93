package mcpauth

// openerArgv is the argv that opens url on macOS: open with the URL as its
// one argument.
func openerArgv(url string) []string { return []string{"open", url} }
