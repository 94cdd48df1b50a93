package mcpauth

// openerArgv is the argv that opens url on Windows: rundll32's
// url.dll,FileProtocolHandler with the URL as one argument (never cmd /c
// start or PowerShell, which parse the URL).
func openerArgv(url string) []string {
	return []string{"rundll32", "url.dll,FileProtocolHandler", url}
}
